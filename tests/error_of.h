// The message of the kiln::Error a call throws, for tests that check what an error says.
#pragma once
#include <string>

#include "ir/error.h"

// "(no error)" when the call returns normally, so an expectation on the text fails visibly.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "(no error)";
}

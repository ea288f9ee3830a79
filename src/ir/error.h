// kiln::Error: the one exception type every layer throws for bad input.
// Messages name the operation, what it got and what it expected.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace kiln {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

namespace detail {
template <typename... Args>
std::string cat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
}  // namespace detail

// Throws kiln::Error("<op>: <parts...>").
template <typename... Args>
[[noreturn]] void fail(const std::string& op, Args&&... args) {
  throw Error(op + ": " + detail::cat(std::forward<Args>(args)...));
}

}  // namespace kiln

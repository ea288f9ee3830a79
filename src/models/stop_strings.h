// Stop strings of a streamed generation: text that might begin a stop string is held back, so
// a streamed piece never shows part of one, and the text ends right before the first match.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kiln::models {

class StopStrings {
 public:
  // kiln::Error naming `op` for an empty stop string (it would match before any text).
  StopStrings(std::vector<std::string> stops, const char* op);
  // Adds generated text; returns the text now known to precede any stop string. Once a stop
  // string is complete, stopped() is true and the text after its start is dropped.
  std::string push(std::string_view text);
  // The text held back at the end of the stream (a partial stop string that never completed).
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace kiln::models

// StopStrings: the earliest stop string in the held-back text ends it; otherwise the longest
// suffix that is a proper prefix of some stop string stays held back.
#include "models/stop_strings.h"

#include <algorithm>
#include <utility>

#include "ir/error.h"

namespace kiln::models {

StopStrings::StopStrings(std::vector<std::string> stops, const char* op) : stops_(std::move(stops)) {
  for (size_t i = 0; i < stops_.size(); ++i)
    if (stops_[i].empty()) fail(op, "stop string ", i, " is empty, expected at least one character");
}

std::string StopStrings::push(std::string_view text) {
  if (stopped_) return {};
  held_ += text;
  if (stops_.empty()) return std::exchange(held_, {});
  size_t first = std::string::npos;
  for (const std::string& s : stops_) first = std::min(first, held_.find(s));
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  // The longest suffix of held_ that some stop string starts with (none is complete here).
  size_t keep = 0;
  for (const std::string& s : stops_) {
    for (size_t n = std::min(s.size() - 1, held_.size()); n > keep; --n) {
      if (held_.compare(held_.size() - n, n, s, 0, n) == 0) {
        keep = n;
        break;
      }
    }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopStrings::flush() { return stopped_ ? std::string() : std::exchange(held_, {}); }

}  // namespace kiln::models

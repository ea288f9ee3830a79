// kiln::Error: the one exception type every layer throws for bad input.
// Messages name the operation, what it got and what it expected.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace kiln {

// The exception every kiln function throws for bad input: what() reads "<op>: <what it got>,
// expected <what it expects>".
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}  // the full message
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

// Runs f() for the public function `op`. A kiln::Error escaping it that does not already
// name `op` is rethrown with `op: ` in front, so that a function composed of others names
// itself first ("full: broadcast_to: cannot broadcast (4,) to (2, 3)"), as the errors
// contract asks (docs/ARCHITECTURE.md, Errors). Nothing is caught on the success path.
template <typename F>
auto with_name(const char* op, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    const std::string what = e.what();
    const std::string prefix = std::string(op) + ":";
    if (what.compare(0, prefix.size(), prefix) == 0) throw;
    throw Error(prefix + " " + what);
  }
}

}  // namespace kiln

// kiln::Error: the one exception type every layer throws for bad input.
// Messages name the operation, what it got and what it expected.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace kiln {

// What kind of bad input an Error reports, so that bindings can raise the class users of the
// JS API expect (jax-js throws TypeError for operands of the wrong dtype or shapes that do not
// broadcast, RangeError for counts and indices out of range): Value (the default, JS Error),
// Type (JS TypeError), Range (JS RangeError).
enum class ErrorKind { Value, Type, Range };

// The exception every kiln function throws for bad input: what() reads "<op>: <what it got>,
// expected <what it expects>".
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, ErrorKind kind = ErrorKind::Value)  // the full message
      : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const { return kind_; }  // what kind of bad input (the JS error class)

 private:
  ErrorKind kind_;
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

// Throws kiln::Error("<op>: <parts...>") of the given kind (fail's is ErrorKind::Value).
template <typename... Args>
[[noreturn]] void fail_as(ErrorKind kind, const std::string& op, Args&&... args) {
  throw Error(op + ": " + detail::cat(std::forward<Args>(args)...), kind);
}

// Runs f() for the public function `op`. A kiln::Error escaping it that does not already
// name `op` is rethrown with `op: ` in front, so that a function composed of others names
// itself first ("full: broadcast_to: cannot broadcast (4,) to (2, 3)"), as the errors
// contract asks (docs/ARCHITECTURE.md, Errors); the error keeps its kind. Nothing is caught
// on the success path.
template <typename F>
auto with_name(const char* op, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    const std::string what = e.what();
    const std::string prefix = std::string(op) + ":";
    if (what.compare(0, prefix.size(), prefix) == 0) throw;
    throw Error(prefix + " " + what, e.kind());
  }
}

}  // namespace kiln

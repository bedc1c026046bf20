// ferrite's one exception type and the always-on check macros.
//
// Every failure that user input can cause is an Error with a kind() that says what sort
// of problem it is, and a message that names the op, the dtypes and the shapes, e.g.
//   add: shapes [3, 4] and [5] do not broadcast (F32, F32)
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ferrite {

enum class ErrorKind {
  InvalidArgument,
  DTypeMismatch,
  ShapeMismatch,
  DeviceMismatch,
  IndexOutOfRange,
  Unsupported,
  OutOfMemory,
  Numerical,  // singular matrix, not positive definite, ...
  Cuda,       // an error reported by the CUDA runtime
  Library,    // an error reported by cuBLAS, cuSOLVER, cuFFT, ...
};

std::string_view error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message);
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
[[noreturn]] void throw_error(ErrorKind kind, const std::string& message);
}  // namespace detail

}  // namespace ferrite

/// Throws ferrite::Error(kind, message) when `cond` is false. Never compiled out.
/// The message is the remaining arguments streamed one after the other.
#define FERRITE_CHECK(cond, kind, ...)                                                      \
  do {                                                                                      \
    if (!(cond)) [[unlikely]]                                                               \
      ::ferrite::detail::throw_error(::ferrite::ErrorKind::kind,                            \
                                     ::ferrite::detail::concat(__VA_ARGS__));               \
  } while (0)

#define FERRITE_THROW(kind, ...) \
  ::ferrite::detail::throw_error(::ferrite::ErrorKind::kind, ::ferrite::detail::concat(__VA_ARGS__))

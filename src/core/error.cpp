#include "ferrite/error.hpp"

namespace ferrite {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::InvalidArgument: return "InvalidArgument";
    case ErrorKind::DTypeMismatch: return "DTypeMismatch";
    case ErrorKind::ShapeMismatch: return "ShapeMismatch";
    case ErrorKind::DeviceMismatch: return "DeviceMismatch";
    case ErrorKind::IndexOutOfRange: return "IndexOutOfRange";
    case ErrorKind::Unsupported: return "Unsupported";
    case ErrorKind::OutOfMemory: return "OutOfMemory";
    case ErrorKind::Numerical: return "Numerical";
    case ErrorKind::Cuda: return "Cuda";
    case ErrorKind::Library: return "Library";
  }
  return "?";
}

Error::Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}

namespace detail {
void throw_error(ErrorKind kind, const std::string& message) { throw Error(kind, message); }
}  // namespace detail

}  // namespace ferrite

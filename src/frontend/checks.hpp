// Validation shared by the front-end files. Every check throws a typed Error whose message
// starts with the op name and names the dtypes, shapes and devices involved.
#pragma once

#include <initializer_list>

#include "ferrite/backend.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite::frontend {

/// A new uninitialised tensor (the backend of `device` allocates it).
Tensor allocate(const Shape& shape, DType dtype, Device device);

void check_defined(const char* op, std::initializer_list<const Tensor*> tensors);
void check_same_device(const char* op, std::initializer_list<const Tensor*> tensors);
void check_same_dtype(const char* op, std::initializer_list<const Tensor*> tensors);
/// Unsupported naming op, dtype and device unless the backend of `device` runs it.
void check_supported(Op op, DType dtype, Device device);

}  // namespace ferrite::frontend

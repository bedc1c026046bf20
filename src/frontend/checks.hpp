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
/// A backward op's grad against the forward tensor it belongs to (`forward_name`: "input",
/// "the forward output"): both defined, on one device, of one dtype and of one shape.
void check_grad(const char* op, const Tensor& grad, const Tensor& forward, const char* forward_name);
/// Unsupported naming op, dtype and device unless the backend of `device` runs it.
void check_supported(Op op, DType dtype, Device device);
/// `dim` wrapped into [0, rank) (a rank-0 tensor takes 0 and -1, as PyTorch); otherwise
/// IndexOutOfRange (PyTorch's IndexError) naming the op, the dim and the tensor.
std::int64_t wrap_dim(const char* op, const Tensor& x, std::int64_t dim);

}  // namespace ferrite::frontend

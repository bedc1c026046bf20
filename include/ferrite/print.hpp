// Printing, as PyTorch's repr: `std::cout << t` gives
//   tensor([[1., 2.],
//           [3., 4.]])
// with torch's number formats (precision 4; whole numbers as "1."; scientific when the
// magnitudes span more than 1000x, exceed 1e8 or go below 1e-4), padding to one width,
// lines wrapped at 80 columns, and tensors of more than 1000 elements summarised with "..."
// (3 items at each edge of every dim). F16/BF16 print by value, Bool as True/False, complex
// as torch does ("1.+2.j"). Differences from torch, on purpose: `dtype=` is shown for every
// dtype but F32 (I32 and I64 print alike otherwise) with ferrite's names (dtype=I64), and the
// device as device='cuda:0'. A tensor on a GPU is copied to the host to be printed. An
// undefined tensor prints as "tensor(undefined)".
#pragma once

#include <ostream>
#include <string>

#include "ferrite/device.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite {

std::string to_string(const Tensor& t);
std::ostream& operator<<(std::ostream& os, const Tensor& t);
/// "F32", "BF16", ...
std::ostream& operator<<(std::ostream& os, DType dtype);
/// "cpu", "cuda:0" (Device::str()).
std::ostream& operator<<(std::ostream& os, Device device);
/// "[2, 3]". Shape is a std::vector, so argument-dependent lookup does not find this one:
/// call it inside namespace ferrite or after `using ferrite::operator<<;`.
std::ostream& operator<<(std::ostream& os, const Shape& shape);

}  // namespace ferrite

// Host references written independently of ferrite's own conversion code: exact values in
// long double (64-bit mantissa: every int64 and every double is exact), rounded to a dtype
// by scaling and nearbyint (ties to even) rather than by bit manipulation.
#pragma once

#include <vector>

#include "ferrite/ferrite.hpp"

namespace ferrite::reference {

/// The exact values of a real tensor (complex: real parts).
std::vector<long double> values(const Tensor& t);
/// A CPU tensor of `dtype` holding `v` rounded by ferrite's documented rules.
Tensor from_values(const std::vector<long double>& v, const Shape& shape, DType dtype);
/// Round one exact value to the nearest value representable in `dtype`.
long double round_to(DType dtype, long double x);
/// Flat index into `in` of the element that output element `flat` of `out` reads.
std::int64_t broadcast_source(std::int64_t flat, const Shape& out, const Shape& in);

}  // namespace ferrite::reference

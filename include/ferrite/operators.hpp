// C++ operators on tensors, as LibTorch spells them: `a + b`, `x * 0.5`, `1 - x`, `x > 0`,
// `m & mask`, `-x`, `x += y`. Each is a thin wrapper over the named op (add, sub, mul, div,
// remainder, eq..ge, bitwise_and/or/xor/not, neg) with that op's broadcasting and errors.
//
// Dtypes: two tensors must share a dtype (no silent promotion: a DTypeMismatch, cast with
// .to(dtype)). A Scalar operand takes the tensor's dtype, as PyTorch treats a Python number:
// `i32 + 1` is I32 and `bf16 * 0.5` is BF16 (the scalar is rounded to BF16 once, like a
// full() of that dtype). Where PyTorch would promote the result to another dtype instead,
// ferrite refuses with a DTypeMismatch naming the operator: a floating-point scalar with an
// I32/I64 tensor (`i32 + 1.5`, also in comparisons, where rounding would change the answer)
// and a non-Bool scalar with a Bool tensor (`mask + 1`). An integer scalar outside the
// tensor's integer dtype is the InvalidArgument of full() ("cannot be converted to type I32
// without overflow"). `/` takes floating tensors only: PyTorch's `/` divides integers exactly
// into a floating result, which ferrite's div (truncating) is not, so an I32/I64/Bool operand
// of `/` is a DTypeMismatch that names div (truncation) and floor_divide (floor) instead.
//
// Compound assignment (`x += y`, `-=`, `*=`, `/=`) writes in place, as in LibTorch: into x's
// storage, through x's strides when x is a view (`x.select(0, 1) += 1` changes x), so every
// Tensor sharing that storage sees the new values (ferrite/inplace.hpp: add_, sub_, mul_,
// div_). As in PyTorch, the result must keep x's shape and dtype: broadcasting x itself to a
// larger shape is a ShapeMismatch.
#pragma once

#include "ferrite/scalar.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite {

// ---- arithmetic (every real numeric dtype; / floating only; % is remainder: I32, I64) ----
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator%(const Tensor& a, const Tensor& b);
Tensor operator%(const Tensor& a, Scalar b);
Tensor operator%(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& x);

// ---- comparisons -> Bool ----
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator==(Scalar a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator!=(Scalar a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<(Scalar a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator<=(Scalar a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>(Scalar a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, Scalar b);
Tensor operator>=(Scalar a, const Tensor& b);

// ---- bitwise (I32, I64 and Bool) ----
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator&(const Tensor& a, Scalar b);
Tensor operator&(Scalar a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, Scalar b);
Tensor operator|(Scalar a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, Scalar b);
Tensor operator^(Scalar a, const Tensor& b);
Tensor operator~(const Tensor& x);

// ---- compound assignment (in place; see above). The Tensor&& overloads take views made on
// the spot: `x.select(0, 1) *= 2`. ----
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, Scalar b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, Scalar b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, Scalar b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, Scalar b);
Tensor operator+=(Tensor&& a, const Tensor& b);
Tensor operator+=(Tensor&& a, Scalar b);
Tensor operator-=(Tensor&& a, const Tensor& b);
Tensor operator-=(Tensor&& a, Scalar b);
Tensor operator*=(Tensor&& a, const Tensor& b);
Tensor operator*=(Tensor&& a, Scalar b);
Tensor operator/=(Tensor&& a, const Tensor& b);
Tensor operator/=(Tensor&& a, Scalar b);

/// The rank-0 tensor of `like`'s dtype and device that a Scalar operand of `op` becomes,
/// refusing the combinations where PyTorch would promote (see above).
Tensor scalar_tensor_like(const char* op, Scalar value, const Tensor& like);

}  // namespace ferrite

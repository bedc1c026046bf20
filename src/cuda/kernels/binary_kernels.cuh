// Shared by the binary_*.cu files: one binary op on one storage type.
#pragma once

#include "core/elementwise_functors.hpp"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/primitives/elementwise_engine.cuh"

namespace ferrite::cuda::kernels {

template <class T>
void binary_typed(Op op, const Buffer& a, const Buffer& b, const Buffer& out, const ElementwiseLayout& layout,
                  cudaStream_t stream) {
  auto run = [&](auto fn) {
    launch_elementwise<Layouts::Any>(fn, layout, out.data_as<T>(), stream, a.data_as<const T>(), b.data_as<const T>());
  };
  switch (op) {
    case Op::Add: return run(detail::AddFn{});
    case Op::Sub: return run(detail::SubFn{});
    case Op::Mul: return run(detail::MulFn{});
    case Op::Div: return run(detail::DivFn{});
    default: FERRITE_THROW(Unsupported, op_name(op), " is not a binary op");
  }
}

}  // namespace ferrite::cuda::kernels

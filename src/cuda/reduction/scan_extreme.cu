// cummax / cummin with I64 indices, every real numeric dtype. As PyTorch: an equal value
// moves the index forward, and a NaN takes over (each later NaN moves the index again).
#include "core/dtype_dispatch.hpp"
#include "cuda/reduction/reducers.cuh"
#include "cuda/reduction/reduction_kernels.cuh"
#include "cuda/reduction/scan_engine.cuh"

namespace ferrite::cuda::reduction {
namespace {

template <class T>
struct ExtremeScan {
  struct acc_t {
    reduction::acc_t<T> value;
    std::int64_t index;
  };
  using out_t = T;
  bool max = true;
  reduction::acc_t<T> empty;
  __device__ acc_t identity() const { return {empty, -1}; }
  __device__ acc_t make(T v, std::int64_t j) const { return {static_cast<reduction::acc_t<T>>(detail::widen(v)), j}; }
  // The later operand b wins when it is NaN, or when a is not NaN and b is at least as extreme.
  // Associative: a segment's result is its last NaN, else the last occurrence of its extreme.
  __device__ acc_t operator()(acc_t a, acc_t b) const {
    if (b.value != b.value) return b;
    if (a.value != a.value) return a;
    return (max ? b.value >= a.value : b.value <= a.value) ? b : a;
  }
  __device__ out_t value(acc_t a) const { return detail::narrow<T>(a.value); }
  __device__ void store(out_t* out, std::int64_t* indices, std::int64_t at, acc_t a) const {
    out[at] = detail::narrow<T>(a.value);
    indices[at] = a.index;
  }
};

}  // namespace

void scan_extreme(Op op, const Buffer& x, const Buffer& out, const Buffer& indices, const ReduceExtents& e,
                  cudaStream_t stream) {
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T> || std::is_same_v<T, bool>) {
      FERRITE_THROW(Unsupported, op_name(op), ": ", dtype_name(x.dtype()), " on cuda");
    } else {
      const bool max = op == Op::Cummax;
      launch_scan(x.data_as<const T>(), out.data_as<T>(), indices.data_as<std::int64_t>(),
                  ExtremeScan<T>{max, extreme_identity<T>(max)}, e, stream);
    }
  });
}

}  // namespace ferrite::cuda::reduction

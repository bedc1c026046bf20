// Batched SVD of small real matrices (n <= m <= 32, F32/F64): one warp per matrix running
// small_svd.hpp's one-sided Jacobi method, the matrix and V in shared memory, one launch and
// no workspace. cuSOLVER's gesvdjBatched (PyTorch's driver for these sizes) took 1.1 ms for
// 1024 × [32, 32] F32.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/linalg/linalg_kernels.hpp"
#include "cuda/linalg/small_svd.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::linalg_kernels {
namespace {

namespace ss = small_svd;

// small_svd::solve's cross-lane steps as warp intrinsics (all 32 lanes always take part).
struct DeviceWarp {
  static constexpr unsigned kFull = 0xffffffffu;
  __device__ int lane() const { return static_cast<int>(threadIdx.x); }
  template <class V>
  __device__ V shfl_xor(V v, int offset) const { return __shfl_xor_sync(kFull, v, offset); }
  template <class V>
  __device__ V shfl(V v, int src) const { return __shfl_sync(kFull, v, src); }
  __device__ bool any(bool p) const { return __any_sync(kFull, p) != 0; }
  __device__ unsigned ballot(bool p) const { return __ballot_sync(kFull, p); }
  __device__ void sync() const { __syncwarp(); }
};

// One warp (one block) per matrix, grid-stride over the batch.
template <class T, int NP>
__global__ void __launch_bounds__(32) small_svd_kernel(const T* a, std::int64_t batch, int m, int n, bool full,
                                                       bool vectors, T* u, T* s, T* vh, int* info) {
  __shared__ __align__(16) T as[ss::kTileElements];
  __shared__ __align__(16) T vs[ss::kTileElements];
  __shared__ int perm[32];
  DeviceWarp w;
  const std::int64_t ucols = full ? m : n;
  for (std::int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    ss::solve<T, NP>(w, a + b * m * n, m, n, full, vectors, vectors ? u + b * m * ucols : nullptr, s + b * n,
                     vectors ? vh + b * n * n : nullptr, info + b, as, vs, perm);
    __syncwarp();  // the tiles are reused by the next matrix
  }
}

template <class T, int NP>
void launch(const void* a, std::int64_t batch, int m, int n, bool full, bool vectors, void* u, void* s, void* vh,
            int* info, cudaStream_t stream) {
  // One warp per block (up to 32 resident per SM); a grid-stride loop beyond 2^20 matrices.
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(batch, std::int64_t(1) << 20));
  small_svd_kernel<T, NP><<<blocks, 32, 0, stream>>>(static_cast<const T*>(a), batch, m, n, full, vectors,
                                                    static_cast<T*>(u), static_cast<T*>(s), static_cast<T*>(vh), info);
  FERRITE_CUDA_CHECK_LAUNCH();
}

// NP: the column pairs per round, the smallest power of two with 2·NP >= n.
template <class T>
void launch_pairs(const void* a, std::int64_t batch, int m, int n, bool full, bool vectors, void* u, void* s, void* vh,
                  int* info, cudaStream_t stream) {
  if (n <= 2) return launch<T, 1>(a, batch, m, n, full, vectors, u, s, vh, info, stream);
  if (n <= 4) return launch<T, 2>(a, batch, m, n, full, vectors, u, s, vh, info, stream);
  if (n <= 8) return launch<T, 4>(a, batch, m, n, full, vectors, u, s, vh, info, stream);
  if (n <= 16) return launch<T, 8>(a, batch, m, n, full, vectors, u, s, vh, info, stream);
  return launch<T, 16>(a, batch, m, n, full, vectors, u, s, vh, info, stream);
}

}  // namespace

void small_svd(const void* a, DType dtype, std::int64_t batch, std::int64_t m, std::int64_t n, bool full, bool vectors,
               void* u, void* s, void* vh, int* info, cudaStream_t stream) {
  FERRITE_CHECK(n >= 1 && n <= m && m <= ss::kLargest, Unsupported,
                "svd: the batched small-matrix kernel takes 1 <= n <= m <= ", ss::kLargest, ", got ", m, "x", n);
  if (batch == 0) return;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n);
  switch (dtype) {
    case DType::F32: launch_pairs<float>(a, batch, mi, ni, full, vectors, u, s, vh, info, stream); break;
    case DType::F64: launch_pairs<double>(a, batch, mi, ni, full, vectors, u, s, vh, info, stream); break;
    default: FERRITE_THROW(Unsupported, "svd: the batched small-matrix kernel takes F32 and F64, got ", dtype_name(dtype));
  }
}

}  // namespace ferrite::cuda::linalg_kernels

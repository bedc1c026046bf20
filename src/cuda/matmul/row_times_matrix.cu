// y[n] = alpha * x[k] · B[k, n] + beta * y for F32 with B row-major: a row vector times a
// wide matrix ([1, 4096] x [4096, 4096], a Linear layer at batch 1). The product is a pure
// stream over B (4 bytes per 2 flops), and cuBLAS(Lt)'s GEMV-shaped kernel reads it at
// about 3.2 TB/s on the H200; this kernel keeps more bytes in flight per SM.
//
// One block of 32 warps owns 32 adjacent columns: lane l reads column c0 + l, so each warp
// load is one 128-byte row segment, and warp w takes rows w, w + 32, w + 64, ... with 8
// independent loads in flight per thread (32 KB per SM). The 32 per-warp partial sums of a
// column are added in a fixed order in shared memory: no atomics, the same bits every run.
#include <cstdlib>

#include "cuda/matmul/matmul_kernels.cuh"
#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda::kernels {
namespace {

constexpr int kWarps = 32;
constexpr int kUnroll = 8;

__global__ void __launch_bounds__(kWarps * 32)
    row_times_matrix_kernel(const float* __restrict__ x, const float* __restrict__ b, float* __restrict__ y,
                            std::int64_t k, std::int64_t n, float alpha, float beta) {
  __shared__ float partial[kWarps][32];
  const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
  const std::int64_t column = static_cast<std::int64_t>(blockIdx.x) * 32 + lane;
  float acc = 0;
  if (column < n) {
    const float* col = b + column;
    std::int64_t r = warp;
    for (; r + (kUnroll - 1) * kWarps < k; r += kUnroll * kWarps) {
      float v[kUnroll], xv[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        v[u] = __ldcs(col + (r + u * kWarps) * n);  // streamed once: do not keep B in cache
        xv[u] = __ldg(x + r + u * kWarps);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc = fmaf(xv[u], v[u], acc);
    }
    for (; r < k; r += kWarps) acc = fmaf(__ldg(x + r), __ldcs(col + r * n), acc);
  }
  partial[warp][lane] = acc;
  __syncthreads();
  if (warp == 0 && column < n) {
    float sum = 0;
    for (int w = 0; w < kWarps; ++w) sum += partial[w][lane];
    y[column] = beta == 0 ? alpha * sum : alpha * sum + beta * y[column];  // beta == 0: y not read
  }
}

bool disabled() {
  static const bool off = std::getenv("FERRITE_GEMM_NO_ROW_KERNEL") != nullptr;
  return off;
}

}  // namespace

bool row_times_matrix_applies(const GemmDesc& d) {
  return !disabled() && d.input == DType::F32 && d.output == DType::F32 && d.m == 1 && !d.transpose_b &&
         d.batch_rank == 0 && d.n >= kRowKernelMinColumns && d.k >= kRowKernelMinDepth;
}

void row_times_matrix(const GemmDesc& d, const Buffer& a, const Buffer& b, const Buffer& c, cudaStream_t stream) {
  const std::int64_t blocks = (d.n + 31) / 32;
  row_times_matrix_kernel<<<static_cast<unsigned>(blocks), kWarps * 32, 0, stream>>>(
      a.data_as<const float>(), b.data_as<const float>(), c.data_as<float>(), d.k, d.n, static_cast<float>(d.alpha),
      static_cast<float>(d.beta));
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::kernels

// Times alternative launch shapes (threads per block x vectors per thread) of the
// elementwise engine on the cases of the foundation benchmark, in one run, so the default
// in elementwise_engine.cuh is chosen by measurement. Not part of the build; compile it on
// the GPU machine after building ferrite:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -Iinclude -Isrc -Ibuild-gpu/generated \
//        bench/engine_tuning.cu -Lbuild-gpu -lferrite -Xlinker -rpath=build-gpu -o engine_tuning
#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/elementwise_functors.hpp"
#include "core/elementwise_layout.hpp"
#include "cuda/primitives/elementwise_engine.cuh"

using namespace ferrite;
using namespace ferrite::cuda::kernels;

template <class F>
double median_ms(F launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) launch();
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[10];
}

template <int kThreads, int kUnroll>
void contiguous_cases(float* x, float* y, float* out, BFloat16* xb, BFloat16* yb, BFloat16* ob, std::int64_t n) {
  const ElementwiseLayout two = contiguous_layout(n, 2), one = contiguous_layout(n, 1);
  const double add = median_ms([&] {
    launch_variant<true, 4, std::uint32_t, kThreads, kUnroll>(detail::AddFn{}, two, out, nullptr, x, y);
  });
  const double addb = median_ms([&] {
    launch_variant<true, 8, std::uint32_t, kThreads, kUnroll>(detail::AddFn{}, two, ob, nullptr, xb, yb);
  });
  const double relu = median_ms([&] {
    launch_variant<true, 4, std::uint32_t, kThreads, kUnroll>(detail::ReluFn{}, one, out, nullptr, x);
  });
  const double cast = median_ms([&] {
    launch_variant<true, 4, std::uint32_t, kThreads, kUnroll>(detail::CastFn{}, one, ob, nullptr, x);
  });
  std::printf("contiguous threads %3d unroll %d: add_f32 %6.0f  add_bf16 %6.0f  relu_f32 %6.0f  cast_f32_bf16 %6.0f GB/s\n",
              kThreads, kUnroll, 12.0 * n / add / 1e6, 6.0 * n / addb / 1e6, 8.0 * n / relu / 1e6, 6.0 * n / cast / 1e6);
}

template <int kThreads, int kUnroll>
void broadcast_case(float* m, float* row, float* out, std::int64_t rows, std::int64_t cols) {
  const Shape ms{rows, cols}, rs{cols};
  const ElementwiseLayout layout = make_elementwise_layout(ms, {&ms, &rs}, "tuning");
  const double t = median_ms([&] {
    launch_variant<false, 4, std::uint32_t, kThreads, kUnroll>(detail::AddFn{}, layout, out, nullptr, m, row);
  });
  std::printf("row broadcast threads %3d unroll %d: %6.0f GB/s\n", kThreads, kUnroll, (8.0 * rows * cols) / t / 1e6);
}

struct alignas(16) Chunk16 {
  unsigned int word[4];
};

template <int kThreads, int kUnroll>
void copy_case(float* src, float* dst, std::int64_t n) {
  const ElementwiseLayout layout = contiguous_layout(n / 4, 1);
  const double t = median_ms([&] {
    launch_variant<true, 1, std::uint32_t, kThreads, kUnroll>(detail::CastFn{}, layout, reinterpret_cast<Chunk16*>(dst),
                                                              nullptr, reinterpret_cast<const Chunk16*>(src));
  });
  std::printf("copy kernel threads %3d unroll %d: %6.0f GB/s\n", kThreads, kUnroll, 8.0 * n / t / 1e6);
}

int main() {
  const std::int64_t n = std::int64_t(1) << 28, rows = 65536, cols = 4096;
  float *x, *y, *out;
  BFloat16 *xb, *yb, *ob;
  cudaMalloc(&x, 4 * n);
  cudaMalloc(&y, 4 * n);
  cudaMalloc(&out, 4 * n);
  cudaMalloc(&xb, 2 * n);
  cudaMalloc(&yb, 2 * n);
  cudaMalloc(&ob, 2 * n);
  cudaMemset(x, 0x3f, 4 * n);  // 0.75-ish, not zeros
  cudaMemset(y, 0x3e, 4 * n);
  cudaMemset(xb, 0x3f, 2 * n);
  cudaMemset(yb, 0x3e, 2 * n);
  const double memcpy_ms = median_ms([&] { cudaMemcpyAsync(out, x, 4 * n, cudaMemcpyDeviceToDevice, nullptr); });
  std::printf("cudaMemcpyAsync copy: %6.0f GB/s\n", 8.0 * n / memcpy_ms / 1e6);
  copy_case<256, 4>(x, out, n);
  copy_case<256, 8>(x, out, n);
  copy_case<128, 4>(x, out, n);
  copy_case<512, 2>(x, out, n);
  contiguous_cases<128, 1>(x, y, out, xb, yb, ob, n);
  contiguous_cases<128, 2>(x, y, out, xb, yb, ob, n);
  contiguous_cases<128, 4>(x, y, out, xb, yb, ob, n);
  contiguous_cases<256, 1>(x, y, out, xb, yb, ob, n);
  contiguous_cases<256, 2>(x, y, out, xb, yb, ob, n);
  contiguous_cases<256, 4>(x, y, out, xb, yb, ob, n);
  contiguous_cases<256, 8>(x, y, out, xb, yb, ob, n);
  contiguous_cases<512, 2>(x, y, out, xb, yb, ob, n);
  contiguous_cases<512, 4>(x, y, out, xb, yb, ob, n);
  contiguous_cases<1024, 2>(x, y, out, xb, yb, ob, n);
  broadcast_case<128, 4>(x, y, out, rows, cols);
  broadcast_case<256, 1>(x, y, out, rows, cols);
  broadcast_case<256, 2>(x, y, out, rows, cols);
  broadcast_case<256, 4>(x, y, out, rows, cols);
  broadcast_case<256, 8>(x, y, out, rows, cols);
  broadcast_case<512, 4>(x, y, out, rows, cols);
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("status: %s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}

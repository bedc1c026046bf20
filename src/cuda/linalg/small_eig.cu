// Batched eig of small matrices (n <= small_eig::kLargest): one thread per matrix running
// small_eig.hpp's Hessenberg + shifted QR + back substitution in complex double, the matrix
// and its Schur vectors in pool scratch interleaved across the batch (coalesced like local
// memory, without a per-thread stack reservation of up to 32 KiB × every resident thread).
// cuSOLVER 13 has no batched geev, and a loop of Xgeev calls (PyTorch's way) costs ~0.6 ms
// per matrix however small it is.
#include <cuComplex.h>

#include <algorithm>

#include "cuda/linalg/linalg_kernels.hpp"
#include "cuda/linalg/small_eig.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::linalg_kernels {
namespace {

namespace se = small_eig;

__device__ se::Cx load(float x) { return se::cx(x); }
__device__ se::Cx load(double x) { return se::cx(x); }
__device__ se::Cx load(float2 x) { return se::cx(x.x, x.y); }
__device__ se::Cx load(double2 x) { return se::cx(x.x, x.y); }
__device__ void store(float2* p, se::Cx x) { *p = make_float2(static_cast<float>(x.re), static_cast<float>(x.im)); }
__device__ void store(double2* p, se::Cx x) { *p = make_double2(x.re, x.im); }

// One thread per matrix of a chunk of `count`; scratch holds slots (2n² + 3n) per matrix,
// interleaved: slot s of matrix b at scratch[s·count + b] (see small_eig::Strided).
template <class In, class Out>
__global__ void __launch_bounds__(128) small_eig_kernel(const In* a, std::int64_t count, int n, bool vectors, Out* w,
                                                        Out* v, int* info, se::Cx* scratch) {
  const std::int64_t nn = std::int64_t(n) * n;
  for (std::int64_t b = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; b < count;
       b += std::int64_t(gridDim.x) * blockDim.x) {
    const se::Strided h{scratch + b, count}, z{scratch + nn * count + b, count},
        u{scratch + 2 * nn * count + b, count}, xs{scratch + (2 * nn + n) * count + b, count},
        values{scratch + (2 * nn + 2 * n) * count + b, count};
    const In* src = a + b * nn;
    for (std::int64_t e = 0; e < nn; ++e) h[e] = load(src[e]);
    // The eigenvectors replace the Schur vectors in z (small_eig.hpp allows it).
    const int code = se::solve(n, h, z, u, xs, vectors, values, z);
    info[b] = code;
    // A matrix that did not converge gets NaN outputs (never unwritten scratch).
    const se::Cx nan = se::cx(__longlong_as_double(0x7ff8000000000000LL), __longlong_as_double(0x7ff8000000000000LL));
    for (int i = 0; i < n; ++i) store(w + b * n + i, code == 0 ? values[i] : nan);
    if (vectors)
      for (std::int64_t e = 0; e < nn; ++e) store(v + b * nn + e, code == 0 ? z[e] : nan);
  }
}

// Matrices per launch: the scratch stays under 256 MiB (a few thousand 32×32 matrices, far
// more small ones: enough threads to fill the GPU either way).
std::int64_t chunk_of(std::int64_t batch, std::int64_t n) {
  const std::int64_t bytes_per_matrix = (2 * n * n + 3 * n) * static_cast<std::int64_t>(sizeof(se::Cx));
  return std::max<std::int64_t>(1, std::min<std::int64_t>(batch, (std::int64_t(256) << 20) / bytes_per_matrix));
}

template <class In, class Out>
void launch(const void* a, std::int64_t batch, int n, bool vectors, void* w, void* v, int* info, se::Cx* scratch,
            std::int64_t chunk, cudaStream_t stream) {
  constexpr int kThreads = 128;
  const std::int64_t nn = std::int64_t(n) * n;
  for (std::int64_t first = 0; first < batch; first += chunk) {
    const std::int64_t count = std::min(chunk, batch - first);
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((count + kThreads - 1) / kThreads, 65535));
    small_eig_kernel<In, Out><<<blocks, kThreads, 0, stream>>>(
        static_cast<const In*>(a) + first * nn, count, n, vectors, static_cast<Out*>(w) + first * n,
        vectors ? static_cast<Out*>(v) + first * nn : nullptr, info + first, scratch);
    FERRITE_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

std::size_t small_eig_scratch_bytes(std::int64_t batch, std::int64_t n) {
  if (batch == 0 || n == 0) return 0;
  return static_cast<std::size_t>(chunk_of(batch, n) * (2 * n * n + 3 * n)) * sizeof(se::Cx);
}

void small_eig(const void* a, DType dtype, std::int64_t batch, std::int64_t n, bool vectors, void* w, void* v,
               int* info, void* scratch, cudaStream_t stream) {
  FERRITE_CHECK(n >= 1 && n <= se::kLargest, Unsupported, "eig: the batched small-matrix kernel takes n <= ",
                se::kLargest, ", got ", n);
  if (batch == 0) return;
  const int ni = static_cast<int>(n);
  const std::int64_t chunk = chunk_of(batch, n);
  auto* cx = static_cast<se::Cx*>(scratch);
  switch (dtype) {
    case DType::F32: launch<float, float2>(a, batch, ni, vectors, w, v, info, cx, chunk, stream); break;
    case DType::C64: launch<float2, float2>(a, batch, ni, vectors, w, v, info, cx, chunk, stream); break;
    case DType::F64: launch<double, double2>(a, batch, ni, vectors, w, v, info, cx, chunk, stream); break;
    case DType::C128: launch<double2, double2>(a, batch, ni, vectors, w, v, info, cx, chunk, stream); break;
    default: FERRITE_THROW(Unsupported, "eig: dtype ", dtype_name(dtype));
  }
}

}  // namespace ferrite::cuda::linalg_kernels

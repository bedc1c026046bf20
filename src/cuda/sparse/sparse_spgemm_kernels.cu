// Deterministic CSR SpGEMM, C = A B, for real values (F32, F64) and I32/I64 indices
// (sparse_kernels.cuh), used when C's row fits a dense accumulator in shared memory.
// cuSPARSE's SpGEMM (ALG1) took ~10 ms for issue 15's [8192, 8192] product (1.34M nonzeros per
// operand, C ~96% dense), 0.99x PyTorch.
//
// Two passes, as the add kernels, with the front end's scan of the counts into C's pointers
// between them:
// - count: one block per row of C marks the columns of every B row k met by row i of A in a
//   bitmask of n bits (shared memory); the popcount is the row's length.
// - fill: one block per row zeroes an accumulator of n values and the bitmask, then, for p over
//   row i of A in storage order, its threads split B's row k = a_idx[p] (one B row holds each
//   column once, so no two threads touch one column within a p) and add a_val[p] * b_val[r] to
//   acc[b_idx[r]], setting the column's bit; a __syncthreads() separates successive p. So each
//   C(i, j) is the sum of its products in A's storage order starting from 0, each product
//   rounded, then added (no fused multiply-add), whatever the launch: the CPU backend's
//   Gustavson loop, bit for bit where the CPU build does not fuse either (x86-64 without FMA). The bitmask, not acc != 0, decides what is stored: a sum that cancels
//   to 0 stays a stored element (the symbolic product, as cuSPARSE and the CPU).
//   Compaction walks the bitmask in column order: each word's offset in the row is an
//   exclusive prefix of popcounts; warp w writes word w's set columns (lane = bit, so
//   consecutive columns go to consecutive positions: coalesced stores), ascending.
//
// Why a block per row: the accumulator takes n x sizeof(value) bytes (32 KB at n = 8192 F32),
// so few rows fit an SM at once; a block of 256 threads per row keeps 6 such rows x 8 warps
// busy per SM and covers a B row of up to 256 entries in one step (longer rows loop). Load
// latency, not arithmetic, bounds the fill: A's entries are staged 192 at a time in shared
// memory (B's row start, length and A's value), and the first B element of kPrefetch
// successive p is loaded before any of them is added, so those loads are in flight together.
#include "cuda/sparse/sparse_dispatch.cuh"
#include "cuda/sparse/sparse_kernels.cuh"

#include <algorithm>
#include <array>
#include <mutex>

#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::sparse {
namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;
constexpr int kPrefetch = 8;                                   // p whose first B element loads together
// A's entries staged per step: 192 covers issue 15's rows (~164 entries) in one step and keeps
// a block of F32 values at n = 8192 within a sixth of the SM's 228 KB of shared memory with
// either index width (256 would not with I64: 5 rows per SM).
constexpr int kStage = 192;
constexpr std::int64_t kMaxAccBytes = 64 * 1024;               // n x sizeof(value) at most (16384 F32, 8192 F64)
constexpr std::int64_t kMaxRowBlocks = std::int64_t(1) << 20;  // rows grid-stride past this many blocks
constexpr unsigned kFull = 0xffffffffu;
constexpr int kMaxDevices = 64;  // as the sparse family's handles (cuda_sparse_ops.cpp)

__host__ __device__ constexpr std::int64_t align16(std::int64_t b) { return (b + 15) / 16 * 16; }
__host__ __device__ constexpr std::int64_t mask_words(std::int64_t n) { return (n + 31) / 32; }

// The fill kernel's dynamic shared memory: acc [n], bitmask [words], then a scratch area that
// holds the staged A entries during the products and the word offsets during compaction.
struct FillLayout {
  std::int64_t mask_at, scratch_at, bytes;
  __host__ __device__ constexpr FillLayout(std::int64_t n, std::int64_t value_bytes, std::int64_t index_bytes)
      : mask_at(align16(n * value_bytes)),
        scratch_at(align16(mask_at + mask_words(n) * 4)),
        bytes(scratch_at + std::max<std::int64_t>(kStage * (value_bytes + index_bytes + 4), mask_words(n) * 4)) {}
};

// The exclusive prefix of v over the block in thread order; `total` gets the block's sum.
// `warp_sums` [kWarps] in shared memory; the caller synchronises before reusing it.
__device__ int block_exclusive_scan(int v, int* warp_sums, int& total) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  int inclusive = v;
  for (int off = 1; off < 32; off *= 2) {
    const int y = __shfl_up_sync(kFull, inclusive, off);
    if (lane >= off) inclusive += y;
  }
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    int t = lane < kWarps ? warp_sums[lane] : 0;
    for (int off = 1; off < kWarps; off *= 2) {
      const int y = __shfl_up_sync(kFull, t, off);
      if (lane >= off) t += y;
    }
    if (lane < kWarps) warp_sums[lane] = t;
  }
  __syncthreads();
  total = warp_sums[kWarps - 1];
  return (warp > 0 ? warp_sums[warp - 1] : 0) + inclusive - v;
}

// acc + a b with the product rounded before the sum, as the CPU backend's loop (nvcc would
// otherwise fuse them into one FMA, a different rounding).
__device__ __forceinline__ float add_product(float acc, float a, float b) { return __fadd_rn(acc, __fmul_rn(a, b)); }
__device__ __forceinline__ double add_product(double acc, double a, double b) {
  return __dadd_rn(acc, __dmul_rn(a, b));
}

__device__ __forceinline__ void set_bit(unsigned* mask, int j) { atomicOr(mask + (j >> 5), 1u << (j & 31)); }

// Each warp takes A's entries p = pa + warp, pa + warp + kWarps, ...: the bitmask is an OR, so
// the order does not matter and no synchronisation is needed between p. Lane l first loads the
// B row range of the warp's l-th entry (32 such chains in flight instead of one), then the warp
// walks those rows, taking each range from its lane by a shuffle.
template <class I>
__global__ __launch_bounds__(kBlock) void spgemm_count_kernel(const I* __restrict__ a_ptr, const I* __restrict__ a_idx,
                                                              const I* __restrict__ b_ptr, const I* __restrict__ b_idx,
                                                              std::int64_t m, std::int64_t n,
                                                              std::int64_t* __restrict__ counts) {
  extern __shared__ unsigned count_mask[];
  __shared__ int warp_sums[kWarps];
  const int words = static_cast<int>(mask_words(n));
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  for (std::int64_t row = blockIdx.x; row < m; row += gridDim.x) {  // block-uniform
    for (int w = static_cast<int>(threadIdx.x); w < words; w += kBlock) count_mask[w] = 0;
    __syncthreads();
    const std::int64_t pa = __ldg(a_ptr + row), pe = __ldg(a_ptr + row + 1);
    constexpr std::int64_t kStride = std::int64_t(kWarps) * 32;  // A entries per round of the block
    for (std::int64_t base = pa + warp; base < pe; base += kStride) {  // warp-uniform
      const std::int64_t own_p = base + std::int64_t(kWarps) * lane;
      std::int64_t own_rb = 0, own_re = 0;
      if (own_p < pe) {
        const std::int64_t k = __ldg(a_idx + own_p);
        own_rb = __ldg(b_ptr + k);
        own_re = __ldg(b_ptr + k + 1);
      }
      for (int q = 0; q < 32 && base + std::int64_t(kWarps) * q < pe; ++q) {  // warp-uniform
        const std::int64_t rb = __shfl_sync(kFull, own_rb, q), re = __shfl_sync(kFull, own_re, q);
#pragma unroll 4
        for (std::int64_t r = rb + lane; r < re; r += 32) set_bit(count_mask, static_cast<int>(__ldg(b_idx + r)));
      }
    }
    __syncthreads();
    int own = 0;
    for (int w = static_cast<int>(threadIdx.x); w < words; w += kBlock) own += __popc(count_mask[w]);
    int total = 0;
    block_exclusive_scan(own, warp_sums, total);
    if (threadIdx.x == 0) counts[row] = total;
    __syncthreads();  // the mask and warp_sums are reset for the next row
  }
}

// Blocks per SM the registers must allow: shared memory admits 6 rows of F32 at n = 8192 (issue
// 15's case, 37 KB each of the H200's 228 KB), and 3 of F64 at that n.
template <class T>
constexpr int kFillMinBlocks = sizeof(T) == 4 ? 6 : 3;

template <class T, class I>
__global__ __launch_bounds__(kBlock, kFillMinBlocks<T>) void spgemm_fill_kernel(
    const I* __restrict__ a_ptr, const I* __restrict__ a_idx, const T* __restrict__ a_values,
    const I* __restrict__ b_ptr, const I* __restrict__ b_idx, const T* __restrict__ b_values,
    const I* __restrict__ c_ptr, std::int64_t m, std::int64_t n, I* __restrict__ c_idx, T* __restrict__ c_values) {
  extern __shared__ __align__(16) unsigned char fill_shared[];
  __shared__ int warp_sums[kWarps];
  const FillLayout layout(n, sizeof(T), sizeof(I));
  T* acc = reinterpret_cast<T*>(fill_shared);
  unsigned* mask = reinterpret_cast<unsigned*>(fill_shared + layout.mask_at);
  // Staged A entries (values first: the widest type, 8-byte aligned).
  T* stage_value = reinterpret_cast<T*>(fill_shared + layout.scratch_at);
  I* stage_start = reinterpret_cast<I*>(stage_value + kStage);
  int* stage_length = reinterpret_cast<int*>(stage_start + kStage);
  int* word_offset = reinterpret_cast<int*>(fill_shared + layout.scratch_at);  // compaction only
  const int words = static_cast<int>(mask_words(n));
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31, warp = tid >> 5;

  for (std::int64_t row = blockIdx.x; row < m; row += gridDim.x) {  // block-uniform
    for (std::int64_t j = tid; j < n; j += kBlock) acc[j] = T(0);
    for (int w = tid; w < words; w += kBlock) mask[w] = 0;
    const std::int64_t pa = __ldg(a_ptr + row), pe = __ldg(a_ptr + row + 1);
    __syncthreads();  // zeroed; the scratch's word offsets of the previous row are read
    for (std::int64_t chunk = pa; chunk < pe; chunk += kStage) {
      const int count = static_cast<int>(std::min<std::int64_t>(kStage, pe - chunk));
      if (tid < count) {
        const std::int64_t k = __ldg(a_idx + chunk + tid);
        const I rb = __ldg(b_ptr + k);
        stage_start[tid] = rb;
        stage_length[tid] = static_cast<int>(__ldg(b_ptr + k + 1) - rb);  // at most n: one B row's distinct columns
        stage_value[tid] = __ldg(a_values + chunk + tid);
      }
      __syncthreads();
      for (int q0 = 0; q0 < count; q0 += kPrefetch) {
        int first_col[kPrefetch];
        T first_value[kPrefetch];
#pragma unroll
        for (int d = 0; d < kPrefetch; ++d) {
          first_col[d] = -1;
          first_value[d] = T(0);
          const int q = q0 + d;
          if (q < count && tid < stage_length[q]) {
            const std::int64_t r = static_cast<std::int64_t>(stage_start[q]) + tid;
            first_col[d] = static_cast<int>(__ldg(b_idx + r));
            first_value[d] = __ldg(b_values + r);
          }
        }
#pragma unroll
        for (int d = 0; d < kPrefetch; ++d) {
          const int q = q0 + d;
          if (q < count) {  // block-uniform
            const T av = stage_value[q];
            if (first_col[d] >= 0) {
              const int j = first_col[d];
              acc[j] = add_product(acc[j], av, first_value[d]);
              set_bit(mask, j);
            }
            const std::int64_t end = static_cast<std::int64_t>(stage_start[q]) + stage_length[q];
            for (std::int64_t r = static_cast<std::int64_t>(stage_start[q]) + tid + kBlock; r < end; r += kBlock) {
              const int j = static_cast<int>(__ldg(b_idx + r));
              acc[j] = add_product(acc[j], av, __ldg(b_values + r));
              set_bit(mask, j);
            }
            __syncthreads();  // p's products are in before p + 1's: the CPU's order per column
          }
        }
      }
    }
    // Compaction. Thread t owns a contiguous run of words; the scan of their popcounts gives
    // each word's offset in C's row.
    const int per = (words + kBlock - 1) / kBlock;
    const int w0 = std::min(tid * per, words), w1 = std::min(w0 + per, words);
    int own = 0;
    for (int w = w0; w < w1; ++w) own += __popc(mask[w]);
    int total = 0;
    // The scratch's staged A entries were last read before the final __syncthreads of the
    // products, so the word offsets may overwrite them now.
    int running = block_exclusive_scan(own, warp_sums, total);
    for (int w = w0; w < w1; ++w) {
      word_offset[w] = running;
      running += __popc(mask[w]);
    }
    __syncthreads();
    const std::int64_t at = __ldg(c_ptr + row);
    for (int w = warp; w < words; w += kWarps) {
      const unsigned bits = mask[w];
      if ((bits >> lane) & 1u) {
        const std::int64_t pos = at + word_offset[w] + __popc(bits & ((1u << lane) - 1u));
        const int j = w * 32 + lane;
        c_idx[pos] = static_cast<I>(j);
        c_values[pos] = acc[j];
      }
    }
    __syncthreads();  // acc, mask and the scratch are reused by the next row
  }
}

unsigned row_blocks(std::int64_t m) { return static_cast<unsigned>(std::min(m, kMaxRowBlocks)); }

template <class F>
void with_real(DType values, F&& f) {
  if (values == DType::F32) return f(float{});
  if (values == DType::F64) return f(double{});
  FERRITE_THROW(Unsupported, "sparse::spgemm: own kernel has no dtype ", dtype_name(values));
}

// The fill kernel's dynamic shared memory in bytes.
std::int64_t spgemm_shared_bytes(DType values, DType index, std::int64_t n) {
  return FillLayout(n, static_cast<std::int64_t>(dtype_size(values)), static_cast<std::int64_t>(dtype_size(index)))
      .bytes;
}

// The fill kernel's attributes, set once per device and kernel instance (a per-device flag,
// so concurrent first calls wait for the one that sets them): above 48 KB of dynamic shared
// memory a kernel must opt in, and the whole carveout goes to shared memory, so that
// kFillMinBlocks rows fit an SM. The opt-in is the device's whole per-block limit less the
// kernel's static part, not this call's size: that is the most spgemm_supported admits, so
// one setting serves every n, and no thread's smaller call can lower the limit between
// another thread's setting and its launch (as a per-call setting could). The limit only
// bounds what a launch may ask for; each launch still asks for its own n's bytes.
template <class T, class I>
void prepare_fill_kernel() {
  static std::array<std::once_flag, kMaxDevices> once;
  int device = 0;
  FERRITE_CUDA_CHECK(cudaGetDevice(&device));
  FERRITE_CHECK(device >= 0 && device < kMaxDevices, InvalidArgument, "sparse: device index ", device,
                " is out of range");
  std::call_once(once[static_cast<std::size_t>(device)], [device] {
    int optin = 0;
    FERRITE_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    cudaFuncAttributes attributes{};
    FERRITE_CUDA_CHECK(cudaFuncGetAttributes(&attributes, spgemm_fill_kernel<T, I>));
    FERRITE_CUDA_CHECK(cudaFuncSetAttribute(spgemm_fill_kernel<T, I>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            optin - static_cast<int>(attributes.sharedSizeBytes)));
    FERRITE_CUDA_CHECK(cudaFuncSetAttribute(spgemm_fill_kernel<T, I>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                            cudaSharedmemCarveoutMaxShared));
  });
}

}  // namespace

bool spgemm_supported(DType values, DType index, std::int64_t n, int device) {
  if (values != DType::F32 && values != DType::F64) return false;
  if (index != DType::I32 && index != DType::I64) return false;
  if (n < 0 || n * static_cast<std::int64_t>(dtype_size(values)) > kMaxAccBytes) return false;
  int optin = 0;
  FERRITE_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return spgemm_shared_bytes(values, index, n) + kWarps * 4 <= optin;  // + the static warp sums
}

void spgemm_count(DType index, const void* a_ptr, const void* a_idx, const void* b_ptr, const void* b_idx,
                  std::int64_t m, std::int64_t n, std::int64_t* counts, cudaStream_t stream) {
  if (m == 0) return;
  const auto bytes = static_cast<std::size_t>(mask_words(n) * 4);
  dispatch::with_index(index, [&](auto i) {
    using I = decltype(i);
    spgemm_count_kernel<I><<<row_blocks(m), kBlock, bytes, stream>>>(
        static_cast<const I*>(a_ptr), static_cast<const I*>(a_idx), static_cast<const I*>(b_ptr),
        static_cast<const I*>(b_idx), m, n, counts);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void spgemm_fill(DType values_dtype, DType index, const void* a_ptr, const void* a_idx, const void* a_values,
                 const void* b_ptr, const void* b_idx, const void* b_values, const void* c_ptr, std::int64_t m,
                 std::int64_t n, void* c_idx, void* c_values, cudaStream_t stream) {
  if (m == 0) return;
  const auto bytes = static_cast<std::size_t>(spgemm_shared_bytes(values_dtype, index, n));
  dispatch::with_index(index, [&](auto i) {
    using I = decltype(i);
    with_real(values_dtype, [&](auto v) {
      using T = decltype(v);
      prepare_fill_kernel<T, I>();
      spgemm_fill_kernel<T, I><<<row_blocks(m), kBlock, bytes, stream>>>(
          static_cast<const I*>(a_ptr), static_cast<const I*>(a_idx), static_cast<const T*>(a_values),
          static_cast<const I*>(b_ptr), static_cast<const I*>(b_idx), static_cast<const T*>(b_values),
          static_cast<const I*>(c_ptr), m, n, static_cast<I*>(c_idx), static_cast<T*>(c_values));
    });
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace ferrite::cuda::sparse

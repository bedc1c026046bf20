// Kernels of the CUDA sparse family: validation, compressed <-> dense, pointer expansion and
// compression, and the pieces of coalescing and transposition around CUB's radix sort. No
// floating-point atomics: every sum runs sequentially over one run in a fixed order.
#include "cuda/sparse/sparse_kernels.cuh"
#include "cuda/sparse/sparse_dispatch.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "core/numeric.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::sparse {
namespace {

using dispatch::blocks_for;
using dispatch::kThreads;
using dispatch::with_index;
using dispatch::with_values;

template <int kBytes>
struct alignas(kBytes) Bytes {
  unsigned char b[kBytes];
};

// Validation keys, ordered as the CPU backend reports: the phase in the top bits, then the
// position, then (indices only) whether the problem is the order rather than the range.
constexpr unsigned long long kPhaseShift = 60;
__device__ void report(unsigned long long* first, unsigned long long key) { atomicMin(first, key); }

template <class I>
__global__ void validate_kernel(const I* ptr, const I* idx, std::int64_t major, std::int64_t minor, std::int64_t nnz,
                                unsigned long long* first) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i <= major;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t lo = ptr[i];
    if (i == 0 && lo != 0) report(first, (0ull << kPhaseShift));
    if (i == major) {
      if (lo != nnz) report(first, (2ull << kPhaseShift) | static_cast<unsigned long long>(major));
      continue;
    }
    const std::int64_t hi = ptr[i + 1];
    if (hi < lo) report(first, (1ull << kPhaseShift) | static_cast<unsigned long long>(i));
    if (lo < 0 || hi < lo || hi > nnz) continue;  // a pointer problem is reported; its range is not read
    for (std::int64_t p = lo; p < hi; ++p) {
      const std::int64_t j = idx[p];
      if (j < 0 || j >= minor) {
        report(first, (3ull << kPhaseShift) | (static_cast<unsigned long long>(p) << 1));
        break;
      }
      if (p > lo && j <= static_cast<std::int64_t>(idx[p - 1])) {
        report(first, (3ull << kPhaseShift) | (static_cast<unsigned long long>(p) << 1) | 1ull);
        break;
      }
    }
  }
}

template <class I, int kBytes>
__global__ void to_dense_kernel(const I* ptr, const I* idx, const Bytes<kBytes>* values, Bytes<kBytes>* dense,
                                std::int64_t major, std::int64_t minor, bool transposed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < major;
       i += std::int64_t(gridDim.x) * blockDim.x)
    for (std::int64_t p = ptr[i]; p < static_cast<std::int64_t>(ptr[i + 1]); ++p) {
      const std::int64_t j = idx[p];
      dense[transposed ? j * major + i : i * minor + j] = values[p];
    }
}

template <class I>
__global__ void expand_kernel(const I* ptr, I* out, std::int64_t major) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < major;
       i += std::int64_t(gridDim.x) * blockDim.x)
    for (std::int64_t p = ptr[i]; p < static_cast<std::int64_t>(ptr[i + 1]); ++p) out[p] = static_cast<I>(i);
}

template <class K, class I>
__global__ void compress_kernel(const K* sorted, I* ptr, std::int64_t major, std::int64_t nnz) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i <= major;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t lo = 0, hi = nnz;  // first position whose key is >= i
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<std::int64_t>(sorted[mid]) < i) lo = mid + 1; else hi = mid;
    }
    ptr[i] = static_cast<I>(lo);
  }
}

template <class I>
__global__ void keys_kernel(const I* rows, const I* cols, std::int64_t ncols, std::uint64_t* keys,
                            std::int64_t* positions, std::int64_t n) {
  for (std::int64_t p = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; p < n;
       p += std::int64_t(gridDim.x) * blockDim.x) {
    const auto r = static_cast<std::uint64_t>(rows[p]);
    keys[p] = cols ? r * static_cast<std::uint64_t>(ncols) + static_cast<std::uint64_t>(cols[p]) : r;
    positions[p] = p;
  }
}

__global__ void heads_kernel(const std::uint64_t* keys, std::int64_t* heads, std::int64_t n) {
  for (std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; k < n;
       k += std::int64_t(gridDim.x) * blockDim.x)
    heads[k] = (k == 0 || keys[k] != keys[k - 1]) ? 1 : 0;
}

// Arithmetic of a stored value: float for F16/BF16, pairs for complex.
template <class T>
struct Sum {
  using Acc = detail::wide_t<T>;
  __device__ static Acc load(T v) { return detail::widen(v); }
  __device__ static T store(Acc v) { return detail::narrow<T>(v); }
  __device__ static void add(Acc& a, Acc b) { a += b; }
};
template <class R>
struct Sum<detail::Complex<R>> {
  using Acc = detail::Complex<R>;
  __device__ static Acc load(Acc v) { return v; }
  __device__ static Acc store(Acc v) { return v; }
  __device__ static void add(Acc& a, Acc b) {
    a.re += b.re;
    a.im += b.im;
  }
};

template <class T, class I>
__global__ void sum_runs_kernel(const std::uint64_t* keys, const std::int64_t* positions, const std::int64_t* slot,
                                const T* values, std::int64_t n, std::int64_t ncols, I* out_rows, I* out_cols,
                                T* out_values) {
  for (std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; k < n;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    if (k > 0 && keys[k] == keys[k - 1]) continue;  // not a run head
    typename Sum<T>::Acc acc = Sum<T>::load(values[positions[k]]);
    for (std::int64_t q = k + 1; q < n && keys[q] == keys[k]; ++q) Sum<T>::add(acc, Sum<T>::load(values[positions[q]]));
    const std::int64_t at = slot[k] - 1;
    out_rows[at] = static_cast<I>(keys[k] / static_cast<std::uint64_t>(ncols));
    out_cols[at] = static_cast<I>(keys[k] % static_cast<std::uint64_t>(ncols));
    out_values[at] = Sum<T>::store(acc);
  }
}

template <class I, int kBytes>
__global__ void gather_kernel(const std::int64_t* positions, const I* majors, const Bytes<kBytes>* values, I* out_idx,
                              Bytes<kBytes>* out_values, std::int64_t n) {
  for (std::int64_t q = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; q < n;
       q += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t p = positions[q];
    out_idx[q] = majors[p];
    out_values[q] = values[p];
  }
}

template <class T>
__device__ bool nonzero(T v) {
  if constexpr (detail::is_complex_v<T>) {
    return v.re != 0 || v.im != 0;
  } else {
    return detail::widen(v) != 0;  // NaN is nonzero; -0 is zero
  }
}

// One warp per row: lanes read 32 consecutive columns and count with a ballot.
template <class T>
__global__ void count_kernel(const T* dense, std::int64_t rows, std::int64_t cols, std::int64_t* counts) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t r = (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / 32; r < rows; r += warps) {
    std::int64_t count = 0;
    for (std::int64_t c0 = 0; c0 < cols; c0 += 32) {
      const std::int64_t c = c0 + lane;
      const unsigned mask = __ballot_sync(0xffffffffu, c < cols && nonzero(dense[r * cols + c]));
      count += __popc(mask);
    }
    if (lane == 0) counts[r] = count;
  }
}

template <class I>
__global__ void pointers_kernel(const std::int64_t* inclusive, I* ptr, std::int64_t rows) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i <= rows;
       i += std::int64_t(gridDim.x) * blockDim.x)
    ptr[i] = static_cast<I>(i == 0 ? 0 : inclusive[i - 1]);
}

template <class T, class I>
__global__ void fill_kernel(const T* dense, const I* ptr, std::int64_t rows, std::int64_t cols, I* idx, T* values) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t r = (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / 32; r < rows; r += warps) {
    std::int64_t at = ptr[r];
    for (std::int64_t c0 = 0; c0 < cols; c0 += 32) {
      const std::int64_t c = c0 + lane;
      const bool keep = c < cols && nonzero(dense[r * cols + c]);
      const unsigned mask = __ballot_sync(0xffffffffu, keep);
      if (keep) {
        const std::int64_t q = at + __popc(mask & ((1u << lane) - 1u));
        idx[q] = static_cast<I>(c);
        values[q] = dense[r * cols + c];
      }
      at += __popc(mask);
    }
  }
}

template <class F>
void with_bytes(std::size_t bytes, F&& f) {
  switch (bytes) {
    case 2: return f(Bytes<2>{});
    case 4: return f(Bytes<4>{});
    case 8: return f(Bytes<8>{});
    case 16: return f(Bytes<16>{});
    default: FERRITE_THROW(Unsupported, "sparse: element size ", bytes, " is not supported");
  }
}

// One warp per row: blocks of 8 warps.
unsigned row_blocks(std::int64_t rows) {
  const std::int64_t b = (rows + 7) / 8;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 16 ? 65535 * 16 : b));
}

}  // namespace

void validate_compressed(DType index, const void* ptr, const void* idx, std::int64_t major, std::int64_t minor,
                         std::int64_t nnz, unsigned long long* first, cudaStream_t stream) {
  with_index(index, [&](auto i) {
    using I = decltype(i);
    validate_kernel<I><<<blocks_for(major + 1), kThreads, 0, stream>>>(static_cast<const I*>(ptr),
                                                                       static_cast<const I*>(idx), major, minor, nnz, first);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void compressed_to_dense(DType index, std::size_t value_bytes, const void* ptr, const void* idx, const void* values,
                         void* dense, std::int64_t major, std::int64_t minor, bool transposed, cudaStream_t stream) {
  if (major == 0) return;
  with_index(index, [&](auto i) {
    using I = decltype(i);
    with_bytes(value_bytes, [&](auto b) {
      using B = decltype(b);
      constexpr int kBytes = sizeof(B);
      to_dense_kernel<I, kBytes><<<blocks_for(major), kThreads, 0, stream>>>(
          static_cast<const I*>(ptr), static_cast<const I*>(idx), static_cast<const Bytes<kBytes>*>(values),
          static_cast<Bytes<kBytes>*>(dense), major, minor, transposed);
    });
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void expand_pointers(DType index, const void* ptr, void* out, std::int64_t major, cudaStream_t stream) {
  if (major == 0) return;
  with_index(index, [&](auto i) {
    using I = decltype(i);
    expand_kernel<I><<<blocks_for(major), kThreads, 0, stream>>>(static_cast<const I*>(ptr), static_cast<I*>(out), major);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void compress_sorted(DType index, const void* sorted, bool keys64, void* ptr, std::int64_t major, std::int64_t nnz,
                     cudaStream_t stream) {
  with_index(index, [&](auto i) {
    using I = decltype(i);
    if (keys64)
      compress_kernel<std::uint64_t, I><<<blocks_for(major + 1), kThreads, 0, stream>>>(
          static_cast<const std::uint64_t*>(sorted), static_cast<I*>(ptr), major, nnz);
    else
      compress_kernel<I, I><<<blocks_for(major + 1), kThreads, 0, stream>>>(static_cast<const I*>(sorted),
                                                                            static_cast<I*>(ptr), major, nnz);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void make_keys(DType index, const void* rows_idx, const void* cols_idx, std::int64_t cols, std::uint64_t* keys,
               std::int64_t* positions, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  with_index(index, [&](auto i) {
    using I = decltype(i);
    keys_kernel<I><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const I*>(rows_idx),
                                                          static_cast<const I*>(cols_idx), cols, keys, positions, n);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void mark_heads(const std::uint64_t* keys, std::int64_t* heads, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  heads_kernel<<<blocks_for(n), kThreads, 0, stream>>>(keys, heads, n);
  FERRITE_CUDA_CHECK_LAUNCH();
}

void sum_runs(DType values_dtype, DType index, const std::uint64_t* keys, const std::int64_t* positions,
              const std::int64_t* slot, const void* values, std::int64_t n, std::int64_t cols, void* out_rows,
              void* out_cols, void* out_values, cudaStream_t stream) {
  if (n == 0) return;
  with_index(index, [&](auto i) {
    using I = decltype(i);
    with_values(values_dtype, [&](auto v) {
      using T = decltype(v);
      sum_runs_kernel<T, I><<<blocks_for(n), kThreads, 0, stream>>>(keys, positions, slot, static_cast<const T*>(values),
                                                                   n, cols, static_cast<I*>(out_rows),
                                                                   static_cast<I*>(out_cols), static_cast<T*>(out_values));
    });
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void gather_transposed(DType index, std::size_t value_bytes, const std::int64_t* positions, const void* majors,
                       const void* values, void* out_idx, void* out_values, std::int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  with_index(index, [&](auto i) {
    using I = decltype(i);
    with_bytes(value_bytes, [&](auto b) {
      constexpr int kBytes = sizeof(decltype(b));
      gather_kernel<I, kBytes><<<blocks_for(n), kThreads, 0, stream>>>(
          positions, static_cast<const I*>(majors), static_cast<const Bytes<kBytes>*>(values), static_cast<I*>(out_idx),
          static_cast<Bytes<kBytes>*>(out_values), n);
    });
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void count_nonzeros(DType values, const void* dense, std::int64_t rows, std::int64_t cols, std::int64_t* counts,
                    cudaStream_t stream) {
  if (rows == 0) return;
  with_values(values, [&](auto v) {
    using T = decltype(v);
    count_kernel<T><<<row_blocks(rows), kThreads, 0, stream>>>(static_cast<const T*>(dense), rows, cols, counts);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void write_pointers(DType index, const std::int64_t* inclusive, void* ptr, std::int64_t rows, cudaStream_t stream) {
  with_index(index, [&](auto i) {
    using I = decltype(i);
    pointers_kernel<I><<<blocks_for(rows + 1), kThreads, 0, stream>>>(inclusive, static_cast<I*>(ptr), rows);
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

void fill_compressed(DType values_dtype, DType index, const void* dense, const void* ptr, std::int64_t rows,
                     std::int64_t cols, void* idx, void* values, cudaStream_t stream) {
  if (rows == 0) return;
  with_index(index, [&](auto i) {
    using I = decltype(i);
    with_values(values_dtype, [&](auto v) {
      using T = decltype(v);
      fill_kernel<T, I><<<row_blocks(rows), kThreads, 0, stream>>>(static_cast<const T*>(dense),
                                                                  static_cast<const I*>(ptr), rows, cols,
                                                                  static_cast<I*>(idx), static_cast<T*>(values));
    });
  });
  FERRITE_CUDA_CHECK_LAUNCH();
}

namespace {
int key_bits(std::uint64_t limit) {
  int bits = 1;
  while (bits < 64 && (limit >> bits) != 0) ++bits;
  return bits;
}
}  // namespace

std::size_t sort_pairs_bytes(std::int64_t n, std::uint64_t limit) {
  std::size_t bytes = 0;
  FERRITE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const std::uint64_t*>(nullptr),
                                                     static_cast<std::uint64_t*>(nullptr),
                                                     static_cast<const std::int64_t*>(nullptr),
                                                     static_cast<std::int64_t*>(nullptr), n, 0, key_bits(limit)));
  return bytes;
}

void sort_pairs(void* temp, std::size_t temp_bytes, const std::uint64_t* keys_in, std::uint64_t* keys_out,
                const std::int64_t* positions_in, std::int64_t* positions_out, std::int64_t n, std::uint64_t limit,
                cudaStream_t stream) {
  FERRITE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, positions_in, positions_out, n,
                                                     0, key_bits(limit), stream));
}

std::size_t inclusive_sum_bytes(std::int64_t n) {
  std::size_t bytes = 0;
  FERRITE_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, static_cast<const std::int64_t*>(nullptr),
                                                   static_cast<std::int64_t*>(nullptr), n));
  return bytes;
}

void inclusive_sum(void* temp, std::size_t temp_bytes, const std::int64_t* in, std::int64_t* out, std::int64_t n,
                   cudaStream_t stream) {
  FERRITE_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n, stream));
}

}  // namespace ferrite::cuda::sparse

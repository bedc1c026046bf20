// scatter_add and embedding_backward on the GPU, deterministic: instead of atomics (whose
// float sums depend on scheduling), the targets are sorted with a stable radix sort (so
// duplicates keep ascending index-position order), and the sorted positions are summed in a
// fixed order that depends only on the input:
//   pass 1: the sorted list is cut into chunks of kChunk positions; one thread per (chunk,
//     column) adds the chunk's runs of equal targets in order. A run that lies inside its
//     chunk is finished there (target = initial value + sources, in order). A run that crosses
//     chunk boundaries leaves partial sums: its first chunk's part (initial value included) as
//     the chunk's "trail", each later chunk's part as that chunk's "lead".
//   pass 2: one thread per (crossing run, column) adds the trail and then the leads in chunk
//     order, and stores the target.
// So no thread walks more than kChunk sources (a skewed index, where one target owns
// thousands of positions, used to leave a few threads doing thousands of dependent loads),
// and the sums are bit-repeatable: every partial covers fixed positions and is added in a
// fixed order. Half types accumulate in float and round once at the end; integers widen
// (I32 to I64) and wrap, so their sums are exact in any order.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "core/elementwise_functors.hpp"
#include "core/numeric.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/launch_grid.hpp"
#include "cuda/runtime/device_context.hpp"
#include "cuda/shape/shape_device.cuh"
#include "cuda/shape/shape_kernels.hpp"
#include "cuda/shape/shape_runtime.hpp"

namespace ferrite::cuda::shape {
namespace {

constexpr int kThreads = 256;

struct KeyPlan {
  int rank, dim;
  std::int64_t n, dim_size;
  std::uint64_t sentinel;  // the key of a bad index: above every valid target, so it sorts last
  std::int64_t sizes[kMaxIndexDims];
  std::int64_t data_strides[kMaxIndexDims];
  std::int64_t src_strides[kMaxIndexDims];
};

template <class I>
__global__ void __launch_bounds__(kThreads) keys_kernel(const I* __restrict__ index, const KeyPlan p,
                                                        std::uint64_t* __restrict__ keys,
                                                        std::int64_t* __restrict__ sources, long long* range,
                                                        unsigned long long* trail_count) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *trail_count = 0;  // the summing passes run after this kernel
  long long lo = LLONG_MAX, hi = LLONG_MIN;
  for (std::int64_t i = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; i < p.n; i += std::int64_t(gridDim.x) * kThreads) {
    std::int64_t rest = i, target = 0, source = 0;
    for (int k = p.rank - 1; k >= 0; --k) {
      const std::int64_t c = rest % p.sizes[k];
      rest /= p.sizes[k];
      if (k != p.dim) target += c * p.data_strides[k];
      source += c * p.src_strides[k];
    }
    const long long raw = index[i];
    lo = min(lo, raw);
    hi = max(hi, raw);
    const std::int64_t v = raw < 0 ? raw + p.dim_size : raw;
    const bool valid = v >= 0 && v < p.dim_size;
    keys[i] = valid ? static_cast<std::uint64_t>(target + v * p.data_strides[p.dim]) : p.sentinel;
    sources[i] = source;
  }
  fold_range(lo, hi, range);
}

// Sorted positions per pass-1 thread: a run longer than this is cut into chunk partials.
constexpr std::int64_t kChunk = 64;
// Pass 1 issues this many independent source loads before adding them in order.
constexpr int kLoadsInFlight = 8;
// Pass 2 loads this many lead partials (and their chunks' first keys) per round.
constexpr int kLeadsInFlight = 16;
// Never a key: keys are at most the sentinel (num_targets).
constexpr std::uint64_t kNoKey = ~std::uint64_t(0);

// (quotient, remainder) of t by width: 32-bit multiply-shift when the whole range fits.
__device__ __forceinline__ void split_index(std::int64_t t, std::int64_t width, FastDivmod width_div, bool fast,
                                            std::int64_t& q, std::int64_t& c) {
  if (fast) {
    const std::uint32_t q32 = width_div.div(static_cast<std::uint32_t>(t));
    q = q32;
    c = static_cast<std::uint32_t>(t) - q32 * width_div.divisor;
  } else {
    q = t / width;
    c = t % width;
  }
}

// Pass 1: one thread per (chunk, column); adjacent threads take adjacent columns, so each
// source row is read coalesced. Each round loads kLoadsInFlight keys and sources, then their
// values (and, where a run starts, the target's initial value) together, then adds in order.
// Writes the chunk's first run's partial to lead[chunk] always (pass 2 reads lead slots a
// few chunks past a run's end without using them, so they must hold defined values), a run
// that continues into the next chunk to trail[chunk] (the thread of column 0 appends the
// chunk to trail_list), and each run that ends in this chunk and started in it to out.
// Three blocks an SM fit without spills for 4-byte sums (79 registers); 8-byte sums
// (F64, I32 and I64 widened) take two.
template <class T>
__global__ void __launch_bounds__(kThreads, sizeof(detail::wide_t<T>) == 4 ? 3 : 2)
    chunk_sum_kernel(const std::uint64_t* __restrict__ keys, const std::int64_t* __restrict__ sources, std::int64_t n,
                     std::int64_t num_chunks, std::int64_t width, FastDivmod width_div, bool fast,
                     std::uint64_t sentinel, const T* __restrict__ src, T* __restrict__ out, detail::wide_t<T>* __restrict__ lead,
                     detail::wide_t<T>* __restrict__ trail, std::int64_t* __restrict__ trail_list,
                     unsigned long long* __restrict__ trail_count) {
  using W = detail::wide_t<T>;
  const std::int64_t total = num_chunks * width;
  for (std::int64_t t = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; t < total; t += std::int64_t(gridDim.x) * kThreads) {
    std::int64_t chunk, c;
    split_index(t, width, width_div, fast, chunk, c);
    const std::int64_t start = chunk * kChunk, end = min(n, start + kChunk);
    // The neighbours' keys say whether the first run continues one from the chunk before
    // and whether the last run continues into the chunk after.
    const std::uint64_t before = start > 0 ? keys[start - 1] : kNoKey;
    const std::uint64_t after = end < n ? keys[end] : kNoKey;
    std::uint64_t cur = kNoKey;  // the open run's key
    bool first = true;           // the open run is the chunk's first
    bool continued = false;      // ... and continues a run from the chunk before
    W acc{};
    auto finish = [&](bool continues) {
      const std::int64_t slot = chunk * width + c;
      if (first) lead[slot] = acc;
      if (cur == sentinel || continued) return;  // bad indices add nowhere; a lead waits for pass 2
      if (continues) {
        trail[slot] = acc;
        if (c == 0) trail_list[atomicAdd(trail_count, 1ull)] = chunk;  // list order is irrelevant
      } else {
        out[static_cast<std::int64_t>(cur) * width + c] = detail::narrow<T>(acc);
      }
    };
    for (std::int64_t p0 = start; p0 < end; p0 += kLoadsInFlight) {
      std::uint64_t k[kLoadsInFlight];
      std::int64_t s[kLoadsInFlight];
#pragma unroll
      for (int u = 0; u < kLoadsInFlight; ++u) {
        const bool in = p0 + u < end;
        k[u] = in ? keys[p0 + u] : kNoKey;
        s[u] = in ? sources[p0 + u] : 0;
      }
      W v[kLoadsInFlight], init[kLoadsInFlight];
#pragma unroll
      for (int u = 0; u < kLoadsInFlight; ++u) {
        const bool in = p0 + u < end;
        // A run that starts here (and does not continue one from the chunk before) starts
        // from its target's initial value. No other thread writes that target in this pass.
        const std::uint64_t prev = u > 0 ? k[u - 1] : p0 == start ? before : cur;
        const bool starts = in && k[u] != prev && k[u] != sentinel;
        v[u] = in ? detail::widen(src[s[u] * width + c]) : W{};
        init[u] = starts ? detail::widen(out[static_cast<std::int64_t>(k[u]) * width + c]) : W{};
      }
#pragma unroll
      for (int u = 0; u < kLoadsInFlight; ++u) {
        if (p0 + u >= end) break;
        if (k[u] != cur) {
          if (cur != kNoKey) {
            finish(false);
            first = false;
          }
          continued = first && k[u] == before;
          cur = k[u];
          acc = continued ? v[u] : detail::AddFn{}(init[u], v[u]);
        } else {
          acc = detail::AddFn{}(acc, v[u]);
        }
      }
    }
    finish(cur == after);
  }
}

// Pass 2: one thread per (crossing run, column): the run's trail, then the leads of the
// following chunks in chunk order for as long as a chunk starts with the run's key.
template <class T>
__global__ void __launch_bounds__(kThreads)
    chain_sum_kernel(const std::uint64_t* __restrict__ keys, std::int64_t num_chunks, std::int64_t width,
                     FastDivmod width_div, bool fast, const detail::wide_t<T>* __restrict__ lead,
                     const detail::wide_t<T>* __restrict__ trail, const std::int64_t* __restrict__ trail_list,
                     const unsigned long long* __restrict__ trail_count, T* __restrict__ out) {
  using W = detail::wide_t<T>;
  const std::int64_t total = static_cast<std::int64_t>(*trail_count) * width;
  for (std::int64_t t = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; t < total; t += std::int64_t(gridDim.x) * kThreads) {
    std::int64_t i, c;
    split_index(t, width, width_div, fast, i, c);
    const std::int64_t chunk = trail_list[i];
    const std::uint64_t key = keys[(chunk + 1) * kChunk - 1];  // a trail's chunk is full
    W acc = trail[chunk * width + c];
    bool more = true;
    // Keys and leads load together (lead slots are always written), then add in order up to
    // the first chunk of another key. Most runs cross one or two boundaries: the rounds grow
    // (2, 4, 8, then kLeadsInFlight chunks) so that short chains load few slots past their end.
    std::int64_t j0 = chunk + 1;
    for (int round = 2; more; j0 += round, round = min(2 * round, kLeadsInFlight)) {
      std::uint64_t k[kLeadsInFlight];
      W l[kLeadsInFlight];
#pragma unroll
      for (int u = 0; u < kLeadsInFlight; ++u) {
        const std::int64_t j = j0 + u;
        const bool in = u < round && j < num_chunks;
        k[u] = in ? keys[j * kChunk] : kNoKey;
        l[u] = in ? lead[j * width + c] : W{};
      }
#pragma unroll
      for (int u = 0; u < kLeadsInFlight; ++u) {
        if (u >= round) break;
        more = more && k[u] == key;
        if (more) acc = detail::AddFn{}(acc, l[u]);
      }
    }
    out[static_cast<std::int64_t>(key) * width + c] = detail::narrow<T>(acc);
  }
}

template <class T>
void launch_chunk_sums(const std::uint64_t* keys, const std::int64_t* sources, std::int64_t n,
                       std::int64_t num_targets, std::int64_t width, std::uint64_t sentinel, const void* src, void* out,
                       std::int64_t* trail_list, unsigned long long* trail_count, int device, cudaStream_t stream) {
  using W = detail::wide_t<T>;
  const std::int64_t num_chunks = (n + kChunk - 1) / kChunk;
  const std::size_t slots = static_cast<std::size_t>(num_chunks * width);
  Scratch partials(device, 2 * slots * sizeof(W), stream);
  W* lead = partials.as<W>();
  W* trail = lead + slots;

  const std::int64_t pass1 = num_chunks * width;
  const bool fast1 = pass1 < (std::int64_t(1) << 31);
  const FastDivmod width_div(fast1 ? static_cast<std::uint32_t>(width) : 1);
  chunk_sum_kernel<T><<<grid_stride_blocks(pass1, kThreads), kThreads, 0, stream>>>(
      keys, sources, n, num_chunks, width, width_div, fast1, sentinel, static_cast<const T*>(src), static_cast<T*>(out),
      lead, trail, trail_list, trail_count);
  FERRITE_CUDA_CHECK_LAUNCH();
  if (num_chunks == 1) return;  // no run can cross a chunk boundary

  // At most one crossing run per target and per chunk but the last; the count itself is
  // only on the device, so the grid covers the bound and the surplus threads exit at once.
  // That bound is below pass 1's range, so pass 1's division choice holds.
  const std::int64_t pass2 = std::min(num_chunks - 1, num_targets) * width;
  chain_sum_kernel<T><<<grid_stride_blocks(pass2, kThreads, 1024), kThreads, 0, stream>>>(
      keys, num_chunks, width, width_div, fast1, lead, trail, trail_list, trail_count, static_cast<T*>(out));
  FERRITE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void scatter_sum(DType dtype, const Buffer& index, const void* src, void* out, const IndexLayout& l,
                 std::int64_t num_targets, std::int64_t width, long long* range, int device, cudaStream_t stream) {
  KeyPlan p{};
  p.rank = l.rank;
  p.dim = l.dim;
  p.dim_size = l.dim_size;
  p.n = 1;
  for (int k = 0; k < l.rank; ++k) {
    p.sizes[k] = l.sizes[k];
    p.data_strides[k] = l.data_strides[k];
    p.src_strides[k] = l.src_strides[k];
    p.n *= l.sizes[k];
  }
  if (p.n == 0) return;
  p.sentinel = static_cast<std::uint64_t>(num_targets);
  const std::size_t n = static_cast<std::size_t>(p.n);
  Scratch keys(device, 2 * n * sizeof(std::uint64_t), stream), sources(device, 2 * n * sizeof(std::int64_t), stream);
  std::uint64_t* keys_in = keys.as<std::uint64_t>();
  std::uint64_t* keys_out = keys_in + n;
  std::int64_t* sources_in = sources.as<std::int64_t>();
  std::int64_t* sources_out = sources_in + n;
  // The chunks whose last run crosses into the next chunk (pass 2's work list), after their
  // count, which the key kernel zeroes.
  const std::int64_t num_chunks = (p.n + kChunk - 1) / kChunk;
  Scratch trails(device, static_cast<std::size_t>(num_chunks + 1) * sizeof(std::int64_t), stream);
  unsigned long long* trail_count = trails.as<unsigned long long>();
  std::int64_t* trail_list = trails.as<std::int64_t>() + 1;

  const unsigned blocks = grid_stride_blocks(p.n, kThreads, 4096);  // each block folds its range with one atomic pair
  if (index.dtype() == DType::I32)
    keys_kernel<std::int32_t><<<blocks, kThreads, 0, stream>>>(index.data_as<std::int32_t>(), p, keys_in, sources_in,
                                                                 range, trail_count);
  else
    keys_kernel<std::int64_t><<<blocks, kThreads, 0, stream>>>(index.data_as<std::int64_t>(), p, keys_in, sources_in,
                                                                 range, trail_count);
  FERRITE_CUDA_CHECK_LAUNCH();

  // Only the bits a key can use: the sentinel is the largest key.
  int end_bit = 1;
  while (end_bit < 64 && (p.sentinel >> end_bit) != 0) ++end_bit;
  std::size_t temp_bytes = 0;
  FERRITE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out, sources_in, sources_out,
                                                     p.n, 0, end_bit, stream));
  Scratch temp(device, temp_bytes, stream);
  FERRITE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.as<void>(), temp_bytes, keys_in, keys_out, sources_in,
                                                     sources_out, p.n, 0, end_bit, stream));
  auto sums = [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_chunk_sums<T>(keys_out, sources_out, p.n, num_targets, width, p.sentinel, src, out, trail_list, trail_count,
                         device, stream);
  };
  switch (dtype) {
    case DType::F32: return sums(std::type_identity<float>{});
    case DType::F64: return sums(std::type_identity<double>{});
    case DType::F16: return sums(std::type_identity<Half>{});
    case DType::BF16: return sums(std::type_identity<BFloat16>{});
    case DType::I32: return sums(std::type_identity<std::int32_t>{});
    case DType::I64: return sums(std::type_identity<std::int64_t>{});
    default: FERRITE_THROW(Unsupported, "scatter_add: dtype ", dtype_name(dtype), " is not supported on cuda");
  }
}

}  // namespace ferrite::cuda::shape

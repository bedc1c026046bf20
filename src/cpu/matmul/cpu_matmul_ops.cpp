// The CPU backend's matrix products: every (batched, broadcast, transposed) product goes
// through Eigen's GEMM (eigen_gemm_f32.cpp / _f64.cpp). F16 and BF16 are widened to float
// once, multiplied and accumulated in float, and rounded once on store, so the CPU follows
// the same "accumulate in F32" rule as the tensor cores it is compared with.
#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

#include "core/host_scratch.hpp"
#include "core/numeric.hpp"
#include "core/op_support.hpp"
#include "cpu/cpu_families.hpp"
#include "cpu/matmul/eigen_gemm.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cpu {
namespace {

// The output of each product is cut into tiles of this size whatever the thread count, and
// each tile is one single-threaded Eigen call: which thread computes a tile changes nothing,
// so results are bitwise the same for any OMP_NUM_THREADS (Eigen's own threading picks its
// k-blocking from the thread count, which changed F32 results by about 1e-6).
constexpr std::int64_t kTileRows = 256, kTileCols = 256;
// Below this many multiply-adds in all, the tiles run on the calling thread.
constexpr double kParallelWork = double(1 << 18);
constexpr std::int64_t kParallelElements = 1 << 16;

struct Offsets {
  std::int64_t a = 0, b = 0, c = 0;
};

Offsets batch_offsets(const GemmDesc& d, std::int64_t index) {
  Offsets o;
  for (int i = d.batch_rank - 1; i >= 0; --i) {
    const auto u = static_cast<std::size_t>(i);
    const std::int64_t coordinate = index % d.batch_sizes[u];
    index /= d.batch_sizes[u];
    o.a += coordinate * d.stride_a[u];
    o.b += coordinate * d.stride_b[u];
    o.c += coordinate * d.stride_c[u];
  }
  return o;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0); }

template <class T>
void run_batches(const GemmDesc& d, const T* a, const T* b, T* c) {
  const EigenGemmShape shape{d.m, d.n, d.k, d.transpose_a, d.transpose_b};
  const auto alpha = static_cast<T>(d.alpha), beta = static_cast<T>(d.beta);
  const std::int64_t col_tiles = ceil_div(d.n, kTileCols);
  const std::int64_t tiles = ceil_div(d.m, kTileRows) * col_tiles;
  const std::int64_t items = d.batch_count() * tiles;  // at most the output's numel
  const double work = static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k) *
                      static_cast<double>(d.batch_count());
  // No exception may leave an OpenMP region (it would terminate): Eigen's packing buffers
  // can fail to allocate, so the loop records that and throws after the region.
  bool out_of_memory = false;
#pragma omp parallel for schedule(dynamic) if (items > 1 && work >= kParallelWork)
  for (std::int64_t i = 0; i < items; ++i) {
    const Offsets o = batch_offsets(d, i / tiles);
    const std::int64_t row = i % tiles / col_tiles * kTileRows, col = i % tiles % col_tiles * kTileCols;
    const GemmTile tile{row, std::min(kTileRows, d.m - row), col, std::min(kTileCols, d.n - col)};
    try {
      eigen_gemm(shape, tile, a + o.a, b + o.b, c + o.c, alpha, beta);
    } catch (const std::bad_alloc&) {
#pragma omp atomic write
      out_of_memory = true;
    }
  }
  FERRITE_CHECK(!out_of_memory, OutOfMemory, "matmul: out of host memory for Eigen's packing buffers (m ", d.m,
                ", n ", d.n, ", k ", d.k, ")");
}

template <class T>
std::vector<float> widen_all(const Buffer& x) {
  std::vector<float> out = detail::host_scratch<float>(x.numel(), "matmul");
  const T* in = x.data_as<const T>();
  const auto n = static_cast<std::int64_t>(out.size());
#pragma omp parallel for schedule(static) if (n >= kParallelElements)
  for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = detail::widen(in[i]);
  return out;
}

// F16/BF16 operands: widen, multiply in float, round once (or keep float for an F32 result).
template <class H>
void half_gemm(const GemmDesc& d, const Buffer& a, const Buffer& b, const Buffer& c) {
  const std::vector<float> af = widen_all<H>(a), bf = widen_all<H>(b);
  if (d.output == DType::F32) {
    run_batches<float>(d, af.data(), bf.data(), c.data_as<float>());
    return;
  }
  std::vector<float> cf = d.beta != 0 ? widen_all<H>(c) : detail::host_scratch<float>(c.numel(), "matmul");
  run_batches<float>(d, af.data(), bf.data(), cf.data());
  H* out = c.data_as<H>();
  const auto n = static_cast<std::int64_t>(cf.size());
#pragma omp parallel for schedule(static) if (n >= kParallelElements)
  for (std::int64_t i = 0; i < n; ++i) out[i] = detail::narrow<H>(cf[static_cast<std::size_t>(i)]);
}

// k == 0: the product is empty, so C = beta * C, computed in the wide type and rounded once
// (the CUDA backend's kernel does the same arithmetic, so both agree bit for bit).
template <class T>
void scale_output(const Buffer& c, double beta) {
  using W = detail::wide_t<T>;
  T* out = c.data_as<T>();
  const W factor = static_cast<W>(beta);
  const std::int64_t n = c.numel();
  for (std::int64_t i = 0; i < n; ++i) out[i] = beta == 0 ? detail::narrow<T>(W(0)) : detail::narrow<T>(factor * detail::widen(out[i]));
}

class CpuMatmulOps final : public MatmulOps {
 public:
  bool supports(Op op, DType dtype) const override { return detail::matmul_supported(op, dtype); }

  void gemm(const GemmDesc& d, const Buffer& a, const Buffer& b, const Buffer& c) override {
    if (d.m == 0 || d.n == 0 || d.batch_count() == 0) return;
    if (d.k == 0) {
      switch (d.output) {
        case DType::F32: return scale_output<float>(c, d.beta);
        case DType::F64: return scale_output<double>(c, d.beta);
        case DType::F16: return scale_output<Half>(c, d.beta);
        case DType::BF16: return scale_output<BFloat16>(c, d.beta);
        default: break;
      }
    } else {
      switch (d.input) {
        case DType::F32: return run_batches<float>(d, a.data_as<const float>(), b.data_as<const float>(), c.data_as<float>());
        case DType::F64: return run_batches<double>(d, a.data_as<const double>(), b.data_as<const double>(), c.data_as<double>());
        case DType::F16: return half_gemm<Half>(d, a, b, c);
        case DType::BF16: return half_gemm<BFloat16>(d, a, b, c);
        default: break;
      }
    }
    FERRITE_THROW(Unsupported, "matmul: dtype ", dtype_name(d.input), " -> ", dtype_name(d.output),
                  " is not supported on the cpu backend");
  }
};

}  // namespace

std::unique_ptr<MatmulOps> make_cpu_matmul_ops() { return std::make_unique<CpuMatmulOps>(); }

}  // namespace ferrite::cpu

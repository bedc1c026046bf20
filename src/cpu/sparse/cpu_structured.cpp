// The CPU backend's 2:4 semi-structured sparsity: prune with the rule shared with the CUDA
// kernel (src/core/structured_sparsity.hpp), and C = A B computed densely from the pruned A
// (every element, zeros too, as a dense product: 0 x Inf is NaN), each element summed in F32
// over q = 0..k-1 and rounded once. TF32 rounding of F32 inputs is not emulated (the CUDA
// product is compared within a tolerance; docs/families/sparse.md).
#include "cpu/sparse/cpu_structured.hpp"

#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/dtype_dispatch.hpp"
#include "core/host_scratch.hpp"
#include "core/numeric.hpp"
#include "core/structured_sparsity.hpp"
#include "ferrite/error.hpp"
#include "ferrite/half.hpp"

namespace ferrite::cpu::structured_ops {
namespace {

template <class F>
void visit_structured(DType d, F&& f) {
  switch (d) {
    case DType::F32: return f(float{});
    case DType::F16: return f(Half{});
    case DType::BF16: return f(BFloat16{});
    default: FERRITE_THROW(Unsupported, "sparse: structured sparsity takes F16, BF16 or F32, not ", dtype_name(d));
  }
}

}  // namespace

void prune(const Buffer& dense_b, const Buffer& out_b, std::int64_t rows, std::int64_t cols, int group) {
  visit_structured(dense_b.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = dense_b.data_as<const T>();
    T* out = out_b.data_as<T>();
    const std::int64_t groups = rows * (cols / group);
#pragma omp parallel for schedule(static) if (groups > (std::int64_t(1) << 16))
    for (std::int64_t g = 0; g < groups; ++g) structured::prune_group(in + g * group, out + g * group, group);
  });
}

void matmul(const Buffer& a_b, const Buffer& b_b, bool b_transposed, const Buffer& c_b, bool c_transposed,
            std::int64_t m, std::int64_t k, std::int64_t n) {
  visit_structured(a_b.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* a = a_b.data_as<const T>();
    const T* b = b_b.data_as<const T>();
    T* c = c_b.data_as<T>();
    // B widened to F32 once, laid out [n, k] so each output element reads two rows.
    std::vector<float> bt = detail::host_scratch<float>(n * k, "sparse::matmul_24");
    for (std::int64_t q = 0; q < k; ++q)
      for (std::int64_t j = 0; j < n; ++j)
        bt[static_cast<std::size_t>(j * k + q)] =
            static_cast<float>(detail::widen(b_transposed ? b[j * k + q] : b[q * n + j]));
    // One widened row of A per thread, allocated here (an allocation failure inside the
    // parallel loop could not become an Error).
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    std::vector<float> rows = detail::host_scratch<float>(k * threads, "sparse::matmul_24");
#pragma omp parallel for schedule(static) if (m * n * k > (std::int64_t(1) << 20))
    for (std::int64_t i = 0; i < m; ++i) {
      int thread = 0;
#ifdef _OPENMP
      thread = omp_get_thread_num();
#endif
      float* arow = rows.data() + static_cast<std::size_t>(thread) * static_cast<std::size_t>(k);
      for (std::int64_t q = 0; q < k; ++q) arow[q] = static_cast<float>(detail::widen(a[i * k + q]));
      for (std::int64_t j = 0; j < n; ++j) {
        const float* bj = bt.data() + j * k;
        float acc = 0;
        for (std::int64_t q = 0; q < k; ++q) acc += arow[q] * bj[q];
        c[c_transposed ? j * m + i : i * n + j] = detail::narrow<T>(acc);
      }
    }
  });
}

}  // namespace ferrite::cpu::structured_ops

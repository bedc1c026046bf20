// The CPU backend's sparse matrices: plain loops over the compressed arrays (the reference
// the CUDA backend is checked against). Sums run in index order in the wide type (float for
// F16/BF16), so results are deterministic; rows of spmv/spmm spread over OpenMP, each row
// summed by one thread.
#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/dtype_dispatch.hpp"
#include "core/host_scratch.hpp"
#include "cpu/cpu_families.hpp"
#include "cpu/sparse/cpu_structured.hpp"
#include "ferrite/backend_families/sparse_ops.hpp"

namespace ferrite::cpu {
namespace {

using detail::TypeTag;

// Arithmetic type of a stored value: float for F16/BF16, std::complex for C64/C128.
template <class T>
struct Acc {
  using type = detail::wide_t<T>;
  using real = type;  // the type of a real scale factor (alpha, beta)
  static type load(T v) { return detail::widen(v); }
  static T store(type v) { return detail::narrow<T>(v); }
};
template <class R>
struct Acc<detail::Complex<R>> {
  using type = std::complex<R>;
  using real = R;  // complex values are scaled part by part, as the CUDA kernels do
  static type load(detail::Complex<R> v) { return {v.re, v.im}; }
  static detail::Complex<R> store(type v) { return {v.real(), v.imag()}; }
};

bool is_value_dtype(DType d) {
  return d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16 || d == DType::C64 ||
         d == DType::C128;
}

template <class F>
void visit_index(DType index, F&& f) {
  if (index == DType::I32) return f(TypeTag<std::int32_t>{});
  return f(TypeTag<std::int64_t>{});
}

template <class F>
void visit_values(DType values, F&& f) {
  detail::visit_dtype(values, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ||
                  detail::is_complex_v<T>)
      f(tag);
  });
}

// Both dispatches at once: f(index tag, values tag).
template <class F>
void visit_index_and_values(DType index, DType values, F&& f) {
  visit_index(index, [&](auto itag) { visit_values(values, [&](auto vtag) { f(itag, vtag); }); });
}

template <class T>
bool is_nonzero(T v) {
  if constexpr (detail::is_complex_v<T>) {
    return v.re != 0 || v.im != 0;
  } else {
    return detail::widen(v) != 0;  // NaN != 0 is true; -0 == 0
  }
}

// One operand's compressed arrays (ptr [major + 1], idx and values [nnz]) typed, as every op
// below that reads a whole operand takes them from its three Buffers.
template <class I, class T>
struct Compressed {
  const I* ptr;
  const I* idx;
  const T* values;
};
template <class I, class T>
Compressed<I, T> compressed(const Buffer& ptr, const Buffer& idx, const Buffer& values) {
  return {ptr.data_as<const I>(), idx.data_as<const I>(), values.data_as<const T>()};
}

// The second pass of a result built in two (dense_to_compressed, spgemm, add): the first pass
// counted `count` entries and wrote the pointers; this allocates idx and values to fill.
template <class I, class T>
struct Entries {
  I* idx;
  T* values;
};
template <class I, class T>
Entries<I, T> allocate_entries(CompressedResult& result, std::int64_t count, const SparseAllocate& allocate) {
  result.nnz = count;
  result.idx = allocate(count, true);
  result.values = allocate(count, false);
  return {result.idx.template data_as<I>(), result.values.template data_as<T>()};
}

class CpuSparseOps final : public SparseOps {
 public:
  bool supports(DType values, DType index) const override {
    return is_value_dtype(values) && (index == DType::I32 || index == DType::I64);
  }

  SparseCheck validate_compressed(const Buffer& ptr_b, const Buffer& idx_b, std::int64_t major, std::int64_t minor,
                                  std::int64_t nnz) override {
    SparseCheck check;
    visit_index(ptr_b.dtype(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      const I* ptr = ptr_b.data_as<const I>();
      const I* idx = idx_b.data_as<const I>();
      if (ptr[0] != 0) {
        check = {SparseCheck::kFirstPointerNotZero, 0};
        return;
      }
      for (std::int64_t i = 0; i < major; ++i)
        if (ptr[i + 1] < ptr[i]) {
          check = {SparseCheck::kPointersDecrease, i};
          return;
        }
      if (static_cast<std::int64_t>(ptr[major]) != nnz) {
        check = {SparseCheck::kLastPointerNotNnz, major};
        return;
      }
      for (std::int64_t i = 0; i < major; ++i)
        for (std::int64_t p = ptr[i]; p < static_cast<std::int64_t>(ptr[i + 1]); ++p) {
          if (idx[p] < 0 || static_cast<std::int64_t>(idx[p]) >= minor) {
            check = {SparseCheck::kIndexOutOfRange, p};
            return;
          }
          if (p > ptr[i] && idx[p] <= idx[p - 1]) {
            check = {SparseCheck::kIndicesNotSorted, p};
            return;
          }
        }
    });
    return check;
  }

  void compressed_to_dense(const Buffer& ptr_b, const Buffer& idx_b, const Buffer& values_b, const Buffer& dense_b,
                           std::int64_t major, std::int64_t minor, bool transposed) override {
    std::memset(dense_b.data(), 0, dense_b.nbytes());
    visit_index_and_values(ptr_b.dtype(), values_b.dtype(), [&](auto itag, auto vtag) {
      using I = typename decltype(itag)::type;
      using T = typename decltype(vtag)::type;
      const auto [ptr, idx, values] = compressed<I, T>(ptr_b, idx_b, values_b);
      T* dense = dense_b.data_as<T>();
      for (std::int64_t i = 0; i < major; ++i)
        for (std::int64_t p = ptr[i]; p < static_cast<std::int64_t>(ptr[i + 1]); ++p) {
          const std::int64_t j = idx[p];
          dense[transposed ? j * major + i : i * minor + j] = values[p];
        }
    });
  }

  void expand_pointers(const Buffer& ptr_b, const Buffer& out_b, std::int64_t major, std::int64_t) override {
    visit_index(ptr_b.dtype(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      const I* ptr = ptr_b.data_as<const I>();
      I* out = out_b.data_as<I>();
      for (std::int64_t i = 0; i < major; ++i)
        for (std::int64_t p = ptr[i]; p < static_cast<std::int64_t>(ptr[i + 1]); ++p) out[p] = static_cast<I>(i);
    });
  }

  void compress_indices(const Buffer& sorted_b, const Buffer& ptr_b, std::int64_t major, std::int64_t nnz) override {
    visit_index(ptr_b.dtype(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      const I* sorted = sorted_b.data_as<const I>();
      I* ptr = ptr_b.data_as<I>();
      std::int64_t p = 0;
      for (std::int64_t i = 0; i <= major; ++i) {
        while (p < nnz && sorted[p] < i) ++p;
        ptr[i] = static_cast<I>(p);
      }
    });
  }

  CooResult coalesce(const Buffer& rows_b, const Buffer& cols_b, const Buffer& values_b, std::int64_t nnz,
                     std::int64_t, std::int64_t, const SparseAllocate& allocate) override {
    CooResult result;
    visit_index_and_values(rows_b.dtype(), values_b.dtype(), [&](auto itag, auto vtag) {
      using I = typename decltype(itag)::type;
      using T = typename decltype(vtag)::type;
      const I* rows = rows_b.data_as<const I>();
      const I* cols = cols_b.data_as<const I>();
      const T* values = values_b.data_as<const T>();
      std::vector<std::int64_t> order = detail::host_scratch<std::int64_t>(nnz, "sparse::coalesce");
      std::iota(order.begin(), order.end(), 0);
      // Stable: duplicates keep their input order, so their sum is deterministic.
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        return rows[a] != rows[b] ? rows[a] < rows[b] : cols[a] < cols[b];
      });
      std::int64_t unique = 0;
      for (std::int64_t k = 0; k < nnz; ++k)
        if (k == 0 || rows[order[k]] != rows[order[k - 1]] || cols[order[k]] != cols[order[k - 1]]) ++unique;
      result.rows = allocate(unique, true);
      result.cols = allocate(unique, true);
      result.values = allocate(unique, false);
      result.nnz = unique;
      I* out_rows = result.rows.template data_as<I>();
      I* out_cols = result.cols.template data_as<I>();
      T* out_values = result.values.template data_as<T>();
      std::int64_t at = -1;
      typename Acc<T>::type sum{};
      for (std::int64_t k = 0; k < nnz; ++k) {
        const std::int64_t e = order[k];
        if (k == 0 || rows[e] != rows[order[k - 1]] || cols[e] != cols[order[k - 1]]) {
          if (at >= 0) out_values[at] = Acc<T>::store(sum);
          ++at;
          out_rows[at] = rows[e];
          out_cols[at] = cols[e];
          sum = Acc<T>::load(values[e]);
        } else {
          sum += Acc<T>::load(values[e]);
        }
      }
      if (at >= 0) out_values[at] = Acc<T>::store(sum);
    });
    return result;
  }

  void transpose_compressed(const Buffer& ptr_b, const Buffer& idx_b, const Buffer& values_b, std::int64_t major,
                            std::int64_t minor, std::int64_t nnz, const Buffer& out_ptr_b, const Buffer& out_idx_b,
                            const Buffer& out_values_b) override {
    visit_index_and_values(ptr_b.dtype(), values_b.dtype(), [&](auto itag, auto vtag) {
      using I = typename decltype(itag)::type;
      using T = typename decltype(vtag)::type;
      const auto [ptr, idx, values] = compressed<I, T>(ptr_b, idx_b, values_b);
      I* out_ptr = out_ptr_b.data_as<I>();
      I* out_idx = out_idx_b.data_as<I>();
      T* out_values = out_values_b.data_as<T>();
      // Counting sort by minor index: majors are visited in order, so each output slice
      // comes out sorted.
      std::vector<std::int64_t> next = detail::host_scratch<std::int64_t>(minor + 1, "sparse::transpose", 0);
      for (std::int64_t p = 0; p < nnz; ++p) ++next[static_cast<std::size_t>(idx[p]) + 1];
      for (std::int64_t j = 0; j < minor; ++j) next[j + 1] += next[j];
      for (std::int64_t j = 0; j <= minor; ++j) out_ptr[j] = static_cast<I>(next[j]);
      for (std::int64_t i = 0; i < major; ++i)
        for (std::int64_t p = ptr[i]; p < static_cast<std::int64_t>(ptr[i + 1]); ++p) {
          const std::int64_t q = next[static_cast<std::size_t>(idx[p])]++;
          out_idx[q] = static_cast<I>(i);
          out_values[q] = values[p];
        }
    });
  }

  CompressedResult dense_to_compressed(const Buffer& dense_b, const Buffer& ptr_b, std::int64_t rows, std::int64_t cols,
                                       const SparseAllocate& allocate) override {
    CompressedResult result;
    visit_index_and_values(ptr_b.dtype(), dense_b.dtype(), [&](auto itag, auto vtag) {
      using I = typename decltype(itag)::type;
      using T = typename decltype(vtag)::type;
      const T* dense = dense_b.data_as<const T>();
      I* ptr = ptr_b.data_as<I>();
      std::int64_t count = 0;
      ptr[0] = 0;
      for (std::int64_t i = 0; i < rows; ++i) {
        for (std::int64_t j = 0; j < cols; ++j) count += is_nonzero(dense[i * cols + j]);
        ptr[i + 1] = static_cast<I>(count);
      }
      const auto [idx, values] = allocate_entries<I, T>(result, count, allocate);
      std::int64_t at = 0;
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j)
          if (is_nonzero(dense[i * cols + j])) {
            idx[at] = static_cast<I>(j);
            values[at++] = dense[i * cols + j];
          }
    });
    return result;
  }

  // ---- 2:4 semi-structured sparsity (cpu_structured.cpp): no library, no compressed form ----
  std::string structured_unavailable() override { return {}; }
  void prune_structured(const Buffer& dense, const Buffer& out, std::int64_t rows, std::int64_t cols,
                        int group) override {
    structured_ops::prune(dense, out, rows, cols, group);
  }
  std::size_t structured_compressed_bytes(const Buffer&, std::int64_t, std::int64_t) override { return 0; }
  void compress_structured(const Buffer&, const Buffer&, std::int64_t, std::int64_t) override {}
  void structured_matmul(const Buffer& pruned, const Buffer&, const Buffer& b, bool b_transposed, const Buffer& c,
                         bool c_transposed, std::int64_t m, std::int64_t k, std::int64_t n) override {
    structured_ops::matmul(pruned, b, b_transposed, c, c_transposed, m, k, n);
  }

  void spmv(const Buffer& ptr_b, const Buffer& idx_b, const Buffer& values_b, const Buffer& x_b, const Buffer& y_b,
            std::int64_t m, std::int64_t, std::int64_t) override {
    spmm(ptr_b, idx_b, values_b, x_b, y_b, m, 0, 1, 0);
  }

  void spmm(const Buffer& ptr_b, const Buffer& idx_b, const Buffer& values_b, const Buffer& b_b, const Buffer& c_b,
            std::int64_t m, std::int64_t, std::int64_t n, std::int64_t) override {
    visit_index_and_values(ptr_b.dtype(), values_b.dtype(), [&](auto itag, auto vtag) {
      using I = typename decltype(itag)::type;
      using T = typename decltype(vtag)::type;
      using A = Acc<T>;
      const auto [ptr, idx, values] = compressed<I, T>(ptr_b, idx_b, values_b);
      const T* b = b_b.data_as<const T>();
      T* c = c_b.data_as<T>();
      // One accumulator row per thread, allocated here (an allocation failure inside the
      // parallel loop could not become an Error).
      int threads = 1;
#ifdef _OPENMP
      threads = omp_get_max_threads();
#endif
      std::vector<typename A::type> scratch =
          detail::host_scratch<typename A::type>(n * threads, "sparse::spmm");
#pragma omp parallel for schedule(dynamic, 16)
      for (std::int64_t i = 0; i < m; ++i) {
        int thread = 0;
#ifdef _OPENMP
        thread = omp_get_thread_num();
#endif
        typename A::type* row = scratch.data() + static_cast<std::size_t>(thread) * static_cast<std::size_t>(n);
        std::fill(row, row + n, typename A::type{});
        for (std::int64_t p = ptr[i]; p < static_cast<std::int64_t>(ptr[i + 1]); ++p) {
          const typename A::type a = A::load(values[p]);
          const T* brow = b + static_cast<std::int64_t>(idx[p]) * n;
          for (std::int64_t j = 0; j < n; ++j) row[j] += a * A::load(brow[j]);
        }
        for (std::int64_t j = 0; j < n; ++j) c[i * n + j] = A::store(row[j]);
      }
    });
  }

  CompressedResult spgemm(const Buffer& a_ptr_b, const Buffer& a_idx_b, const Buffer& a_values_b, std::int64_t,
                          const Buffer& b_ptr_b, const Buffer& b_idx_b, const Buffer& b_values_b, std::int64_t,
                          const Buffer& c_ptr_b, std::int64_t m, std::int64_t, std::int64_t n,
                          const SparseAllocate& allocate) override {
    CompressedResult result;
    visit_index_and_values(a_ptr_b.dtype(), a_values_b.dtype(), [&](auto itag, auto vtag) {
      using I = typename decltype(itag)::type;
      using T = typename decltype(vtag)::type;
      using A = Acc<T>;
      const auto a = compressed<I, T>(a_ptr_b, a_idx_b, a_values_b);
      const auto b = compressed<I, T>(b_ptr_b, b_idx_b, b_values_b);
      I* c_ptr = c_ptr_b.data_as<I>();
      // Gustavson's row-by-row product: `mark[j]` records the last row that reached column j.
      std::vector<std::int64_t> mark = detail::host_scratch<std::int64_t>(n, "sparse::spgemm", -1);
      std::int64_t count = 0;
      c_ptr[0] = 0;
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t p = a.ptr[i]; p < static_cast<std::int64_t>(a.ptr[i + 1]); ++p) {
          const std::int64_t q = a.idx[p];
          for (std::int64_t r = b.ptr[q]; r < static_cast<std::int64_t>(b.ptr[q + 1]); ++r)
            if (mark[static_cast<std::size_t>(b.idx[r])] != i) {
              mark[static_cast<std::size_t>(b.idx[r])] = i;
              ++count;
            }
        }
        FERRITE_CHECK(sizeof(I) == 8 || count <= std::numeric_limits<std::int32_t>::max(), InvalidArgument,
                      "sparse::spgemm: the product has more than 2^31 - 1 stored elements; use I64 indices");
        c_ptr[i + 1] = static_cast<I>(count);
      }
      const auto [c_idx, c_values] = allocate_entries<I, T>(result, count, allocate);
      std::vector<typename A::type> acc = detail::host_scratch<typename A::type>(n, "sparse::spgemm");
      std::fill(mark.begin(), mark.end(), -1);
      for (std::int64_t i = 0; i < m; ++i) {
        I* cols = c_idx + c_ptr[i];
        std::int64_t used = 0;
        for (std::int64_t p = a.ptr[i]; p < static_cast<std::int64_t>(a.ptr[i + 1]); ++p) {
          const typename A::type av = A::load(a.values[p]);
          const std::int64_t q = a.idx[p];
          for (std::int64_t r = b.ptr[q]; r < static_cast<std::int64_t>(b.ptr[q + 1]); ++r) {
            const auto j = static_cast<std::size_t>(b.idx[r]);
            if (mark[j] != i) {
              mark[j] = i;
              acc[j] = typename A::type{};
              cols[used++] = static_cast<I>(j);
            }
            acc[j] += av * A::load(b.values[r]);
          }
        }
        std::sort(cols, cols + used);
        for (std::int64_t u = 0; u < used; ++u)
          c_values[c_ptr[i] + u] = A::store(acc[static_cast<std::size_t>(cols[u])]);
      }
    });
    return result;
  }

  void sddmm(const Buffer& ptr_b, const Buffer& idx_b, const Buffer& values_b, std::int64_t, const Buffer& mat1_b,
             const Buffer& mat2_b, std::int64_t m, std::int64_t k, std::int64_t n, double alpha,
             double beta) override {
    visit_index_and_values(ptr_b.dtype(), values_b.dtype(), [&](auto itag, auto vtag) {
      using I = typename decltype(itag)::type;
      using T = typename decltype(vtag)::type;
      using A = Acc<T>;
      using V = typename A::type;
      const I* ptr = ptr_b.data_as<const I>();
      const I* idx = idx_b.data_as<const I>();
      T* values = values_b.data_as<T>();
      const T* mat1 = mat1_b.data_as<const T>();
      const T* mat2 = mat2_b.data_as<const T>();
      const auto a = static_cast<typename A::real>(alpha), b = static_cast<typename A::real>(beta);
#pragma omp parallel for schedule(dynamic, 16)
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t p = ptr[i]; p < static_cast<std::int64_t>(ptr[i + 1]); ++p) {
          const std::int64_t j = idx[p];
          V dot{};
          for (std::int64_t q = 0; q < k; ++q) dot += A::load(mat1[i * k + q]) * A::load(mat2[q * n + j]);
          values[p] = A::store(beta == 0 ? a * dot : b * A::load(values[p]) + a * dot);
        }
    });
  }

  CompressedResult add(const Buffer& a_ptr_b, const Buffer& a_idx_b, const Buffer& a_values_b, const Buffer& b_ptr_b,
                       const Buffer& b_idx_b, const Buffer& b_values_b, const Buffer& c_ptr_b, std::int64_t m,
                       std::int64_t, double alpha, const SparseAllocate& allocate) override {
    CompressedResult result;
    visit_index_and_values(a_ptr_b.dtype(), a_values_b.dtype(), [&](auto itag, auto vtag) {
      using I = typename decltype(itag)::type;
      using T = typename decltype(vtag)::type;
      using A = Acc<T>;
      const auto a = compressed<I, T>(a_ptr_b, a_idx_b, a_values_b);
      const auto b = compressed<I, T>(b_ptr_b, b_idx_b, b_values_b);
      I* c_ptr = c_ptr_b.data_as<I>();
      const auto scale = static_cast<typename A::real>(alpha);
      // Both passes merge each row's two sorted column lists; the first only counts.
      const auto merge = [&](std::int64_t i, auto&& emit) {
        std::int64_t p = a.ptr[i], q = b.ptr[i];
        const std::int64_t pe = a.ptr[i + 1], qe = b.ptr[i + 1];
        while (p < pe || q < qe) {
          if (q == qe || (p < pe && a.idx[p] < b.idx[q])) {
            emit(a.idx[p], A::load(a.values[p]));
            ++p;
          } else if (p == pe || b.idx[q] < a.idx[p]) {
            emit(b.idx[q], scale * A::load(b.values[q]));
            ++q;
          } else {
            emit(a.idx[p], A::load(a.values[p]) + scale * A::load(b.values[q]));
            ++p;
            ++q;
          }
        }
      };
      std::int64_t count = 0;
      c_ptr[0] = 0;
      for (std::int64_t i = 0; i < m; ++i) {
        merge(i, [&](I, typename A::type) { ++count; });
        c_ptr[i + 1] = static_cast<I>(count);
      }
      const auto c = allocate_entries<I, T>(result, count, allocate);
      std::int64_t at = 0;
      for (std::int64_t i = 0; i < m; ++i)
        merge(i, [&](I j, typename A::type v) {
          c.idx[at] = j;
          c.values[at++] = A::store(v);
        });
    });
    return result;
  }
};

}  // namespace

std::unique_ptr<SparseOps> make_cpu_sparse_ops() { return std::make_unique<CpuSparseOps>(); }

}  // namespace ferrite::cpu

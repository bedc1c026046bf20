// The CUDA backend's sparse matrices: own kernels for validation, conversions and coalescing
// (sparse_kernels.cu, around CUB's radix sort and scan) and for real-valued SpMV
// (sparse_spmv_kernels.cu, a fixed summation order) and SpGEMM of real values with up to 64 KB
// of C's row in shared memory (sparse_spgemm_kernels.cu, A's storage order), cuSPARSE's generic
// API for the other products (complex SpMV with its deterministic CSR algorithm, SpMM with a
// non-transposed sparse operand, which cuSPARSE documents as deterministic, the other SpGEMMs,
// SDDMM). Work runs on the device's current stream; scratch comes from the device pool; counts
// are read back through pinned memory.
#include <cusparse.h>

#include <array>
#include <string>
#include <limits>
#include <memory>
#include <mutex>

#include "cuda/cuda_families.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/device_context.hpp"
#include "cuda/shape/shape_runtime.hpp"
#include "cuda/sparse/cusparselt_structured.hpp"
#include "cuda/sparse/sparse_kernels.cuh"
#include "cuda/sparse/structured_kernels.cuh"

#define FERRITE_CUSPARSE_CHECK(expr)                                                                         \
  do {                                                                                                       \
    const cusparseStatus_t ferrite_sparse_status_ = (expr);                                                  \
    if (ferrite_sparse_status_ != CUSPARSE_STATUS_SUCCESS) [[unlikely]]                                      \
      ::ferrite::cuda::throw_library_error("cuSPARSE", static_cast<int>(ferrite_sparse_status_),             \
                                           cusparseGetErrorString(ferrite_sparse_status_), #expr, __FILE__, \
                                           __LINE__);                                                        \
  } while (0)

namespace ferrite::cuda {
namespace {

using shape::Readback;
using shape::Scratch;

constexpr int kMaxDevices = 64;

// One cuSPARSE handle per device, created on first use, bound to the caller's stream per call.
cusparseHandle_t handle_for(int device) {
  static std::array<std::once_flag, kMaxDevices> once;
  static std::array<cusparseHandle_t, kMaxDevices> handles{};
  FERRITE_CHECK(device >= 0 && device < kMaxDevices, InvalidArgument, "sparse: device index ", device, " is out of range");
  std::call_once(once[static_cast<std::size_t>(device)], [&] {
    DeviceGuard guard(device);
    FERRITE_CUSPARSE_CHECK(cusparseCreate(&handles[static_cast<std::size_t>(device)]));
  });
  return handles[static_cast<std::size_t>(device)];
}

cudaDataType value_type(DType d) {
  switch (d) {
    case DType::F32: return CUDA_R_32F;
    case DType::F64: return CUDA_R_64F;
    case DType::F16: return CUDA_R_16F;
    case DType::BF16: return CUDA_R_16BF;
    case DType::C64: return CUDA_C_32F;
    case DType::C128: return CUDA_C_64F;
    default: FERRITE_THROW(Unsupported, "sparse: values of dtype ", dtype_name(d), " are not supported on cuda");
  }
}

// F16/BF16 products accumulate in F32 (cuSPARSE's mixed-precision mode).
cudaDataType compute_type(DType d) { return d == DType::F16 || d == DType::BF16 ? CUDA_R_32F : value_type(d); }

cusparseIndexType_t index_type(DType d) { return d == DType::I32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I; }

// alpha = 1, beta = 0 in the compute type. Aligned as cuDoubleComplex (16 bytes): cuSPARSE
// reads a CUDA_C_64F scalar on the host with aligned 16-byte loads, and an 8-aligned one
// crashed the process (a segmentation fault inside cusparseSpMV/SpMM for C128).
struct Scalars {
  alignas(16) double real[2] = {1, 0};
  alignas(16) double zero_real[2] = {0, 0};
  alignas(8) float single[2] = {1, 0};
  alignas(8) float zero_single[2] = {0, 0};
  const void* one(cudaDataType t) const {
    return t == CUDA_R_64F || t == CUDA_C_64F ? static_cast<const void*>(real) : static_cast<const void*>(single);
  }
  const void* zero(cudaDataType t) const {
    return t == CUDA_R_64F || t == CUDA_C_64F ? static_cast<const void*>(zero_real) : static_cast<const void*>(zero_single);
  }
};
static_assert(alignof(Scalars) >= 16, "CUDA_C_64F scalars must be 16-byte aligned");

// Any real alpha and beta in the compute type, aligned for the same reason as Scalars.
struct ScalarPair {
  alignas(16) double wide_alpha[2];
  alignas(16) double wide_beta[2];
  alignas(8) float narrow_alpha[2];
  alignas(8) float narrow_beta[2];
  ScalarPair(double alpha, double beta)
      : wide_alpha{alpha, 0}, wide_beta{beta, 0}, narrow_alpha{static_cast<float>(alpha), 0},
        narrow_beta{static_cast<float>(beta), 0} {}
  static bool wide(cudaDataType t) { return t == CUDA_R_64F || t == CUDA_C_64F; }
  const void* alpha(cudaDataType t) const {
    return wide(t) ? static_cast<const void*>(wide_alpha) : static_cast<const void*>(narrow_alpha);
  }
  const void* beta(cudaDataType t) const {
    return wide(t) ? static_cast<const void*>(wide_beta) : static_cast<const void*>(narrow_beta);
  }
};
static_assert(alignof(ScalarPair) >= 16, "CUDA_C_64F scalars must be 16-byte aligned");

struct StreamContext {
  int device;
  DeviceGuard guard;
  cudaStream_t stream;
  explicit StreamContext(const Buffer& b)
      : device(b.device().index), guard(device), stream(DeviceContext::get(device).current_stream()) {}
};

std::int64_t read_one(const void* device_value, int device, cudaStream_t stream) {
  Readback rb;
  rb.start(device_value, 1, device, stream);
  return rb.wait()[0];
}

// Stable sort of (keys, positions) pairs by key on the device (keys below `limit`).
void sort_pairs(Scratch& keys, Scratch& positions, std::uint64_t* keys_out, std::int64_t* positions_out, std::int64_t n,
                std::uint64_t limit, int device, cudaStream_t stream) {
  std::size_t temp_bytes = sparse::sort_pairs_bytes(n, limit);
  Scratch temp(device, temp_bytes, stream);
  sparse::sort_pairs(temp.as<void>(), temp_bytes, keys.as<std::uint64_t>(), keys_out, positions.as<std::int64_t>(),
                     positions_out, n, limit, stream);
}

void inclusive_sum(const std::int64_t* in, std::int64_t* out, std::int64_t n, int device, cudaStream_t stream) {
  std::size_t temp_bytes = sparse::inclusive_sum_bytes(n);
  Scratch temp(device, temp_bytes, stream);
  sparse::inclusive_sum(temp.as<void>(), temp_bytes, in, out, n, stream);
}

// The two-pass protocol of the own kernels that build a CSR C of m > 0 rows (add, the own
// SpGEMM): `count(counts)` writes each row's length into counts [m]; their inclusive scan
// becomes C's pointers (at `index` width, into c_ptr); C's nnz is read back (the one host
// wait), checked against I32 indices (`what` names C in that error), and C's columns and
// values are allocated; `fill(r)` then writes them. The counts stay alive until the fill is
// enqueued.
template <class Count, class Fill>
CompressedResult count_scan_fill(const StreamContext& s, const char* what, DType index, const Buffer& c_ptr,
                                 std::int64_t m, const SparseAllocate& allocate, Count&& count, Fill&& fill) {
  const auto rows = static_cast<std::size_t>(m);
  Scratch counts(s.device, rows * sizeof(std::int64_t), s.stream), sums(s.device, rows * sizeof(std::int64_t), s.stream);
  count(counts.as<std::int64_t>());
  inclusive_sum(counts.as<std::int64_t>(), sums.as<std::int64_t>(), m, s.device, s.stream);
  sparse::write_pointers(index, sums.as<std::int64_t>(), c_ptr.data(), m, s.stream);
  CompressedResult r;
  r.nnz = read_one(sums.as<std::int64_t>() + (m - 1), s.device, s.stream);
  FERRITE_CHECK(index == DType::I64 || r.nnz <= std::numeric_limits<std::int32_t>::max(), InvalidArgument, what,
                " has ", r.nnz, " stored elements, more than I32 indices hold; use I64");
  r.idx = allocate(r.nnz, true);
  r.values = allocate(r.nnz, false);
  fill(r);
  return r;
}

class CudaSparseOps final : public SparseOps {
 public:
  bool supports(DType values, DType index) const override {
    const bool value_ok = values == DType::F32 || values == DType::F64 || values == DType::F16 ||
                          values == DType::BF16 || values == DType::C64 || values == DType::C128;
    return value_ok && (index == DType::I32 || index == DType::I64);
  }

  SparseCheck validate_compressed(const Buffer& ptr, const Buffer& idx, std::int64_t major, std::int64_t minor,
                                  std::int64_t nnz) override {
    StreamContext s(ptr);
    Scratch first(s.device, sizeof(unsigned long long), s.stream);
    FERRITE_CUDA_CHECK(cudaMemsetAsync(first.as<void>(), 0xFF, sizeof(unsigned long long), s.stream));
    sparse::validate_compressed(ptr.dtype(), ptr.data(), idx.data(), major, minor, nnz,
                                first.as<unsigned long long>(), s.stream);
    const auto key = static_cast<unsigned long long>(read_one(first.as<void>(), s.device, s.stream));
    if (key == ~0ull) return {};
    const unsigned long long phase = key >> 60, rest = key & ((1ull << 60) - 1);
    switch (phase) {
      case 0: return {SparseCheck::kFirstPointerNotZero, 0};
      case 1: return {SparseCheck::kPointersDecrease, static_cast<std::int64_t>(rest)};
      case 2: return {SparseCheck::kLastPointerNotNnz, static_cast<std::int64_t>(rest)};
      default:
        return {(rest & 1) ? SparseCheck::kIndicesNotSorted : SparseCheck::kIndexOutOfRange,
                static_cast<std::int64_t>(rest >> 1)};
    }
  }

  void compressed_to_dense(const Buffer& ptr, const Buffer& idx, const Buffer& values, const Buffer& dense,
                           std::int64_t major, std::int64_t minor, bool transposed) override {
    StreamContext s(dense);
    FERRITE_CUDA_CHECK(cudaMemsetAsync(dense.data(), 0, dense.nbytes(), s.stream));
    sparse::compressed_to_dense(ptr.dtype(), dtype_size(values.dtype()), ptr.data(), idx.data(), values.data(),
                                dense.data(), major, minor, transposed, s.stream);
  }

  void expand_pointers(const Buffer& ptr, const Buffer& out, std::int64_t major, std::int64_t) override {
    StreamContext s(ptr);
    sparse::expand_pointers(ptr.dtype(), ptr.data(), out.data(), major, s.stream);
  }

  void compress_indices(const Buffer& sorted, const Buffer& ptr, std::int64_t major, std::int64_t nnz) override {
    StreamContext s(ptr);
    sparse::compress_sorted(ptr.dtype(), sorted.data(), false, ptr.data(), major, nnz, s.stream);
  }

  CooResult coalesce(const Buffer& rows, const Buffer& cols, const Buffer& values, std::int64_t nnz,
                     std::int64_t num_rows, std::int64_t num_cols, const SparseAllocate& allocate) override {
    StreamContext s(values);
    CooResult r;
    const DType index = rows.dtype();
    if (nnz == 0) {
      r.rows = allocate(0, true);
      r.cols = allocate(0, true);
      r.values = allocate(0, false);
      return r;
    }
    FERRITE_CHECK(num_cols == 0 || num_rows <= std::numeric_limits<std::int64_t>::max() / std::max<std::int64_t>(num_cols, 1),
                  Unsupported, "sparse::coalesce: shape [", num_rows, ", ", num_cols,
                  "] has more positions than a 64-bit sort key holds");
    const auto n = static_cast<std::size_t>(nnz);
    Scratch keys(s.device, n * sizeof(std::uint64_t), s.stream), positions(s.device, n * sizeof(std::int64_t), s.stream);
    Scratch sorted_keys(s.device, n * sizeof(std::uint64_t), s.stream),
        sorted_positions(s.device, n * sizeof(std::int64_t), s.stream);
    sparse::make_keys(index, rows.data(), cols.data(), num_cols, keys.as<std::uint64_t>(), positions.as<std::int64_t>(),
                      nnz, s.stream);
    sort_pairs(keys, positions, sorted_keys.as<std::uint64_t>(), sorted_positions.as<std::int64_t>(), nnz,
               static_cast<std::uint64_t>(num_rows) * static_cast<std::uint64_t>(num_cols), s.device, s.stream);
    // Output slot of each run head: the inclusive count of heads up to it (1-based).
    Scratch heads(s.device, n * sizeof(std::int64_t), s.stream), slots(s.device, n * sizeof(std::int64_t), s.stream);
    sparse::mark_heads(sorted_keys.as<std::uint64_t>(), heads.as<std::int64_t>(), nnz, s.stream);
    inclusive_sum(heads.as<std::int64_t>(), slots.as<std::int64_t>(), nnz, s.device, s.stream);
    r.nnz = read_one(slots.as<std::int64_t>() + (nnz - 1), s.device, s.stream);
    r.rows = allocate(r.nnz, true);
    r.cols = allocate(r.nnz, true);
    r.values = allocate(r.nnz, false);
    sparse::sum_runs(values.dtype(), index, sorted_keys.as<std::uint64_t>(), sorted_positions.as<std::int64_t>(),
                     slots.as<std::int64_t>(), values.data(), nnz, num_cols, r.rows.data(), r.cols.data(),
                     r.values.data(), s.stream);
    return r;
  }

  void transpose_compressed(const Buffer& ptr, const Buffer& idx, const Buffer& values, std::int64_t major,
                            std::int64_t minor, std::int64_t nnz, const Buffer& out_ptr, const Buffer& out_idx,
                            const Buffer& out_values) override {
    StreamContext s(ptr);
    const DType index = ptr.dtype();
    if (nnz == 0) {
      FERRITE_CUDA_CHECK(cudaMemsetAsync(out_ptr.data(), 0, out_ptr.nbytes(), s.stream));
      return;
    }
    const auto n = static_cast<std::size_t>(nnz);
    // The major index of every element, then a stable sort by minor index: within one minor
    // slice the elements keep their major order, so each output slice comes out sorted.
    Scratch majors(s.device, n * dtype_size(index), s.stream);
    sparse::expand_pointers(index, ptr.data(), majors.as<void>(), major, s.stream);
    Scratch keys(s.device, n * sizeof(std::uint64_t), s.stream), positions(s.device, n * sizeof(std::int64_t), s.stream);
    Scratch sorted_keys(s.device, n * sizeof(std::uint64_t), s.stream),
        sorted_positions(s.device, n * sizeof(std::int64_t), s.stream);
    sparse::make_keys(index, idx.data(), nullptr, 0, keys.as<std::uint64_t>(), positions.as<std::int64_t>(), nnz,
                      s.stream);
    sort_pairs(keys, positions, sorted_keys.as<std::uint64_t>(), sorted_positions.as<std::int64_t>(), nnz,
               static_cast<std::uint64_t>(minor), s.device, s.stream);
    sparse::gather_transposed(index, dtype_size(values.dtype()), sorted_positions.as<std::int64_t>(), majors.as<void>(),
                              values.data(), out_idx.data(), out_values.data(), nnz, s.stream);
    sparse::compress_sorted(index, sorted_keys.as<void>(), true, out_ptr.data(), minor, nnz, s.stream);
  }

  CompressedResult dense_to_compressed(const Buffer& dense, const Buffer& ptr, std::int64_t rows, std::int64_t cols,
                                       const SparseAllocate& allocate) override {
    StreamContext s(dense);
    CompressedResult r;
    const DType index = ptr.dtype();
    if (rows == 0) {
      FERRITE_CUDA_CHECK(cudaMemsetAsync(ptr.data(), 0, ptr.nbytes(), s.stream));
      r.idx = allocate(0, true);
      r.values = allocate(0, false);
      return r;
    }
    const auto n = static_cast<std::size_t>(rows);
    Scratch counts(s.device, n * sizeof(std::int64_t), s.stream), sums(s.device, n * sizeof(std::int64_t), s.stream);
    sparse::count_nonzeros(dense.dtype(), dense.data(), rows, cols, counts.as<std::int64_t>(), s.stream);
    inclusive_sum(counts.as<std::int64_t>(), sums.as<std::int64_t>(), rows, s.device, s.stream);
    sparse::write_pointers(index, sums.as<std::int64_t>(), ptr.data(), rows, s.stream);
    r.nnz = read_one(sums.as<std::int64_t>() + (rows - 1), s.device, s.stream);
    FERRITE_CHECK(index == DType::I64 || r.nnz <= std::numeric_limits<std::int32_t>::max(), InvalidArgument,
                  "sparse::from_dense: ", r.nnz, " nonzeros do not fit I32 indices; use I64");
    r.idx = allocate(r.nnz, true);
    r.values = allocate(r.nnz, false);
    sparse::fill_compressed(dense.dtype(), index, dense.data(), ptr.data(), rows, cols, r.idx.data(), r.values.data(),
                            s.stream);
    return r;
  }

  void spmv(const Buffer& ptr, const Buffer& idx, const Buffer& values, const Buffer& x, const Buffer& y,
            std::int64_t m, std::int64_t k, std::int64_t nnz) override {
    StreamContext s(y);
    if (nnz == 0 || k == 0) {
      FERRITE_CUDA_CHECK(cudaMemsetAsync(y.data(), 0, y.nbytes(), s.stream));
      return;
    }
    // The one dispatch place: real values run the own kernel (deterministic by construction,
    // faster than CSR_ALG2 on the H200), complex values cuSPARSE's deterministic CSR_ALG2.
    if (sparse::spmv_supported(values.dtype())) {
      sparse::spmv_csr(values.dtype(), ptr.dtype(), ptr.data(), idx.data(), values.data(), x.data(), y.data(), m, nnz,
                       s.stream);
      return;
    }
    const Product p(s, ptr, idx, values, m, k, nnz);
    Descriptor<cusparseDnVecDescr_t, cusparseConstDnVecDescr_t> vx(cusparseDestroyDnVec), vy(cusparseDestroyDnVec);
    FERRITE_CUSPARSE_CHECK(cusparseCreateDnVec(&vx.d, k, x.data(), p.vt));
    FERRITE_CUSPARSE_CHECK(cusparseCreateDnVec(&vy.d, m, y.data(), p.vt));
    std::size_t bytes = 0;
    FERRITE_CUSPARSE_CHECK(cusparseSpMV_bufferSize(p.h, CUSPARSE_OPERATION_NON_TRANSPOSE, p.sc.one(p.ct), p.a.d, vx.d,
                                                   p.sc.zero(p.ct), vy.d, p.ct, CUSPARSE_SPMV_CSR_ALG2, &bytes));
    Scratch work(s.device, bytes, s.stream);
    FERRITE_CUSPARSE_CHECK(cusparseSpMV(p.h, CUSPARSE_OPERATION_NON_TRANSPOSE, p.sc.one(p.ct), p.a.d, vx.d,
                                        p.sc.zero(p.ct), vy.d, p.ct, CUSPARSE_SPMV_CSR_ALG2, work.as<void>()));
  }

  void spmm(const Buffer& ptr, const Buffer& idx, const Buffer& values, const Buffer& b, const Buffer& c,
            std::int64_t m, std::int64_t k, std::int64_t n, std::int64_t nnz) override {
    StreamContext s(c);
    if (nnz == 0 || k == 0) {
      FERRITE_CUDA_CHECK(cudaMemsetAsync(c.data(), 0, c.nbytes(), s.stream));
      return;
    }
    const Product p(s, ptr, idx, values, m, k, nnz);
    Descriptor<cusparseDnMatDescr_t, cusparseConstDnMatDescr_t> mb(cusparseDestroyDnMat), mc(cusparseDestroyDnMat);
    FERRITE_CUSPARSE_CHECK(cusparseCreateDnMat(&mb.d, k, n, n, b.data(), p.vt, CUSPARSE_ORDER_ROW));
    FERRITE_CUSPARSE_CHECK(cusparseCreateDnMat(&mc.d, m, n, n, c.data(), p.vt, CUSPARSE_ORDER_ROW));
    std::size_t bytes = 0;
    FERRITE_CUSPARSE_CHECK(cusparseSpMM_bufferSize(p.h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                   CUSPARSE_OPERATION_NON_TRANSPOSE, p.sc.one(p.ct), p.a.d, mb.d,
                                                   p.sc.zero(p.ct), mc.d, p.ct, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
    Scratch work(s.device, bytes, s.stream);
    FERRITE_CUSPARSE_CHECK(cusparseSpMM(p.h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                        p.sc.one(p.ct), p.a.d, mb.d, p.sc.zero(p.ct), mc.d, p.ct,
                                        CUSPARSE_SPMM_ALG_DEFAULT, work.as<void>()));
  }

  // Other SpGEMMs, cuSPARSE's protocol: work estimation (asked for its buffer size, then run), compute
  // (the same twice), then C's size is known (cuSPARSE has synchronised to report it); C's
  // columns and values are allocated and `copy` fills C. The default algorithm (ALG1) is
  // documented deterministic. Both buffers stay alive until the copy, which reads them.
  //
  // Index width: cuSPARSE's SpGEMM with 64-bit indices ran at 0.44x PyTorch, which always
  // hands cuSPARSE 32-bit indices (it converts its operands with `.to(kInt)`). So I64 operands
  // whose every count fits in int32 (rows + 1, the inner and outer dims, both nnz, and C's
  // nnz bounded by rows x cols) are narrowed on the device, the product runs with 32-bit
  // indices, and C's pointers and columns are widened back into the caller's I64 arrays. The
  // algorithm is the same (ALG1, deterministic) whichever width runs; which width runs
  // depends on the shapes only.
  CompressedResult spgemm(const Buffer& a_ptr, const Buffer& a_idx, const Buffer& a_values, std::int64_t a_nnz,
                          const Buffer& b_ptr, const Buffer& b_idx, const Buffer& b_values, std::int64_t b_nnz,
                          const Buffer& c_ptr, std::int64_t m, std::int64_t k, std::int64_t n,
                          const SparseAllocate& allocate) override {
    StreamContext s(c_ptr);
    constexpr std::int64_t kMax32 = std::numeric_limits<std::int32_t>::max();
    const DType index = a_ptr.dtype();
    // Real values with C's rows fitting a shared-memory accumulator run the own kernels: cuSPARSE's
    // SpGEMM took ~10 ms for issue 15's [8192, 8192] case (0.99x PyTorch). The choice depends
    // on the dtypes and n only.
    if (sparse::spgemm_supported(a_values.dtype(), index, n, s.device))
      return spgemm_own(s, a_ptr, a_idx, a_values, b_ptr, b_idx, b_values, c_ptr, m, n, allocate);
    const bool narrowed = index == DType::I64 && m < kMax32 && k < kMax32 && n < kMax32 && a_nnz <= kMax32 &&
                          b_nnz <= kMax32 && (n == 0 || m <= kMax32 / n);
    if (!narrowed)
      return spgemm_run(s, index, a_ptr.data(), a_idx.data(), a_values.data(), a_nnz, b_ptr.data(), b_idx.data(),
                        b_values.data(), b_nnz, c_ptr.data(), nullptr, m, k, n, a_values.dtype(), allocate);
    auto narrow_copy = [&](const Buffer& from, std::int64_t count) {
      auto out = std::make_unique<Scratch>(s.device, static_cast<std::size_t>(count) * sizeof(std::int32_t), s.stream);
      sparse::cast_indices(DType::I64, from.data(), DType::I32, out->as<void>(), count, s.stream);
      return out;
    };
    const auto a_ptr32 = narrow_copy(a_ptr, m + 1), a_idx32 = narrow_copy(a_idx, a_nnz);
    const auto b_ptr32 = narrow_copy(b_ptr, k + 1), b_idx32 = narrow_copy(b_idx, b_nnz);
    Scratch c_ptr32(s.device, static_cast<std::size_t>(m + 1) * sizeof(std::int32_t), s.stream);
    std::unique_ptr<Scratch> c_idx32;
    CompressedResult r = spgemm_run(
        s, DType::I32, a_ptr32->as<void>(), a_idx32->as<void>(), a_values.data(), a_nnz, b_ptr32->as<void>(),
        b_idx32->as<void>(), b_values.data(), b_nnz, c_ptr32.as<void>(), &c_idx32, m, k, n, a_values.dtype(),
        allocate);
    sparse::cast_indices(DType::I32, c_ptr32.as<void>(), DType::I64, c_ptr.data(), m + 1, s.stream);
    if (r.nnz > 0) sparse::cast_indices(DType::I32, c_idx32->as<void>(), DType::I64, r.idx.data(), r.nnz, s.stream);
    return r;
  }

  // cuSPARSE's SDDMM on C's own values (the front end handed a copy of input's values).
  void sddmm(const Buffer& ptr, const Buffer& idx, const Buffer& values, std::int64_t nnz, const Buffer& mat1,
             const Buffer& mat2, std::int64_t m, std::int64_t k, std::int64_t n, double alpha,
             double beta) override {
    StreamContext s(values);
    const cusparseHandle_t h = handle_for(s.device);
    FERRITE_CUSPARSE_CHECK(cusparseSetStream(h, s.stream));
    const cudaDataType vt = value_type(values.dtype());
    const cusparseIndexType_t it = index_type(ptr.dtype());
    const ScalarPair sc(alpha, beta);
    constexpr cusparseOperation_t kNon = CUSPARSE_OPERATION_NON_TRANSPOSE;
    Descriptor<cusparseSpMatDescr_t, cusparseConstSpMatDescr_t> mc(cusparseDestroySpMat);
    FERRITE_CUSPARSE_CHECK(cusparseCreateCsr(&mc.d, m, n, nnz, ptr.data(), idx.data(), values.data(), it, it,
                                             CUSPARSE_INDEX_BASE_ZERO, vt));
    Descriptor<cusparseDnMatDescr_t, cusparseConstDnMatDescr_t> ma(cusparseDestroyDnMat), mb(cusparseDestroyDnMat);
    FERRITE_CUSPARSE_CHECK(cusparseCreateDnMat(&ma.d, m, k, k, mat1.data(), vt, CUSPARSE_ORDER_ROW));
    FERRITE_CUSPARSE_CHECK(cusparseCreateDnMat(&mb.d, k, n, n, mat2.data(), vt, CUSPARSE_ORDER_ROW));
    std::size_t bytes = 0;
    FERRITE_CUSPARSE_CHECK(cusparseSDDMM_bufferSize(h, kNon, kNon, sc.alpha(vt), ma.d, mb.d, sc.beta(vt), mc.d, vt,
                                                    CUSPARSE_SDDMM_ALG_DEFAULT, &bytes));
    Scratch work(s.device, bytes, s.stream);
    FERRITE_CUSPARSE_CHECK(cusparseSDDMM(h, kNon, kNon, sc.alpha(vt), ma.d, mb.d, sc.beta(vt), mc.d, vt,
                                         CUSPARSE_SDDMM_ALG_DEFAULT, work.as<void>()));
  }

  // Own kernels (sparse_add_kernels.cu): count each row's union, scan into C's pointers, read
  // nnz back, fill. cuSPARSE's csrgeam2 takes I32 indices only and no F16/BF16.
  CompressedResult add(const Buffer& a_ptr, const Buffer& a_idx, const Buffer& a_values, const Buffer& b_ptr,
                       const Buffer& b_idx, const Buffer& b_values, const Buffer& c_ptr, std::int64_t m, std::int64_t,
                       double alpha, const SparseAllocate& allocate) override {
    StreamContext s(c_ptr);
    const DType index = a_ptr.dtype();
    return count_scan_fill(
        s, "sparse::add: the sum", index, c_ptr, m, allocate,
        [&](std::int64_t* counts) {
          sparse::add_count(index, a_ptr.data(), a_idx.data(), b_ptr.data(), b_idx.data(), m, counts, s.stream);
        },
        [&](const CompressedResult& r) {
          sparse::add_fill(a_values.dtype(), index, a_ptr.data(), a_idx.data(), a_values.data(), b_ptr.data(),
                           b_idx.data(), b_values.data(), c_ptr.data(), m, alpha, r.idx.data(), r.values.data(),
                           s.stream);
        });
  }

  // ---- 2:4 semi-structured sparsity: own pruning kernel, cuSPARSELt (loaded at run time) for
  // compression and the products (cusparselt_structured.cpp) ----
  std::string structured_unavailable() override { return structured::unavailable(); }

  void prune_structured(const Buffer& dense, const Buffer& out, std::int64_t rows, std::int64_t cols,
                        int group) override {
    StreamContext s(out);
    sparse::prune_structured(dense.dtype(), dense.data(), out.data(), rows, cols, group, s.stream);
  }

  std::size_t structured_compressed_bytes(const Buffer& pruned, std::int64_t rows, std::int64_t cols) override {
    return structured::compressed_bytes(pruned.device().index, pruned.dtype(), rows, cols);
  }

  void compress_structured(const Buffer& pruned, const Buffer& compressed, std::int64_t rows,
                           std::int64_t cols) override {
    StreamContext s(pruned);
    structured::compress(s.device, s.stream, pruned.dtype(), pruned.data(), compressed.data(), rows, cols);
  }

  void structured_matmul(const Buffer&, const Buffer& compressed, const Buffer& b, bool b_transposed, const Buffer& c,
                         bool c_transposed, std::int64_t m, std::int64_t k, std::int64_t n) override {
    StreamContext s(c);
    structured::matmul(s.device, s.stream, c.dtype(), compressed.data(), b.data(), b_transposed, c.data(),
                       c_transposed, m, k, n);
  }

 private:
  // The own SpGEMM (sparse_spgemm_kernels.cu), the same protocol as add (count_scan_fill):
  // count each row of C, scan into C's pointers, read nnz back once, fill. Works at either index width (no narrowing).
  CompressedResult spgemm_own(const StreamContext& s, const Buffer& a_ptr, const Buffer& a_idx, const Buffer& a_values,
                              const Buffer& b_ptr, const Buffer& b_idx, const Buffer& b_values, const Buffer& c_ptr,
                              std::int64_t m, std::int64_t n, const SparseAllocate& allocate) {
    const DType index = a_ptr.dtype();
    CompressedResult r;
    if (m == 0) {
      FERRITE_CUDA_CHECK(cudaMemsetAsync(c_ptr.data(), 0, c_ptr.nbytes(), s.stream));
      r.idx = allocate(0, true);
      r.values = allocate(0, false);
      return r;
    }
    return count_scan_fill(
        s, "sparse::spgemm: the product", index, c_ptr, m, allocate,
        [&](std::int64_t* counts) {
          sparse::spgemm_count(index, a_ptr.data(), a_idx.data(), b_ptr.data(), b_idx.data(), m, n, counts, s.stream);
        },
        [&](const CompressedResult& r) {
          if (r.nnz > 0)
            sparse::spgemm_fill(a_values.dtype(), index, a_ptr.data(), a_idx.data(), a_values.data(), b_ptr.data(),
                                b_idx.data(), b_values.data(), c_ptr.data(), m, n, r.idx.data(), r.values.data(),
                                s.stream);
        });
  }

  // The SpGEMM protocol on raw arrays of `index` width. C's pointers go to `c_ptr`; C's
  // columns go to the result's own array, or, when `c_idx_scratch` is given (the narrowed
  // path), to a scratch array of `index` width made here and handed back.
  CompressedResult spgemm_run(const StreamContext& s, DType index, const void* a_ptr, const void* a_idx,
                              const void* a_values, std::int64_t a_nnz, const void* b_ptr, const void* b_idx,
                              const void* b_values, std::int64_t b_nnz, void* c_ptr,
                              std::unique_ptr<Scratch>* c_idx_scratch, std::int64_t m, std::int64_t k, std::int64_t n,
                              DType values, const SparseAllocate& allocate) {
    const cusparseHandle_t h = handle_for(s.device);
    FERRITE_CUSPARSE_CHECK(cusparseSetStream(h, s.stream));
    const cudaDataType vt = value_type(values);
    const cusparseIndexType_t it = index_type(index);
    const Scalars sc;
    constexpr cusparseOperation_t kNon = CUSPARSE_OPERATION_NON_TRANSPOSE;
    constexpr cusparseSpGEMMAlg_t kAlg = CUSPARSE_SPGEMM_DEFAULT;
    using SpMat = Descriptor<cusparseSpMatDescr_t, cusparseConstSpMatDescr_t>;
    SpMat ma(cusparseDestroySpMat), mb(cusparseDestroySpMat), mc(cusparseDestroySpMat);
    // cuSPARSE's descriptors take non-const pointers; A and B are only read.
    FERRITE_CUSPARSE_CHECK(cusparseCreateCsr(&ma.d, m, k, a_nnz, const_cast<void*>(a_ptr), const_cast<void*>(a_idx),
                                             const_cast<void*>(a_values), it, it, CUSPARSE_INDEX_BASE_ZERO, vt));
    FERRITE_CUSPARSE_CHECK(cusparseCreateCsr(&mb.d, k, n, b_nnz, const_cast<void*>(b_ptr), const_cast<void*>(b_idx),
                                             const_cast<void*>(b_values), it, it, CUSPARSE_INDEX_BASE_ZERO, vt));
    FERRITE_CUSPARSE_CHECK(
        cusparseCreateCsr(&mc.d, m, n, 0, nullptr, nullptr, nullptr, it, it, CUSPARSE_INDEX_BASE_ZERO, vt));
    Descriptor<cusparseSpGEMMDescr_t, cusparseSpGEMMDescr_t> plan(cusparseSpGEMM_destroyDescr);
    FERRITE_CUSPARSE_CHECK(cusparseSpGEMM_createDescr(&plan.d));
    std::size_t bytes1 = 0, bytes2 = 0;
    FERRITE_CUSPARSE_CHECK(cusparseSpGEMM_workEstimation(h, kNon, kNon, sc.one(vt), ma.d, mb.d, sc.zero(vt), mc.d, vt,
                                                         kAlg, plan.d, &bytes1, nullptr));
    Scratch work1(s.device, bytes1, s.stream);
    FERRITE_CUSPARSE_CHECK(cusparseSpGEMM_workEstimation(h, kNon, kNon, sc.one(vt), ma.d, mb.d, sc.zero(vt), mc.d, vt,
                                                         kAlg, plan.d, &bytes1, work1.as<void>()));
    FERRITE_CUSPARSE_CHECK(cusparseSpGEMM_compute(h, kNon, kNon, sc.one(vt), ma.d, mb.d, sc.zero(vt), mc.d, vt, kAlg,
                                                  plan.d, &bytes2, nullptr));
    Scratch work2(s.device, bytes2, s.stream);
    FERRITE_CUSPARSE_CHECK(cusparseSpGEMM_compute(h, kNon, kNon, sc.one(vt), ma.d, mb.d, sc.zero(vt), mc.d, vt, kAlg,
                                                  plan.d, &bytes2, work2.as<void>()));
    std::int64_t c_rows = 0, c_cols = 0, c_nnz = 0;
    FERRITE_CUSPARSE_CHECK(cusparseSpMatGetSize(mc.d, &c_rows, &c_cols, &c_nnz));
    FERRITE_CHECK(index == DType::I64 || c_idx_scratch != nullptr || c_nnz <= std::numeric_limits<std::int32_t>::max(),
                  InvalidArgument, "sparse::spgemm: the product has ", c_nnz,
                  " stored elements, more than I32 indices hold; use I64");
    CompressedResult r;
    r.nnz = c_nnz;
    r.idx = allocate(c_nnz, true);
    r.values = allocate(c_nnz, false);
    if (c_nnz == 0) {
      // Nothing to copy (and no column/value arrays to hand cuSPARSE): C is all pointers 0.
      FERRITE_CUDA_CHECK(
          cudaMemsetAsync(c_ptr, 0, static_cast<std::size_t>(m + 1) * dtype_size(index), s.stream));
      return r;
    }
    void* c_idx = r.idx.data();
    if (c_idx_scratch != nullptr) {
      *c_idx_scratch = std::make_unique<Scratch>(s.device, static_cast<std::size_t>(c_nnz) * dtype_size(index), s.stream);
      c_idx = (*c_idx_scratch)->as<void>();
    }
    FERRITE_CUSPARSE_CHECK(cusparseCsrSetPointers(mc.d, c_ptr, c_idx, r.values.data()));
    FERRITE_CUSPARSE_CHECK(
        cusparseSpGEMM_copy(h, kNon, kNon, sc.one(vt), ma.d, mb.d, sc.zero(vt), mc.d, vt, kAlg, plan.d));
    return r;
  }

  // A cuSPARSE descriptor destroyed on scope exit (also when a later call throws).
  // D is the descriptor type, C its const form (what cuSPARSE's destroy functions take).
  template <class D, class C>
  struct Descriptor {
    D d = nullptr;
    cusparseStatus_t (*destroy)(C);
    explicit Descriptor(cusparseStatus_t (*destroy_fn)(C)) : destroy(destroy_fn) {}
    ~Descriptor() {
      if (d) destroy(d);
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
  };

  // What SpMV and SpMM share: the handle bound to the stream, the dtypes and the CSR operand.
  struct Product {
    cusparseHandle_t h;
    cudaDataType vt, ct;
    Scalars sc;
    Descriptor<cusparseSpMatDescr_t, cusparseConstSpMatDescr_t> a{cusparseDestroySpMat};
    Product(const StreamContext& s, const Buffer& ptr, const Buffer& idx, const Buffer& values, std::int64_t m,
            std::int64_t k, std::int64_t nnz)
        : h(handle_for(s.device)), vt(value_type(values.dtype())), ct(compute_type(values.dtype())) {
      FERRITE_CUSPARSE_CHECK(cusparseSetStream(h, s.stream));
      const cusparseIndexType_t it = index_type(ptr.dtype());
      FERRITE_CUSPARSE_CHECK(cusparseCreateCsr(&a.d, m, k, nnz, ptr.data(), idx.data(), values.data(), it, it,
                                               CUSPARSE_INDEX_BASE_ZERO, vt));
    }
  };
};

}  // namespace

std::unique_ptr<SparseOps> make_cuda_sparse_ops() { return std::make_unique<CudaSparseOps>(); }

}  // namespace ferrite::cuda

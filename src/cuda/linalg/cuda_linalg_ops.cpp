// The CUDA backend's linear algebra: cuSOLVER's 64-bit generic API (cusolverDnX*) one matrix
// per call for factorisations and large problems, XsyevBatched for batches of eigh,
// gesvdjBatched for batches of small complex SVDs, and own kernels for real SVDs and eig up
// to 32×32.
// Workspaces come from the device's stream-ordered pool and are released right after the
// calls are queued (stream order keeps them alive).
// Nothing here synchronises: per-matrix info values go to device memory, are combined by
// small kernels (linalg_kernels.cu), and the front end reads them back once for plain ops.
#include <cuComplex.h>

#include <algorithm>
#include <climits>
#include <type_traits>
#include <vector>

#include "cuda/cuda_families.hpp"
#include "cuda/libs/solver_handles.hpp"
#include "cuda/linalg/cuda_linalg_typed.hpp"
#include "cuda/linalg/linalg_kernels.hpp"
#include "cuda/linalg/small_eig.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace ferrite::cuda {
namespace {

namespace lk = linalg_kernels;

cudaDataType cuda_type(DType d) {
  switch (d) {
    case DType::F32: return CUDA_R_32F;
    case DType::F64: return CUDA_R_64F;
    case DType::C64: return CUDA_C_32F;
    case DType::C128: return CUDA_C_64F;
    default: FERRITE_THROW(Unsupported, "linalg: dtype ", dtype_name(d), " has no cuSOLVER type");
  }
}
DType real_of(DType d) { return d == DType::C64 ? DType::F32 : d == DType::C128 ? DType::F64 : d; }
DType complex_of(DType d) { return d == DType::F32 || d == DType::C64 ? DType::C64 : DType::C128; }

// Device scratch from the pool, released in stream order when it goes out of scope.
class Scratch {
 public:
  Scratch(DeviceContext& ctx, cudaStream_t stream, std::size_t bytes) : ctx_(ctx), stream_(stream), bytes_(bytes) {
    if (bytes_ > 0) ptr_ = ctx_.allocate(bytes_, stream_);
  }
  ~Scratch() {
    if (ptr_ != nullptr) ctx_.release(ptr_, bytes_, stream_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <class T = void>
  T* get() const { return static_cast<T*>(ptr_); }

 private:
  DeviceContext& ctx_;
  cudaStream_t stream_;
  std::size_t bytes_;
  void* ptr_ = nullptr;
};

// cuSOLVER's gesvdj parameters (sweeps, tolerance) for one call, destroyed on scope exit;
// converts to the handle the gesvdj calls take.
class GesvdjParams {
 public:
  GesvdjParams() { FERRITE_CUSOLVER_CHECK(cusolverDnCreateGesvdjInfo(&p_)); }
  ~GesvdjParams() { cusolverDnDestroyGesvdjInfo(p_); }
  GesvdjParams(const GesvdjParams&) = delete;
  GesvdjParams& operator=(const GesvdjParams&) = delete;
  operator gesvdjInfo_t() const { return p_; }

 private:
  gesvdjInfo_t p_ = nullptr;
};

// What every call needs: the device, its current stream and the stream's solver handle.
struct Call {
  explicit Call(const Buffer& any)
      : guard(any.device().index), ctx(DeviceContext::get(any.device().index)), stream(ctx.current_stream()),
        h(solver_handle(ctx, stream)) {}
  DeviceGuard guard;
  DeviceContext& ctx;
  cudaStream_t stream;
  SolverHandle h;
};

char* at(const Buffer& b, std::int64_t element) {
  return static_cast<char*>(b.data()) + element * static_cast<std::int64_t>(dtype_size(b.dtype()));
}

template <class F>
void dispatch_typed(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32: f(float{}); return;
    case DType::F64: f(double{}); return;
    case DType::C64: f(cuComplex{}); return;
    case DType::C128: f(cuDoubleComplex{}); return;
    default: FERRITE_THROW(Unsupported, "linalg: dtype ", dtype_name(dtype));
  }
}

int as_int(std::int64_t v, const char* op) {
  FERRITE_CHECK(v <= INT_MAX, Unsupported, op, ": size ", v, " exceeds cuSOLVER's 32-bit routines");
  return static_cast<int>(v);
}

class CudaLinalgOps final : public LinalgOps {
 public:
  bool supports(Op op, DType dtype) const override {
    return op_group(op) == OpGroup::Linalg &&
           (dtype == DType::F32 || dtype == DType::F64 || dtype == DType::C64 || dtype == DType::C128);
  }

  // potrf runs LOWER only: cuSOLVER's UPPER factorisation is about 2× slower (measured in
  // MLX's cuSOLVER Cholesky, ml-explore/mlx#4208). For `upper` = false the triangle is
  // copied transposed (a tiled kernel: a's lower triangle is column-major L's) and out holds
  // L column-major. For `upper` = true no transpose is needed: a read column-major is aᵀ,
  // whose lower triangle is a's upper one and defines conj(A); potrf gives conj(A) = L'·L'ᴴ,
  // so A = (L'ᵀ)ᴴ·L'ᵀ and U = L'ᵀ, which is L''s memory read row-major: out holds U
  // row-major, unconjugated. Either way one pass copies the triangle and zeroes the other.
  void cholesky(const LinalgDims& d, const Buffer& a, const Buffer& out, bool upper, const Buffer& info) override {
    Call c(out);
    const std::int64_t n = d.n;
    const cudaDataType t = cuda_type(d.dtype);
    lk::lower_triangle_copy(a.data(), out.data(), d.dtype, d.batch, n, /*transpose=*/!upper, /*conjugate=*/false, nullptr,
                            0, c.stream);
    std::size_t dev = 0, host = 0;
    FERRITE_CUSOLVER_CHECK(cusolverDnXpotrf_bufferSize(c.h.handle, c.h.params, CUBLAS_FILL_MODE_LOWER, n, t, out.data(), n,
                                                       t, &dev, &host));
    Scratch ws(c.ctx, c.stream, dev);
    std::vector<char> host_ws(host);
    for (std::int64_t b = 0; b < d.batch; ++b)
      FERRITE_CUSOLVER_CHECK(cusolverDnXpotrf(c.h.handle, c.h.params, CUBLAS_FILL_MODE_LOWER, n, t, at(out, b * n * n), n,
                                              t, ws.get(), dev, host_ws.data(), host, info.data_as<int>() + b));
    lk::nan_pivot_info(out.data(), d.dtype, d.batch, n, info.data_as<int>(), c.stream);
  }

  // LU through cuSOLVER's 32-bit getrf/getrs (int pivots, the front end's dtype, as PyTorch's
  // calls): the 64-bit Xgetrf wrote I64 pivots that two more kernels converted each way.
  void lu_factor(const LinalgDims& d, const Buffer& a, const Buffer& pivots, const Buffer& info) override {
    Call c(a);
    const int m = as_int(d.m, "lu_factor"), n = as_int(d.n, "lu_factor"), k = std::min(m, n);
    dispatch_typed(d.dtype, [&](auto tag) {
      using T = decltype(tag);
      int lwork = 0;
      FERRITE_CUSOLVER_CHECK(typed::getrf_buffer(c.h.handle, m, n, a.data_as<T>(), m, &lwork));
      Scratch work(c.ctx, c.stream, static_cast<std::size_t>(std::max(lwork, 1)) * sizeof(T));
      for (std::int64_t b = 0; b < d.batch; ++b)
        FERRITE_CUSOLVER_CHECK(typed::getrf(c.h.handle, m, n, a.data_as<T>() + b * m * n, m, work.get<T>(),
                                            pivots.data_as<int>() + b * k, info.data_as<int>() + b));
    });
  }

  void lu_solve(const LinalgDims& d, const Buffer& lu, const Buffer& pivots, const Buffer& rhs) override {
    Call c(lu);
    const int n = as_int(d.n, "lu_solve"), k = as_int(d.m, "lu_solve");
    Scratch info(c.ctx, c.stream, sizeof(int));  // getrs only reports bad arguments
    dispatch_typed(d.dtype, [&](auto tag) {
      using T = decltype(tag);
      for (std::int64_t b = 0; b < d.batch; ++b)
        FERRITE_CUSOLVER_CHECK(typed::getrs(c.h.handle, n, k, lu.data_as<T>() + b * n * n, n,
                                            pivots.data_as<int>() + b * n, rhs.data_as<T>() + b * n * k, n,
                                            info.get<int>()));
    });
  }

  void lu_unpack(const LinalgDims& d, const Buffer& lu, const Buffer& pivots, const Buffer& p, const Buffer& l,
                 const Buffer& u) override {
    Call c(lu);
    Scratch perm(c.ctx, c.stream, static_cast<std::size_t>(d.batch * d.m) * sizeof(std::int64_t));
    lk::lu_unpack(lu.data(), pivots.data_as<std::int32_t>(), p.data(), l.data(), u.data(), perm.get<std::int64_t>(),
                  d.dtype, d.batch, d.m, d.n, c.stream);
  }

  void qr(const LinalgDims& d, const Buffer& a, bool complete, const Buffer& q, const Buffer& r) override {
    Call c(a);
    const std::int64_t m = d.m, n = d.n, k = std::min(m, n), qcols = complete ? m : k;
    const cudaDataType t = cuda_type(d.dtype);
    const std::size_t es = dtype_size(d.dtype);
    Scratch tau(c.ctx, c.stream, static_cast<std::size_t>(d.batch * k) * es);
    Scratch info(c.ctx, c.stream, sizeof(int));  // geqrf and orgqr only report bad arguments
    std::size_t dev = 0, host = 0;
    FERRITE_CUSOLVER_CHECK(cusolverDnXgeqrf_bufferSize(c.h.handle, c.h.params, m, n, t, a.data(), m, t, tau.get(), t, &dev, &host));
    Scratch ws(c.ctx, c.stream, dev);
    std::vector<char> host_ws(host);
    for (std::int64_t b = 0; b < d.batch; ++b)
      FERRITE_CUSOLVER_CHECK(cusolverDnXgeqrf(c.h.handle, c.h.params, m, n, t, at(a, b * m * n), m, t,
                                              tau.get<char>() + b * k * static_cast<std::int64_t>(es), t, ws.get(), dev,
                                              host_ws.data(), host, info.get<int>()));
    lk::copy_upper(a.data(), r.data(), d.dtype, d.batch, m, n, qcols, c.stream);
    if (!q.defined()) return;
    // The reflectors sit in a's first k columns; the first min(qcols, n) columns of each
    // matrix are one contiguous run, copied into q where orgqr expands them in place.
    const std::int64_t copied = std::min(qcols, n);
    FERRITE_CUDA_CHECK(cudaMemcpy2DAsync(q.data(), static_cast<std::size_t>(m * qcols) * es, a.data(),
                                         static_cast<std::size_t>(m * n) * es, static_cast<std::size_t>(m * copied) * es,
                                         static_cast<std::size_t>(d.batch), cudaMemcpyDeviceToDevice, c.stream));
    const int mi = as_int(m, "qr"), qi = as_int(qcols, "qr"), ki = as_int(k, "qr");
    dispatch_typed(d.dtype, [&](auto tag) {
      using T = decltype(tag);
      int lwork = 0;
      FERRITE_CUSOLVER_CHECK(typed::orgqr_buffer(c.h.handle, mi, qi, ki, q.data_as<T>(), mi, tau.get<T>(), &lwork));
      Scratch work(c.ctx, c.stream, static_cast<std::size_t>(std::max(lwork, 1)) * sizeof(T));
      for (std::int64_t b = 0; b < d.batch; ++b)
        FERRITE_CUSOLVER_CHECK(typed::orgqr(c.h.handle, mi, qi, ki, q.data_as<T>() + b * m * qcols, mi,
                                            tau.get<T>() + b * k, work.get<T>(), lwork, info.get<int>()));
    });
  }

  // The solver runs LOWER, PyTorch's default (cuSOLVER's UPPER paths can be slower; see
  // cholesky). uplo 'L': a's lower triangle is copied transposed into the column-major
  // work matrix. uplo 'U': a read column-major is aᵀ, whose lower triangle is a's upper one;
  // copied conjugated it is Aᴴ's lower triangle, which defines exactly A: no transpose. Both
  // copies flag non-finite triangles (info = n + 1) on the way; those matrices are zeroed.
  // The column-major eigenvectors are A's.
  void eigh(const LinalgDims& d, const Buffer& a, bool upper, bool vectors, const Buffer& w, const Buffer& v,
            const Buffer& info) override {
    Call c(a);
    const std::int64_t n = d.n;
    const cublasFillMode_t lower = CUBLAS_FILL_MODE_LOWER;
    const cudaDataType t = cuda_type(d.dtype), tw = cuda_type(real_of(d.dtype));
    const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    Scratch values_only_work(c.ctx, c.stream, vectors ? 0 : static_cast<std::size_t>(d.batch * n * n) * dtype_size(d.dtype));
    void* work = vectors ? v.data() : values_only_work.get();
    FERRITE_CUDA_CHECK(cudaMemsetAsync(info.data(), 0, static_cast<std::size_t>(d.batch) * sizeof(int), c.stream));
    lk::lower_triangle_copy(a.data(), work, d.dtype, d.batch, n, /*transpose=*/!upper,
                            /*conjugate=*/upper && is_complex(d.dtype), info.data_as<int>(), static_cast<int>(n + 1),
                            c.stream);
    lk::zero_flagged(work, d.dtype, d.batch, n, n, info.data_as<int>(), c.stream);
    Scratch solver_info(c.ctx, c.stream, static_cast<std::size_t>(d.batch) * sizeof(int));
    std::size_t dev = 0, host = 0;
    if (d.batch > 1) {
      FERRITE_CUSOLVER_CHECK(cusolverDnXsyevBatched_bufferSize(c.h.handle, c.h.params, jobz, lower, n, t, work,
                                                               n, tw, w.data(), t, &dev, &host, d.batch));
      Scratch ws(c.ctx, c.stream, dev);
      std::vector<char> host_ws(host);
      FERRITE_CUSOLVER_CHECK(cusolverDnXsyevBatched(c.h.handle, c.h.params, jobz, lower, n, t, work, n, tw,
                                                    w.data(), t, ws.get(), dev, host_ws.data(), host,
                                                    solver_info.get<int>(), d.batch));
    } else {
      FERRITE_CUSOLVER_CHECK(cusolverDnXsyevd_bufferSize(c.h.handle, c.h.params, jobz, lower, n, t, work, n,
                                                         tw, w.data(), t, &dev, &host));
      Scratch ws(c.ctx, c.stream, dev);
      std::vector<char> host_ws(host);
      FERRITE_CUSOLVER_CHECK(cusolverDnXsyevd(c.h.handle, c.h.params, jobz, lower, n, t, work, n, tw,
                                              w.data(), t, ws.get(), dev, host_ws.data(), host, solver_info.get<int>()));
    }
    lk::merge_info(info.data_as<int>(), solver_info.get<int>(), d.batch, c.stream);
  }

  // Real matrices up to 32×32 (any batch): the own one-sided Jacobi kernel (small_svd.cu;
  // 1024 × [32, 32] F32 took 1.1 ms in gesvdjBatched). Otherwise the drivers as PyTorch
  // picks them by default: gesvdjBatched for complex batches up to 32×32, else gesvdj
  // (Jacobi, one call per matrix; 2-3× faster than gesvd at 1024²). `accurate` (the front
  // end's rerun after a non-convergence) takes gesvd, QR iteration.
  void svd(const LinalgDims& d, const Buffer& a, bool full, bool vectors, bool accurate, const Buffer& u,
           const Buffer& s, const Buffer& vh, const Buffer& info) override {
    Call c(a);
    const std::int64_t m = d.m, n = d.n, ucols = full ? m : n;
    const bool real = d.dtype == DType::F32 || d.dtype == DType::F64;
    if (!accurate && real && m <= lk::kSmallSvdLargest) {
      // Own kernel (small_svd.cu): one warp per matrix, one launch, no workspace; single
      // small matrices too (one gesvdj call costs several launches). It flags Inf/NaN input
      // itself (info = n + 1, solved as zeros) and writes the final info.
      lk::small_svd(a.data(), d.dtype, d.batch, m, n, full, vectors, vectors ? u.data() : nullptr, s.data(),
                    vectors ? vh.data() : nullptr, info.data_as<int>(), c.stream);
      return;
    }
    lk::nonfinite_info(a.data(), d.dtype, d.batch, m, n, info.data_as<int>(), static_cast<int>(n + 1), c.stream);
    Scratch solver_info(c.ctx, c.stream, static_cast<std::size_t>(d.batch) * sizeof(int));
    if (!accurate && d.batch > 1 && m <= 32) {
      svd_jacobi_batched(c, d, a, full, vectors, u, s, vh, solver_info.get<int>());
    } else if (!accurate) {
      svd_jacobi(c, d, a, full, vectors, u, s, vh, solver_info.get<int>());
    } else {
      const cudaDataType t = cuda_type(d.dtype), ts = cuda_type(real_of(d.dtype));
      const signed char jobu = vectors ? (full ? 'A' : 'S') : 'N', jobvt = vectors ? 'A' : 'N';
      const std::size_t es = dtype_size(d.dtype), rs = dtype_size(real_of(d.dtype));
      std::size_t dev = 0, host = 0;
      FERRITE_CUSOLVER_CHECK(cusolverDnXgesvd_bufferSize(c.h.handle, c.h.params, jobu, jobvt, m, n, t, a.data(), m, ts,
                                                         s.data(), t, vectors ? u.data() : nullptr, m, t,
                                                         vectors ? vh.data() : nullptr, n, t, &dev, &host));
      Scratch ws(c.ctx, c.stream, dev);
      std::vector<char> host_ws(host);
      for (std::int64_t b = 0; b < d.batch; ++b)
        FERRITE_CUSOLVER_CHECK(cusolverDnXgesvd(
            c.h.handle, c.h.params, jobu, jobvt, m, n, t, at(a, b * m * n), m, ts,
            static_cast<char*>(s.data()) + b * n * static_cast<std::int64_t>(rs), t,
            vectors ? static_cast<char*>(u.data()) + b * m * ucols * static_cast<std::int64_t>(es) : nullptr, m, t,
            vectors ? static_cast<char*>(vh.data()) + b * n * n * static_cast<std::int64_t>(es) : nullptr, n, t, ws.get(),
            dev, host_ws.data(), host, solver_info.get<int>() + b));
    }
    lk::merge_info(info.data_as<int>(), solver_info.get<int>(), d.batch, c.stream);
  }

  void eig(const LinalgDims& d, const Buffer& a, bool vectors, const Buffer& w, const Buffer& v,
           const Buffer& info) override {
    Call c(a);
    const std::int64_t n = d.n;
    const DType ct = complex_of(d.dtype);
    const cudaDataType t = cuda_type(ct);
    lk::nonfinite_info(a.data(), d.dtype, d.batch, n, n, info.data_as<int>(), static_cast<int>(n + 1), c.stream);
    if (n <= small_eig::kLargest) {  // own batched kernel: one thread per matrix, no geev loop
      Scratch small_info(c.ctx, c.stream, static_cast<std::size_t>(d.batch) * sizeof(int));
      Scratch work(c.ctx, c.stream, lk::small_eig_scratch_bytes(d.batch, n));
      lk::small_eig(a.data(), d.dtype, d.batch, n, vectors, w.data(), vectors ? v.data() : nullptr, small_info.get<int>(),
                    work.get(), c.stream);
      lk::merge_info(info.data_as<int>(), small_info.get<int>(), d.batch, c.stream);
      return;
    }
    // Real input runs geev in real arithmetic (as LAPACK's sgeev/dgeev, and PyTorch): the
    // eigenvalues come out complex (cuSOLVER's complex W for a real A), the vectors in LAPACK's
    // real packing of conjugate pairs, unpacked by one kernel. The complex form on a widened
    // copy, which ran before, took 0.86x PyTorch's time at 1024 F32 (complex arithmetic).
    const bool real = ct != d.dtype;
    const cudaDataType ta = cuda_type(d.dtype);  // A, VR and the compute type
    const std::int64_t as = static_cast<std::int64_t>(dtype_size(d.dtype)), ws = static_cast<std::int64_t>(dtype_size(ct));
    Scratch vr(c.ctx, c.stream, real && vectors ? static_cast<std::size_t>(d.batch * n * n * as) : 0);
    void* const vectors_out = !vectors ? nullptr : real ? vr.get() : v.data();
    const cusolverEigMode_t jobvr = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    Scratch solver_info(c.ctx, c.stream, static_cast<std::size_t>(d.batch) * sizeof(int));
    std::size_t dev = 0, host = 0;
    FERRITE_CUSOLVER_CHECK(cusolverDnXgeev_bufferSize(c.h.handle, c.h.params, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, ta,
                                                      a.data(), n, t, w.data(), ta, nullptr, n, ta, vectors_out, n, ta,
                                                      &dev, &host));
    Scratch ws_dev(c.ctx, c.stream, dev);
    std::vector<char> host_ws(host);
    for (std::int64_t b = 0; b < d.batch; ++b)
      FERRITE_CUSOLVER_CHECK(cusolverDnXgeev(
          c.h.handle, c.h.params, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, ta, static_cast<char*>(a.data()) + b * n * n * as,
          n, t, static_cast<char*>(w.data()) + b * n * ws, ta, nullptr, n, ta,
          vectors ? static_cast<char*>(vectors_out) + b * n * n * (real ? as : ws) : nullptr, n, ta, ws_dev.get(), dev,
          host_ws.data(), host, solver_info.get<int>() + b));
    if (real && vectors) lk::unpack_eigenvectors(vr.get(), w.data(), v.data(), d.dtype, d.batch, n, c.stream);
    lk::merge_info(info.data_as<int>(), solver_info.get<int>(), d.batch, c.stream);
  }

 private:
  // gesvdj one matrix at a time with cuSOLVER's default tolerance and sweep limit, as PyTorch's
  // call (a matrix that does not converge gets info = n + 1, and the front end reruns with
  // gesvd). Setting the tolerance to the dtype's ε and 400 sweeps, as ferrite did before, cost
  // 3.6% (F32) and 4.8% (F64) at 1024² on the H200 for no accuracy the conformance cases see. gesvdj sorts the singular values in descending order and returns V: one
  // kernel writes Vh = Vᴴ for the whole batch. Without vectors, U and V go to scratch (the
  // routine writes them anyway).
  void svd_jacobi(Call& c, const LinalgDims& d, const Buffer& a, bool full, bool vectors, const Buffer& u,
                  const Buffer& s, const Buffer& vh, int* solver_info) {
    const int m = as_int(d.m, "svd"), n = as_int(d.n, "svd");
    const std::int64_t es = static_cast<std::int64_t>(dtype_size(d.dtype));
    const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const int econ = vectors && full ? 0 : 1;
    const std::int64_t ucols = econ ? n : m;
    // One scratch U (m×n) serves every matrix when vectors are not wanted (stream order).
    Scratch u_scratch(c.ctx, c.stream, vectors ? 0 : static_cast<std::size_t>(static_cast<std::int64_t>(m) * n * es));
    const std::int64_t v_count = vectors ? d.batch : 1;
    Scratch v_full(c.ctx, c.stream, static_cast<std::size_t>(v_count * n * n * es));
    const GesvdjParams params;
    dispatch_typed(d.dtype, [&](auto tag) {
      using T = decltype(tag);
      using R = std::conditional_t<std::is_same_v<T, cuComplex>, float,
                                   std::conditional_t<std::is_same_v<T, cuDoubleComplex>, double, T>>;
      T* u_base = vectors ? u.data_as<T>() : u_scratch.get<T>();
      const std::int64_t u_step = vectors ? static_cast<std::int64_t>(m) * ucols : 0;
      const std::int64_t v_step = vectors ? static_cast<std::int64_t>(n) * n : 0;
      int lwork = 0;
      FERRITE_CUSOLVER_CHECK(typed::gesvdj_one_buffer(c.h.handle, jobz, econ, m, n, a.data_as<T>(), m, s.data_as<R>(),
                                                      u_base, m, v_full.get<T>(), n, &lwork, params));
      Scratch work(c.ctx, c.stream, static_cast<std::size_t>(std::max(lwork, 1)) * sizeof(T));
      for (std::int64_t b = 0; b < d.batch; ++b)
        FERRITE_CUSOLVER_CHECK(typed::gesvdj_one(c.h.handle, jobz, econ, m, n, a.data_as<T>() + b * m * n, m,
                                                 s.data_as<R>() + b * n, u_base + b * u_step, m,
                                                 v_full.get<T>() + b * v_step, n, work.get<T>(), lwork,
                                                 solver_info + b, params));
    });
    if (vectors) lk::adjoint(v_full.get(), vh.data(), d.dtype, d.batch, n, c.stream);
  }

  // Complex batches of matrices up to 32×32: one gesvdjBatched call (Jacobi, all matrices at
  // once; real ones take the own kernel).
  // It always returns the full U (m×m) and V (n×n): thin U keeps the first n columns and
  // Vh = Vᴴ is written by a kernel.
  void svd_jacobi_batched(Call& c, const LinalgDims& d, const Buffer& a, bool full, bool vectors, const Buffer& u,
                          const Buffer& s, const Buffer& vh, int* solver_info) {
    const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), batch = as_int(d.batch, "svd");
    const std::size_t es = dtype_size(d.dtype);
    const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const bool direct_u = vectors && full;
    Scratch u_full(c.ctx, c.stream, direct_u ? 0 : static_cast<std::size_t>(d.batch) * m * m * es);
    Scratch v_full(c.ctx, c.stream, static_cast<std::size_t>(d.batch) * n * n * es);
    void* u_out = direct_u ? u.data() : u_full.get();
    const GesvdjParams params;
    dispatch_typed(d.dtype, [&](auto tag) {
      using T = decltype(tag);
      using R = std::conditional_t<sizeof(T) == 8 && !std::is_same_v<T, double>, float,
                                   std::conditional_t<std::is_same_v<T, cuDoubleComplex>, double, T>>;
      int lwork = 0;
      FERRITE_CUSOLVER_CHECK(typed::gesvdj_buffer(c.h.handle, jobz, m, n, a.data_as<T>(), m, s.data_as<R>(),
                                                  static_cast<T*>(u_out), m, v_full.get<T>(), n, &lwork, params, batch));
      Scratch work(c.ctx, c.stream, static_cast<std::size_t>(std::max(lwork, 1)) * sizeof(T));
      FERRITE_CUSOLVER_CHECK(typed::gesvdj(c.h.handle, jobz, m, n, a.data_as<T>(), m, s.data_as<R>(),
                                           static_cast<T*>(u_out), m, v_full.get<T>(), n, work.get<T>(), lwork,
                                           solver_info, params, batch));
    });
    if (!vectors) return;
    if (!direct_u)
      FERRITE_CUDA_CHECK(cudaMemcpy2DAsync(u.data(), static_cast<std::size_t>(m) * n * es, u_full.get(),
                                           static_cast<std::size_t>(m) * m * es, static_cast<std::size_t>(m) * n * es,
                                           static_cast<std::size_t>(d.batch), cudaMemcpyDeviceToDevice, c.stream));
    lk::adjoint(v_full.get(), vh.data(), d.dtype, d.batch, n, c.stream);
  }
};

}  // namespace

std::unique_ptr<LinalgOps> make_cuda_linalg_ops() { return std::make_unique<CudaLinalgOps>(); }

}  // namespace ferrite::cuda

// Shared helpers of the CPU linear-algebra files: column-major (and row-major) Eigen maps, the dtype
// switch (which runs C64 in double precision), and the OpenMP loop over the matrices of a batch.
#pragma once

#include <Eigen/Dense>

#include <cmath>
#include <complex>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/borrowed_buffer.hpp"
#include "ferrite/backend_families/linalg_ops.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cpu::linalg {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <class T>
using MatMap = Eigen::Map<Mat<T>>;
// The row-major matrices that cholesky and eigh receive (linalg_ops.hpp).
template <class T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using RowMap = Eigen::Map<RowMat<T>>;
template <class T>
using ConstRowMap = Eigen::Map<const RowMat<T>>;
template <class T>
using Real = typename Eigen::NumTraits<T>::Real;
template <class T>
using Complex = std::complex<Real<T>>;

/// NaN in every element of p[0, count) (complex: NaN real and imaginary parts): the outputs
/// of a matrix whose input holds a non-finite value (it never reaches Eigen's iterations).
template <class T>
void fill_nan(T* p, std::int64_t count) {
  const Real<T> nan = std::numeric_limits<Real<T>>::quiet_NaN();
  for (std::int64_t i = 0; i < count; ++i) p[i] = T(nan);
}

template <class T>
bool all_finite(const T* p, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i)
    if (!std::isfinite(std::real(p[i])) || !std::isfinite(std::imag(p[i]))) return false;
  return true;
}

/// Runs f(b) for every matrix b of the batch, spread over OpenMP threads when there is more
/// than one matrix and enough work (flops ~ size³ each). No exception may leave an OpenMP
/// region, so an allocation failure inside Eigen is recorded and thrown afterwards.
template <class F>
void for_each_matrix(const char* op, std::int64_t batch, std::int64_t size, F&& f) {
  const double work = static_cast<double>(batch) * static_cast<double>(size) * static_cast<double>(size) *
                      static_cast<double>(size);
  bool out_of_memory = false;
#pragma omp parallel for schedule(dynamic) if (batch > 1 && work >= 1e5)
  for (std::int64_t b = 0; b < batch; ++b) {
    try {
      f(b);
    } catch (const std::bad_alloc&) {
#pragma omp atomic write
      out_of_memory = true;
    }
  }
  FERRITE_CHECK(!out_of_memory, OutOfMemory, op, ": out of host memory in Eigen (batch ", batch, ", size ", size, ")");
}

/// How an op uses a floating buffer it hands to dispatch (which copies only what is needed).
enum class Use { In, Out, InOut };
struct Arg {
  const Buffer& buffer;
  Use use;
};
inline Arg input(const Buffer& b) { return {b, Use::In}; }
inline Arg output(const Buffer& b) { return {b, Use::Out}; }
inline Arg in_out(const Buffer& b) { return {b, Use::InOut}; }

/// A double-precision copy of one F32 or C64 buffer (as F64 or C128) for the length of one
/// C64 call: filled from the buffer when the op reads it, rounded back once when it writes it.
/// An undefined buffer stays undefined. The vector owns the memory; the Buffer that shows it
/// never leaves the call, so its Storage frees nothing.
class Widened {
 public:
  Widened(const char* op, const Arg& arg) : source_(arg.buffer), use_(arg.use) {
    if (!source_.defined()) return;
    const DType narrow = source_.dtype();
    FERRITE_CHECK(narrow == DType::F32 || narrow == DType::C64, InvalidArgument, op, ": cannot widen a ",
                  dtype_name(narrow), " buffer");
    const std::int64_t reals = source_.numel() * (narrow == DType::C64 ? 2 : 1);
    try {
      wide_.resize(static_cast<std::size_t>(reals));
      buffer_ = detail::borrowed_buffer(wide_.data(), narrow == DType::C64 ? DType::C128 : DType::F64,
                                        source_.numel(), Device::cpu());
    } catch (const std::bad_alloc&) {
      FERRITE_THROW(OutOfMemory, op, ": out of host memory for the double-precision copy of a ",
                    dtype_name(narrow), " buffer (", source_.numel(), " elements)");
    }
    // Complex values are pairs of reals (std::complex's array layout), so one loop serves both.
    if (use_ != Use::Out) {
      const float* from = source_.data_as<float>();
      for (std::int64_t i = 0; i < reals; ++i) wide_[static_cast<std::size_t>(i)] = from[i];
    }
  }
  Widened(const Widened&) = delete;
  Widened& operator=(const Widened&) = delete;

  const Buffer& buffer() const { return buffer_; }
  /// Rounds the result once (to nearest; beyond the float range to ±Inf, as IEEE) into the
  /// caller's buffer, when the op wrote it.
  void narrow() const {
    if (!source_.defined() || use_ == Use::In) return;
    float* to = source_.data_as<float>();
    for (std::size_t i = 0; i < wide_.size(); ++i) to[i] = static_cast<float>(wide_[i]);
  }

 private:
  const Buffer& source_;
  Use use_;
  std::vector<double> wide_;
  Buffer buffer_;
};

template <class F, std::size_t... I>
void run_widened(const char* op, F& f, std::index_sequence<I...>, std::initializer_list<Arg> args) {
  const Widened wide[] = {Widened(op, args.begin()[I])...};
  f(std::complex<double>{}, wide[I].buffer()...);
  for (const Widened& w : wide) w.narrow();
}

/// Calls f(T{}, buffers...) with T the host type that runs a linalg dtype: float (F32), double
/// (F64) and std::complex<double> (C64 and C128). `buffers` are the op's floating buffers
/// (never the I32 pivots or info), each tagged with its use; f takes them as parameters and
/// reads them through data_as<T>() (data_as<Real<T>>() for real ones).
///
/// C64 runs in double: its floating buffers are widened once (C64 -> C128, F32 -> F64, as
/// Widened), the op runs on the copies, and each output is rounded once to single precision.
/// Eigen is thus never instantiated on std::complex<float>, whose SSE scalar broadcast
/// (pset1<Packet2cf>, also behind ploaddup in its GEMM kernels) reads a 4-byte-aligned
/// std::complex<float> through a double*: undefined behaviour, reported by UBSan as a
/// misaligned load (scripts/cpu-sanitize.sh). Double accumulation is also the CPU backend's
/// rule (design §6), so C64 results become more accurate, not less. F32 keeps float.
template <class F, class... A>
void dispatch(const char* op, DType dtype, F&& f, const A&... buffers) {
  static_assert((std::is_same_v<A, Arg> && ...), "dispatch: tag each buffer with input(), output() or in_out()");
  switch (dtype) {
    case DType::F32: f(float{}, buffers.buffer...); return;
    case DType::F64: f(double{}, buffers.buffer...); return;
    case DType::C64: run_widened(op, f, std::index_sequence_for<A...>{}, {buffers...}); return;
    case DType::C128: f(std::complex<double>{}, buffers.buffer...); return;
    default: FERRITE_THROW(Unsupported, "linalg: dtype ", dtype_name(dtype), " is not supported on the CPU");
  }
}

}  // namespace ferrite::cpu::linalg

// The backend interface of the FFT family (issue #14).
// A backend hands it out through Backend::fft_ops(); each backend implements it in its own
// files (src/cpu/fft/, src/cuda/fft/). The front end (src/frontend/fft.cpp) has resolved
// torch.fft's arguments (n/s padding and truncation, dims, norm, real-to-complex promotion)
// and hands over dense buffers described by an FftDesc; backends may only assert.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "ferrite/buffer.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/op.hpp"

namespace ferrite {

/// At most this many dims are transformed by one FftDesc (cuFFT's limit); the front end
/// splits fftn over more dims into several descriptors.
inline constexpr int kMaxFftRank = 3;
inline constexpr int kMaxFftBatchDims = 8;

enum class FftType : std::uint8_t {
  C2C,  ///< complex -> complex, forward (e^{-2πi jk/n}) or inverse (e^{+2πi jk/n})
  R2C,  ///< real -> one-sided complex spectrum (n/2 + 1 along the last transformed dim), forward
  C2R,  ///< one-sided complex spectrum -> real, inverse; the input buffer is never written
};

/// One (batched) multi-dimensional transform, unnormalised except for `scale`:
///   out = scale * conj?(transform(conj?(in)))
/// Transformed dims are outermost first; n[] are their logical (signal) lengths. For R2C and
/// C2R the complex side holds n[rank-1]/2 + 1 elements along the last transformed dim.
/// Strides are in elements of each buffer's own dtype (complex elements for a complex
/// buffer, reals for a real one). The batch is an index space of batch_rank dims with
/// strides for each buffer; in the layouts the front end makes, the dims' strides are those
/// of a dense row-major tensor, so stride[k] is a multiple of stride[k + 1] for transformed
/// dims (cuFFT's advanced "embed" layout).
struct FftDesc {
  FftType type = FftType::C2C;
  DType real_dtype = DType::F32;  ///< F32 or F64; the complex side is C64 or C128
  bool inverse = false;           ///< C2C only (R2C is always forward, C2R always inverse)
  int rank = 1;
  std::array<std::int64_t, kMaxFftRank> n{}, in_stride{}, out_stride{};
  int batch_rank = 0;
  std::array<std::int64_t, kMaxFftBatchDims> batch_sizes{}, in_batch_stride{}, out_batch_stride{};
  double scale = 1;
  bool conjugate_input = false;   ///< complex input only (hfft)
  bool conjugate_output = false;  ///< complex output only (ihfft)

  std::int64_t batch_count() const {
    std::int64_t count = 1;
    for (int i = 0; i < batch_rank; ++i) count *= batch_sizes[static_cast<std::size_t>(i)];
    return count;
  }
};

/// The plan cache of one device, as torch.backends.cuda.cufft_plan_cache.
struct FftPlanCacheInfo {
  std::size_t size = 0;      ///< plans held now
  std::size_t capacity = 0;  ///< the most it holds before evicting the least recently used
  std::int64_t hits = 0;     ///< transforms that found their plan
  std::int64_t misses = 0;   ///< transforms that created a plan
};

class FftOps {
 public:
  virtual ~FftOps() = default;
  /// Whether `op` runs for `dtype` (the input's) on this backend.
  virtual bool supports(Op op, DType dtype) const = 0;
  /// Runs `desc`; in and out are on this backend's device and do not overlap; every batch
  /// count and length is >= 1.
  virtual void execute(const FftDesc& desc, const Buffer& in, const Buffer& out) = 0;
  /// The plan cache of device `index` (a backend without plans reports zeros).
  virtual FftPlanCacheInfo plan_cache_info(int device) const = 0;
  /// Sets the capacity (evicting down to it); 0 disables caching.
  virtual void set_plan_cache_capacity(int device, std::size_t capacity) = 0;
  /// Drops every plan and zeroes the counters.
  virtual void clear_plan_cache(int device) = 0;
};

}  // namespace ferrite

// Discrete Fourier transforms with torch.fft's names, arguments and normalisation (issue #14).
//
//   fft::fft(x)                          C2C along the last dim; real x is promoted to complex
//   fft::rfft(x, 1000, 0)                one-sided spectrum of a real x, signal padded/cut to 1000
//   fft::irfft(X, std::nullopt, -1, fft::Norm::Ortho)
//   fft::fftn(x, std::vector<std::int64_t>{64, 64}, std::vector<std::int64_t>{0, 2})
//
// Dtypes: F32/C64 compute in single precision, F64/C128 in double; complex outputs are
// C64/C128 and real outputs F32/F64. F16, BF16, integers and Bool are Unsupported (cast
// first). `n`/`s` pad the input with zeros or truncate it along each transformed dim before
// the transform (for irfft/hfft: the length of the real output). `norm` (torch's strings
// "backward", "ortho", "forward") scales the forward transform by 1, 1/sqrt(N), 1/N and the
// inverse by 1/N, 1/sqrt(N), 1 where N is the product of the signal lengths.
// Any dims of any rank; the CUDA backend runs cuFFT through a per-device plan cache
// (plan_cache_info, set_plan_cache_capacity, clear_plan_cache). docs/families/fft.md.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ferrite/backend_families/fft_ops.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite::fft {

enum class Norm : std::uint8_t { Backward, Ortho, Forward };

using Dims = std::vector<std::int64_t>;

// ---- one dim ----
Tensor fft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t dim = -1,
           Norm norm = Norm::Backward);
Tensor ifft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t dim = -1,
            Norm norm = Norm::Backward);
/// Real input (F32/F64) only: n/2 + 1 complex outputs along `dim`.
Tensor rfft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t dim = -1,
            Norm norm = Norm::Backward);
/// The inverse of rfft: `n` real outputs (default 2 * (size - 1)); the input is padded or cut
/// to n/2 + 1. The imaginary parts of the zero-frequency (and, for even n, Nyquist) terms
/// are ignored, as a Hermitian signal has none.
Tensor irfft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t dim = -1,
             Norm norm = Norm::Backward);
/// The forward transform of a Hermitian signal given by its one-sided half: `n` real outputs
/// (default 2 * (size - 1)); hfft(x, n) = n * irfft(conj(x), n) under Norm::Backward.
Tensor hfft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t dim = -1,
            Norm norm = Norm::Backward);
/// The inverse of hfft: real input, n/2 + 1 complex outputs, conj(rfft(x)) / n (backward).
Tensor ihfft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt, std::int64_t dim = -1,
             Norm norm = Norm::Backward);

// ---- two dims (default the last two) ----
Tensor fft2(const Tensor& x, std::optional<Dims> s = std::nullopt, Dims dim = {-2, -1}, Norm norm = Norm::Backward);
Tensor ifft2(const Tensor& x, std::optional<Dims> s = std::nullopt, Dims dim = {-2, -1}, Norm norm = Norm::Backward);
Tensor rfft2(const Tensor& x, std::optional<Dims> s = std::nullopt, Dims dim = {-2, -1}, Norm norm = Norm::Backward);
Tensor irfft2(const Tensor& x, std::optional<Dims> s = std::nullopt, Dims dim = {-2, -1}, Norm norm = Norm::Backward);

// ---- any dims: all of them by default, or the last len(s) when only s is given ----
Tensor fftn(const Tensor& x, std::optional<Dims> s = std::nullopt, std::optional<Dims> dim = std::nullopt,
            Norm norm = Norm::Backward);
Tensor ifftn(const Tensor& x, std::optional<Dims> s = std::nullopt, std::optional<Dims> dim = std::nullopt,
             Norm norm = Norm::Backward);
/// The last of `dim` is the halved one.
Tensor rfftn(const Tensor& x, std::optional<Dims> s = std::nullopt, std::optional<Dims> dim = std::nullopt,
             Norm norm = Norm::Backward);
Tensor irfftn(const Tensor& x, std::optional<Dims> s = std::nullopt, std::optional<Dims> dim = std::nullopt,
              Norm norm = Norm::Backward);

// ---- helpers ----
/// [0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d * n), as torch.fft.fftfreq.
Tensor fftfreq(std::int64_t n, double d = 1.0, DType dtype = DType::F32, Device device = Device::cpu());
/// [0, 1, ..., n/2] / (d * n).
Tensor rfftfreq(std::int64_t n, double d = 1.0, DType dtype = DType::F32, Device device = Device::cpu());
/// Moves the zero-frequency term to the centre of each dim in `dim` (all dims by default).
Tensor fftshift(const Tensor& x, std::optional<Dims> dim = std::nullopt);
/// The inverse of fftshift (they differ for odd lengths).
Tensor ifftshift(const Tensor& x, std::optional<Dims> dim = std::nullopt);

// ---- the plan cache of a device (torch.backends.cuda.cufft_plan_cache[i]) ----
/// Plans held, capacity, hits and misses of `device`'s backend (zeros on the CPU).
FftPlanCacheInfo plan_cache_info(Device device);
/// Evicts least recently used plans down to `capacity`; 0 keeps no plan between calls.
void set_plan_cache_capacity(Device device, std::size_t capacity);
void clear_plan_cache(Device device);

}  // namespace ferrite::fft

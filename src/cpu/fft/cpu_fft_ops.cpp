// The CPU backend's FFTs: every FftDesc runs on a dense complex-double work array laid out
// [batch..., transformed...]: gather (widening F32 to double, conjugating for hfft), 1-D
// transforms along each transformed dim (lines in parallel over OpenMP, one scratch set per
// thread allocated before the parallel region so nothing can throw inside it), scatter with
// the scale. R2C transforms the full real signal and keeps the first n/2 + 1 terms; C2R runs
// the inverse C2C over the other dims on the half spectrum, then extends each line along the
// last dim Hermitian-wise and keeps the real part (so imaginary parts of the zero-frequency
// and Nyquist terms are ignored, as cuFFT and pocketfft do).
#ifdef _OPENMP
#include <omp.h>
#else
static int omp_get_max_threads() { return 1; }
static int omp_get_thread_num() { return 0; }
#endif

#include <algorithm>
#include <complex>
#include <new>
#include <vector>

#include "cpu/cpu_families.hpp"
#include "cpu/fft/fft_plan.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cpu {
namespace {

using fft::cd;

// Below this many elements the loops run on the calling thread.
constexpr std::int64_t kParallelElements = 1 << 15;

struct Space {
  std::vector<std::int64_t> sizes;    // work-array dims, outermost first
  std::vector<std::int64_t> strides;  // the matching element strides into a user buffer
};

std::int64_t numel(const std::vector<std::int64_t>& s) {
  std::int64_t n = 1;
  for (std::int64_t v : s) n *= v;
  return n;
}

std::int64_t offset_of(std::int64_t index, const Space& s) {
  std::int64_t off = 0;
  for (std::size_t i = s.sizes.size(); i-- > 0;) {
    off += (index % s.sizes[i]) * s.strides[i];
    index /= s.sizes[i];
  }
  return off;
}

template <class T>
cd load(const T* p, std::int64_t off) {
  return cd(static_cast<double>(p[off]), 0.0);
}
template <class T>
cd load(const std::complex<T>* p, std::int64_t off) {
  return cd(static_cast<double>(p[off].real()), static_cast<double>(p[off].imag()));
}

std::vector<std::vector<cd>> thread_buffers(std::int64_t elements) {
  try {
    return std::vector<std::vector<cd>>(static_cast<std::size_t>(omp_get_max_threads()),
                                        std::vector<cd>(static_cast<std::size_t>(elements)));
  } catch (const std::bad_alloc&) {
    FERRITE_THROW(OutOfMemory, "fft: ", elements, " complex scratch elements per thread do not fit in host memory");
  }
}

// In-place 1-D transforms along dim t of the dense array w of `sizes`.
void transform_dim(std::vector<cd>& w, const std::vector<std::int64_t>& sizes, std::size_t t, bool inverse) {
  const std::int64_t n = sizes[t];
  if (n == 1) return;
  std::int64_t inner = 1;
  for (std::size_t i = t + 1; i < sizes.size(); ++i) inner *= sizes[i];
  const std::int64_t lines = static_cast<std::int64_t>(w.size()) / n;
  const auto plan = fft::plan_for(n);
  const std::int64_t per_thread = 2 * n + plan->scratch_size();
  auto buffers = thread_buffers(per_thread);
  cd* data = w.data();
#pragma omp parallel for schedule(static) if (lines > 1 && lines * n >= kParallelElements)
  for (std::int64_t l = 0; l < lines; ++l) {
    cd* line = buffers[static_cast<std::size_t>(omp_get_thread_num())].data();
    cd* result = line + n;
    const std::int64_t base = (l / inner) * n * inner + l % inner;
    for (std::int64_t j = 0; j < n; ++j) line[j] = data[base + j * inner];
    plan->execute(line, result, inverse, result + n);
    for (std::int64_t j = 0; j < n; ++j) data[base + j * inner] = result[j];
  }
}

template <class T>
void run(const FftDesc& d, const void* in_ptr, void* out_ptr) {
  using C = std::complex<T>;
  const auto rank = static_cast<std::size_t>(d.rank);
  const std::int64_t last_n = d.n[rank - 1], half = last_n / 2 + 1;
  // Work-array spaces of the input and output sides.
  Space in_space, out_space;
  for (int b = 0; b < d.batch_rank; ++b) {
    const auto u = static_cast<std::size_t>(b);
    in_space.sizes.push_back(d.batch_sizes[u]);
    in_space.strides.push_back(d.in_batch_stride[u]);
    out_space.sizes.push_back(d.batch_sizes[u]);
    out_space.strides.push_back(d.out_batch_stride[u]);
  }
  const std::size_t first_t = in_space.sizes.size();
  for (std::size_t k = 0; k < rank; ++k) {
    const bool halved_in = d.type == FftType::C2R && k + 1 == rank;
    const bool halved_out = d.type == FftType::R2C && k + 1 == rank;
    in_space.sizes.push_back(halved_in ? half : d.n[k]);
    in_space.strides.push_back(d.in_stride[k]);
    out_space.sizes.push_back(halved_out ? half : d.n[k]);
    out_space.strides.push_back(d.out_stride[k]);
  }
  const bool parallel_in = numel(in_space.sizes) >= kParallelElements;
  std::vector<cd> w;
  try {
    w.resize(static_cast<std::size_t>(numel(in_space.sizes)));
  } catch (const std::bad_alloc&) {
    FERRITE_THROW(OutOfMemory, "fft: a work array of ", numel(in_space.sizes), " complex doubles does not fit in host memory");
  }
  const std::int64_t total = static_cast<std::int64_t>(w.size());
  // Gather.
  if (d.type == FftType::R2C) {
    const T* in = static_cast<const T*>(in_ptr);
#pragma omp parallel for schedule(static) if (parallel_in)
    for (std::int64_t e = 0; e < total; ++e) w[static_cast<std::size_t>(e)] = load(in, offset_of(e, in_space));
  } else {
    const C* in = static_cast<const C*>(in_ptr);
    const bool conj = d.conjugate_input;
#pragma omp parallel for schedule(static) if (parallel_in)
    for (std::int64_t e = 0; e < total; ++e) {
      const cd v = load(in, offset_of(e, in_space));
      w[static_cast<std::size_t>(e)] = conj ? std::conj(v) : v;
    }
  }
  // Transform.
  const bool inverse = d.type == FftType::C2R || (d.type == FftType::C2C && d.inverse);
  const std::size_t transformed_c2c = d.type == FftType::C2R ? rank - 1 : rank;
  for (std::size_t k = 0; k < transformed_c2c; ++k) transform_dim(w, in_space.sizes, first_t + k, inverse);

  if (d.type == FftType::C2R) {
    T* out = static_cast<T*>(out_ptr);
    const std::int64_t lines = total / half;
    const auto plan = fft::plan_for(last_n);
    auto buffers = thread_buffers(2 * last_n + plan->scratch_size());
    const double scale = d.scale;
#pragma omp parallel for schedule(static) if (lines > 1 && lines * last_n >= kParallelElements)
    for (std::int64_t l = 0; l < lines; ++l) {
      cd* line = buffers[static_cast<std::size_t>(omp_get_thread_num())].data();
      cd* result = line + last_n;
      const cd* src = w.data() + l * half;
      for (std::int64_t j = 0; j < last_n; ++j) line[j] = j < half ? src[j] : std::conj(src[last_n - j]);
      // The zero-frequency (and Nyquist) terms' imaginary parts only add imaginary output.
      plan->execute(line, result, true, result + last_n);
      for (std::int64_t j = 0; j < last_n; ++j)
        out[offset_of(l * last_n + j, out_space)] = static_cast<T>(result[j].real() * scale);
    }
    return;
  }
  C* out = static_cast<C*>(out_ptr);
  const double scale = d.scale;
  const bool conj = d.conjugate_output;
  const std::int64_t out_total = numel(out_space.sizes);
  const std::int64_t full_last = in_space.sizes.back();  // R2C keeps the first `half` of each row
#pragma omp parallel for schedule(static) if (out_total >= kParallelElements)
  for (std::int64_t e = 0; e < out_total; ++e) {
    const std::int64_t row = e / out_space.sizes.back(), col = e % out_space.sizes.back();
    cd v = w[static_cast<std::size_t>(row * full_last + col)] * scale;
    if (conj) v = std::conj(v);
    out[offset_of(e, out_space)] = C(static_cast<T>(v.real()), static_cast<T>(v.imag()));
  }
}

bool fft_dtype(DType d) { return d == DType::F32 || d == DType::F64 || d == DType::C64 || d == DType::C128; }

class CpuFftOps final : public FftOps {
 public:
  bool supports(Op op, DType dtype) const override { return op_group(op) == OpGroup::Fft && fft_dtype(dtype); }

  void execute(const FftDesc& d, const Buffer& in, const Buffer& out) override {
    if (d.real_dtype == DType::F64)
      run<double>(d, in.data(), out.data());
    else
      run<float>(d, in.data(), out.data());
  }

  FftPlanCacheInfo plan_cache_info(int) const override { return {}; }
  void set_plan_cache_capacity(int, std::size_t) override {}
  void clear_plan_cache(int) override {}
};

}  // namespace

std::unique_ptr<FftOps> make_cpu_fft_ops() { return std::make_unique<CpuFftOps>(); }

}  // namespace ferrite::cpu

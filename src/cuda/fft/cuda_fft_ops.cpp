// The CUDA backend's FFTs: cuFFT plans made with cufftXtMakePlanMany on the advanced
// (strided, embedded) layout of the front end's dense tensors, so transforms over inner,
// outer or several dims run without a transposing copy. One batch dim (the largest) runs
// inside cuFFT; any other batch dims are a host loop over pointer offsets.
//
// Plans live in a least-recently-used cache per device (as torch.backends.cuda.
// cufft_plan_cache), keyed by everything the plan depends on. Plans are made with
// cufftSetAutoAllocation(0): each call takes its work area from ferrite's stream-ordered pool
// on the current stream and binds the plan to that stream (cufftSetStream). A plan holds its
// stream and work area between those calls, so the device's cache mutex is held from lookup
// to the last launch: concurrent callers of one device serialise only on the enqueueing.
//
// cuFFT's C2R may overwrite its input, so C2R always reads a pool copy (conjugated for hfft,
// with the imaginary parts of the zero-frequency and Nyquist terms dropped). The front end
// sends C2R over one dim only, so multi-dim irfftn means exactly what the CPU computes.
#include <cufft.h>
#include <cufftXt.h>

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "cuda/cuda_families.hpp"
#include "cuda/fft/fft_kernels.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/device_context.hpp"
#include "cuda/shape/shape_runtime.hpp"

namespace ferrite::cuda {
namespace {

const char* cufft_status_text(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "unknown cuFFT status";
  }
}

#define FERRITE_CUFFT_CHECK(expr)                                                                   \
  do {                                                                                              \
    const cufftResult ferrite_cufft_status_ = (expr);                                               \
    if (ferrite_cufft_status_ != CUFFT_SUCCESS) [[unlikely]]                                        \
      throw_library_error("cuFFT", static_cast<int>(ferrite_cufft_status_),                         \
                          cufft_status_text(ferrite_cufft_status_), #expr, __FILE__, __LINE__);     \
  } while (0)

constexpr std::size_t kDefaultCapacity = 4096;  // PyTorch's default max_size

// Everything a plan depends on.
struct PlanKey {
  std::array<long long, 19> v{};
  bool operator<(const PlanKey& o) const { return v < o.v; }
};

struct Layout {
  int rank = 1;
  long long n[kMaxFftRank]{}, inembed[kMaxFftRank]{}, onembed[kMaxFftRank]{};
  long long istride = 1, idist = 1, ostride = 1, odist = 1, batch = 1;
  FftType type = FftType::C2C;
  DType real = DType::F32;

  PlanKey key() const {
    PlanKey k;
    std::size_t i = 0;
    k.v[i++] = static_cast<long long>(type);
    k.v[i++] = static_cast<long long>(real);
    k.v[i++] = rank;
    for (int d = 0; d < kMaxFftRank; ++d) {
      k.v[i++] = n[d];
      k.v[i++] = inembed[d];
      k.v[i++] = onembed[d];
    }
    for (long long x : {istride, idist, ostride, odist, batch}) k.v[i++] = x;
    return k;
  }
};

class Plan {
 public:
  explicit Plan(const Layout& l) {
    FERRITE_CUFFT_CHECK(cufftCreate(&handle_));
    try {
      FERRITE_CUFFT_CHECK(cufftSetAutoAllocation(handle_, 0));
      const bool f64 = l.real == DType::F64;
      const cudaDataType complex_type = f64 ? CUDA_C_64F : CUDA_C_32F, real_type = f64 ? CUDA_R_64F : CUDA_R_32F;
      const cudaDataType in_type = l.type == FftType::R2C ? real_type : complex_type;
      const cudaDataType out_type = l.type == FftType::C2R ? real_type : complex_type;
      long long n[kMaxFftRank], inembed[kMaxFftRank], onembed[kMaxFftRank];
      for (int d = 0; d < l.rank; ++d) {
        n[d] = l.n[d];
        inembed[d] = l.inembed[d];
        onembed[d] = l.onembed[d];
      }
      FERRITE_CUFFT_CHECK(cufftXtMakePlanMany(handle_, l.rank, n, inembed, l.istride, l.idist, in_type, onembed,
                                              l.ostride, l.odist, out_type, l.batch, &work_bytes_, complex_type));
    } catch (...) {
      cufftDestroy(handle_);
      throw;
    }
  }
  ~Plan() { cufftDestroy(handle_); }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  cufftHandle handle() const { return handle_; }
  std::size_t work_bytes() const { return work_bytes_; }

 private:
  cufftHandle handle_ = 0;
  std::size_t work_bytes_ = 0;
};

class PlanCache {
 public:
  std::mutex mutex;

  // The plan of `layout`, made on a miss. Hold `mutex`.
  Plan& get(const Layout& layout) {
    const PlanKey key = layout.key();
    const auto it = index_.find(key);
    if (it != index_.end()) {
      ++hits_;
      lru_.splice(lru_.begin(), lru_, it->second);
      return *it->second->second;
    }
    ++misses_;
    auto plan = std::make_unique<Plan>(layout);
    if (capacity_ == 0) {  // no caching: the plan lives until the next call
      uncached_ = std::move(plan);
      return *uncached_;
    }
    lru_.emplace_front(key, std::move(plan));
    index_[key] = lru_.begin();
    trim(capacity_);
    return *lru_.front().second;
  }

  FftPlanCacheInfo info() const { return {lru_.size(), capacity_, hits_, misses_}; }
  void set_capacity(std::size_t capacity) {
    capacity_ = capacity;
    trim(capacity);
  }
  void clear() {
    trim(0);
    uncached_.reset();
    hits_ = misses_ = 0;
  }

 private:
  void trim(std::size_t capacity) {
    while (lru_.size() > capacity) {
      // Work queued with the plan may still read its tables.
      cudaDeviceSynchronize();
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }

  std::list<std::pair<PlanKey, std::unique_ptr<Plan>>> lru_;
  std::map<PlanKey, std::list<std::pair<PlanKey, std::unique_ptr<Plan>>>::iterator> index_;
  std::unique_ptr<Plan> uncached_;
  std::size_t capacity_ = kDefaultCapacity;
  std::int64_t hits_ = 0, misses_ = 0;
};

class CudaFftOps final : public FftOps {
 public:
  bool supports(Op op, DType dtype) const override {
    return op_group(op) == OpGroup::Fft &&
           (dtype == DType::F32 || dtype == DType::F64 || dtype == DType::C64 || dtype == DType::C128);
  }

  void execute(const FftDesc& d, const Buffer& in, const Buffer& out) override {
    const int device = out.device().index;
    DeviceGuard guard(device);
    DeviceContext& ctx = DeviceContext::get(device);
    const cudaStream_t stream = ctx.current_stream();

    Layout l;
    l.type = d.type;
    l.real = d.real_dtype;
    l.rank = d.rank;
    const auto r = static_cast<std::size_t>(d.rank);
    for (std::size_t k = 0; k < r; ++k) l.n[k] = d.n[k];
    // Embedded extents: dim k's stride over dim k + 1's (the front end's dense strides divide).
    l.inembed[0] = l.n[0];
    l.onembed[0] = l.n[0];
    for (std::size_t k = 1; k < r; ++k) {
      l.inembed[k] = d.in_stride[k - 1] / d.in_stride[k];
      l.onembed[k] = d.out_stride[k - 1] / d.out_stride[k];
    }
    l.istride = d.in_stride[r - 1];
    l.ostride = d.out_stride[r - 1];
    // The largest batch dim runs inside cuFFT.
    int inner = -1;
    for (int b = 0; b < d.batch_rank; ++b)
      if (inner < 0 || d.batch_sizes[static_cast<std::size_t>(b)] > d.batch_sizes[static_cast<std::size_t>(inner)])
        inner = b;
    if (inner >= 0) {
      const auto u = static_cast<std::size_t>(inner);
      l.batch = d.batch_sizes[u];
      l.idist = d.in_batch_stride[u];
      l.odist = d.out_batch_stride[u];
    }

    const bool complex_in = d.type != FftType::R2C, complex_out = d.type != FftType::C2R;
    const std::size_t real_size = dtype_size(d.real_dtype);
    const std::size_t in_elem = real_size * (complex_in ? 2 : 1), out_elem = real_size * (complex_out ? 2 : 1);

    // C2R reads a private copy: cuFFT may overwrite it, and hfft conjugates it.
    const void* source = in.data();
    std::optional<shape::Scratch> copy;  // pool memory, released stream-ordered
    if (d.type == FftType::C2R) {
      copy.emplace(device, in.nbytes(), stream);
      const std::int64_t last_n = d.n[r - 1];
      kernels::fft_prepare_c2r(in.data(), copy->as<void>(), static_cast<std::int64_t>(in.nbytes() / in_elem), d.real_dtype,
                               d.in_stride[r - 1], last_n / 2 + 1, last_n % 2 == 0, d.conjugate_input, stream);
      source = copy->as<void>();
    }

    // cuFFT rejects R2C input not aligned to the complex type (CUFFT_INVALID_VALUE): a
    // contiguous view at an odd element offset is read from an aligned copy.
    if (d.type == FftType::R2C && reinterpret_cast<std::uintptr_t>(in.data()) % (2 * real_size) != 0) {
      copy.emplace(device, in.nbytes(), stream);
      FERRITE_CUDA_CHECK(cudaMemcpyAsync(copy->as<void>(), in.data(), in.nbytes(), cudaMemcpyDeviceToDevice, stream));
      source = copy->as<void>();
    }

    PlanCache& cache = cache_of(device);
    {
      std::lock_guard<std::mutex> lock(cache.mutex);
      Plan& plan = cache.get(l);
      shape::Scratch work(device, plan.work_bytes(), stream);
      FERRITE_CUFFT_CHECK(cufftSetWorkArea(plan.handle(), work.as<void>()));
      FERRITE_CUFFT_CHECK(cufftSetStream(plan.handle(), stream));
      const int direction = d.type == FftType::C2C && d.inverse ? CUFFT_INVERSE
                            : d.type == FftType::C2R             ? CUFFT_INVERSE
                                                                 : CUFFT_FORWARD;
      const std::int64_t outer = d.batch_count() / (inner >= 0 ? d.batch_sizes[static_cast<std::size_t>(inner)] : 1);
      for (std::int64_t i = 0; i < outer; ++i) {
        std::int64_t rest = i, off_in = 0, off_out = 0;
        for (int b = d.batch_rank - 1; b >= 0; --b) {
          if (b == inner) continue;
          const auto u = static_cast<std::size_t>(b);
          const std::int64_t c = rest % d.batch_sizes[u];
          rest /= d.batch_sizes[u];
          off_in += c * d.in_batch_stride[u];
          off_out += c * d.out_batch_stride[u];
        }
        auto* src = const_cast<char*>(static_cast<const char*>(source)) + off_in * static_cast<std::int64_t>(in_elem);
        auto* dst = static_cast<char*>(out.data()) + off_out * static_cast<std::int64_t>(out_elem);
        FERRITE_CUFFT_CHECK(cufftXtExec(plan.handle(), src, dst, direction));
      }
    }
    if (d.scale != 1.0 || d.conjugate_output) {
      const auto reals = static_cast<std::int64_t>(out.nbytes() / real_size);
      kernels::fft_scale_conjugate(out.data(), out.data(), reals, d.real_dtype, d.scale, d.conjugate_output, stream);
    }
  }

  FftPlanCacheInfo plan_cache_info(int device) const override {
    PlanCache& cache = cache_of(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    return cache.info();
  }
  void set_plan_cache_capacity(int device, std::size_t capacity) override {
    PlanCache& cache = cache_of(device);
    DeviceGuard guard(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    cache.set_capacity(capacity);
  }
  void clear_plan_cache(int device) override {
    PlanCache& cache = cache_of(device);
    DeviceGuard guard(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    cache.clear();
  }

 private:
  PlanCache& cache_of(int device) const {
    FERRITE_CHECK(device >= 0 && device < DeviceContext::count(), InvalidArgument, "fft plan cache: no CUDA device ",
                  device, " (", DeviceContext::count(), " present)");
    std::lock_guard<std::mutex> lock(caches_mutex_);
    if (caches_.empty()) caches_.resize(static_cast<std::size_t>(DeviceContext::count()));
    auto& slot = caches_[static_cast<std::size_t>(device)];
    // Never destroyed: plans must not outlive the CUDA context at process exit.
    if (!slot) slot = new PlanCache();
    return *slot;
  }

  mutable std::mutex caches_mutex_;
  mutable std::vector<PlanCache*> caches_;
};

}  // namespace

std::unique_ptr<FftOps> make_cuda_fft_ops() { return std::make_unique<CudaFftOps>(); }

}  // namespace ferrite::cuda

// Fused multi-tensor Adam/AdamW/SGD: one launch covers up to kMaxTensors tensors, whose
// pointers travel in the kernel's parameters (CUDA 12.1+ allows 32 KiB). Each block takes
// one chunk of kChunk elements of one tensor, found by a binary search over the chunk
// prefix sums; threads stride through the chunk so loads coalesce. The element update is
// the CPU backend's (src/core/optimizer_math.hpp), so results agree bit for bit. When every
// pointer of a launch is aligned, each access moves 4 elements (16 bytes of F32 state).
#include "core/optimizer_math.hpp"
#include "cuda/training/training_common.cuh"
#include "cuda/training/training_kernels.cuh"

namespace ferrite::cuda::training {
namespace {

using namespace ferrite::detail;

constexpr int kMaxTensors = 256;
constexpr int kPerThread = 8;
constexpr int kChunk = kThreads * kPerThread;

struct TensorTable {
  void* param[kMaxTensors];
  const void* grad[kMaxTensors];
  float* state0[kMaxTensors];
  float* state1[kMaxTensors];
  float* state2[kMaxTensors];
  float* master[kMaxTensors];
  std::int64_t numel[kMaxTensors];
  int chunk_start[kMaxTensors + 1];
  int count;
};

template <class T, bool kVec>
__global__ void __launch_bounds__(kThreads)
    optimizer_kernel(const __grid_constant__ TensorTable table, const optim::StepConsts c, const void* found_inf,
                     bool found_is_bool) {
  if (found_inf) {
    const bool skip = found_is_bool ? *static_cast<const std::uint8_t*>(found_inf) != 0
                                    : *static_cast<const float*>(found_inf) != 0.f;
    if (skip) return;
  }
  const int b = blockIdx.x;
  int lo = 0, hi = table.count - 1;  // the last t with chunk_start[t] <= b
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (table.chunk_start[mid] <= b) lo = mid; else hi = mid - 1;
  }
  const int t = lo;
  const std::int64_t n = table.numel[t];
  T* p = static_cast<T*>(table.param[t]);
  const T* g = static_cast<const T*>(table.grad[t]);
  float* s0 = table.state0[t];
  float* s1 = table.state1[t];
  float* s2 = table.state2[t];
  float* master = table.master[t];
  const std::int64_t chunk = static_cast<std::int64_t>(b - table.chunk_start[t]) * kChunk;
  // Element j of this thread: kVec takes 4 consecutive elements per 16-byte (F32) access,
  // else one element per access; either way a warp's accesses are contiguous.
  constexpr int kGroup = kVec ? 4 : 1;
  auto index = [&](int j) {
    return chunk + (static_cast<std::int64_t>(j / kGroup) * kThreads + threadIdx.x) * kGroup + j % kGroup;
  };
  float w[kPerThread], gr[kPerThread], a[kPerThread], v[kPerThread], vm[kPerThread];
#pragma unroll
  for (int q = 0; q < kPerThread / kGroup; ++q) {
    const std::int64_t i0 = index(q * kGroup);
    if (kVec && i0 + kGroup <= n) {
      using P = Pack<T, kGroup>;
      using F = Pack<float, kGroup>;
      const P pv = *reinterpret_cast<const P*>(p + i0);
      const P gv = *reinterpret_cast<const P*>(g + i0);
      F mv{}, av{}, vv{}, xv{};
      if (master) mv = *reinterpret_cast<const F*>(master + i0);
      if (s0) av = *reinterpret_cast<const F*>(s0 + i0);
      if (s1) vv = *reinterpret_cast<const F*>(s1 + i0);
      if (s2) xv = *reinterpret_cast<const F*>(s2 + i0);
#pragma unroll
      for (int e = 0; e < kGroup; ++e) {
        const int j = q * kGroup + e;
        w[j] = master ? mv.v[e] : static_cast<float>(widen(pv.v[e]));
        gr[j] = static_cast<float>(widen(gv.v[e]));
        a[j] = av.v[e];
        v[j] = vv.v[e];
        vm[j] = xv.v[e];
      }
    } else {
#pragma unroll
      for (int e = 0; e < kGroup; ++e) {
        const int j = q * kGroup + e;
        const std::int64_t i = i0 + e;
        if (i < n) {
          w[j] = master ? master[i] : static_cast<float>(widen(p[i]));
          gr[j] = static_cast<float>(widen(g[i]));
          a[j] = s0 ? s0[i] : 0.f;
          v[j] = s1 ? s1[i] : 0.f;
          vm[j] = s2 ? s2[i] : 0.f;
        }
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    if (index(j) < n) {
      if (c.kind == OptimizerKind::Sgd)
        optim::sgd_element(c, w[j], gr[j], a[j]);
      else
        optim::adam_element(c, w[j], gr[j], a[j], v[j], vm[j]);
    }
  }
#pragma unroll
  for (int q = 0; q < kPerThread / kGroup; ++q) {
    const std::int64_t i0 = index(q * kGroup);
    if (kVec && i0 + kGroup <= n) {
      using P = Pack<T, kGroup>;
      using F = Pack<float, kGroup>;
      P pv;
      F mv, av, vv, xv;
#pragma unroll
      for (int e = 0; e < kGroup; ++e) {
        const int j = q * kGroup + e;
        pv.v[e] = narrow<T>(w[j]);
        mv.v[e] = w[j];
        av.v[e] = a[j];
        vv.v[e] = v[j];
        xv.v[e] = vm[j];
      }
      *reinterpret_cast<P*>(p + i0) = pv;
      if (master) *reinterpret_cast<F*>(master + i0) = mv;
      if (s0) *reinterpret_cast<F*>(s0 + i0) = av;
      if (s1) *reinterpret_cast<F*>(s1 + i0) = vv;
      if (s2) *reinterpret_cast<F*>(s2 + i0) = xv;
    } else {
#pragma unroll
      for (int e = 0; e < kGroup; ++e) {
        const int j = q * kGroup + e;
        const std::int64_t i = i0 + e;
        if (i < n) {
          if (master) master[i] = w[j];
          p[i] = narrow<T>(w[j]);
          if (s0) s0[i] = a[j];
          if (s1) s1[i] = v[j];
          if (s2) s2[i] = vm[j];
        }
      }
    }
  }
}

template <class T>
void launch(const optim::StepConsts& c, const std::vector<OptimizerTensor>& tensors, const Buffer& found_inf,
            cudaStream_t stream) {
  const void* found = found_inf.numel() ? found_inf.data() : nullptr;
  const bool found_bool = found_inf.numel() && found_inf.dtype() == DType::Bool;
  for (std::size_t start = 0; start < tensors.size();) {
    TensorTable table{};
    int count = 0;
    std::int64_t chunks = 0;
    bool aligned = true;  // every pointer of the table allows 4-element vector accesses
    // Fill a table; a new launch starts when it is full or its chunks would pass 2^31.
    for (; start < tensors.size() && count < kMaxTensors; ++start) {
      const OptimizerTensor& o = tensors[start];
      const std::int64_t n = o.param.numel();
      if (n == 0) continue;
      const std::int64_t k = (n + kChunk - 1) / kChunk;
      if (chunks + k >= (std::int64_t(1) << 31) - 1) break;
      table.param[count] = o.param.data();
      table.grad[count] = o.grad.data();
      table.state0[count] = o.state0.numel() ? o.state0.data_as<float>() : nullptr;
      table.state1[count] = o.state1.numel() ? o.state1.data_as<float>() : nullptr;
      table.state2[count] = o.state2.numel() ? o.state2.data_as<float>() : nullptr;
      table.master[count] = o.master.numel() ? o.master.data_as<float>() : nullptr;
      for (const Buffer* buf : {&o.param, &o.grad})
        aligned = aligned && reinterpret_cast<std::uintptr_t>(buf->data()) % (4 * sizeof(T)) == 0;
      for (const Buffer* buf : {&o.state0, &o.state1, &o.state2, &o.master})
        aligned = aligned && (buf->numel() == 0 || reinterpret_cast<std::uintptr_t>(buf->data()) % 16 == 0);
      table.numel[count] = n;
      table.chunk_start[count] = static_cast<int>(chunks);
      chunks += k;
      ++count;
    }
    if (count == 0) continue;
    table.chunk_start[count] = static_cast<int>(chunks);
    table.count = count;
    if (aligned)
      optimizer_kernel<T, true><<<static_cast<unsigned>(chunks), kThreads, 0, stream>>>(table, c, found, found_bool);
    else
      optimizer_kernel<T, false><<<static_cast<unsigned>(chunks), kThreads, 0, stream>>>(table, c, found, found_bool);
    FERRITE_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

void optimizer_step(const OptimizerDesc& desc, const std::vector<OptimizerTensor>& tensors, const Buffer& found_inf,
                    cudaStream_t stream) {
  const optim::StepConsts c = optim::step_consts(desc);
  switch (tensors[0].param.dtype()) {
    case DType::F32: return launch<float>(c, tensors, found_inf, stream);
    case DType::BF16: return launch<BFloat16>(c, tensors, found_inf, stream);
    case DType::F16: return launch<Half>(c, tensors, found_inf, stream);
    default: FERRITE_THROW(Unsupported, "optimizer: param dtype ", dtype_name(tensors[0].param.dtype()));
  }
}

}  // namespace ferrite::cuda::training

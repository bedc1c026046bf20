// conv2d's three passes as cuDNN graphs (conv_fprop, conv_dgrad, conv_wgrad) through the
// header-only cuDNN frontend: the only translation unit that includes cudnn_frontend.h (it is
// slow to compile). One graph per (device, pass, dtype, TF32 permission, every size of the
// descriptor), built once from cuDNN's heuristics (modes A then FALLBACK) and cached with its
// workspace size; a case no engine supports is cached as such and the caller uses im2col.
//
// Engine filters, applied to the heuristics' list before a plan is built:
// - NONDETERMINISTIC engines are dropped for every pass, so a call repeats bit for bit
//   (cuDNN marks the wgrad/dgrad engines that sum with atomics this way);
// - REDUCED_PRECISION_REDUCTION engines are dropped, so half types accumulate in F32;
// - F32 without ferrite::allow_tf32() drops TENSOR_CORE and DOWN_CONVERT_INPUTS engines:
//   compute type FLOAT alone still lets cuDNN pick TF32 tensor-core engines.
// Execution: this thread's cudnnHandle of the device (cuda/libs/cudnn_handle.hpp), bound to
// the caller's stream; the workspace comes from the device's stream-ordered pool. The global
// mutex covers the cache (lookup, build, insertion) and the counters only. Enqueueing a cached
// graph takes that graph's own mutex instead: the frontend's execute() is const and documented
// as thread-safe with distinct handles, but cuDNN promises thread safety per handle, not per
// execution plan (PyTorch keeps its plan caches per thread for that reason), so two threads
// never enqueue the same plan at once. Only the host-side enqueue is serialised, and only for
// calls of the same graph; distinct cases, devices and threads enqueue in parallel.
#include "cuda/conv/cudnn_conv.hpp"

#include "ferrite/error.hpp"

#if FERRITE_HAVE_CUDNN_FRONTEND

#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cudnn_frontend.h>

#include "cuda/libs/cudnn_handle.hpp"
#include "cuda/libs/graph_cache.hpp"
#include "cuda/runtime/device_context.hpp"
#include "cuda/shape/shape_runtime.hpp"

namespace ferrite::cuda::cudnn_conv {
namespace {

namespace fe = cudnn_frontend;

// Workspaces above this are not worth an engine's speed (the im2col path's column budget).
constexpr std::int64_t kWorkspaceLimit = std::int64_t(2) << 30;

enum Uid : std::int64_t { kX = 1, kW = 2, kY = 3 };

struct Key {
  int device = 0;
  Pass pass = Pass::Forward;
  DType dtype = DType::F32;
  bool tf32 = false;
  std::array<std::int64_t, 17> sizes{};
  bool operator==(const Key&) const = default;
};

struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    std::size_t h = std::hash<int>()(k.device);
    auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    mix(static_cast<std::size_t>(k.pass));
    mix(static_cast<std::size_t>(k.dtype));
    mix(k.tf32);
    for (std::int64_t v : k.sizes) mix(std::hash<std::int64_t>()(v));
    return h;
  }
};

struct Entry {
  std::shared_ptr<fe::graph::Graph> graph;  // null: no engine supports the case
  std::int64_t workspace = 0;
};

using ConvGraphCache = GraphCache<Key, Entry, std::unordered_map<Key, std::shared_ptr<GraphSlot<Entry>>, KeyHash>>;
using Slot = ConvGraphCache::Slot;

// Leaked on purpose: graphs must outlive every static destructor that might still convolve.
ConvGraphCache& state() {
  static ConvGraphCache* cache = new ConvGraphCache;
  return *cache;
}

const char* pass_name(Pass p) {
  switch (p) {
    case Pass::Forward: return "conv2d";
    case Pass::BackwardInput: return "conv2d_backward (input)";
    case Pass::BackwardWeight: return "conv2d_backward (weight)";
  }
  return "conv2d";
}

std::string describe(Pass p, const Conv2dDesc& d, DType dt) {
  return std::string(pass_name(p)) + " " + std::string(dtype_name(dt)) + " x [" + std::to_string(d.n) + ", " +
         std::to_string(d.c) + ", " + std::to_string(d.h) + ", " + std::to_string(d.w) + "] weight [" +
         std::to_string(d.k) + ", " + std::to_string(d.c / d.groups) + ", " + std::to_string(d.r) + ", " +
         std::to_string(d.s) + "]";
}

fe::DataType_t io_type(DType dt) {
  switch (dt) {
    case DType::F64: return fe::DataType_t::DOUBLE;
    case DType::F16: return fe::DataType_t::HALF;
    case DType::BF16: return fe::DataType_t::BFLOAT16;
    default: return fe::DataType_t::FLOAT;
  }
}

std::vector<std::int64_t> dense_strides(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> st(dims.size(), 1);
  for (std::size_t i = dims.size() - 1; i > 0; --i) st[i - 1] = st[i] * dims[i];
  return st;
}

// The byte alignment all three buffers share, at most 16: cuDNN picks engines assuming the
// declared alignment (16 by default), and a view into a larger buffer may start anywhere.
std::int64_t pointer_alignment(const void* x, const void* w, const void* y) {
  const auto bits = reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(w) |
                    reinterpret_cast<std::uintptr_t>(y) | std::uintptr_t(16);
  return static_cast<std::int64_t>(bits & (~bits + 1));  // the lowest set bit
}

// Builds the graph of `key` (sizes[16] is the buffers' alignment); on any failure returns
// null with cuDNN's reason in `why`.
Entry build(const Key& key, const Conv2dDesc& d, cudnnHandle_t handle, std::string& why) {
  auto g = std::make_shared<fe::graph::Graph>();
  const fe::DataType_t io = io_type(key.dtype);
  const fe::DataType_t compute = key.dtype == DType::F64 ? fe::DataType_t::DOUBLE : fe::DataType_t::FLOAT;
  g->set_io_data_type(io).set_intermediate_data_type(compute).set_compute_data_type(compute);
  const std::vector<std::int64_t> xd{d.n, d.c, d.h, d.w}, wd{d.k, d.c / d.groups, d.r, d.s}, yd{d.n, d.k, d.oh, d.ow};
  const std::int64_t alignment = key.sizes[16];
  const std::vector<std::int64_t> pad{d.pad_h, d.pad_w}, stride{d.stride_h, d.stride_w}, dil{d.dil_h, d.dil_w};
  auto input = [&](const char* name, Uid uid, const std::vector<std::int64_t>& dims) {
    return g->tensor(fe::graph::Tensor_attributes()
                         .set_name(name)
                         .set_uid(uid)
                         .set_dim(dims)
                         .set_stride(dense_strides(dims))
                         .set_data_type(io)
                         .set_alignment(alignment));
  };
  auto output = [&](const std::shared_ptr<fe::graph::Tensor_attributes>& t, Uid uid,
                    const std::vector<std::int64_t>& dims) {
    t->set_output(true).set_uid(uid).set_dim(dims).set_stride(dense_strides(dims)).set_data_type(io).set_alignment(
        alignment);
  };
  // The attributes every pass shares (fprop, dgrad and wgrad have one attribute type each).
  auto with_geometry = [&](auto attributes, const char* name) {
    attributes.set_name(name).set_padding(pad).set_stride(stride).set_dilation(dil).set_compute_data_type(compute);
    return attributes;
  };
  // Groups are implied by the shapes: x has C channels, the weight C / groups.
  switch (key.pass) {
    case Pass::Forward: {
      auto x = input("x", kX, xd), w = input("w", kW, wd);
      output(g->conv_fprop(x, w, with_geometry(fe::graph::Conv_fprop_attributes(), "fprop")), kY, yd);
      break;
    }
    case Pass::BackwardInput: {
      auto dy = input("dy", kY, yd), w = input("w", kW, wd);
      output(g->conv_dgrad(dy, w, with_geometry(fe::graph::Conv_dgrad_attributes(), "dgrad")), kX, xd);
      break;
    }
    case Pass::BackwardWeight: {
      auto dy = input("dy", kY, yd), x = input("x", kX, xd);
      output(g->conv_wgrad(dy, x, with_geometry(fe::graph::Conv_wgrad_attributes(), "wgrad")), kW, wd);
      break;
    }
  }
  auto failed = [&why](const char* step, fe::error_t e) {
    if (e.is_good()) return false;
    why = std::string(step) + ": " + e.get_message();
    return true;
  };
  if (failed("validate", g->validate()) || failed("build_operation_graph", g->build_operation_graph(handle)) ||
      failed("create_execution_plans", g->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK})))
    return {};
  std::vector<fe::NumericalNote_t> barred{fe::NumericalNote_t::NONDETERMINISTIC,
                                          fe::NumericalNote_t::REDUCED_PRECISION_REDUCTION};
  if (key.dtype == DType::F32 && !key.tf32) {
    barred.push_back(fe::NumericalNote_t::TENSOR_CORE);
    barred.push_back(fe::NumericalNote_t::DOWN_CONVERT_INPUTS);
  }
  g->deselect_numeric_notes(barred);
  g->deselect_workspace_greater_than(kWorkspaceLimit);
  if (failed("check_support", g->check_support()) ||
      failed("build_plans", g->build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE)))
    return {};
  Entry e;
  if (failed("get_workspace_size", g->get_workspace_size(e.workspace))) return {};
  e.graph = std::move(g);
  return e;
}

// The cached graph of `key`, built on a miss (once however many threads ask for it).
std::shared_ptr<Slot> lookup(const Key& key, Pass pass, const Conv2dDesc& d, DType dtype, cudnnHandle_t handle) {
  return state().find_or_build(key, true, [&](std::string& why) {
    Entry e;
    try {
      e = build(key, d, handle, why);
    } catch (const std::exception& ex) {  // the frontend's own exceptions: im2col takes the case
      e = Entry{};
      why = ex.what();
    }
    if (!e.graph) why = describe(pass, d, dtype) + ": " + why;
    return e;
  });
}

bool run_cached(Pass pass, const Conv2dDesc& d, DType dtype, DeviceContext& ctx, cudaStream_t stream, void* x,
                void* w, void* y) {
  Key key;
  key.device = ctx.device();
  key.pass = pass;
  key.dtype = dtype;
  key.tf32 = dtype == DType::F32 && d.allow_tf32;
  key.sizes = {d.n,        d.c,        d.h,       d.w,       d.k,     d.r,     d.s,     d.oh,    d.ow,
               d.stride_h, d.stride_w, d.pad_h,   d.pad_w,   d.dil_h, d.dil_w, d.groups, pointer_alignment(x, w, y)};
  const cudnnHandle_t handle = cudnn_handle(key.device, stream);  // this thread's, bound to `stream`
  const std::shared_ptr<Slot> slot = lookup(key, pass, d, dtype, handle);
  const Entry& e = slot->plan;
  if (!e.graph) return false;
  shape::Scratch ws(key.device, static_cast<std::size_t>(e.workspace), stream);  // pool memory, stream-ordered
  std::unordered_map<std::int64_t, void*> pointers{{kX, x}, {kW, w}, {kY, y}};
  fe::error_t status;
  {
    std::lock_guard<std::mutex> lock(slot->execute);
    status = e.graph->execute(handle, pointers, ws.as<void>());
  }
  FERRITE_CHECK(status.is_good(), Library, "cuDNN: ", describe(pass, d, dtype), " failed: ", status.get_message());
  return true;
}

}  // namespace

bool compiled_in() { return true; }

bool run(Pass pass, const Conv2dDesc& d, DType dtype, DeviceContext& ctx, cudaStream_t stream, void* x, void* w,
         void* y) {
  // FERRITE_CONV_CUDNN=0 keeps every call on the im2col path (comparisons, diagnosis).
  static const bool enabled = [] {
    const char* v = std::getenv("FERRITE_CONV_CUDNN");
    return v == nullptr || std::string(v) != "0";
  }();
  if (!enabled) return false;
  try {
    return run_cached(pass, d, dtype, ctx, stream, x, w, y);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& ex) {  // the frontend's own (allocation, JSON) exceptions
    FERRITE_THROW(Library, "cuDNN: ", describe(pass, d, dtype), " failed: ", ex.what());
  }
}

CacheStats cache_stats() {
  const GraphCacheCounts c = state().counts();
  return {c.hits, c.misses, c.unsupported, c.entries, c.last_unsupported};
}

void clear_cache() { state().clear(); }

}  // namespace ferrite::cuda::cudnn_conv

#else  // built without the cuDNN frontend: every call takes the im2col path

namespace ferrite::cuda::cudnn_conv {

bool compiled_in() { return false; }
bool run(Pass, const Conv2dDesc&, DType, DeviceContext&, cudaStream_t, void*, void*, void*) { return false; }
CacheStats cache_stats() { return {}; }
void clear_cache() {}

}  // namespace ferrite::cuda::cudnn_conv

#endif

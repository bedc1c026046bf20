// cuSPARSELt for the 2:4 structured products. The library is not part of the CUDA toolkit and
// is never linked: libcusparseLt.so.0 is loaded on first use with dlopen, from
//   1. FERRITE_CUSPARSELT_LIB (the file, or the folder holding it), when set;
//   2. the loader's own search (LD_LIBRARY_PATH, the cache);
//   3. Python environments' site-packages/nvidia/<cu13|cusparselt|...>/lib (the
//      nvidia-cusparselt-cu13 wheel, which PyTorch installs): under VIRTUAL_ENV, CONDA_PREFIX,
//      /opt/*/.venv, /usr/local, /usr, ~/.local and /opt/conda;
// and its entry points are resolved into a table. Only the header (cusparseLt.h, from the same
// wheel, unpacked by scripts/install-deps.sh) is needed to build; without it this file compiles
// to functions that throw Unsupported naming the install step.
//
// One handle per device (cusparseLtInit on first use, kept for the process lifetime, like the
// cuBLAS/cuSPARSE handles); one plan per (device, dtype, m, k, n, layouts), also kept. Plans use
// algorithm configuration 0 and no split-K, so a product gives the same bits on every run.
// Work runs on ferrite's current stream; workspaces come from the device pool.
#include "cuda/sparse/cusparselt_structured.hpp"

#include "ferrite/error.hpp"

#if FERRITE_HAVE_CUSPARSELT

#include <cusparseLt.h>
#include <dlfcn.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/device_context.hpp"
#include "cuda/shape/shape_runtime.hpp"

namespace ferrite::cuda::structured {
namespace {

constexpr const char* kInstall =
    "install it with `pip install nvidia-cusparselt-cu13`, or set FERRITE_CUSPARSELT_LIB to the path of "
    "libcusparseLt.so.0";
// The oldest release whose enums (cusparseComputeType: 32I, 16F, 32F) match the header's.
constexpr int kMinMajor = 0, kMinMinor = 6;

// The entry points used, typed from the header's declarations.
struct Api {
  std::string path;
  decltype(&cusparseLtInit) init = nullptr;
  decltype(&cusparseLtGetProperty) get_property = nullptr;
  decltype(&cusparseLtGetErrorString) error_string = nullptr;  // optional (older releases lack it)
  decltype(&cusparseLtDenseDescriptorInit) dense_descriptor = nullptr;
  decltype(&cusparseLtStructuredDescriptorInit) structured_descriptor = nullptr;
  decltype(&cusparseLtMatDescriptorDestroy) descriptor_destroy = nullptr;
  decltype(&cusparseLtMatmulDescriptorInit) matmul_descriptor = nullptr;
  decltype(&cusparseLtMatmulAlgSelectionInit) alg_selection = nullptr;
  decltype(&cusparseLtMatmulAlgSetAttribute) alg_set_attribute = nullptr;
  decltype(&cusparseLtMatmulPlanInit) plan_init = nullptr;
  decltype(&cusparseLtMatmulGetWorkspace) get_workspace = nullptr;
  decltype(&cusparseLtMatmul) matmul = nullptr;
  decltype(&cusparseLtSpMMACompressedSize2) compressed_size = nullptr;
  decltype(&cusparseLtSpMMACompress2) compress = nullptr;
};

struct Loaded {
  const Api* api = nullptr;  // null when loading failed
  std::string error;
};

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The library files inside Python environments, the CUDA 13 wheel's first.
std::vector<std::string> python_candidates() {
  std::vector<std::string> prefixes;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* v = std::getenv(var); v && *v) prefixes.emplace_back(v);
  prefixes.insert(prefixes.end(), {"/opt/*/.venv", "/opt/*/venv", "/usr/local", "/usr", "/opt/conda"});
  if (const char* home = std::getenv("HOME"); home && *home) prefixes.push_back(std::string(home) + "/.local");
  std::vector<std::string> found;
  for (const std::string& prefix : prefixes) {
    for (const char* tail : {"/lib*/python3*/site-packages/nvidia/*/lib/libcusparseLt.so.0",
                             "/lib*/python3*/dist-packages/nvidia/*/lib/libcusparseLt.so.0",
                             "/lib/python3/dist-packages/nvidia/*/lib/libcusparseLt.so.0"}) {
      glob_t g{};
      if (::glob((prefix + tail).c_str(), 0, nullptr, &g) == 0)
        for (std::size_t i = 0; i < g.gl_pathc; ++i) found.emplace_back(g.gl_pathv[i]);
      ::globfree(&g);
    }
  }
  const auto rank = [](const std::string& p) {
    return p.find("/nvidia/cu13/") != std::string::npos ? 0 : p.find("/nvidia/cusparselt/") != std::string::npos ? 1 : 2;
  };
  std::stable_sort(found.begin(), found.end(), [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

template <class F>
bool resolve(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(::dlsym(lib, name));
  return out != nullptr;
}

Loaded load() {
  void* lib = nullptr;
  std::string path;
  if (const char* env = std::getenv("FERRITE_CUSPARSELT_LIB"); env && *env) {
    path = env;
    if (is_directory(path)) path += "/libcusparseLt.so.0";
    lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = ::dlerror();
      return {nullptr, "FERRITE_CUSPARSELT_LIB=" + std::string(env) + ": " + (why ? why : "cannot be loaded")};
    }
  } else {
    lib = ::dlopen("libcusparseLt.so.0", RTLD_NOW | RTLD_LOCAL);
    path = "libcusparseLt.so.0 (the loader's search path)";
    std::string failures;
    if (!lib) {
      for (const std::string& candidate : python_candidates()) {
        lib = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (lib) {
          path = candidate;
          break;
        }
        const char* why = ::dlerror();
        failures += "; " + candidate + ": " + (why ? why : "cannot be loaded");
      }
    }
    if (!lib)
      return {nullptr, "cuSPARSELt (libcusparseLt.so.0) was not found on the loader's path nor in a Python "
                       "environment's site-packages/nvidia/*/lib" + failures + "; " + kInstall};
  }
  // Kept loaded for the process lifetime (handles and plans refer to it).
  auto api = std::make_unique<Api>();
  api->path = path;
  // The first function the library lacks, if any.
  const char* missing = nullptr;
  auto need = [&](const char* name, auto& function) {
    if (!missing && !resolve(lib, name, function)) missing = name;
  };
  need("cusparseLtInit", api->init);
  need("cusparseLtGetProperty", api->get_property);
  need("cusparseLtDenseDescriptorInit", api->dense_descriptor);
  need("cusparseLtStructuredDescriptorInit", api->structured_descriptor);
  need("cusparseLtMatDescriptorDestroy", api->descriptor_destroy);
  need("cusparseLtMatmulDescriptorInit", api->matmul_descriptor);
  need("cusparseLtMatmulAlgSelectionInit", api->alg_selection);
  need("cusparseLtMatmulAlgSetAttribute", api->alg_set_attribute);
  need("cusparseLtMatmulPlanInit", api->plan_init);
  need("cusparseLtMatmulGetWorkspace", api->get_workspace);
  need("cusparseLtMatmul", api->matmul);
  need("cusparseLtSpMMACompressedSize2", api->compressed_size);
  need("cusparseLtSpMMACompress2", api->compress);
  if (missing) return {nullptr, path + " lacks " + missing + " (a release older than " + std::to_string(kMinMajor) +
                                    "." + std::to_string(kMinMinor) + "?); " + kInstall};
  resolve(lib, "cusparseLtGetErrorString", api->error_string);
  int major = -1, minor = -1, patch = -1;
  if (api->get_property(MAJOR_VERSION, &major) != CUSPARSE_STATUS_SUCCESS ||
      api->get_property(MINOR_VERSION, &minor) != CUSPARSE_STATUS_SUCCESS ||
      api->get_property(PATCH_LEVEL, &patch) != CUSPARSE_STATUS_SUCCESS)
    return {nullptr, path + " does not report its version; " + kInstall};
  if (std::tie(major, minor) < std::tie(kMinMajor, kMinMinor))
    return {nullptr, path + " is cuSPARSELt " + std::to_string(major) + "." + std::to_string(minor) + "." +
                         std::to_string(patch) + "; ferrite needs " + std::to_string(kMinMajor) + "." +
                         std::to_string(kMinMinor) + " or newer: " + kInstall};
  return {api.release(), {}};
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

const Api& api_or_throw() {
  const Loaded& l = loaded();
  FERRITE_CHECK(l.api != nullptr, Unsupported, "sparse: the 2:4 structured products need cuSPARSELt: ", l.error);
  return *l.api;
}

[[noreturn]] void throw_status(const Api& api, cusparseStatus_t status, const char* expression, const char* file,
                               int line) {
  const char* text = api.error_string ? api.error_string(status) : "see cusparseStatus_t";
  throw_library_error("cuSPARSELt", static_cast<int>(status), text, expression, file, line);
}

#define FERRITE_CUSPARSELT_CHECK(api, expr)                                                            \
  do {                                                                                                 \
    const cusparseStatus_t ferrite_lt_status_ = (expr);                                                \
    if (ferrite_lt_status_ != CUSPARSE_STATUS_SUCCESS) [[unlikely]]                                    \
      throw_status((api), ferrite_lt_status_, #expr, __FILE__, __LINE__);                              \
  } while (0)

cudaDataType value_type(DType d) {
  switch (d) {
    case DType::F32: return CUDA_R_32F;
    case DType::F16: return CUDA_R_16F;
    case DType::BF16: return CUDA_R_16BF;
    default: FERRITE_THROW(Unsupported, "sparse: structured products take F16, BF16 or F32, not ", dtype_name(d));
  }
}

// Every pointer ferrite hands over is 16-byte aligned (Tensor::buffer()).
constexpr std::uint32_t kAlignment = 16;
constexpr int kMaxDevices = 64;

// One handle per device, created on first use and kept for the process lifetime.
const cusparseLtHandle_t& handle_for(const Api& api, int device) {
  struct Handles {
    std::array<std::once_flag, kMaxDevices> once;
    std::array<cusparseLtHandle_t, kMaxDevices> handle;
  };
  static Handles& handles = *new Handles();
  FERRITE_CHECK(device >= 0 && device < kMaxDevices, InvalidArgument, "sparse: device index ", device,
                " is out of range");
  const auto d = static_cast<std::size_t>(device);
  std::call_once(handles.once[d], [&] {
    DeviceGuard guard(device);
    FERRITE_CUSPARSELT_CHECK(api, api.init(&handles.handle[d]));
  });
  return handles.handle[d];
}

// A structured-matrix descriptor for one call, destroyed on scope exit.
struct StructuredDescriptor {
  const Api& api;
  cusparseLtMatDescriptor_t d;
  StructuredDescriptor(const Api& a, const cusparseLtHandle_t& h, DType dtype, std::int64_t rows, std::int64_t cols)
      : api(a) {
    FERRITE_CUSPARSELT_CHECK(api, api.structured_descriptor(&h, &d, rows, cols, cols, kAlignment, value_type(dtype),
                                                            CUSPARSE_ORDER_ROW, CUSPARSELT_SPARSITY_50_PERCENT));
  }
  ~StructuredDescriptor() { api.descriptor_destroy(&d); }
  StructuredDescriptor(const StructuredDescriptor&) = delete;
  StructuredDescriptor& operator=(const StructuredDescriptor&) = delete;
};

// A matmul plan and everything it was made from, kept for the process lifetime.
struct Plan {
  cusparseLtMatDescriptor_t a, b, c;
  cusparseLtMatmulDescriptor_t matmul;
  cusparseLtMatmulAlgSelection_t alg;
  cusparseLtMatmulPlan_t plan;
  std::size_t workspace = 0;
};

using PlanKey = std::tuple<int, DType, std::int64_t, std::int64_t, std::int64_t, bool, bool>;

const Plan& plan_for(const Api& api, const cusparseLtHandle_t& h, int device, DType dtype, std::int64_t m,
                     std::int64_t k, std::int64_t n, bool b_transposed, bool c_transposed) {
  static std::mutex mutex;
  static auto& plans = *new std::map<PlanKey, std::unique_ptr<Plan>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Plan>& slot = plans[PlanKey{device, dtype, m, k, n, b_transposed, c_transposed}];
  if (slot) return *slot;
  auto p = std::make_unique<Plan>();
  const cudaDataType vt = value_type(dtype);
  DeviceGuard guard(device);
  // A [m, k] structured, row-major. B [k, n]: row-major, or column-major (ld k) when it is
  // given as its transpose. C = D [m, n]: row-major, or column-major (ld m).
  FERRITE_CUSPARSELT_CHECK(api, api.structured_descriptor(&h, &p->a, m, k, k, kAlignment, vt, CUSPARSE_ORDER_ROW,
                                                          CUSPARSELT_SPARSITY_50_PERCENT));
  FERRITE_CUSPARSELT_CHECK(api, api.dense_descriptor(&h, &p->b, k, n, b_transposed ? k : n, kAlignment, vt,
                                                     b_transposed ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW));
  FERRITE_CUSPARSELT_CHECK(api, api.dense_descriptor(&h, &p->c, m, n, c_transposed ? m : n, kAlignment, vt,
                                                     c_transposed ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW));
  FERRITE_CUSPARSELT_CHECK(api, api.matmul_descriptor(&h, &p->matmul, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &p->a, &p->b, &p->c, &p->c,
                                                      CUSPARSE_COMPUTE_32F));
  FERRITE_CUSPARSELT_CHECK(api, api.alg_selection(&h, &p->alg, &p->matmul, CUSPARSELT_MATMUL_ALG_DEFAULT));
  // Deterministic: configuration 0 (no search), and no split-K (whose partial sums could be
  // combined in a different order).
  const int config = 0, split_k = 1;
  FERRITE_CUSPARSELT_CHECK(api, api.alg_set_attribute(&h, &p->alg, CUSPARSELT_MATMUL_ALG_CONFIG_ID, &config, sizeof config));
  FERRITE_CUSPARSELT_CHECK(api, api.alg_set_attribute(&h, &p->alg, CUSPARSELT_MATMUL_SPLIT_K, &split_k, sizeof split_k));
  FERRITE_CUSPARSELT_CHECK(api, api.plan_init(&h, &p->plan, &p->matmul, &p->alg));
  FERRITE_CUSPARSELT_CHECK(api, api.get_workspace(&h, &p->plan, &p->workspace));
  slot = std::move(p);
  return *slot;
}

}  // namespace

std::string unavailable() {
  const Loaded& l = loaded();
  return l.api ? std::string() : l.error;
}

namespace {

// The compressed matrix's size and the temporary buffer compress needs, in bytes.
struct CompressedSizes {
  std::size_t compressed = 0, buffer = 0;
};

CompressedSizes compressed_sizes(const Api& api, const cusparseLtHandle_t& h, const StructuredDescriptor& d) {
  CompressedSizes sizes;
  FERRITE_CUSPARSELT_CHECK(api, api.compressed_size(&h, &d.d, &sizes.compressed, &sizes.buffer));
  return sizes;
}

}  // namespace

std::size_t compressed_bytes(int device, DType dtype, std::int64_t rows, std::int64_t cols) {
  const Api& api = api_or_throw();
  const cusparseLtHandle_t& h = handle_for(api, device);
  DeviceGuard guard(device);
  const std::size_t exact = compressed_sizes(api, h, StructuredDescriptor(api, h, dtype, rows, cols)).compressed;
  // compute-sanitizer found cuSPARSELt's sm90 kernel (tile 64x256x128) reading 1024-byte
  // boxes past the end of small operands (conformance shapes of 16-64 rows). The storage is
  // sized for the matrix padded to whole 256 x 256 tiles, so a kernel that reads whole tiles
  // of the compressed form stays inside it; matrices that are multiples of 256 (every
  // benchmark shape) get exactly the size cuSPARSELt asks for.
  constexpr std::int64_t kTile = 256;
  const std::int64_t padded_rows = (rows + kTile - 1) / kTile * kTile, padded_cols = (cols + kTile - 1) / kTile * kTile;
  if (padded_rows == rows && padded_cols == cols) return exact;
  const std::size_t padded =
      compressed_sizes(api, h, StructuredDescriptor(api, h, dtype, padded_rows, padded_cols)).compressed;
  return std::max(exact, padded);
}

void compress(int device, cudaStream_t stream, DType dtype, const void* pruned, void* compressed, std::int64_t rows,
              std::int64_t cols) {
  const Api& api = api_or_throw();
  const cusparseLtHandle_t& h = handle_for(api, device);
  DeviceGuard guard(device);
  const StructuredDescriptor d(api, h, dtype, rows, cols);
  shape::Scratch temp(device, compressed_sizes(api, h, d).buffer, stream);
  FERRITE_CUSPARSELT_CHECK(api, api.compress(&h, &d.d, 1, CUSPARSE_OPERATION_NON_TRANSPOSE, pruned, compressed,
                                             temp.as<void>(), stream));
}

void matmul(int device, cudaStream_t stream, DType dtype, const void* compressed, const void* b, bool b_transposed,
            void* c, bool c_transposed, std::int64_t m, std::int64_t k, std::int64_t n) {
  const Api& api = api_or_throw();
  const cusparseLtHandle_t& h = handle_for(api, device);
  const Plan& p = plan_for(api, h, device, dtype, m, k, n, b_transposed, c_transposed);
  DeviceGuard guard(device);
  // D = alpha A B + beta C with C = D and beta = 0: C is zeroed first so that no poison or NaN
  // left in the fresh output can reach the result, whether or not the kernel reads C.
  FERRITE_CUDA_CHECK(cudaMemsetAsync(c, 0, static_cast<std::size_t>(m * n) * dtype_size(dtype), stream));
  shape::Scratch workspace(device, p.workspace, stream);
  const float alpha = 1.0f, beta = 0.0f;  // the compute type's scalars (F32)
  cudaStream_t streams[1] = {stream};
  FERRITE_CUSPARSELT_CHECK(api, api.matmul(&h, &p.plan, &alpha, compressed, b, &beta, c, c, workspace.as<void>(),
                                           streams, 1));
}

}  // namespace ferrite::cuda::structured

#else  // built without cuSPARSELt's header

namespace ferrite::cuda::structured {
namespace {

constexpr const char* kNoHeader =
    "ferrite was built without cuSPARSELt's header: run scripts/install-deps.sh (it unpacks the header of the "
    "nvidia-cusparselt-cu13 wheel into .deps/cusparselt/include) and configure again; the library itself is "
    "loaded at run time (pip install nvidia-cusparselt-cu13)";

[[noreturn]] void fail() { FERRITE_THROW(Unsupported, "sparse: the 2:4 structured products: ", kNoHeader); }

}  // namespace

std::string unavailable() { return kNoHeader; }
std::size_t compressed_bytes(int, DType, std::int64_t, std::int64_t) { fail(); }
void compress(int, cudaStream_t, DType, const void*, void*, std::int64_t, std::int64_t) { fail(); }
void matmul(int, cudaStream_t, DType, const void*, const void*, bool, void*, bool, std::int64_t, std::int64_t,
            std::int64_t) {
  fail();
}

}  // namespace ferrite::cuda::structured

#endif

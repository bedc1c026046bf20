// strided_gemm: cuBLASLt with a cached plan per (device, shape, dtypes, transposes, batch
// layout, pointer alignment, bias epilogue, separate C), cuBLAS where cuBLASLt offers no
// algorithm.
//
// Row-major to column-major: a row-major [m, n] C is the column-major n x m matrix Cᵀ, and
// Cᵀ = Bᵀ·Aᵀ. So cuBLASLt's first operand is our B and its second our A, each with the
// transpose flag it already has: no data is ever copied or transposed.
//
// The host path per call, once a shape has been seen: one shared-lock hash lookup and
// cublasLtMatmul. The descriptors and the algorithm are built once per key and kept for the
// process lifetime. The algorithm is the heuristic's first choice, except for large products
// (at least kTunedFlops) written over (beta = 0): there the heuristic's top candidates are
// timed once on the caller's own operands and the fastest is kept. The heuristic's first
// choice is only an estimate, and for 8192³ BF16 it ran 5-8% below what PyTorch's call got;
// the one-time cost is a few milliseconds and a host wait on that first call.
//
// Bias (nn::linear): a plan for C = A·B + bias uses cuBLASLt's BIAS epilogue, which adds the
// bias vector along the column-major rows of Cᵀ, i.e. to every row of our row-major C, in the
// compute type before C's one rounding (as PyTorch's addmm). Whether a plan has the epilogue,
// and the bias dtype, are part of its key; the bias pointer is a descriptor attribute too, but
// it changes per call while the plan is shared between threads, so each call sets it and
// launches under the plan's own mutex (cublasLtMatmul reads the descriptor on the host, at
// launch). Where cuBLASLt has no algorithm with the epilogue, nothing runs and the caller adds
// the bias another way (never through the cuBLAS fallback, which has no epilogue).
//
// Residual (nn::linear's LinearOptions::residual): D = A·B + C (+ bias) with C a buffer other
// than D (or D itself, linear_out into its residual), cuBLASLt's separate C and D operands.
// C has D's type and layout (one layout object serves both), so the plan differs from an
// in-place beta = 1 plan only in C's alignment and in which algorithms are kept; both are in
// the key (`residual`, `align_c_in`). The C pointer is an argument of cublasLtMatmul, not a
// descriptor attribute, so no lock is needed for it. Such plans keep only candidates without
// split-K (see keep_unsplit_candidates) and fall back to the caller, like bias plans, when
// cuBLASLt offers nothing.
//
// Precision: F16/BF16 outputs accumulate in F32 up to the final rounding. Split-K schemes
// that add partial sums in the output type (INPLACE, OUTPUT_TYPE) are excluded for them:
// with K = 5000 such a plan was three BF16 steps off the exact product.
//
// Determinism: cuBLASLt's reduction schemes are all ordered (INPLACE serialises the split-K
// partial sums with counters, COMPUTE_TYPE / OUTPUT_TYPE reduce in a separate pass); none
// adds partial sums with atomics, so the same plan on the same GPU gives the same bits.
// Every stream has its own workspace (blas_handles.cpp), so concurrent split-K products
// never share scratch.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "cuda/libs/blas_handles.hpp"
#include "cuda/matmul/strided_gemm.hpp"

namespace ferrite::cuda {
namespace {

cudaDataType_t cuda_type(DType d) {
  switch (d) {
    case DType::F32: return CUDA_R_32F;
    case DType::F64: return CUDA_R_64F;
    case DType::F16: return CUDA_R_16F;
    case DType::BF16: return CUDA_R_16BF;
    default: break;
  }
  FERRITE_THROW(Unsupported, "matmul: dtype ", dtype_name(d), " has no cuBLAS type");
}

// F16/BF16 multiply on tensor cores and accumulate in F32; F32 uses TF32 only when allowed.
cublasComputeType_t compute_type(const StridedGemm& g) {
  if (g.input == DType::F64) return CUBLAS_COMPUTE_64F;
  if (g.input == DType::F32 && g.allow_tf32) return CUBLAS_COMPUTE_32F_FAST_TF32;
  return CUBLAS_COMPUTE_32F;
}

// The largest power of two (up to 256) dividing the address of every matrix of a batch (its
// first one's and the byte stride to the next): cuBLASLt picks kernels whose vector loads
// need no more than this.
std::uint32_t alignment(const void* p, std::int64_t batch, std::int64_t stride, DType dtype) {
  std::uint64_t bits = reinterpret_cast<std::uintptr_t>(p);
  if (batch > 1) bits |= static_cast<std::uint64_t>(stride) * dtype_size(dtype);
  std::uint32_t a = 256;
  while (a > 1 && bits % a != 0) a >>= 1;
  return a;
}

struct PlanKey {
  int device;
  DType input, output;
  cublasComputeType_t compute;
  bool transpose_a, transpose_b;
  std::int64_t m, n, k, batch, stride_a, stride_b, stride_c;
  std::uint32_t align_a, align_b, align_c;
  bool tuned;  // the algorithm is chosen by timing (large product, output never read)
  bool bias;   // CUBLASLT_EPILOGUE_BIAS
  DType bias_dtype;  // F32 when there is no bias
  bool residual;            // C is read from c_in, not from D (beta = 1)
  std::uint32_t align_c_in;  // c_in's alignment; 0 without one
  bool operator==(const PlanKey&) const = default;
};

struct PlanKeyHash {
  std::size_t operator()(const PlanKey& key) const {
    std::size_t h = 0;
    auto mix = [&h](std::uint64_t v) { h ^= std::hash<std::uint64_t>{}(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    mix(static_cast<std::uint64_t>(key.device));
    mix(static_cast<std::uint64_t>(key.input) | static_cast<std::uint64_t>(key.output) << 8 |
        static_cast<std::uint64_t>(key.compute) << 16 | static_cast<std::uint64_t>(key.transpose_a) << 32 |
        static_cast<std::uint64_t>(key.transpose_b) << 33);
    for (std::int64_t v : {key.m, key.n, key.k, key.batch, key.stride_a, key.stride_b, key.stride_c})
      mix(static_cast<std::uint64_t>(v));
    mix(key.align_a | std::uint64_t(key.align_b) << 16 | std::uint64_t(key.align_c) << 32 |
        std::uint64_t(key.tuned) << 48 | std::uint64_t(key.bias) << 49 | std::uint64_t(key.residual) << 50 |
        std::uint64_t(key.bias_dtype) << 56);
    mix(key.align_c_in);
    return h;
  }
};

// Operand shapes as cuBLAS sees them (column-major): rows, columns, leading dimension.
struct ColumnMajor {
  std::int64_t rows, cols, ld;
};
// cuBLAS's first operand: our B, stored [k, n] (n x k column-major) or [n, k] (k x n).
ColumnMajor first_operand(const StridedGemm& g) {
  return g.transpose_b ? ColumnMajor{g.k, g.n, g.k} : ColumnMajor{g.n, g.k, g.n};
}
// cuBLAS's second operand: our A, stored [m, k] (k x m column-major) or [k, m] (m x k).
ColumnMajor second_operand(const StridedGemm& g) {
  return g.transpose_a ? ColumnMajor{g.m, g.k, g.m} : ColumnMajor{g.k, g.m, g.k};
}

struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, out = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool lt = false;  // false: cuBLASLt has no algorithm for this case; cuBLAS runs it (no bias)
  // Bias plans: held while the call's bias pointer is set on `op` and the product launched.
  mutable std::mutex bias_mutex;

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (out) cublasLtMatrixLayoutDestroy(out);
    if (second) cublasLtMatrixLayoutDestroy(second);
    if (first) cublasLtMatrixLayoutDestroy(first);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

cublasLtMatrixLayout_t make_layout(cudaDataType_t type, ColumnMajor shape, std::int64_t batch, std::int64_t stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  FERRITE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(shape.rows),
                                                  static_cast<std::uint64_t>(shape.cols), shape.ld));
  if (batch > 1) {
    const auto count = static_cast<std::int32_t>(batch);
    FERRITE_CUBLAS_CHECK(
        cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
    FERRITE_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                          &stride, sizeof stride));
  }
  return layout;
}

// Diagnostics, read once: FERRITE_LOG_GEMM=1 prints every new plan (algorithm, split-K,
// reduction scheme) to stderr; FERRITE_GEMM_FORCE_CUBLAS=1 runs every product through the
// cuBLAS path instead, to compare the two libraries' choices on one machine.
bool log_plans() {
  static const bool enabled = std::getenv("FERRITE_LOG_GEMM") != nullptr;
  return enabled;
}
bool force_cublas() {
  static const bool enabled = std::getenv("FERRITE_GEMM_FORCE_CUBLAS") != nullptr;
  return enabled;
}

void log_plan(const PlanKey& key, const Plan& plan, const cublasLtMatmulHeuristicResult_t& result) {
  std::fprintf(stderr,
               "ferrite gemm plan cuda:%d %s->%s compute %d m=%lld n=%lld k=%lld batch=%lld ta=%d tb=%d bias %s%s: ",
               key.device, dtype_name(key.input).data(), dtype_name(key.output).data(), static_cast<int>(key.compute),
               static_cast<long long>(key.m), static_cast<long long>(key.n), static_cast<long long>(key.k),
               static_cast<long long>(key.batch), key.transpose_a, key.transpose_b,
               key.bias ? dtype_name(key.bias_dtype).data() : "none", key.residual ? " residual C" : "");
  if (!plan.lt) {
    std::fprintf(stderr, key.bias || key.residual
                             ? "no cuBLASLt algorithm with the bias epilogue or separate C, added separately\n"
                             : "no cuBLASLt algorithm, cuBLAS fallback\n");
    return;
  }
  auto config = [&](cublasLtMatmulAlgoConfigAttributes_t attribute) {
    std::uint32_t value = 0;
    std::size_t written = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&plan.algo, attribute, &value, sizeof value, &written);
    return value;
  };
  std::fprintf(stderr, "cuBLASLt algo %u tile %u stages %u split-k %u reduction %u workspace %zu waves %.2f\n",
               config(CUBLASLT_ALGO_CONFIG_ID), config(CUBLASLT_ALGO_CONFIG_TILE_ID),
               config(CUBLASLT_ALGO_CONFIG_STAGES_ID), config(CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
               config(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME), result.workspaceSize, result.wavesCount);
}

// Products of at least this many flops (2·m·n·k·batch) written over (beta = 0) get a timed
// algorithm choice: about 2048³, where one product takes tens of microseconds or more and a
// few percent is worth a one-time wait.
constexpr double kTunedFlops = 1.6e10;
constexpr int kCandidates = 8;   // heuristic results timed
constexpr int kTimedRuns = 3;    // per candidate, after one warm-up run

// F16/BF16 outputs: split-K partial sums stay in the compute type (F32) until the final
// rounding; every scheme is fine for F32/F64 outputs, whose type is the compute type.
std::uint32_t reduction_scheme_mask(DType output) {
  return output == DType::F16 || output == DType::BF16 ? CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE
                                                       : CUBLASLT_REDUCTION_SCHEME_MASK;
}

struct Scales {
  float alpha32, beta32;
  const void* alpha;
  const void* beta;
};
// The scale type is double for F64 and float otherwise (cuBLAS's rule for these computes).
// Filled in place: alpha/beta point into the struct or into g.
void set_scales(Scales& s, const StridedGemm& g) {
  s.alpha32 = static_cast<float>(g.alpha);
  s.beta32 = static_cast<float>(g.beta);
  const bool wide = g.input == DType::F64;
  s.alpha = wide ? static_cast<const void*>(&g.alpha) : &s.alpha32;
  s.beta = wide ? static_cast<const void*>(&g.beta) : &s.beta32;
}

// Times each candidate on the caller's operands (beta = 0 or a separate C, so the output's
// contents are never read and the real call overwrites them afterwards) and returns the
// index of the fastest.
// A candidate that fails to launch is skipped. Ties keep the heuristic's order.
int fastest_candidate(DeviceContext& ctx, const Plan& plan, const StridedGemm& g,
                      const cublasLtMatmulHeuristicResult_t* results, int count, void* workspace,
                      std::size_t workspace_bytes, cudaStream_t stream) {
  Scales scales;
  set_scales(scales, g);
  cudaEvent_t start = nullptr, stop = nullptr;
  FERRITE_CUDA_CHECK(cudaEventCreate(&start));
  FERRITE_CUDA_CHECK(cudaEventCreate(&stop));
  int best = -1;  // none timed yet: a candidate 0 that fails must not stay the choice
  float best_ms = 0;
  const void* c_in = g.c_in != nullptr ? g.c_in : g.c;
  for (int i = 0; i < count; ++i) {
    auto run = [&] {
      return cublasLtMatmul(ctx.cublas_lt(), plan.op, scales.alpha, g.b, plan.first, g.a, plan.second, scales.beta,
                            c_in, plan.out, g.c, plan.out, &results[i].algo, workspace, workspace_bytes, stream);
    };
    if (run() != CUBLAS_STATUS_SUCCESS) continue;
    FERRITE_CUDA_CHECK(cudaEventRecord(start, stream));
    bool ok = true;
    for (int r = 0; r < kTimedRuns && ok; ++r) ok = run() == CUBLAS_STATUS_SUCCESS;
    FERRITE_CUDA_CHECK(cudaEventRecord(stop, stream));
    FERRITE_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    FERRITE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (log_plans()) std::fprintf(stderr, "ferrite gemm tuning: candidate %d %.4f ms\n", i, ms / kTimedRuns);
    if (ok && (best < 0 || ms < best_ms)) best = i, best_ms = ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return best < 0 ? 0 : best;
}

// Bias plans with an F16/BF16 output keep only candidates without split-K: on the H200
// (cuBLAS 13.1, run N) the conformance case linear_long_k ([4, 5000] x [33, 5000]ᵀ + bias and
// [6, 6000] x [17, 6000]ᵀ + bias, integer data) came out a few units off in F16 and BF16,
// the size of one half-precision rounding of the product before the bias was added, while
// the same products without a bias (matmul_long_k, split-K reduced in F32) were exact. So
// the split-K reduction evidently adds the bias after rounding to the output type.
// Plans with a separate C (a residual, beta = 1) keep only these too, whatever the output
// type: where a split-K scheme adds beta·C relative to its partial sums, and whether an
// in-place scheme (which accumulates in D) reads C or D, has not been verified on a GPU, and
// the unsplit kernels read C once in the epilogue by construction. Returns
// how many of `results` are kept (moved to the front, in the heuristic's order).
int keep_unsplit_candidates(cublasLtMatmulHeuristicResult_t* results, int count) {
  int kept = 0;
  for (int i = 0; i < count; ++i) {
    std::uint32_t split = 0;
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&results[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof split,
                                             &written) != CUBLAS_STATUS_SUCCESS ||
        split > 1)
      continue;
    results[kept++] = results[i];
  }
  return kept;
}

std::unique_ptr<Plan> make_plan(DeviceContext& ctx, const PlanKey& key, const StridedGemm& g, void* workspace,
                                std::size_t workspace_bytes, cudaStream_t stream) {
  auto plan = std::make_unique<Plan>();
  const cudaDataType_t scale = g.input == DType::F64 ? CUDA_R_64F : CUDA_R_32F;
  FERRITE_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->op, key.compute, scale));
  const cublasOperation_t op_first = g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  FERRITE_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof op_first));
  FERRITE_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof op_second));
  if (key.bias) {
    // The pointer is the first caller's, for the heuristic and the timed candidates below;
    // every call sets its own (strided_gemm).
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    const auto bias_type = static_cast<std::int32_t>(cuda_type(key.bias_dtype));
    FERRITE_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
    FERRITE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                                        sizeof bias_type));
    FERRITE_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof g.bias));
  }
  plan->first = make_layout(cuda_type(g.input), first_operand(g), g.batch, g.stride_b);
  plan->second = make_layout(cuda_type(g.input), second_operand(g), g.batch, g.stride_a);
  plan->out = make_layout(cuda_type(g.output), ColumnMajor{g.n, g.m, g.n}, g.batch, g.stride_c);

  cublasLtMatmulPreference_t preference = nullptr;
  FERRITE_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  const std::uint64_t max_workspace = workspace_bytes;
  const std::uint32_t reduction_mask = reduction_scheme_mask(g.output);
  cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                               &max_workspace, sizeof max_workspace);
  // cuBLASLt's first operand is our B, so its "A" alignment is B's.
  const std::pair<cublasLtMatmulPreferenceAttributes_t, std::uint32_t> attributes[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.residual ? key.align_c_in : key.align_c},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align_c},
      {CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, reduction_mask}};
  for (const auto& [attribute, value] : attributes)
    if (status == CUBLAS_STATUS_SUCCESS)
      status = cublasLtMatmulPreferenceSetAttribute(preference, attribute, &value, sizeof value);
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int returned = 0;
  if (status == CUBLAS_STATUS_SUCCESS && !force_cublas())
    status = cublasLtMatmulAlgoGetHeuristic(ctx.cublas_lt(), plan->op, plan->first, plan->second, plan->out,
                                            plan->out, preference,
                                            key.tuned || key.bias || key.residual ? kCandidates : 1, results,
                                            &returned);
  cublasLtMatmulPreferenceDestroy(preference);
  if (status == CUBLAS_STATUS_SUCCESS &&
      ((key.bias && (g.output == DType::F16 || g.output == DType::BF16)) || key.residual))
    returned = keep_unsplit_candidates(results, returned);
  if (status == CUBLAS_STATUS_SUCCESS && returned > 0 && results[0].state == CUBLAS_STATUS_SUCCESS) {
    const int chosen = key.tuned && returned > 1 ? fastest_candidate(ctx, *plan, g, results, returned, workspace,
                                                                     workspace_bytes, stream)
                                                 : 0;
    plan->algo = results[chosen].algo;
    plan->lt = true;
    if (log_plans()) log_plan(key, *plan, results[chosen]);
  } else if (status != CUBLAS_STATUS_SUCCESS && status != CUBLAS_STATUS_NOT_SUPPORTED && !key.bias && !key.residual) {
    // A bias or residual plan is never an error here: a library that rejects an epilogue or
    // bias-type combination (INVALID_VALUE rather than NOT_SUPPORTED) leaves the caller's
    // unfused path, which computes the same values.
    throw_cublas_error(status, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  } else if (log_plans()) {
    log_plan(key, *plan, results[0]);
  }
  return plan;
}

class PlanCache {
 public:
  const Plan& get(DeviceContext& ctx, const PlanKey& key, const StridedGemm& g, void* workspace,
                  std::size_t workspace_bytes, cudaStream_t stream) {
    {
      std::shared_lock lock(mutex_);
      if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
    }
    // Built outside the lock (the heuristic takes tens of microseconds, tuning milliseconds);
    // a racing thread's duplicate is dropped.
    std::unique_ptr<Plan> plan = make_plan(ctx, key, g, workspace, workspace_bytes, stream);
    std::unique_lock lock(mutex_);
    return *plans_.try_emplace(key, std::move(plan)).first->second;
  }

 private:
  std::shared_mutex mutex_;
  std::unordered_map<PlanKey, std::unique_ptr<Plan>, PlanKeyHash> plans_;
};

PlanCache& plan_cache() {
  static auto& cache = *new PlanCache();  // never destroyed: products may run during exit
  return cache;
}

// cuBLAS for the cases cuBLASLt declines. The handle is per device, so its stream and
// workspace are set under a lock on every call (another thread may have changed them).
void cublas_fallback(DeviceContext& ctx, cudaStream_t stream, const StridedGemm& g, cublasComputeType_t compute,
                     const void* alpha, const void* beta, void* workspace, std::size_t workspace_bytes) {
  const ColumnMajor first = first_operand(g), second = second_operand(g);
  for (std::int64_t v : {g.m, g.n, g.k, g.batch, first.ld, second.ld})
    FERRITE_CHECK(v <= INT_MAX, Unsupported, "matmul: m = ", g.m, ", n = ", g.n, ", k = ", g.k, ", batch ", g.batch,
                  " exceed cuBLAS's 32-bit sizes for ", dtype_name(g.input), " on this path");
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  cublasHandle_t handle = ctx.cublas();
  FERRITE_CUBLAS_CHECK(cublasSetStream(handle, stream));
  FERRITE_CUBLAS_CHECK(cublasSetWorkspace(handle, workspace, workspace_bytes));
  FERRITE_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      handle, g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
      static_cast<int>(g.n), static_cast<int>(g.m), static_cast<int>(g.k), alpha, g.b, cuda_type(g.input),
      static_cast<int>(first.ld), g.stride_b, g.a, cuda_type(g.input), static_cast<int>(second.ld), g.stride_a, beta,
      g.c, cuda_type(g.output), static_cast<int>(g.n), g.stride_c, static_cast<int>(g.batch), compute,
      CUBLAS_GEMM_DEFAULT));
}

// A timed choice needs an output that is scratch while timing (beta = 0, or C read from a
// c_in other than the output), a large product, and a stream that is not being captured into
// a graph (timing synchronises).
bool tuned_choice(const StridedGemm& g, cudaStream_t stream) {
  const double flops = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) *
                       static_cast<double>(g.batch);
  const bool scratch_output = g.beta == 0 || (g.c_in != nullptr && g.c_in != g.c);
  if (!scratch_output || flops < kTunedFlops || force_cublas()) return false;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(stream, &capture) == cudaSuccess && capture == cudaStreamCaptureStatusNone;
}

}  // namespace

bool strided_gemm(DeviceContext& ctx, cudaStream_t stream, const StridedGemm& g) {
  std::size_t workspace_bytes = 0;
  void* workspace = blas_workspace(ctx, stream, &workspace_bytes);
  const bool one = g.batch == 1;
  const PlanKey key{ctx.device(),
                    g.input,
                    g.output,
                    compute_type(g),
                    g.transpose_a,
                    g.transpose_b,
                    g.m,
                    g.n,
                    g.k,
                    g.batch,
                    one ? 0 : g.stride_a,
                    one ? 0 : g.stride_b,
                    one ? 0 : g.stride_c,
                    alignment(g.a, g.batch, g.stride_a, g.input),
                    alignment(g.b, g.batch, g.stride_b, g.input),
                    alignment(g.c, g.batch, g.stride_c, g.output),
                    tuned_choice(g, stream),
                    g.bias != nullptr,
                    g.bias != nullptr ? g.bias_dtype : DType::F32,
                    g.c_in != nullptr,
                    g.c_in != nullptr ? alignment(g.c_in, g.batch, g.stride_c, g.output) : 0u};
  const Plan& plan = plan_cache().get(ctx, key, g, workspace, workspace_bytes, stream);
  Scales scales;
  set_scales(scales, g);
  if (!plan.lt) {
    if (key.bias || key.residual) return false;
    cublas_fallback(ctx, stream, g, key.compute, scales.alpha, scales.beta, workspace, workspace_bytes);
    return true;
  }
  const void* c_in = g.c_in != nullptr ? g.c_in : g.c;
  auto launch = [&] {
    FERRITE_CUBLAS_CHECK(cublasLtMatmul(ctx.cublas_lt(), plan.op, scales.alpha, g.b, plan.first, g.a, plan.second,
                                        scales.beta, c_in, plan.out, g.c, plan.out, &plan.algo, workspace,
                                        workspace_bytes, stream));
  };
  if (!key.bias) {
    launch();
    return true;
  }
  std::lock_guard<std::mutex> lock(plan.bias_mutex);
  FERRITE_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof g.bias));
  launch();
  return true;
}

}  // namespace ferrite::cuda

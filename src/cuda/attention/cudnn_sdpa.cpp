// cuDNN's fused SDPA for F16/BF16 through the cuDNN frontend's graph API (cudnn_sdpa.hpp).
//
// One graph per problem (a deterministic backward's may run it on blocks of batches or of
// key/value heads, one after another: see work_area_bound): q [B, Hq, Sq, D], k [B, Hkv, Sk, D],
// v [B, Hkv, Sk, Dv] (and in the backward out and dO [B, Hq, Sq, Dv]) with the strides the
// description gives (row-major, or those of views such as q/k/v permuted out of one
// [B, S, 3, H, D] projection: cuDNN reads any BHSD strides with a unit head-dim stride and
// 16-byte-aligned rows), out, dq, dk, dv written through theirs likewise (out in q's layout,
// the gradients into the slices of one [B, S, 3, H, D] gradient), the F32 Stats [B, Hq, Sq, 1]
// being exactly ferrite's logsumexp (natural log of sum exp of the scaled scores: cuDNN's
// default, stats_use_log2 left off); grouped-query attention is cuDNN's own (k/v with fewer
// heads); causal is cuDNN's diagonal band with right bound 0 aligned TOP_LEFT, i.e. key j is
// hidden from query i when j > i, as ferrite and PyTorch. A masked problem (Bool or additive
// mask) hands cuDNN the mask as its additive bias [B, 1 or Hq, Sq, Sk] in the dtype, broadcast
// by stride 0 (bias_layout: the caller's additive mask in place, else a copy written by
// cudnn_sdpa_mask.cu). Its forward afterwards sets the rows whose every key is hidden to out = 0,
// logsumexp = -inf (ferrite's semantics; cuDNN's own result there is not); its backward takes
// the same bias and, as Stats, the logsumexp with those rows' -inf made +inf, which makes cuDNN's
// P of the row exactly 0 and so its gradients 0 (masked_backward). The backward is cuDNN's
// deterministic algorithm (set_deterministic_algorithm), so a run repeats bit for bit as the
// own kernels do.
//
// Per device: a graph cache keyed by everything a graph depends on, under a mutex held for the
// lookup and, on a miss, the build and insertion; a problem cuDNN cannot build a plan for is
// cached as such, so it is tried once and then goes straight to the own kernels. The handle is
// the calling thread's (cuda/libs/cudnn_handle.hpp), bound to the caller's stream. Enqueueing a
// cached graph holds only that graph's own mutex: cuDNN promises thread safety per handle, not
// per execution plan, so two threads never enqueue one plan at once, while different problems,
// devices and threads enqueue in parallel. The work area comes from ferrite's stream-ordered
// pool on the current stream.
#include "cuda/attention/cudnn_sdpa.hpp"

#if FERRITE_HAVE_CUDNN_FRONTEND

#include <cudnn_frontend.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cuda/attention/cudnn_sdpa_mask.cuh"
#include "cuda/libs/cudnn_handle.hpp"
#include "cuda/libs/graph_cache.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/device_context.hpp"
#include "cuda/shape/shape_runtime.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cuda::cudnn_sdpa {
namespace {

namespace fe = cudnn_frontend;
using TensorPtr = std::shared_ptr<fe::graph::Tensor_attributes>;

// The tensors' uids in a graph's variant pack.
enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV, kBias };

// How a masked forward or backward hands its mask to cuDNN: as the additive bias
// [B, heads, Sq, Sk] in the inputs' dtype with these strides (0 on the dims the mask
// broadcasts; heads is 1 or Hq), read either from the caller's additive mask itself or from a
// scratch copy of the mask's own size (`materialised`: Bool masks, converted to 0 / -inf, and
// additive masks whose layout cuDNN cannot read: see bias_layout). Unmasked problems have
// heads = 0 and zero strides.
struct BiasLayout {
  std::int64_t heads = 0;
  AttentionStrides strides{};
  bool materialised = false;
  std::int64_t row = 0;       // materialised: elements a mask row takes in the copy (Sk rounded up to 8)
  std::int64_t elements = 0;  // materialised: elements of the copy
};

struct Key {
  DType dtype;
  std::int64_t b, hq, hkv, sq, sk, d, dv;
  bool causal;
  bool deterministic;  // backward only; true in a forward key
  std::uint32_t scale_bits;  // the float cuDNN is given
  bool backward;
  // q, k, v, out, and (backward only; zeros in a forward key) dO, dq, dk, dv.
  std::array<AttentionStrides, 8> strides;
  // Masked forwards and backwards: the mask's kind and the bias cuDNN reads (BiasLayout: its head
  // extent and strides); None, 0 and zeros for every unmasked graph, whose keys are therefore as
  // before (`backward` already tells a masked backward's graph from its forward's).
  AttentionMaskKind mask;
  std::int64_t bias_heads;
  AttentionStrides bias_strides;
  auto tie() const {
    return std::tie(dtype, b, hq, hkv, sq, sk, d, dv, causal, deterministic, scale_bits, backward, strides, mask,
                    bias_heads, bias_strides);
  }
  bool operator<(const Key& o) const { return tie() < o.tie(); }
};

// The part of a problem that one graph computes: `batches` batches by `kv_heads` key/value heads
// (with their query heads). A deterministic backward whose whole dP would not fit runs its graph
// on each such block in turn, on one work area; every other graph computes its whole problem.
struct Chunk {
  std::int64_t batches = 0, kv_heads = 0;
};

struct Graph {
  std::shared_ptr<fe::graph::Graph> graph;  // null: cuDNN has no plan for this problem
  std::int64_t workspace = 0;
  Chunk chunk;          // the block the graph computes
  std::string why_not;  // cuDNN's message when graph is null
};

using GraphCacheOfDevice = GraphCache<Key, Graph>;
using Slot = GraphCacheOfDevice::Slot;

GraphCacheOfDevice& state_of(int device) {
  static std::mutex states_mutex;
  // Never destroyed: plans must not outlive the CUDA context at process exit.
  static std::vector<GraphCacheOfDevice*>* states = new std::vector<GraphCacheOfDevice*>();
  std::lock_guard<std::mutex> lock(states_mutex);
  if (states->empty()) states->resize(static_cast<std::size_t>(DeviceContext::count()));
  FERRITE_CHECK(device >= 0 && static_cast<std::size_t>(device) < states->size(), InvalidArgument,
                "cuDNN attention: no CUDA device ", device);
  auto& slot = (*states)[static_cast<std::size_t>(device)];
  if (!slot) slot = new GraphCacheOfDevice();
  return *slot;
}

fe::DataType_t io_type(DType d) { return d == DType::F16 ? fe::DataType_t::HALF : fe::DataType_t::BFLOAT16; }

// Whether only engines that repeat bit for bit may run: every forward; the backward unless the
// caller chose AttentionOptions::deterministic = false. Part of the cache key, as it picks the plan.
bool deterministic_run(const AttentionDesc& d, bool backward) { return !backward || d.deterministic; }

Key key_of(const AttentionDesc& d, bool backward, const BiasLayout& bias) {
  const AttentionStrides none{};
  return {d.dtype,
          d.batch,
          d.heads_q,
          d.heads_kv,
          d.seq_q,
          d.seq_k,
          d.head_dim,
          d.value_dim,
          d.causal,
          deterministic_run(d, backward),
          std::bit_cast<std::uint32_t>(static_cast<float>(d.scale)),
          backward,
          {d.q_strides, d.k_strides, d.v_strides, d.out_strides, backward ? d.grad_out_strides : none,
           backward ? d.dq_strides : none, backward ? d.dk_strides : none, backward ? d.dv_strides : none},
          d.mask,
          bias.heads,
          bias.strides};
}

// The bias of a masked problem whose mask (when not null) starts at `mask` (null: assume the
// 16-byte grid, for plans()). cuDNN's frontend asks of the bias only rank 4 and a unit key
// stride (sdpa_support_surface.h, scaled_dot_product_flash_attention.h); extents of 1 in batch
// and heads, and stride-0 batch and query-row dims, are how PyTorch hands it broadcast masks
// (attn_mask expanded to [B, 1 or H, Sq, Sk], MHA.cpp passing the expanded strides). Whether
// cuDNN reads bias rows off the 16-byte grid is stated nowhere we found (PyTorch pads masks for
// its memory-efficient kernel, not for cuDNN), and q/k/v/out need that grid; as a precaution an
// additive mask is read in place only with its kept strides multiples of 8 elements, a unit key
// stride and its start on the 16-byte grid; otherwise (and always for Bool) the bias is written
// to a scratch copy over the mask's own rows with rows of Sk rounded up to 8 elements.
BiasLayout bias_layout(const AttentionDesc& d, const void* mask) {
  BiasLayout bias;
  if (d.mask == AttentionMaskKind::None) return bias;
  const mask::Rows rows = mask::rows_of(d);
  bias.heads = rows.heads;
  const std::array<std::int64_t, 3> own = {rows.batch, rows.heads, rows.rows};
  bool in_place = d.mask == AttentionMaskKind::Additive && reinterpret_cast<std::uintptr_t>(mask) % 16 == 0 &&
                  (d.seq_k == 1 || d.mask_strides[3] == 1);
  for (std::size_t i = 0; i < 3; ++i)
    if (own[i] > 1 && (d.mask_strides[i] <= 0 || d.mask_strides[i] % 8 != 0)) in_place = false;
  if (in_place) {
    for (std::size_t i = 0; i < 3; ++i) bias.strides[i] = own[i] > 1 ? d.mask_strides[i] : 0;
    bias.strides[3] = 1;
    return bias;
  }
  bias.materialised = true;
  bias.row = (d.seq_k + 7) / 8 * 8;
  bias.elements = rows.count() * bias.row;
  bias.strides = {rows.batch > 1 ? rows.heads * rows.rows * bias.row : 0, rows.heads > 1 ? rows.rows * bias.row : 0,
                  rows.rows > 1 ? bias.row : 0, 1};
  return bias;
}

// An input 4-D tensor of the graph with the description's strides.
TensorPtr input(fe::graph::Graph& g, const char* name, Uid uid, std::int64_t n0, std::int64_t n1, std::int64_t n2,
                std::int64_t n3, const AttentionStrides& strides) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({n0, n1, n2, n3})
                      .set_stride({strides[0], strides[1], strides[2], strides[3]}));
}

// An output 4-D tensor of the graph with the description's strides.
void set_output(const TensorPtr& t, Uid uid, std::int64_t n0, std::int64_t n1, std::int64_t n2, std::int64_t n3,
                const AttentionStrides& strides) {
  t->set_output(true).set_uid(uid).set_dim({n0, n1, n2, n3}).set_stride({strides[0], strides[1], strides[2], strides[3]});
}

// ferrite's logsumexp [B, Hq, Sq] as cuDNN's Stats [B, Hq, Sq, 1].
void set_stats(const TensorPtr& t, const AttentionDesc& d) {
  t->set_uid(kStats)
      .set_data_type(fe::DataType_t::FLOAT)
      .set_dim({d.batch, d.heads_q, d.seq_q, 1})
      .set_stride({d.heads_q * d.seq_q, d.seq_q, 1, 1});
}

std::shared_ptr<fe::graph::Graph> new_graph(const AttentionDesc& d) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(io_type(d.dtype))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

// The bias tensor of the masked `d` (a problem or, in a blocked backward, one block of it: the
// mask's own head extent is then the block's query heads, unless it broadcasts over heads), in
// the dtype: cuDNN adds it to the scaled scores (before the causal band). A dim of extent 1 is
// declared with stride 0 (bias_layout does so for the whole problem already), so a block of one
// batch (or one head) declares exactly the bias of the same slice run as a problem of its own.
TensorPtr bias_tensor(fe::graph::Graph& g, const AttentionDesc& d, const BiasLayout& bias) {
  const std::array<std::int64_t, 4> dim = {d.batch, bias.heads > 1 ? d.heads_q : 1, d.seq_q, d.seq_k};
  std::array<std::int64_t, 4> stride{};
  for (std::size_t i = 0; i < 3; ++i) stride[i] = dim[i] == 1 ? 0 : bias.strides[i];
  stride[3] = bias.strides[3];
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name("bias")
                      .set_uid(kBias)
                      .set_data_type(io_type(d.dtype))
                      .set_dim({dim[0], dim[1], dim[2], dim[3]})
                      .set_stride({stride[0], stride[1], stride[2], stride[3]}));
}

std::shared_ptr<fe::graph::Graph> forward_graph(const AttentionDesc& d, fe::AttentionImplementation_t impl,
                                                const BiasLayout& bias) {
  auto g = new_graph(d);
  const TensorPtr q = input(*g, "q", kQ, d.batch, d.heads_q, d.seq_q, d.head_dim, d.q_strides);
  const TensorPtr k = input(*g, "k", kK, d.batch, d.heads_kv, d.seq_k, d.head_dim, d.k_strides);
  const TensorPtr v = input(*g, "v", kV, d.batch, d.heads_kv, d.seq_k, d.value_dim, d.v_strides);
  auto options = fe::graph::SDPA_attributes()
                     .set_name("sdpa")
                     .set_generate_stats(true)
                     .set_attn_scale(static_cast<float>(d.scale))
                     .set_implementation(impl);
  if (d.causal) options.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT).set_diagonal_band_right_bound(0);
  if (d.mask != AttentionMaskKind::None) options.set_bias(bias_tensor(*g, d, bias));
  auto [o, stats] = g->sdpa(q, k, v, std::move(options));
  set_output(o, kO, d.batch, d.heads_q, d.seq_q, d.value_dim, d.out_strides);
  stats->set_output(true);
  set_stats(stats, d);
  return g;
}

// The backward graph; a masked one takes the forward's bias (no dBias: the mask gets no
// gradient) and, as Stats, masked_backward's copy of the logsumexp (dead rows +inf).
std::shared_ptr<fe::graph::Graph> backward_graph(const AttentionDesc& d, const BiasLayout& bias) {
  auto g = new_graph(d);
  const TensorPtr q = input(*g, "q", kQ, d.batch, d.heads_q, d.seq_q, d.head_dim, d.q_strides);
  const TensorPtr k = input(*g, "k", kK, d.batch, d.heads_kv, d.seq_k, d.head_dim, d.k_strides);
  const TensorPtr v = input(*g, "v", kV, d.batch, d.heads_kv, d.seq_k, d.value_dim, d.v_strides);
  const TensorPtr o = input(*g, "o", kO, d.batch, d.heads_q, d.seq_q, d.value_dim, d.out_strides);
  const TensorPtr dout = input(*g, "do", kDO, d.batch, d.heads_q, d.seq_q, d.value_dim, d.grad_out_strides);
  const TensorPtr stats = g->tensor(fe::graph::Tensor_attributes().set_name("stats"));
  set_stats(stats, d);
  auto options = fe::graph::SDPA_backward_attributes()
                     .set_name("sdpa_backward")
                     .set_attn_scale(static_cast<float>(d.scale))
                     .set_deterministic_algorithm(d.deterministic);
  if (d.causal) options.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT).set_diagonal_band_right_bound(0);
  if (d.mask != AttentionMaskKind::None) options.set_bias(bias_tensor(*g, d, bias));
  auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, dout, stats, std::move(options));
  set_output(dq, kDQ, d.batch, d.heads_q, d.seq_q, d.head_dim, d.dq_strides);
  set_output(dk, kDK, d.batch, d.heads_kv, d.seq_k, d.head_dim, d.dk_strides);
  set_output(dv, kDV, d.batch, d.heads_kv, d.seq_k, d.value_dim, d.dv_strides);
  return g;
}

// Validates, lowers and plans `g`; "" when it has an executable plan, else cuDNN's reason.
// `deterministic` (deterministic_run): only engines that repeat bit for bit.
std::string plan(fe::graph::Graph& g, cudnnHandle_t handle, bool deterministic) {
  auto step = [](fe::error_t status, const char* what) -> std::string {
    return status.is_good() ? std::string() : std::string(what) + ": " + status.get_message();
  };
  std::string why = step(g.validate(), "validate");
  if (why.empty()) why = step(g.build_operation_graph(handle), "build_operation_graph");
  if (why.empty())
    why = step(g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}), "create_execution_plans");
  // ferrite's attention repeats bit for bit: engines that cuDNN marks non-deterministic are
  // dropped (when none is left, check_support fails and the own kernels run the problem).
  if (why.empty() && deterministic) g.deselect_numeric_notes({fe::NumericalNote_t::NONDETERMINISTIC});
  if (why.empty()) why = step(g.check_support(), "check_support");
  if (why.empty()) why = step(g.build_plans(handle, fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), "build_plans");
  return why;
}

// cuDNN 9's deterministic backward on Hopper (the dP-workspace decomposition the frontend
// picks for set_deterministic_algorithm) keeps dP = dO vᵀ for all of its graph's [B, Hq, Sq, Sk]
// in its work area: 2·B·Hq·Sq·Sk bytes, the score matrix's size, 4x the operands at B=8, H=16,
// S=4096, D=128 and 16x at S=16384. ferrite's attention memory stays O(B·H·S·D): a graph's work
// area is at most 2.5 times the bytes of its whole problem's operands (q, k, v, out, dO, dq, dk,
// dv), or 256 MiB where that is more. A deterministic backward whose whole work area would be
// larger runs in blocks of batches (all heads), or of one batch's key/value heads (with their
// query heads), each block small enough, one after another on one work area (the dP of one block
// at a time), as the largest such block that divides the problem (one graph for all blocks). A
// problem whose single key/value head's dP reaches the bound (self-attention with D = Dv: both
// S >= 20·D·B·H and S >= 11586, where 2·S² reaches the 256 MiB floor) is declined and runs on the
// own kernels. Forward graphs need little.
// Why 2.5: the issue bounds the pool's peak over forward + backward at 4x the operands, and the
// pool holds the operands themselves besides the work area (and the logsumexp, B·Hq·Sq floats):
// 1 + 2.5 leaves half the operands' bytes spare. Session 14 measured the S=16384 causal backward
// (B=1, H=32, D=128: 1 GiB of operands, 512 MiB of dP a head) at 392 TFLOP/s with 2x (blocks of
// 2 heads), 421 with 4x (blocks of 4 heads, which 2.5x allows too), 450 with 8x (PyTorch 528);
// and 2.5x moves the B=1, H=16, S=32768 backward (2 GiB of dP a head, 1 GiB of operands)
// from the own kernels to cuDNN in blocks of one head.
constexpr std::int64_t kWorkAreaHalfOperands = 5;  // the bound in halves of the operands: 2.5x
constexpr std::int64_t kWorkAreaFloor = std::int64_t(256) << 20;
constexpr std::int64_t kMaxDpElements = std::int64_t(1) << 31;  // a block's dP stays below it

std::int64_t operand_bytes(const AttentionDesc& d) {
  // q, out, dO, dq over the query side; k, v, dk, dv over the key side; two bytes each.
  return 2 * 2 * (d.batch * d.heads_q * d.seq_q + d.batch * d.heads_kv * d.seq_k) * (d.head_dim + d.value_dim);
}

std::int64_t work_area_bound(const AttentionDesc& d) {
  return std::max(kWorkAreaHalfOperands * operand_bytes(d) / 2, kWorkAreaFloor);
}

std::string bound_text(const AttentionDesc& d) {
  return std::to_string(work_area_bound(d)) + " (2.5x the operands' " +
         std::to_string(operand_bytes(d)) + " bytes, at least 256 MiB)";
}

// The block `c` of `d` as a problem of its own (the strides stay the whole problem's).
AttentionDesc block_of(const AttentionDesc& d, Chunk c) {
  AttentionDesc block = d;
  block.batch = c.batches;
  block.heads_q = c.kv_heads * d.group();
  block.heads_kv = c.kv_heads;
  return block;
}

// The blocks a graph of `d` may compute, largest first: the whole problem; for a deterministic
// backward then every divisor of the batch with all heads, then one batch with every divisor of
// the key/value heads.
std::vector<Chunk> candidate_blocks(const AttentionDesc& d, bool backward) {
  std::vector<Chunk> blocks = {{d.batch, d.heads_kv}};
  if (!backward || !d.deterministic) return blocks;
  for (std::int64_t b = d.batch - 1; b >= 1; --b)
    if (d.batch % b == 0) blocks.push_back({b, d.heads_kv});
  for (std::int64_t h = d.heads_kv - 1; h >= 1; --h)
    if (d.heads_kv % h == 0) blocks.push_back({1, h});
  return blocks;
}

// Builds the graph of `d`. The frontend reports most failures as statuses but throws for
// some (no SDPA implementation fits): both mean "no plan", never an error of the call.
Graph build(const AttentionDesc& d, bool backward, cudnnHandle_t handle, int multiprocessors, const BiasLayout& bias) {
  Graph result;
  // cuDNN before 9.5.1 assumes dO has O's strides (PyTorch copies dO to O's layout there).
  if (backward && d.out_strides != d.grad_out_strides && cudnnGetVersion() < 90501) {
    result.why_not = "cuDNN " + std::to_string(cudnnGetVersion()) + " needs dO strides equal to O's (9.5.1+ does not)";
    return result;
  }
  // Single-query forwards (decode) with fewer query rows than the device has multiprocessors run
  // on the own kernels: on the H200 with cuDNN 9.14 the decode conformance case (B 2, Sq 1,
  // Sk 300, 8 query heads over 2 key/value heads, D 128) gave outputs one ulp apart between two
  // calls on the same inputs, with the work area zeroed and every engine cuDNN marks
  // non-deterministic dropped. With so few rows cuDNN evidently splits the keys across blocks
  // and merges the parts in an order that is not fixed; large decode batches (the benchmark's
  // 64 x 32 rows) keep cuDNN's route.
  if (!backward && d.seq_q == 1 && d.batch * d.heads_q < multiprocessors) {
    result.why_not = "single-query forward with " + std::to_string(d.batch * d.heads_q) + " rows (fewer than the " +
                     std::to_string(multiprocessors) + " multiprocessors): cuDNN's split-key decode is not deterministic";
    return result;
  }
  // The forward first as the composite node (what PyTorch's cuDNN attention runs), then
  // whatever the frontend selects itself.
  const std::vector<fe::AttentionImplementation_t> impls =
      backward ? std::vector<fe::AttentionImplementation_t>{fe::AttentionImplementation_t::AUTO}
               : std::vector<fe::AttentionImplementation_t>{fe::AttentionImplementation_t::COMPOSITE,
                                                            fe::AttentionImplementation_t::AUTO};
  const std::int64_t bound = work_area_bound(d);
  const bool blocked_dp = backward && d.deterministic;  // the work area holds the block's dP
  std::string why_not;
  for (const fe::AttentionImplementation_t impl : impls) {
    std::string why;  // of this implementation's largest block tried
    for (const Chunk c : candidate_blocks(d, backward)) {
      const AttentionDesc block = block_of(d, c);
      // The dP alone fills the bound (the work area is never smaller): not worth a build. Nor is
      // a dP of 2^31 elements or more (at 2.5x the B=8, H=16, S=4096, D=256 backward's whole dP,
      // 2^31 elements, would fit): ferrite hands cuDNN no tensor that large (eligible()), and no
      // GPU run has checked cuDNN's gradients past 32-bit element offsets.
      const std::int64_t dp_elements = block.batch * block.heads_q * d.seq_q * d.seq_k;
      if (blocked_dp && (2 * dp_elements >= bound || dp_elements >= kMaxDpElements)) continue;
      bool work_area_only = false;
      try {
        auto g = backward ? backward_graph(block, bias) : forward_graph(block, impl, bias);
        why = plan(*g, handle, deterministic_run(d, backward));
        if (why.empty()) {
          result.workspace = g->get_workspace_size();
          if (result.workspace >= 0 && result.workspace <= bound) {
            result.graph = std::move(g);
            result.chunk = c;
            return result;
          }
          why = "work area of " + std::to_string(result.workspace) + " bytes for blocks of " +
                std::to_string(c.batches) + " batches x " + std::to_string(c.kv_heads) +
                " key/value heads, more than " + bound_text(d);
          work_area_only = true;
        }
      } catch (const std::exception& e) {
        why = e.what();
      }
      if (!work_area_only) break;  // a smaller block of the same problem would fail alike
    }
    if (why.empty())  // every block skipped: even one head's dP is too large
      why = "work area of at least " + std::to_string(2 * d.group() * d.seq_q * d.seq_k) +
            " bytes (one key/value head's dP), more than " + bound_text(d);
    why_not += (why_not.empty() ? "" : "; ") + why;
  }
  result.why_not = why_not;
  return result;
}

// The cached graph of `d`, built on a miss. `count_hit`: whether finding it counts as a hit
// (not for plans(), which the front end's reads_views asks before the call itself). Plan
// selection may query the device; it runs on the handle's stream.
std::shared_ptr<Slot> lookup(int device, const AttentionDesc& d, bool backward, cudnnHandle_t handle,
                             bool count_hit = true, const BiasLayout& bias = {}) {
  return state_of(device).find_or_build(key_of(d, backward, bias), count_hit, [&](std::string& why) {
    Graph built = build(d, backward, handle, DeviceContext::get(device).properties().multiProcessorCount, bias);
    why = built.why_not;
    return built;
  });
}

// The variant pack of the block at batch b0, key/value head h0 (its first query head h0·group):
// every pointer moved to that block's first element; a masked backward's bias by its own
// strides (`bias`: 0 on the dims it broadcasts, so a broadcast bias stays where it is).
using Pack = std::unordered_map<std::int64_t, void*>;
Pack block_pack(const AttentionDesc& d, const Pack& whole, std::int64_t b0, std::int64_t h0, const BiasLayout& bias) {
  const std::int64_t hq0 = h0 * d.group();
  auto at = [&](Uid uid, const AttentionStrides& st, std::int64_t head) {
    return static_cast<void*>(static_cast<char*>(whole.at(uid)) + 2 * (b0 * st[0] + head * st[1]));
  };
  Pack pack = whole;
  pack[kQ] = at(kQ, d.q_strides, hq0);
  pack[kK] = at(kK, d.k_strides, h0);
  pack[kV] = at(kV, d.v_strides, h0);
  pack[kO] = at(kO, d.out_strides, hq0);
  pack[kStats] = static_cast<float*>(whole.at(kStats)) + (b0 * d.heads_q + hq0) * d.seq_q;
  if (whole.count(kDO)) {
    pack[kDO] = at(kDO, d.grad_out_strides, hq0);
    pack[kDQ] = at(kDQ, d.dq_strides, hq0);
    pack[kDK] = at(kDK, d.dk_strides, h0);
    pack[kDV] = at(kDV, d.dv_strides, h0);
  }
  if (whole.count(kBias)) pack[kBias] = at(kBias, bias.strides, hq0);
  return pack;
}

// Runs the built graph of `slot` (on `handle`, bound to `stream`); throws when cuDNN fails.
// `bias`: the masked problem's bias layout, for moving its pointer block by block.
void execute(Slot& slot, const AttentionDesc& d, bool backward, const Pack& pack, cudnnHandle_t handle, int device,
             cudaStream_t stream, const BiasLayout& bias = {}) {
  const Graph& g = slot.plan;
  // One work area for every block: they run one after another on `stream`.
  shape::Scratch workspace(device, static_cast<std::size_t>(g.workspace), stream);
  fe::error_t status;
  try {
    std::lock_guard<std::mutex> lock(slot.execute);
    for (std::int64_t b0 = 0; b0 < d.batch && status.is_good(); b0 += g.chunk.batches)
      for (std::int64_t h0 = 0; h0 < d.heads_kv && status.is_good(); h0 += g.chunk.kv_heads) {
        Pack block =
            g.chunk.batches == d.batch && g.chunk.kv_heads == d.heads_kv ? pack : block_pack(d, pack, b0, h0, bias);
        status = g.graph->execute(handle, block, workspace.as<void>());
      }
  } catch (const std::exception& e) {
    status = fe::error_t(fe::error_code_t::GRAPH_EXECUTION_FAILED, e.what());
  }
  FERRITE_CHECK(status.is_good(), Library, "scaled_dot_product_attention", backward ? "_backward" : "",
                ": cuDNN failed to execute its SDPA graph for ", dtype_name(d.dtype), " q [", d.batch, ", ", d.heads_q,
                ", ", d.seq_q, ", ", d.head_dim, "], k/v [", d.batch, ", ", d.heads_kv, ", ", d.seq_k, ", ",
                d.head_dim, "/", d.value_dim, "]", d.causal ? " causal" : "",
                d.mask == AttentionMaskKind::None ? ""
                : d.mask == AttentionMaskKind::Bool ? " with a Bool mask"
                                                    : " with an additive mask",
                ": ", status.get_message());
}

bool run(const AttentionDesc& d, bool backward, const Pack& pack, int device, cudaStream_t stream) {
  const cudnnHandle_t handle = cudnn_handle(device, stream);  // this thread's, bound to `stream`
  const std::shared_ptr<Slot> slot = lookup(device, d, backward, handle);
  if (!slot->plan.graph) return false;
  execute(*slot, d, backward, pack, handle, device, stream);
  return true;
}

// The masked forward (masked_eligible): the bias (the caller's additive mask, or its
// scratch copy written by mask::prepare, which also finds each mask row's first visible key),
// cuDNN's graph with it, then mask::fix_dead_rows. All on `stream`; the scratch returns to the
// pool in stream order.
bool masked_forward(const AttentionDesc& d, const attention::Pointers& p, int device, cudaStream_t stream) {
  const cudnnHandle_t handle = cudnn_handle(device, stream);
  const BiasLayout bias = bias_layout(d, p.mask);
  const std::shared_ptr<Slot> slot = lookup(device, d, false, handle, true, bias);
  if (!slot->plan.graph) return false;
  const mask::Rows rows = mask::rows_of(d);
  shape::Scratch first_visible(device, static_cast<std::size_t>(rows.count()) * sizeof(std::int32_t), stream);
  std::optional<shape::Scratch> copy;  // the bias, when cuDNN cannot read the mask itself
  if (bias.materialised) copy.emplace(device, static_cast<std::size_t>(bias.elements) * 2, stream);
  void* bias_data = copy ? copy->as<void>() : const_cast<void*>(p.mask);
  mask::prepare(d, p.mask, copy ? bias_data : nullptr, bias.row, first_visible.as<std::int32_t>(), stream);
  // A forward graph computes its whole problem (candidate_blocks): no per-block offsets.
  const Pack pack = {{kQ, const_cast<void*>(p.q)}, {kK, const_cast<void*>(p.k)}, {kV, const_cast<void*>(p.v)},
                     {kO, p.result},               {kStats, p.logsumexp},        {kBias, bias_data}};
  execute(*slot, d, false, pack, handle, device, stream);
  mask::fix_dead_rows(d, first_visible.as<std::int32_t>(), p.result, static_cast<float*>(p.logsumexp), stream);
  return true;
}

// The masked backward (masked_eligible): the forward's bias (the caller's additive mask,
// or the scratch copy mask::prepare writes, without the first visible keys), and as Stats a
// scratch copy of the logsumexp in which the fully masked rows' -inf is +inf
// (mask::backward_stats). cuDNN's backward computes P = exp(scale·q·k + bias - Stats) (natural
// log: stats_use_log2 stays off; the frontend's composite backward, scaled_dot_product_flash_
// attention.h: mul_s_attn_scale, bias, sub_s_m, causal band, exp_s); with Stats = +inf every P of
// such a row is exp(-inf) = 0 for finite scores and any bias (finite or -inf), so dS = P·(dP -
// delta) = 0: its dq row is 0 and it adds nothing to dk/dv, ferrite's semantics, with no fix-up
// after the graph. FlashAttention's forward writes +inf for the logsumexp of its empty rows for
// the same reason. Live rows get their logsumexp bit for bit. All on `stream`.
bool masked_backward(const AttentionDesc& d, const attention::Pointers& p, int device, cudaStream_t stream) {
  const cudnnHandle_t handle = cudnn_handle(device, stream);
  const BiasLayout bias = bias_layout(d, p.mask);
  const std::shared_ptr<Slot> slot = lookup(device, d, true, handle, true, bias);
  if (!slot->plan.graph) return false;
  std::optional<shape::Scratch> copy;  // the bias, when cuDNN cannot read the mask itself
  if (bias.materialised) copy.emplace(device, static_cast<std::size_t>(bias.elements) * 2, stream);
  void* bias_data = copy ? copy->as<void>() : const_cast<void*>(p.mask);
  if (copy) mask::prepare(d, p.mask, bias_data, bias.row, nullptr, stream);
  const std::int64_t rows = d.batch * d.heads_q * d.seq_q;
  shape::Scratch stats(device, static_cast<std::size_t>(rows) * sizeof(float), stream);
  mask::backward_stats(static_cast<const float*>(p.logsumexp), stats.as<float>(), rows, stream);
  const Pack pack = {
      {kQ, const_cast<void*>(p.q)},    {kK, const_cast<void*>(p.k)},         {kV, const_cast<void*>(p.v)},
      {kO, const_cast<void*>(p.out)},  {kDO, const_cast<void*>(p.grad_out)}, {kStats, stats.as<void>()},
      {kDQ, p.dq},                     {kDK, p.dk},                          {kDV, p.dv},
      {kBias, bias_data}};
  execute(*slot, d, true, pack, handle, device, stream, bias);
  return true;
}

}  // namespace

bool compiled() { return true; }

bool eligible(const AttentionDesc& d) {
  if (d.dtype != DType::F16 && d.dtype != DType::BF16) return false;
  if (d.mask != AttentionMaskKind::None) return false;
  // cuDNN's dropout draws from its own Philox stream, whose layout is not ferrite's: the
  // weights it drops would not be the ones nn::dropout names (AttentionDesc::has_dropout).
  if (d.has_dropout()) return false;
  if (d.batch < 1 || d.heads_q < 1 || d.heads_kv < 1 || d.seq_q < 1 || d.seq_k < 1) return false;
  if (d.heads_q % d.heads_kv != 0) return false;
  // Head dims of 0 pass the multiple-of-8 test; the own kernels take them (D = 0: every score
  // is 0, out the mean of v; Dv = 0: out is empty).
  if (d.head_dim < 1 || d.value_dim < 1) return false;
  if (d.head_dim % 8 != 0 || d.value_dim % 8 != 0 || d.head_dim > 256 || d.value_dim > 256) return false;
  // cuDNN's kernels index with 32-bit offsets in places: stay well inside them.
  constexpr std::int64_t kLimit = std::int64_t(1) << 31;
  // The largest tensor cuDNN indexes: q or out (query heads), or k or v (key/value heads).
  const std::int64_t query_side = d.batch * d.heads_q * d.seq_q * std::max(d.head_dim, d.value_dim);
  const std::int64_t key_side = d.batch * d.heads_kv * d.seq_k * std::max(d.head_dim, d.value_dim);
  if (std::max(query_side, key_side) >= kLimit) return false;
  // Strides (row-major ones pass): cuDNN requires a unit head-dim stride and moves rows with
  // 16-byte vector loads and TMA (its frontend rejects other strides of dims longer than 1,
  // sdpa_support_surface.h); negative and zero (expanded) strides are left to the dense copy.
  // A view's span (its last element + 1) stays inside the 32-bit offsets as tensors do.
  auto fits = [&](const AttentionStrides& st, std::int64_t n1, std::int64_t n2, std::int64_t n3) {
    const std::array<std::int64_t, 4> n = {d.batch, n1, n2, n3};
    if (st[3] != 1) return false;
    std::int64_t span = 1;
    for (std::size_t i = 0; i < 4; ++i) {
      if (n[i] > 1 && (st[i] <= 0 || (i < 3 && st[i] % 8 != 0))) return false;
      span += (n[i] - 1) * st[i];
    }
    return span < kLimit;
  };
  if (!fits(d.q_strides, d.heads_q, d.seq_q, d.head_dim) || !fits(d.k_strides, d.heads_kv, d.seq_k, d.head_dim) ||
      !fits(d.v_strides, d.heads_kv, d.seq_k, d.value_dim) || !fits(d.out_strides, d.heads_q, d.seq_q, d.value_dim) ||
      !fits(d.grad_out_strides, d.heads_q, d.seq_q, d.value_dim) || !fits(d.dq_strides, d.heads_q, d.seq_q, d.head_dim) ||
      !fits(d.dk_strides, d.heads_kv, d.seq_k, d.head_dim) || !fits(d.dv_strides, d.heads_kv, d.seq_k, d.value_dim))
    return false;
  return std::isfinite(static_cast<float>(d.scale));
}

bool masked_eligible(const AttentionDesc& d) {
  if (d.mask == AttentionMaskKind::None || !d.dense()) return false;
  AttentionDesc unmasked = d;
  unmasked.mask = AttentionMaskKind::None;
  if (!eligible(unmasked)) return false;
  // The bias cuDNN reads, and its scratch copy, stay below 2^31 elements as the operands do: the
  // mask's own rows times Sk rounded up to 8 (the copy's rows; at least the in-place span).
  const mask::Rows rows = mask::rows_of(d);
  constexpr std::int64_t kLimit = std::int64_t(1) << 31;
  return rows.count() * ((d.seq_k + 7) / 8 * 8) < kLimit;
}

bool plans(const AttentionDesc& d, bool backward, int device, cudaStream_t stream) {
  const BiasLayout bias = bias_layout(d, nullptr);
  return lookup(device, d, backward, cudnn_handle(device, stream), false, bias)->plan.graph != nullptr;
}

bool forward(const AttentionDesc& d, const attention::Pointers& p, int device, cudaStream_t stream) {
  if (d.mask != AttentionMaskKind::None) return masked_forward(d, p, device, stream);
  const Pack pack = {
      {kQ, const_cast<void*>(p.q)}, {kK, const_cast<void*>(p.k)}, {kV, const_cast<void*>(p.v)},
      {kO, p.result},               {kStats, p.logsumexp}};
  return run(d, false, pack, device, stream);
}

bool backward(const AttentionDesc& d, const attention::Pointers& p, int device, cudaStream_t stream) {
  if (d.mask != AttentionMaskKind::None) return masked_backward(d, p, device, stream);
  const Pack pack = {
      {kQ, const_cast<void*>(p.q)},    {kK, const_cast<void*>(p.k)},         {kV, const_cast<void*>(p.v)},
      {kO, const_cast<void*>(p.out)},  {kDO, const_cast<void*>(p.grad_out)}, {kStats, p.logsumexp},
      {kDQ, p.dq},                     {kDK, p.dk},                          {kDV, p.dv}};
  return run(d, true, pack, device, stream);
}

CacheInfo cache_info(int device) {
  const GraphCacheCounts c = state_of(device).counts();
  return {static_cast<std::size_t>(c.entries), c.hits, c.misses, c.unsupported, c.last_unsupported};
}

void clear_cache(int device) {
  GraphCacheOfDevice& cache = state_of(device);
  DeviceGuard guard(device);
  // Work queued with a plan may still be running.
  cache.clear([] { FERRITE_CUDA_CHECK(cudaDeviceSynchronize()); });
}

}  // namespace ferrite::cuda::cudnn_sdpa

#else  // no cuDNN frontend in this build: the own kernels run everything

namespace ferrite::cuda::cudnn_sdpa {

bool compiled() { return false; }
bool eligible(const AttentionDesc&) { return false; }
bool masked_eligible(const AttentionDesc&) { return false; }
bool plans(const AttentionDesc&, bool, int, cudaStream_t) { return false; }
bool forward(const AttentionDesc&, const attention::Pointers&, int, cudaStream_t) { return false; }
bool backward(const AttentionDesc&, const attention::Pointers&, int, cudaStream_t) { return false; }
CacheInfo cache_info(int) { return {}; }
void clear_cache(int) {}

}  // namespace ferrite::cuda::cudnn_sdpa

#endif

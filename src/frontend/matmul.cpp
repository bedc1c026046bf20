// Front end of the matrix products: dtype and shape rules (torch.matmul semantics,
// row-major), the batch layout handed to MatmulOps::gemm, and the output allocation; and
// nn::linear, the product with a Linear weight plus a bias (MatmulOps::gemm_bias) and a
// residual (MatmulOps::gemm_residual).
#include "ferrite/matmul.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/extent.hpp"
#include "ferrite/backend_families/matmul_ops.hpp"
#include "ferrite/inplace.hpp"
#include "ferrite/nn.hpp"
#include "frontend/checks.hpp"
#include "frontend/strided.hpp"

namespace ferrite {
namespace {

std::atomic<bool> g_allow_tf32{false};

// op_name() views a string literal, so its data() is NUL-terminated.
const char* name_of(Op op) { return op_name(op).data(); }

const char* compute_name(MatmulCompute c) {
  switch (c) {
    case MatmulCompute::Default: return "Default";
    case MatmulCompute::F32: return "F32";
    case MatmulCompute::TF32: return "TF32";
    case MatmulCompute::BF16: return "BF16";
    case MatmulCompute::F16: return "F16";
  }
  return "?";
}

// What the backend multiplies and what it writes.
struct Precision {
  DType input;        // the dtype A and B reach the backend in
  DType output;       // the result's dtype
  bool tf32 = false;
};

Precision resolve_precision(const char* name, DType in, const MatmulOptions& options) {
  Precision p{in, in};
  const MatmulCompute c = options.compute;
  FERRITE_CHECK(c == MatmulCompute::Default || in == DType::F32, InvalidArgument, name, ": compute ",
                compute_name(c), " applies to F32 operands, got ", dtype_name(in));
  switch (c) {
    case MatmulCompute::Default: p.tf32 = in == DType::F32 && g_allow_tf32.load(std::memory_order_relaxed); break;
    case MatmulCompute::F32: break;
    case MatmulCompute::TF32: p.tf32 = true; break;
    case MatmulCompute::BF16: p.input = DType::BF16; break;
    case MatmulCompute::F16: p.input = DType::F16; break;
  }
  if (options.out_dtype) {
    const DType want = *options.out_dtype;
    const bool ok = want == p.output || (want == DType::F32 && is_half_precision(in));
    FERRITE_CHECK(ok, InvalidArgument, name, ": out_dtype ", dtype_name(want), " is not available for ",
                  dtype_name(in), " operands (", dtype_name(in), is_half_precision(in) ? " or F32" : "", " only)");
    p.output = want;
  }
  return p;
}

struct BatchDim {
  std::int64_t size, a, b, c;  // extent and element strides (0: broadcast)
};

// Row-major element strides of the matrices of an operand whose batch dims are `batch`,
// right-aligned against the output's batch rank; 0 where the operand is broadcast.
std::vector<std::int64_t> batch_strides(const char* name, const Shape& batch, std::size_t out_rank,
                                        std::int64_t matrix_elements) {
  std::vector<std::int64_t> strides(out_rank, 0);
  std::int64_t stride = matrix_elements;
  for (std::size_t i = batch.size(); i-- > 0;) {
    const std::size_t o = out_rank - batch.size() + i;
    strides[o] = batch[i] == 1 ? 0 : stride;
    if (i > 0)
      stride = detail::checked_mul(stride, batch[i], [&] {
        return std::string(name) + ": a batch stride of batch dims " + shape_str(batch) + " over matrices of " +
               std::to_string(matrix_elements) + " elements is more than an int64 can count";
      });
  }
  return strides;
}

struct Plan {
  GemmDesc desc;
  Shape out_shape;
};

Plan plan_product(Op op, const Tensor& a, const Tensor& b, const MatmulOptions& options) {
  const char* name = name_of(op);
  frontend::check_defined(name, {&a, &b});
  frontend::check_same_device(name, {&a, &b});
  frontend::check_same_dtype(name, {&a, &b});
  FERRITE_CHECK(a.dim() >= 1 && b.dim() >= 1, ShapeMismatch, name, ": operands need at least one dim, got ",
                a.description(), " and ", b.description());
  frontend::check_supported(op, a.dtype(), a.device());
  const Precision precision = resolve_precision(name, a.dtype(), options);

  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  const bool a_vector = sa.size() == 1, b_vector = sb.size() == 1;
  const bool ta = options.transpose_a && !a_vector, tb = options.transpose_b && !b_vector;
  const std::size_t ra = sa.size(), rb = sb.size();
  const std::int64_t m = a_vector ? 1 : (ta ? sa[ra - 1] : sa[ra - 2]);
  const std::int64_t ka = a_vector ? sa[0] : (ta ? sa[ra - 2] : sa[ra - 1]);
  const std::int64_t kb = b_vector ? sb[0] : (tb ? sb[rb - 1] : sb[rb - 2]);
  const std::int64_t n = b_vector ? 1 : (tb ? sb[rb - 2] : sb[rb - 1]);
  FERRITE_CHECK(ka == kb, ShapeMismatch, name, ": inner dimensions differ: a ", a.description(),
                ta ? " (transposed)" : "", " has k = ", ka, ", b ", b.description(), tb ? " (transposed)" : "",
                " has k = ", kb);

  const Shape batch_a(sa.begin(), sa.end() - std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(ra)));
  const Shape batch_b(sb.begin(), sb.end() - std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(rb)));
  const std::size_t rank = std::max(batch_a.size(), batch_b.size());
  Shape batch(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i + batch_a.size() >= rank ? batch_a[i + batch_a.size() - rank] : 1;
    const std::int64_t db = i + batch_b.size() >= rank ? batch_b[i + batch_b.size() - rank] : 1;
    FERRITE_CHECK(da == db || da == 1 || db == 1, ShapeMismatch, name, ": batch dims ", shape_str(batch_a), " of a ",
                  a.description(), " and ", shape_str(batch_b), " of b ", b.description(), " do not broadcast");
    batch[i] = da == 1 ? db : da;
  }

  Plan plan;
  plan.out_shape = batch;
  if (!a_vector) plan.out_shape.push_back(m);
  if (!b_vector) plan.out_shape.push_back(n);
  // The result's shape must be valid before any stride of it is computed ([2^40, 0] x
  // [0, 2^40] asks for 2^80 elements, and m * n would overflow).
  detail::checked_numel(plan.out_shape, name);

  GemmDesc& d = plan.desc;
  d.input = precision.input;
  d.output = precision.output;
  d.allow_tf32 = precision.tf32;
  d.m = m;
  d.n = n;
  d.k = ka;
  d.transpose_a = ta;
  d.transpose_b = tb;

  // Merge batch dims: drop size-1 dims, join neighbours that are contiguous for all three
  // operands (broadcast runs, with stride 0, join too).
  // Each operand is a valid tensor (or the valid result), so its matrix sizes fit; checked
  // anyway, as every extent product in the front ends.
  auto matrix = [&](std::int64_t rows, std::int64_t cols) {
    return detail::checked_mul(rows, cols, [&] {
      return std::string(name) + ": a matrix of " + std::to_string(rows) + " x " + std::to_string(cols) +
             " elements is more than an int64 can count (" + a.description() + ", " + b.description() + ")";
    });
  };
  const auto stride_a = batch_strides(name, batch_a, rank, matrix(m, ka));
  const auto stride_b = batch_strides(name, batch_b, rank, matrix(ka, n));
  const auto stride_c = batch_strides(name, batch, rank, matrix(m, n));
  std::vector<BatchDim> dims;
  for (std::size_t i = 0; i < rank; ++i) {
    if (batch[i] == 1) continue;
    const BatchDim cur{batch[i], stride_a[i], stride_b[i], stride_c[i]};
    if (!dims.empty()) {
      BatchDim& prev = dims.back();
      if (prev.a == cur.a * cur.size && prev.b == cur.b * cur.size && prev.c == cur.c * cur.size) {
        prev = {matrix(prev.size, cur.size), cur.a, cur.b, cur.c};
        continue;
      }
    }
    dims.push_back(cur);
  }
  // A batch of A against one B ([b, m, k] x [k, n]) is one taller product ([b*m, k] x [k, n]):
  // one big GEMM instead of many small ones, as PyTorch folds it.
  if (dims.size() == 1 && dims[0].b == 0 && !ta && dims[0].a == m * ka) {
    d.m = matrix(m, dims[0].size);
    dims.clear();
  }
  FERRITE_CHECK(dims.size() <= static_cast<std::size_t>(kMaxGemmBatchDims), Unsupported, name, ": operands ",
                a.description(), " and ", b.description(), " need ", dims.size(),
                " separate batch dims after merging; at most ", kMaxGemmBatchDims, " are supported");
  d.batch_rank = static_cast<int>(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    d.batch_sizes[i] = dims[i].size;
    d.stride_a[i] = dims[i].a;
    d.stride_b[i] = dims[i].b;
    d.stride_c[i] = dims[i].c;
  }
  return plan;
}

bool overlaps(const Tensor& x, const Tensor& y) { return frontend::may_overlap(x, y); }

// An out= tensor for the product `plan` of a and b: defined, on their device, of the result's
// dtype and shape, sharing no memory with them.
void check_out(const char* name, const Tensor& out, const Plan& plan, const Tensor& a, const Tensor& b) {
  frontend::check_defined(name, {&out});
  FERRITE_CHECK(out.device() == a.device(), DeviceMismatch, name, ": out is ", out.description(),
                " but the operands are on ", a.device().str());
  FERRITE_CHECK(out.dtype() == plan.desc.output, DTypeMismatch, name, ": out is ", out.description(),
                ", expected dtype ", dtype_name(plan.desc.output), " (operands ", a.description(), ", ",
                b.description(), ")");
  FERRITE_CHECK(out.shape() == plan.out_shape, ShapeMismatch, name, ": out is ", out.description(),
                ", expected shape ", shape_str(plan.out_shape), " (operands ", a.description(), ", ",
                b.description(), ")");
  FERRITE_CHECK(!overlaps(out, a) && !overlaps(out, b), InvalidArgument, name, ": out ", out.description(),
                " overlaps an operand (", a.description(), ", ", b.description(), ")");
}

// An operand as the backend multiplies it: F32 computed through BF16/F16 is rounded once with
// the ordinary cast.
Buffer operand(const Tensor& t, DType input) { return t.dtype() == input ? t.buffer() : t.to(input).buffer(); }

void run(const GemmDesc& desc, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  backend(out.device()).matmul_ops().gemm(desc, operand(a, desc.input), operand(b, desc.input), out.buffer());
}

Tensor product(Op op, const Tensor& a, const Tensor& b, const MatmulOptions& options) {
  const Plan plan = plan_product(op, a, b, options);
  Tensor out = frontend::allocate(plan.out_shape, plan.desc.output, a.device());
  run(plan.desc, a, b, out);
  return out;
}

void check_rank(Op op, const Tensor& t, const char* which, std::int64_t rank) {
  FERRITE_CHECK(t.dim() == rank, ShapeMismatch, name_of(op), ": ", which, " must be ", rank, "-D, got ",
                t.description());
}

}  // namespace

void set_allow_tf32(bool allow) { g_allow_tf32.store(allow, std::memory_order_relaxed); }
bool allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }

Tensor matmul(const Tensor& a, const Tensor& b, const MatmulOptions& options) {
  return product(Op::Matmul, a, b, options);
}

const Tensor& matmul_out(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta,
                         const MatmulOptions& options) {
  Plan plan = plan_product(Op::Matmul, a, b, options);
  check_out("matmul", out, plan, a, b);
  plan.desc.alpha = alpha;
  plan.desc.beta = beta;
  // A strided out, or a contiguous one off the 16-byte grid, gets the product through a dense
  // stand-in (holding out's values when beta != 0 reads them).
  const frontend::WriteWindow window("matmul", out, plan.desc.beta != 0);
  run(plan.desc, a, b, window.tensor());
  window.finish();
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b, const MatmulOptions& options) {
  frontend::check_defined("bmm", {&a, &b});
  check_rank(Op::Bmm, a, "a", 3);
  check_rank(Op::Bmm, b, "b", 3);
  FERRITE_CHECK(a.size(0) == b.size(0), ShapeMismatch, "bmm: batch sizes differ: a ", a.description(), ", b ",
                b.description(), " (bmm does not broadcast; matmul does)");
  return product(Op::Bmm, a, b, options);
}

Tensor dot(const Tensor& a, const Tensor& b, const MatmulOptions& options) {
  frontend::check_defined("dot", {&a, &b});
  check_rank(Op::Dot, a, "a", 1);
  check_rank(Op::Dot, b, "b", 1);
  return product(Op::Dot, a, b, options);
}

Tensor mv(const Tensor& a, const Tensor& x, const MatmulOptions& options) {
  frontend::check_defined("mv", {&a, &x});
  check_rank(Op::Mv, a, "the matrix", 2);
  check_rank(Op::Mv, x, "the vector", 1);
  return product(Op::Mv, a, x, options);
}

Tensor vm(const Tensor& x, const Tensor& b, const MatmulOptions& options) {
  frontend::check_defined("vm", {&x, &b});
  check_rank(Op::Vm, x, "the vector", 1);
  check_rank(Op::Vm, b, "the matrix", 2);
  return product(Op::Vm, x, b, options);
}

}  // namespace ferrite

namespace ferrite {

Tensor mm(const Tensor& a, const Tensor& b, const MatmulOptions& options) {
  frontend::check_defined("mm", {&a, &b});
  FERRITE_CHECK(a.dim() == 2 && b.dim() == 2, InvalidArgument, "mm: operands must be matrices (2-D), got ",
                a.description(), " and ", b.description(), " (matmul takes other ranks)");
  return matmul(a, b, options);
}

}  // namespace ferrite

// ---- linear: matmul with transpose_b, a bias added before the one rounding, and a residual ----

namespace ferrite {
namespace {

struct LinearPlan {
  Plan product;                    // x · weightᵀ, batch dims of x folded into m
  std::optional<Tensor> bias;      // engaged only for a defined bias
  std::optional<Tensor> residual;  // engaged only for a defined residual
};

LinearPlan plan_linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                       const nn::LinearOptions& options) {
  const char* name = name_of(Op::Linear);
  frontend::check_defined(name, {&x, &weight});
  FERRITE_CHECK(weight.dim() == 2, ShapeMismatch, name, ": weight must be 2-D [out_features, in_features], got ",
                weight.description(), " (input ", x.description(), ")");
  LinearPlan p;
  p.product = plan_product(Op::Linear, x, weight,
                           {.transpose_b = true, .out_dtype = options.out_dtype, .compute = options.compute});
  const DType result = p.product.desc.output;
  if (bias && bias->defined()) {
    const Tensor& b = *bias;
    frontend::check_same_device(name, {&x, &b});
    // x's dtype, or the result's: an F32 bias of a BF16 layer with an F32 output is added
    // exactly as a BF16 one would be (both widen to the F32 accumulation).
    FERRITE_CHECK(b.dtype() == x.dtype() || b.dtype() == result, DTypeMismatch, name, ": bias is ", b.description(),
                  ", expected dtype ", dtype_name(x.dtype()), result != x.dtype() ? " or " : "",
                  result != x.dtype() ? dtype_name(result) : "", " (input ", x.description(), ", weight ",
                  weight.description(), ")");
    FERRITE_CHECK(b.dim() == 1 && b.size(0) == weight.size(0), ShapeMismatch, name, ": bias is ", b.description(),
                  ", expected [", weight.size(0), "], one per output feature (input ", x.description(),
                  ", weight ", weight.description(), ")");
    p.bias = b;
  }
  if (options.residual && options.residual->defined()) {
    const Tensor& r = *options.residual;
    FERRITE_CHECK(r.device() == x.device(), DeviceMismatch, name, ": residual is ", r.description(),
                  " but the input is on ", x.device().str());
    FERRITE_CHECK(r.dtype() == result, DTypeMismatch, name, ": residual is ", r.description(),
                  ", expected the result's dtype ", dtype_name(result), " (input ", x.description(), ", weight ",
                  weight.description(), ")");
    FERRITE_CHECK(r.shape() == p.product.out_shape, ShapeMismatch, name, ": residual is ", r.description(),
                  ", expected the result's shape ", shape_str(p.product.out_shape), " (input ", x.description(),
                  ", weight ", weight.description(), ")");
    p.residual = r;
  }
  return p;
}

// out = x · weightᵀ + bias into a dense, 16-byte aligned out. The backend fuses the bias into
// the GEMM where it can (cuBLASLt's bias epilogue); otherwise out is filled with the broadcast
// bias and the product accumulated onto it (beta = 1), PyTorch's addmm fallback: the sum is
// still formed in the accumulation precision and rounded once.
//
// With a residual (`residual` not null; it is out itself when `in_place`) the sum is
// residual + x · weightᵀ + bias. Fused (cuBLASLt: the residual is C, out is D), all three meet
// in the accumulation precision. Otherwise out starts as the residual, the bias is added to it
// in out's dtype, and the product is accumulated onto that with beta = 1: residual + bias is
// rounded once before the product joins (exact for most F32 values, one half-precision
// rounding for F16/BF16 results, within their tolerance).
void run_linear(const LinearPlan& p, const Tensor& x, const Tensor& weight, const Tensor& out,
                const Tensor* residual = nullptr, bool in_place = false) {
  if (!p.bias && !residual) return run(p.product.desc, x, weight, out);
  if (out.numel() == 0) return;
  GemmDesc desc = p.product.desc;
  MatmulOps& ops = backend(out.device()).matmul_ops();
  const Buffer a = operand(x, desc.input), b = operand(weight, desc.input);
  if (!residual) {
    if (desc.k > 0 && ops.gemm_bias(desc, a, b, p.bias->buffer(), out.buffer())) return;
    out.copy_(*p.bias);
    desc.beta = 1;
    ops.gemm(desc, a, b, out.buffer());
    return;
  }
  desc.beta = 1;
  if (desc.k > 0) {
    const Buffer d = out.buffer();
    const Buffer r = in_place ? d : residual->buffer();
    const std::optional<Buffer> bias_buffer = p.bias ? std::optional<Buffer>(p.bias->buffer()) : std::nullopt;
    if (ops.gemm_residual(desc, a, b, bias_buffer ? &*bias_buffer : nullptr, r, d)) return;
  }
  if (!in_place) out.copy_(*residual);
  if (p.bias) out.add_(p.bias->dtype() == out.dtype() ? *p.bias : p.bias->to(out.dtype()));
  if (desc.k > 0) ops.gemm(desc, a, b, out.buffer());  // k = 0: the product adds nothing
}

// Whether out and r are the same view: one storage address, shape and strides (linear_out
// into its own residual, accumulated in place).
bool same_view(const Tensor& out, const Tensor& r) {
  return out.dtype() == r.dtype() && out.device() == r.device() && out.shape() == r.shape() &&
         out.strides() == r.strides() && out.data_ptr() == r.data_ptr();
}

}  // namespace

namespace nn {

Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias, const LinearOptions& options) {
  const LinearPlan p = plan_linear(x, weight, bias, options);
  Tensor out = frontend::allocate(p.product.out_shape, p.product.desc.output, x.device());
  run_linear(p, x, weight, out, p.residual ? &*p.residual : nullptr);
  return out;
}

const Tensor& linear_out(const Tensor& out, const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                         const LinearOptions& options) {
  const LinearPlan p = plan_linear(x, weight, bias, options);
  check_out("linear", out, p.product, x, weight);
  FERRITE_CHECK(!p.bias || !overlaps(out, *p.bias), InvalidArgument, "linear: out ", out.description(),
                " overlaps the bias ", p.bias ? p.bias->description() : std::string());
  // The residual is read while out is written: only out being the residual itself (each
  // element read before its own write) is safe.
  const bool into_residual = p.residual && out.numel() > 0 && same_view(out, *p.residual);
  FERRITE_CHECK(!p.residual || into_residual || !overlaps(out, *p.residual), InvalidArgument, "linear: out ",
                out.description(), " overlaps the residual ", p.residual ? p.residual->description() : std::string(),
                " (out may only be the residual tensor itself)");
  const Tensor* residual = p.residual ? &*p.residual : nullptr;
  // Through a dense stand-in where out's buffer() is not out itself. The stand-in is never
  // read (the bias, the residual or the product writes it first), except when out is the
  // residual: then it starts with out's values and is the residual read.
  const frontend::WriteWindow window("linear", out, into_residual);
  run_linear(p, x, weight, window.tensor(), into_residual ? &window.tensor() : residual, into_residual);
  window.finish();
  return out;
}

}  // namespace nn
}  // namespace ferrite

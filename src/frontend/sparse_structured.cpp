// Front end of 2:4 semi-structured sparsity (ferrite/sparse.hpp: prune_24, compress_24,
// matmul_24, linear_24): dtype and shape rules, the pattern check, and the operand layouts
// handed to the backend (cuSPARSELt on CUDA, a dense loop on the CPU).
#include <string>

#include "ferrite/backend.hpp"
#include "ferrite/backend_families/sparse_ops.hpp"
#include "ferrite/factories.hpp"
#include "ferrite/operators.hpp"
#include "ferrite/reduction.hpp"
#include "ferrite/sparse.hpp"
#include "frontend/checks.hpp"

namespace ferrite::sparse {
namespace {

SparseOps& ops_of(Device device) { return backend(device).sparse_ops(); }

// cuSPARSELt's size rules, in elements: a structured (sparse) matrix's rows, cols and leading
// dimension are multiples of 32 bytes, a dense one's of 16 bytes.
std::int64_t sparse_multiple(DType d) { return 32 / static_cast<std::int64_t>(dtype_size(d)); }
std::int64_t dense_multiple(DType d) { return 16 / static_cast<std::int64_t>(dtype_size(d)); }

void check_matrix(const char* op, const char* what, const Tensor& t) {
  frontend::check_defined(op, {&t});
  FERRITE_CHECK(t.dim() == 2, ShapeMismatch, op, ": ", what, " must be a 2-D matrix, got ", t.description());
  (void)structured_group(t.dtype());  // Unsupported for other dtypes
}

void require_available(const char* op, Device device) {
  std::string reason;
  FERRITE_CHECK(structured_available(device, &reason), Unsupported, op, ": ", reason);
}

// A dense operand of a product: its dtype, device and the dense rule for `dim`.
void check_dense_operand(const char* op, const char* what, const Tensor& t, const Sparse24Matrix& s) {
  frontend::check_defined(op, {&t});
  FERRITE_CHECK(s.defined(), InvalidArgument, op, ": the structured matrix is undefined");
  FERRITE_CHECK(t.device() == s.device(), DeviceMismatch, op, ": ", what, " is ", t.description(), " but the structured matrix is ",
                s.description());
  FERRITE_CHECK(t.dtype() == s.dtype(), DTypeMismatch, op, ": ", what, " is ", t.description(),
                " but the structured matrix is ", s.description(), " (one dtype)");
  FERRITE_CHECK(t.dim() == 2, ShapeMismatch, op, ": ", what, " must be a 2-D matrix, got ", t.description());
}

}  // namespace

std::string Sparse24Matrix::description() const {
  if (!defined()) return "undefined structured matrix";
  const std::int64_t group = structured_group(dtype());
  return std::to_string(group / 2) + ":" + std::to_string(group) + " " + shape_str(pruned_.shape()) + " " +
         std::string(dtype_name(dtype())) + " " + device().str();
}

std::int64_t structured_group(DType dtype) {
  switch (dtype) {
    case DType::F16:
    case DType::BF16: return 4;
    case DType::F32: return 2;
    default:
      FERRITE_THROW(Unsupported, "sparse: structured (2:4) sparsity takes F16, BF16 or F32 (TF32 compute), not ",
                    dtype_name(dtype));
  }
}

bool structured_available(Device device, std::string* reason) {
  const std::string why = ops_of(device).structured_unavailable();
  if (reason) *reason = why;
  return why.empty();
}

Tensor prune_24(const Tensor& dense) {
  const char* op = "sparse::prune_24";
  check_matrix(op, "the input", dense);
  const std::int64_t group = structured_group(dense.dtype()), rows = dense.size(0), cols = dense.size(1);
  FERRITE_CHECK(cols % group == 0, ShapeMismatch, op, ": the row length (", cols, ") of ", dense.description(),
                " must be a multiple of the group of ", group, " (", group / 2, ":", group, " for ",
                dtype_name(dense.dtype()), ")");
  Tensor out = frontend::allocate({rows, cols}, dense.dtype(), dense.device());
  if (out.numel() > 0)
    ops_of(dense.device()).prune_structured(dense.buffer(), out.buffer(), rows, cols, static_cast<int>(group));
  return out;
}

Sparse24Matrix compress_24(const Tensor& pruned) {
  const char* op = "sparse::compress_24";
  check_matrix(op, "the input", pruned);
  const DType d = pruned.dtype();
  const std::int64_t group = structured_group(d), multiple = sparse_multiple(d), rows = pruned.size(0),
                     cols = pruned.size(1);
  FERRITE_CHECK(rows % multiple == 0 && cols % multiple == 0, ShapeMismatch, op, ": ", pruned.description(),
                " breaks cuSPARSELt's rule for the sparse operand: rows and cols must be multiples of ", multiple,
                " for ", dtype_name(d), " (32 bytes)");
  const Tensor dense = pruned.contiguous();
  if (dense.numel() == 0) return Sparse24Matrix(dense.clone(), Tensor());
  // The pattern, checked on the device: nonzeros per group (x != 0, so NaN counts), one flag read back.
  const Tensor per_group = sum((dense != 0).reshape({rows, cols / group, group}), 2);  // I64 counts
  const Tensor over = per_group > Scalar(group / 2);
  if (any(over).item<bool>()) {
    const auto first = argmax(over.reshape({-1}).to(DType::I32)).item<std::int64_t>();
    const std::int64_t row = first / (cols / group), col = first % (cols / group) * group;
    FERRITE_THROW(InvalidArgument, op, ": row ", row, ", elements ", col, "..", col + group - 1, " of ",
                  pruned.description(), " hold more than ", group / 2, " nonzeros (the ", group / 2, ":", group,
                  " pattern of ", dtype_name(d), "); prune it first with sparse::prune_24");
  }
  SparseOps& ops = ops_of(dense.device());
  require_available(op, dense.device());
  Tensor kept = dense.clone();  // the matrix owns its pruned form (the input may change later)
  const std::size_t bytes = ops.structured_compressed_bytes(kept.buffer(), rows, cols);
  Tensor compressed;
  if (bytes > 0) {
    compressed = frontend::allocate({static_cast<std::int64_t>((bytes + 3) / 4)}, DType::I32, dense.device());
    ops.compress_structured(kept.buffer(), compressed.buffer(), rows, cols);
  }
  return Sparse24Matrix(std::move(kept), std::move(compressed));
}

Tensor decompress_24(const Sparse24Matrix& a) {
  FERRITE_CHECK(a.defined(), InvalidArgument, "sparse::decompress_24: the structured matrix is undefined");
  return a.pruned().clone();
}

Tensor matmul_24(const Sparse24Matrix& a, const Tensor& b) {
  const char* op = "sparse::matmul_24";
  check_dense_operand(op, "B", b, a);
  const std::int64_t m = a.rows(), k = a.cols(), n = b.size(1), multiple = dense_multiple(a.dtype());
  FERRITE_CHECK(b.size(0) == k, ShapeMismatch, op, ": B is ", b.description(), ", expected [", k, ", n] for A ",
                a.description());
  FERRITE_CHECK(n % multiple == 0, ShapeMismatch, op, ": B is ", b.description(),
                "; cuSPARSELt's rule for dense operands: its column count must be a multiple of ", multiple, " for ",
                dtype_name(a.dtype()), " (16 bytes)");
  if (m == 0 || n == 0) return frontend::allocate({m, n}, a.dtype(), a.device());
  if (k == 0) return zeros({m, n}, a.dtype(), a.device());
  require_available(op, a.device());
  Tensor c = frontend::allocate({m, n}, a.dtype(), a.device());
  // B row-major always (a view is copied once), so a result never depends on B's strides.
  const Tensor& compressed = a.compressed();
  ops_of(a.device()).structured_matmul(a.pruned().buffer(), compressed.defined() ? compressed.buffer() : Buffer(),
                                       b.buffer(), false, c.buffer(), false, m, k, n);
  return c;
}

Tensor linear_24(const Tensor& x, const Sparse24Matrix& w) {
  const char* op = "sparse::linear_24";
  check_dense_operand(op, "x", x, w);
  const std::int64_t n = w.rows(), k = w.cols(), p = x.size(0), multiple = dense_multiple(w.dtype());
  FERRITE_CHECK(x.size(1) == k, ShapeMismatch, op, ": x is ", x.description(), ", expected [p, ", k, "] for W ",
                w.description());
  FERRITE_CHECK(p % multiple == 0, ShapeMismatch, op, ": x is ", x.description(),
                "; cuSPARSELt's rule for dense operands: its row count must be a multiple of ", multiple, " for ",
                dtype_name(w.dtype()), " (16 bytes)");
  if (p == 0 || n == 0) return frontend::allocate({p, n}, w.dtype(), w.device());
  if (k == 0) return zeros({p, n}, w.dtype(), w.device());
  require_available(op, w.device());
  // x Wᵀ = (W xᵀ)ᵀ: W is cuSPARSELt's structured A, xᵀ [k, p] is x read column-major, and the
  // product [n, p] is written column-major, which is [p, n] row-major.
  Tensor out = frontend::allocate({p, n}, w.dtype(), w.device());
  const Tensor& compressed = w.compressed();
  ops_of(w.device()).structured_matmul(w.pruned().buffer(), compressed.defined() ? compressed.buffer() : Buffer(),
                                       x.buffer(), true, out.buffer(), true, n, k, p);
  return out;
}

}  // namespace ferrite::sparse

// The device seam. A Backend runs op families on flat contiguous Buffers with explicit
// extents; the front end (ferrite/ops.hpp) has already validated dtypes, shapes and
// devices, so backends trust their inputs and may only assert.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ferrite/buffer.hpp"
#include "ferrite/device.hpp"
#include "ferrite/dtype.hpp"
#include "ferrite/op.hpp"
#include "ferrite/scalar.hpp"

namespace ferrite {

// The family interfaces of the non-elementwise op groups (ferrite/backend_families/).
class ReductionOps;
class ShapeOps;
class MatmulOps;
class SparseOps;
class ConvOps;
class AttentionOps;
class LinalgOps;
class FftOps;

inline constexpr int kMaxElementwiseDims = 8;
inline constexpr int kMaxElementwiseInputs = 3;

/// How the inputs of an elementwise op map onto its contiguous output. The front end
/// merges adjacent dims that are contiguous for every operand, so [65536, 4096] + [4096]
/// arrives as rank 2 and a plain a + b as rank 1 with `contiguous` set.
struct ElementwiseLayout {
  int rank = 1;
  int num_inputs = 0;
  std::int64_t numel = 0;
  std::array<std::int64_t, kMaxElementwiseDims> sizes{};  // outermost first
  /// Element strides of each input over `sizes`; 0 where the input is broadcast.
  std::array<std::array<std::int64_t, kMaxElementwiseDims>, kMaxElementwiseInputs> strides{};
  /// Every input is laid out exactly like the output (no broadcasting at all).
  bool contiguous = true;
};

/// Scalar parameters of a unary op or its backward: the exponent of pow, the factor of
/// scale, the bounds of clamp (alpha = min, beta = max; NaN = no bound), alpha of elu.
struct UnaryParams {
  double alpha = 0;
  double beta = 0;
};

/// Counters of a device allocator. Bytes are what callers asked for.
struct MemoryStats {
  std::int64_t in_use_bytes = 0;     // allocated and not yet freed
  std::int64_t peak_bytes = 0;       // highest in_use_bytes since start (or reset)
  std::int64_t reserved_bytes = 0;   // held by the allocator, in use or cached
  std::int64_t allocations = 0;      // number of successful allocations
  std::int64_t live_allocations = 0; // allocations not yet freed
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual DeviceKind kind() const = 0;
  virtual std::string name() const = 0;
  virtual int device_count() const = 0;
  /// Whether `op` runs on this backend for `dtype` (the input dtype; for casts, either end).
  /// Ops outside the elementwise group are answered by their family object.
  virtual bool supports(Op op, DType dtype) const = 0;

  // ---- memory and transfers ----
  virtual std::shared_ptr<Storage> allocate(std::size_t bytes, Device device) = 0;
  virtual MemoryStats memory_stats(Device device) const = 0;
  /// Host memory -> `dst` (on this backend). Returns when `src` may be reused.
  virtual void copy_from_host(const void* src, const Buffer& dst, std::size_t bytes) = 0;
  /// `src` (on this backend) -> host memory. Returns when the data has arrived.
  virtual void copy_to_host(const Buffer& src, void* dst, std::size_t bytes) = 0;
  /// Device-to-device copy of src.nbytes() bytes; the devices may differ (same backend).
  virtual void copy(const Buffer& src, const Buffer& dst) = 0;
  virtual void fill(const Buffer& out, Scalar value) = 0;
  /// out[i] = start + i * step, converted to out's dtype.
  virtual void arange(const Buffer& out, double start, double step) = 0;
  virtual void synchronize(Device device) = 0;

  // ---- op families ----
  /// Element-by-element conversion from x's dtype to out's dtype over `layout` (one input):
  /// out is contiguous; x is read through the layout's strides, relative to x's first element.
  virtual void cast(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout) = 0;
  /// out = op(x) over `layout` (one input): out is contiguous; x is read through the layout's
  /// strides, relative to x's first element (a view costs no copy). out's dtype is x's, or
  /// F32 for an F16/BF16 x under relu and sigmoid (mixed precision: computed in float,
  /// rounded once to F32).
  virtual void unary(Op op, const Buffer& x, const Buffer& out, const UnaryParams& params,
                     const ElementwiseLayout& layout) = 0;
  /// Backward of an activation: out = grad * op'(x), where x is the forward input (the
  /// forward output for sigmoid and tanh). grad, x and out have one dtype and numel; out is
  /// contiguous, grad (input 0) and x (input 1) are read through `layout`'s strides.
  virtual void unary_backward(Op op, const Buffer& grad, const Buffer& x, const Buffer& out,
                              const UnaryParams& params, const ElementwiseLayout& layout) = 0;
  /// Binary and compare ops. out's dtype is the operands' for arithmetic, Bool for
  /// compare ops, or F32 for F16/BF16 operands of add/sub/mul/div (mixed precision).
  virtual void binary(Op op, const Buffer& a, const Buffer& b, const Buffer& out,
                      const ElementwiseLayout& layout) = 0;
  /// out = cond ? x : y with a Bool cond; the layout's inputs are (cond, x, y). x, y and
  /// out share one dtype; values are moved bit for bit.
  virtual void where(const Buffer& cond, const Buffer& x, const Buffer& y, const Buffer& out,
                     const ElementwiseLayout& layout) = 0;
  /// Whether a floating x holds any Inf or NaN. Waits for the answer (one flag read back).
  virtual bool has_inf_nan(const Buffer& x) = 0;

  // ---- the other op groups, one interface object each ----
  virtual ReductionOps& reductions() = 0;
  virtual ShapeOps& shape_ops() = 0;
  virtual MatmulOps& matmul_ops() = 0;
  virtual SparseOps& sparse_ops() = 0;
  virtual ConvOps& conv_ops() = 0;
  virtual AttentionOps& attention_ops() = 0;
  virtual LinalgOps& linalg_ops() = 0;
  virtual FftOps& fft_ops() = 0;
};

// ---- registry ----

/// Installs `backend` for its device kind, replacing any earlier one. Thread-safe.
void register_backend(std::shared_ptr<Backend> backend);
/// The backend that runs ops on `device`. Registers the defaults on first use (the CPU
/// backend always, CUDA when a GPU is present). Throws Unsupported when no backend serves
/// the device kind and InvalidArgument when the device index does not exist.
Backend& backend(Device device);
/// Names of the registered backends ("cpu", "cuda").
std::vector<std::string> registered_backends();
/// Whether `op` is available for `dtype` on `device`'s backend (false when none).
bool supports(Op op, DType dtype, Device device = Device::cpu());
/// Number of CUDA devices usable by ferrite (0 without the CUDA backend or a GPU).
int cuda_device_count();
/// Waits for all queued work on `device`.
void synchronize(Device device);
MemoryStats memory_stats(Device device);

}  // namespace ferrite

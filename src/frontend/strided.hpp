// The front end's strided-tensor steps: copying between views, the stride arithmetic of
// view/reshape, and the checks in-place ops make before writing through a view.
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include "ferrite/backend_families/shape_ops.hpp"
#include "ferrite/tensor.hpp"

namespace ferrite::frontend {

/// dst[i] = src[i] for every multi-index i: one strided read into one strided write on the
/// tensors' device. Same shape, dtype and device (the caller checked); dst must not address
/// an element twice. Dims are merged where both sides allow, so most copies reach the
/// backend as rank 1 or 2.
void copy_elements(const Tensor& src, const Tensor& dst);

/// out = x converted to out's dtype; out is contiguous with x's shape. A strided x is read
/// through its strides (or a dense copy where elementwise_operand says so).
void cast_elements(const Tensor& x, const Tensor& out);

/// The strides that give `target` (same numel) over the elements of a tensor of `shape` and
/// `strides` without moving them, or nothing when no such strides exist (torch.view's rule).
std::optional<Strides> view_strides(const Shape& shape, const Strides& strides, const Shape& target);

/// Whether a view of `shape` and `strides` addresses each element at most once (a sufficient
/// test: sorted by stride, each stride exceeds the span of the smaller ones; size-1 and
/// empty views always pass).
bool addresses_each_element_once(const Shape& shape, const Strides& strides);

/// Throws InvalidArgument naming `op` when `t` cannot be written in place: an expanded or
/// otherwise self-overlapping view (PyTorch: "unsupported operation: more than one element of
/// the written-to tensor refers to a single memory location").
void check_writable(const char* op, const Tensor& t);

/// Whether two tensors may share elements (the same storage and intersecting element ranges).
bool may_overlap(const Tensor& a, const Tensor& b);

/// Whether t.buffer() is t's own memory, so that a backend reading or writing through it
/// reaches t: t is dense and its first element on the 16-byte grid Buffer promises (for any
/// other tensor buffer() is an aligned copy). Empty tensors count as their own (nothing to
/// reach).
bool buffer_is_own(const Tensor& t);

/// Where a backend writes a result meant for `target` (a tensor the caller gave): target
/// itself when buffer_is_own(target), else a new dense, aligned tensor, holding target's values
/// first when `read_first` (an accumulating write), that finish() copies into target through
/// its strides. Without it, a result written to a view's buffer() lands in a copy and is lost.
/// The target must stay alive until finish(); a self-overlapping target is refused (op names
/// the call).
class WriteWindow {
 public:
  WriteWindow(const char* op, const Tensor& target, bool read_first);
  /// What the backend writes: target, or the dense stand-in.
  const Tensor& tensor() const { return dense_.defined() ? dense_ : *target_; }
  /// Copies the stand-in's values into target (nothing when the backend wrote target itself).
  void finish() const;

 private:
  const Tensor* target_;
  Tensor dense_;
};

/// For the elementwise engines, which read each operand through its strides: `t` itself, or a
/// dense copy where a direct read is impossible or slower (a view of more than
/// kMaxElementwiseDims dims; consecutive elements kScatteredStrideBytes or more apart, as in a
/// transposed operand, unless the whole layout suits the GPU engine's transposing tile:
/// see elementwise_operands).
Tensor elementwise_operand(const Tensor& t);
/// The operands of an elementwise op over `out_shape`, each read directly or made dense as
/// elementwise_operand says, except when the operands as given form a layout that
/// uses_transpose_tile accepts (x.t() + y): then all are read directly.
std::vector<Tensor> elementwise_operands(const Shape& out_shape, std::initializer_list<const Tensor*> operands,
                                         const char* op);
/// The Buffer an elementwise engine reads `t` through: from t's first element to the last
/// element its strides reach (t.buffer() for a contiguous tensor).
Buffer strided_buffer(const Tensor& t);

/// When t's elements fill a dense block of memory in some order of its dims (a transpose or
/// permutation of a contiguous tensor, possibly at an offset): the dims in memory order,
/// outermost first, so that t.permute(order) is contiguous. Nothing for other tensors (gaps
/// or overlaps) and for contiguous ones.
std::optional<std::vector<std::int64_t>> memory_order(const Tensor& t);
/// The inverse permutation: t.permute(order).permute(inverse_permutation(order)) is t.
std::vector<std::int64_t> inverse_permutation(const std::vector<std::int64_t>& order);

/// The StridedView of a tensor relative to its storage's first element (rank <= kMaxViewDims).
StridedView storage_view(const Tensor& t);
/// A Buffer spanning the whole storage of `t` (offset 0), for use with storage_view.
Buffer storage_buffer(const Tensor& t);

}  // namespace ferrite::frontend

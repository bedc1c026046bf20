// The CUDA backend's ShapeOps: plans each op on the host (merging dims, widening elements
// to 16-byte units where the layout allows, picking the kernel) and queues the kernels of
// src/cuda/shape/*.cu on the device's current stream. Index errors are found from one
// (min, max) pair read back per call; see docs/families/shape.md.
#include <cstring>
#include <optional>

#include "cuda/cuda_families.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/device_context.hpp"
#include "cuda/shape/shape_kernels.hpp"
#include "cuda/shape/shape_runtime.hpp"

namespace ferrite::cuda {
namespace {

cudaStream_t stream_of(const Buffer& b) { return DeviceContext::get(b.device().index).current_stream(); }

/// Drops size-1 dims and merges neighbours that are contiguous in both views, then widens
/// the element when the innermost dim is contiguous in both and everything divides.
shape::CopyPlan plan_copy(const Buffer& src, const StridedView& sv, const Buffer& dst, const StridedView& dv) {
  shape::CopyPlan p;
  p.elem_bytes = static_cast<int>(dtype_size(src.dtype()));
  p.src_offset = sv.offset;
  p.dst_offset = dv.offset;
  p.numel = 1;
  for (int k = 0; k < sv.rank; ++k) {
    p.numel *= sv.sizes[k];
    if (sv.sizes[k] == 1) continue;
    if (p.rank > 0 && sv.strides[k] * sv.sizes[k] == p.src_strides[p.rank - 1] &&
        dv.strides[k] * sv.sizes[k] == p.dst_strides[p.rank - 1]) {
      // dim k is the inner continuation of the previous kept dim: fold it in.
      p.sizes[p.rank - 1] *= sv.sizes[k];
      p.src_strides[p.rank - 1] = sv.strides[k];
      p.dst_strides[p.rank - 1] = dv.strides[k];
      continue;
    }
    p.sizes[p.rank] = sv.sizes[k];
    p.src_strides[p.rank] = sv.strides[k];
    p.dst_strides[p.rank] = dv.strides[k];
    ++p.rank;
  }
  if (p.rank == 0) {
    p.rank = 1;
    p.sizes[0] = 1;
    p.src_strides[0] = p.dst_strides[0] = 1;
  }
  const int last = p.rank - 1;
  if (p.src_strides[last] != 1 || p.dst_strides[last] != 1) return p;
  const auto src_addr = reinterpret_cast<std::uintptr_t>(src.data());
  const auto dst_addr = reinterpret_cast<std::uintptr_t>(dst.data());
  for (int w = 16; w > p.elem_bytes; w /= 2) {
    const std::int64_t f = w / p.elem_bytes;
    bool ok = p.sizes[last] % f == 0 && p.src_offset % f == 0 && p.dst_offset % f == 0 && src_addr % w == 0 &&
              dst_addr % w == 0;
    for (int k = 0; ok && k < last; ++k) ok = p.src_strides[k] % f == 0 && p.dst_strides[k] % f == 0;
    if (!ok) continue;
    p.sizes[last] /= f;
    for (int k = 0; k < last; ++k) {
      p.src_strides[k] /= f;
      p.dst_strides[k] /= f;
    }
    p.src_offset /= f;
    p.dst_offset /= f;
    p.numel /= f;
    p.elem_bytes = w;
    break;
  }
  return p;
}

class CudaShapeOps final : public ShapeOps {
 public:
  bool supports(Op op, DType dtype) const override {
    if (op_group(op) != OpGroup::Shape) return false;
    if (op == Op::ScatterAdd || op == Op::EmbeddingBackward) return is_floating(dtype) || is_integral(dtype);
    return true;  // data movement: every dtype, by element size
  }

  void copy_view(const Buffer& src, const StridedView& sv, const Buffer& dst, const StridedView& dv) override {
    DeviceGuard guard(dst.device().index);
    const cudaStream_t stream = stream_of(dst);
    const shape::CopyPlan p = plan_copy(src, sv, dst, dv);
    const int last = p.rank - 1;
    if (p.rank == 1 && p.src_strides[0] == 1 && p.dst_strides[0] == 1) {
      FERRITE_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst.data()) + p.dst_offset * p.elem_bytes,
                                         static_cast<const char*>(src.data()) + p.src_offset * p.elem_bytes,
                                         static_cast<std::size_t>(p.numel) * p.elem_bytes, cudaMemcpyDeviceToDevice,
                                         stream));
      return;
    }
    if (p.dst_strides[last] == 1 && p.src_strides[last] != 1) {
      for (int a = 0; a < last; ++a)
        if (p.src_strides[a] == 1) return shape::tiled_transpose(src.data(), dst.data(), p, a, stream);
    }
    shape::strided_copy(src.data(), dst.data(), p, stream);
  }

  IndexRange index_select(const Buffer& x, const Buffer& index, const Buffer& out, std::int64_t outer,
                          std::int64_t in_dim, std::int64_t out_dim, std::int64_t inner) override {
    const int device = x.device().index;
    DeviceGuard guard(device);
    const cudaStream_t stream = stream_of(x);
    // The index's range is found on a side stream, beside the copy (the index is small next
    // to the rows it picks): the host waits only for the range, and the copy does not wait
    // for it. A small index's range is written by one block straight into pinned memory (no
    // init kernel, no copy). A large index's `range` is allocated on the main stream before
    // the fork, so the side stream sees it allocated; the side stream's work is done before
    // this returns, so `range` is free to go back then.
    std::optional<shape::Scratch> range;
    if (index.numel() > shape::kSmallIndexRange) range.emplace(device, 2 * sizeof(long long), stream);
    const cudaStream_t side = shape::fork_side_stream(device, stream);
    shape::Readback readback;
    if (!range) {
      shape::index_minmax(index, readback.device_slot(device), side);
      readback.record(device, side);
    } else {
      shape::index_minmax(index, range->as<long long>(), side);
      readback.start(range->as<long long>(), 2, device, side);
    }
    shape::index_select(static_cast<int>(dtype_size(x.dtype())), x.data(), index, out.data(), outer, in_dim, out_dim,
                        inner, stream);
    return to_range(readback.wait());
  }

  IndexRange gather(const Buffer& x, const Buffer& index, const Buffer& out, const IndexLayout& layout) override {
    const int device = x.device().index;
    DeviceGuard guard(device);
    const cudaStream_t stream = stream_of(x);
    // The index is as large as the output here: its range is folded into the gather itself
    // rather than read twice.
    shape::Scratch range(device, 2 * sizeof(long long), stream);
    shape::init_range(range.as<long long>(), stream);
    shape::gather(static_cast<int>(dtype_size(x.dtype())), x.data(), index, out.data(), layout, range.as<long long>(),
                  stream);
    shape::Readback readback;
    readback.start(range.as<long long>(), 2, device, stream);
    return to_range(readback.wait());
  }

  IndexRange scatter_add(const Buffer& x, const Buffer& index, const Buffer& src, const Buffer& out,
                         const IndexLayout& layout) override {
    const int device = x.device().index;
    DeviceGuard guard(device);
    const cudaStream_t stream = stream_of(x);
    if (out.nbytes() > 0)
      FERRITE_CUDA_CHECK(cudaMemcpyAsync(out.data(), x.data(), out.nbytes(), cudaMemcpyDeviceToDevice, stream));
    return sum_into(x.dtype(), index, src, out, layout, x.numel(), 1, device, stream);
  }

  IndexRange embedding_backward(const Buffer& grad, const Buffer& index, const Buffer& out, std::int64_t num_rows,
                                std::int64_t width) override {
    const int device = grad.device().index;
    DeviceGuard guard(device);
    const cudaStream_t stream = stream_of(grad);
    if (out.nbytes() > 0) FERRITE_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, out.nbytes(), stream));
    IndexLayout rows;  // one index position per grad row, targets are rows of out
    rows.rank = 1;
    rows.dim = 0;
    rows.dim_size = num_rows;
    rows.sizes[0] = index.numel();
    rows.data_strides[0] = rows.src_strides[0] = 1;
    return sum_into(grad.dtype(), index, grad, out, rows, num_rows, width, device, stream);
  }

  Buffer masked_select(const Buffer& x, const Buffer& mask,
                       const std::function<Buffer(std::int64_t)>& allocate_out) override {
    const int device = x.device().index;
    DeviceGuard guard(device);
    return shape::masked_select(x, mask, allocate_out, device, stream_of(x));
  }

  std::int64_t masked_scatter(const Buffer& x, const Buffer& mask, const Buffer& source, const Buffer& out) override {
    const int device = x.device().index;
    DeviceGuard guard(device);
    return shape::masked_scatter(x, mask, source, out, device, stream_of(x));
  }

 private:
  static IndexRange to_range(const std::int64_t* values) { return IndexRange{values[0], values[1]}; }

  static IndexRange sum_into(DType dtype, const Buffer& index, const Buffer& src, const Buffer& out,
                             const IndexLayout& layout, std::int64_t num_targets, std::int64_t width, int device,
                             cudaStream_t stream) {
    if (index.numel() == 0) return IndexRange{};
    shape::Scratch range(device, 2 * sizeof(long long), stream);
    shape::init_range(range.as<long long>(), stream);
    if (width > 0)
      shape::scatter_sum(dtype, index, src.data(), out.data(), layout, num_targets, width, range.as<long long>(), device,
                         stream);
    else
      shape::index_minmax(index, range.as<long long>(), stream);  // nothing to add, but the indices are still checked
    shape::Readback readback;
    readback.start(range.as<long long>(), 2, device, stream);
    return to_range(readback.wait());
  }
};

}  // namespace

std::unique_ptr<ShapeOps> make_cuda_shape_ops() { return std::make_unique<CudaShapeOps>(); }

}  // namespace ferrite::cuda

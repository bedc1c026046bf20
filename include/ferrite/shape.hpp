// Shape and indexing ops (issue #5).
// Validation happens here (src/frontend/shape*.cpp, src/frontend/index*.cpp); backends
// receive checked Buffers. Every op works for every dtype unless it adds values
// (scatter_add, embedding_backward: real numeric dtypes). Results are new contiguous
// tensors, except the views (transpose, permute, split, chunk, slice_read share x's storage,
// as in PyTorch; .contiguous() or .clone() materialises them) and the in-place
// strided_scatter and slice_write, which write through any view. Dims may be negative
// (counted from the end), as in PyTorch; indices are I32 or I64 and may be negative
// (counted from the end); an index outside [-size, size) is an IndexOutOfRange error.
#pragma once

#include <cstdint>
#include <vector>

#include "ferrite/tensor.hpp"

namespace ferrite {

// ---- shape ops (src/frontend/shape*.cpp) ----

/// x with dims d0 and d1 swapped: a view (x.transpose(d0, d1)); the seed's copying transpose
/// is transpose(x, d0, d1).contiguous().
Tensor transpose(const Tensor& x, std::int64_t d0, std::int64_t d1);
/// out.shape[k] = x.shape[dims[k]]; dims is a permutation of 0..rank-1. A view, as
/// torch.permute (.contiguous() materialises it).
Tensor permute(const Tensor& x, const std::vector<std::int64_t>& dims);
/// Materialises a view of x's storage: out[i] = x.flat[offset + sum_k i_k * strides[k]],
/// out of `shape`. Strides are in elements and may be negative or zero; every addressed
/// element must lie inside x (IndexOutOfRange otherwise). Rank <= 16.
Tensor strided_copy(const Tensor& x, const Shape& shape, const std::vector<std::int64_t>& strides,
                    std::int64_t offset);
/// The inverse, in place: dst.flat[offset + sum_k i_k * strides[k]] = src[i] (src has
/// `shape`'s numel). The view must not address an element twice (InvalidArgument).
void strided_scatter(const Tensor& dst, const Tensor& src, const Shape& shape, const std::vector<std::int64_t>& strides,
                     std::int64_t offset);
/// Concatenation along `dim`; all tensors share dtype, device, rank and the other dims.
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim);
/// torch.stack: the tensors (all of one shape, dtype and device) joined along a new dim
/// `dim` in [-(rank + 1), rank]; a cat of each tensor with a size-1 dim inserted.
Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
/// Pieces of the given sizes along `dim` (they must add up to x.size(dim)), as views of x.
std::vector<Tensor> split(const Tensor& x, const std::vector<std::int64_t>& sizes, std::int64_t dim);
/// torch.chunk: pieces of ceil(size / n) along `dim`, the last one smaller, as views of x;
/// may return fewer than n pieces.
std::vector<Tensor> chunk(const Tensor& x, std::int64_t n, std::int64_t dim);
/// torch Tensor.repeat: tiles x reps[k] times along dim k; reps may be longer than the rank
/// (leading dims are added).
Tensor repeat(const Tensor& x, const std::vector<std::int64_t>& reps);
/// torch.roll along one dim: out[(j + shift) mod n] = x[j]; any signed shift.
Tensor roll(const Tensor& x, std::int64_t shift, std::int64_t dim);
/// KV cache: cache is [batch, max_len, ...], src is [batch, ...]; writes src into position
/// `pos` of dim 1, in place.
void slice_write(const Tensor& cache, const Tensor& src, std::int64_t pos);
/// The first `len` positions of dim 1 of cache [batch, max_len, ...]: [batch, len, ...], a view
/// of the cache (cache.narrow(1, 0, len)).
Tensor slice_read(const Tensor& cache, std::int64_t len);

// ---- indexing (src/frontend/index*.cpp) ----

/// out = x indexed along `dim` by the 1-D (or rank-0) index: out.shape[dim] = index.numel().
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index);
/// torch.gather: out has index's shape; out[i] = x[i with i_dim replaced by index[i]].
/// index has x's rank and index.size(d) <= x.size(d) for d != dim.
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index);
/// torch.scatter_add (out of place): out = x, then out[i with i_dim replaced by index[i]] +=
/// src[i]. index has x's rank, index.size(d) <= src.size(d) for all d and <= x.size(d) for
/// d != dim. Deterministic: duplicates are added in index order.
Tensor scatter_add(const Tensor& x, std::int64_t dim, const Tensor& index, const Tensor& src);
/// The elements of x where mask (Bool, same shape) is true, as a 1-D tensor of exactly
/// their count (the count is read back to the host: this call waits for the device).
Tensor masked_select(const Tensor& x, const Tensor& mask);
/// torch.masked_scatter: out = x, with the k-th true position of mask (row-major order)
/// taking source.flat[k]; source needs at least as many elements as mask has trues
/// (checked: this call waits for the count).
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);

namespace nn {
/// Rows of weight [num_embeddings, d...] picked by indices of any shape:
/// out.shape = indices.shape + weight.shape[1:].
Tensor embedding(const Tensor& weight, const Tensor& indices);
/// The gradient of embedding with respect to weight: [num_embeddings, d...] zeros with
/// grad's rows added at their indices; duplicate indices are summed in index order
/// (deterministic). grad.shape = indices.shape + [d...].
Tensor embedding_backward(const Tensor& grad, const Tensor& indices, std::int64_t num_embeddings);
}  // namespace nn

}  // namespace ferrite

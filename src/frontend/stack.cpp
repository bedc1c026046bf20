// torch.stack as a cat of reshaped inputs (a reshape shares storage: only cat copies).
#include "ferrite/shape.hpp"
#include "frontend/checks.hpp"

namespace ferrite {

Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
  FERRITE_CHECK(!tensors.empty(), InvalidArgument, "stack: expects a non-empty list of tensors");
  for (const Tensor& t : tensors) frontend::check_defined("stack", {&t});
  const Shape& shape = tensors[0].shape();
  const auto rank = static_cast<std::int64_t>(shape.size());
  for (std::size_t i = 1; i < tensors.size(); ++i)
    FERRITE_CHECK(tensors[i].shape() == shape, ShapeMismatch, "stack: expects each tensor to be equal size, but got ",
                  tensors[0].description(), " at entry 0 and ", tensors[i].description(), " at entry ", i);
  FERRITE_CHECK(dim >= -(rank + 1) && dim <= rank, IndexOutOfRange, "stack: dim ", dim, " is out of range [",
                -(rank + 1), ", ", rank, "] for tensors of ", tensors[0].description());
  if (dim < 0) dim += rank + 1;
  Shape inserted = shape;
  inserted.insert(inserted.begin() + dim, 1);
  std::vector<Tensor> pieces;
  pieces.reserve(tensors.size());
  for (const Tensor& t : tensors) pieces.push_back(t.reshape(inserted));
  return cat(pieces, dim);
}

}  // namespace ferrite

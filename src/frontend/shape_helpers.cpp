#include "frontend/shape_helpers.hpp"

#include "core/extent.hpp"
#include "ferrite/backend.hpp"

namespace ferrite::frontend {

StridedView contiguous_view(const Shape& shape) {
  FERRITE_CHECK(shape.size() <= static_cast<std::size_t>(kMaxViewDims), InvalidArgument, "shape ops: rank ",
                shape.size(), " of shape ", shape_str(shape), " is above ", kMaxViewDims);
  StridedView v;
  v.rank = static_cast<int>(shape.size());
  const auto strides = detail::checked_contiguous_strides(shape, "shape ops");
  for (std::size_t k = 0; k < shape.size(); ++k) {
    v.sizes[k] = shape[k];
    v.strides[k] = strides[k];
  }
  return v;
}

ShapeOps& shape_ops_of(Device device) { return backend(device).shape_ops(); }

}  // namespace ferrite::frontend

#include "frontend/shape_helpers.hpp"

#include "ferrite/backend.hpp"

namespace ferrite::frontend {

std::vector<std::int64_t> contiguous_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t s = 1;
  for (std::size_t k = shape.size(); k-- > 0;) {
    strides[k] = s;
    s *= shape[k];
  }
  return strides;
}

std::int64_t product(const Shape& shape, std::size_t begin, std::size_t end) {
  std::int64_t p = 1;
  for (std::size_t k = begin; k < end; ++k) p *= shape[k];
  return p;
}

StridedView contiguous_view(const Shape& shape) {
  FERRITE_CHECK(shape.size() <= static_cast<std::size_t>(kMaxViewDims), InvalidArgument, "shape ops: rank ",
                shape.size(), " of shape ", shape_str(shape), " is above ", kMaxViewDims);
  StridedView v;
  v.rank = static_cast<int>(shape.size());
  const auto strides = contiguous_strides(shape);
  for (std::size_t k = 0; k < shape.size(); ++k) {
    v.sizes[k] = shape[k];
    v.strides[k] = strides[k];
  }
  return v;
}


ShapeOps& shape_ops_of(Device device) { return backend(device).shape_ops(); }

}  // namespace ferrite::frontend

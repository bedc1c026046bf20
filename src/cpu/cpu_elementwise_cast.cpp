// CPU implementation of the casts between every pair of dtypes (the largest set of
// instantiations of the elementwise engine, so it has its own translation unit).
#include "core/elementwise_dispatch.hpp"
#include "core/elementwise_functors.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_elementwise_engine.hpp"

namespace ferrite::cpu {
namespace {

using detail::visit_dtype;

}  // namespace

void CpuBackend::cast(const Buffer& x, const Buffer& out, const ElementwiseLayout& layout) {
  visit_dtype(x.dtype(), [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    visit_dtype(out.dtype(), [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      run_elementwise(layout, out.data_as<Out>(), detail::CastFn{}, x.data_as<const In>());
    });
  });
}

}  // namespace ferrite::cpu

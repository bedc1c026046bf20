// Reductions, scans, softmax and norms under PyTorch's names and keywords: sum(x, dim=None,
// keepdim=False, dtype=None), x.max(dim) -> (values, indices), ... ferrite/reduction.hpp.
#include "common.hpp"

namespace ferrite::py {

namespace {

using OD = std::optional<DType>;
using OT = std::optional<Tensor>;

Tensor or_undefined(const OT& t) { return t ? *t : Tensor(); }
nb::object or_none(const Tensor& t) { return t.defined() ? nb::cast(t) : nb::none(); }

// sum/mean: dim None (all), an int or a list; dtype= for an F32 result from F16/BF16.
template <class All, class One, class Many, class AllD, class OneD>
auto dtype_reduction(All all, One one, Many many, AllD all_d, OneD one_d, const char* name) {
  return [=](const Tensor& x, nb::handle dim, bool keepdim, OD dtype) -> Tensor {
    const auto dims = dims_arg(dim);
    if (dtype) {
      if (!dims) return keepdim ? one_d(x.reshape({-1}), 0, false, *dtype).reshape(Shape(x.shape().size(), 1))
                                : all_d(x, *dtype);
      FERRITE_CHECK(dims->size() == 1 && PyLong_Check(dim.ptr()), Unsupported, name,
                    ": dtype= takes one int dim (or none)");
      return one_d(x, (*dims)[0], keepdim, *dtype);
    }
    if (!dims) return keepdim ? many(x, std::vector<std::int64_t>{}, true) : all(x);
    if (PyLong_Check(dim.ptr())) return one(x, (*dims)[0], keepdim);
    return many(x, *dims, keepdim);
  };
}

// prod, argmax, argmin, any, all (one dim or every dim).
template <class All, class One>
auto one_dim_reduction(All all, One one) {
  return [=](const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) -> Tensor {
    if (!dim) {
      Tensor r = all(x);
      return keepdim ? r.reshape(Shape(x.shape().size(), 1)) : r;
    }
    return one(x, *dim, keepdim);
  };
}

template <class F>
void both(nb::module_& m, nb::class_<Tensor>& t, const char* name, F f, const char* doc = "") {
  m.def(name, f, nb::arg("input"), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, doc);
  t.def(name, f, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, doc);
}

}  // namespace

void bind_reduction(nb::module_& m, nb::class_<Tensor>& t) {
  auto sum_f = dtype_reduction([](const Tensor& x) { return sum(x); },
                               [](const Tensor& x, std::int64_t d, bool k) { return sum(x, d, k); },
                               [](const Tensor& x, const std::vector<std::int64_t>& d, bool k) { return sum(x, d, k); },
                               [](const Tensor& x, DType dt) { return sum(x, dt); },
                               [](const Tensor& x, std::int64_t d, bool k, DType dt) { return sum(x, d, k, dt); }, "sum");
  auto mean_f = dtype_reduction([](const Tensor& x) { return mean(x); },
                                [](const Tensor& x, std::int64_t d, bool k) { return mean(x, d, k); },
                                [](const Tensor& x, const std::vector<std::int64_t>& d, bool k) { return mean(x, d, k); },
                                [](const Tensor& x, DType dt) { return mean(x, dt); },
                                [](const Tensor& x, std::int64_t d, bool k, DType dt) { return mean(x, d, k, dt); },
                                "mean");
  m.def("sum", sum_f, nb::arg("input"), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false,
        nb::arg("dtype") = nb::none(), "Integer and Bool sums give int64.");
  t.def("sum", sum_f, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::arg("dtype") = nb::none());
  m.def("mean", mean_f, nb::arg("input"), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false,
        nb::arg("dtype") = nb::none());
  t.def("mean", mean_f, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::arg("dtype") = nb::none());

  // amax/amin/any/all over a list of dims (every dim when None or ()).
  auto list_reduction = [&](const char* name, auto all, auto many) {
    auto f = [=](const Tensor& x, nb::handle dim, bool keepdim) -> Tensor {
      const auto dims = dims_arg(dim);
      if ((!dims || dims->empty()) && !keepdim) return all(x);
      return many(x, dims.value_or(std::vector<std::int64_t>{}), keepdim);
    };
    m.def(name, f, nb::arg("input"), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
    t.def(name, f, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  };
  list_reduction("amax", [](const Tensor& x) { return amax(x); },
                 [](const Tensor& x, const std::vector<std::int64_t>& d, bool k) { return amax(x, d, k); });
  list_reduction("amin", [](const Tensor& x) { return amin(x); },
                 [](const Tensor& x, const std::vector<std::int64_t>& d, bool k) { return amin(x, d, k); });
  list_reduction("any", [](const Tensor& x) { return any(x); },
                 [](const Tensor& x, const std::vector<std::int64_t>& d, bool k) { return any(x, d, k); });
  list_reduction("all", [](const Tensor& x) { return all(x); },
                 [](const Tensor& x, const std::vector<std::int64_t>& d, bool k) { return all(x, d, k); });
  both(m, t, "prod", one_dim_reduction([](const Tensor& x) { return prod(x); },
                                       [](const Tensor& x, std::int64_t d, bool k) { return prod(x, d, k); }));
  both(m, t, "argmax", one_dim_reduction([](const Tensor& x) { return argmax(x); },
                                         [](const Tensor& x, std::int64_t d, bool k) { return argmax(x, d, k); }),
       "int64 index of the first maximum (a NaN counts as the maximum).");
  both(m, t, "argmin", one_dim_reduction([](const Tensor& x) { return argmin(x); },
                                         [](const Tensor& x, std::int64_t d, bool k) { return argmin(x, d, k); }));

  // max/min: the extreme (no dim), (values, indices) along a dim, or maximum/minimum of two.
  auto extreme = [&](const char* name, auto whole, auto along, auto pairwise) {
    m.def(name, whole, nb::arg("input"));
    m.def(name, along, nb::arg("input"), nb::arg("dim"), nb::arg("keepdim") = false);
    m.def(name, pairwise, nb::arg("input"), nb::arg("other"));
    t.def(name, whole);
    t.def(name, along, nb::arg("dim"), nb::arg("keepdim") = false);
    t.def(name, pairwise, nb::arg("other"));
  };
  extreme("max", [](const Tensor& x) { return amax(x); },
          [](const Tensor& x, std::int64_t d, bool k) { return max(x, d, k); },
          [](const Tensor& a, const Tensor& b) { return maximum(a, b); });
  extreme("min", [](const Tensor& x) { return amin(x); },
          [](const Tensor& x, std::int64_t d, bool k) { return min(x, d, k); },
          [](const Tensor& a, const Tensor& b) { return minimum(a, b); });

  auto masked = [&](const char* name, auto whole, auto along) {
    m.def(name, [=](const Tensor& x, const Tensor& mask, std::optional<std::int64_t> dim, bool keepdim) {
          return dim ? along(x, mask, *dim, keepdim) : whole(x, mask);
        }, nb::arg("input"), nb::arg("mask"), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false,
        "Extreme over the elements where mask is true; an empty selection gives the identity (+-inf).");
  };
  masked("masked_amin", [](const Tensor& x, const Tensor& k) { return masked_amin(x, k); },
         [](const Tensor& x, const Tensor& k, std::int64_t d, bool kd) { return masked_amin(x, k, d, kd); });
  masked("masked_amax", [](const Tensor& x, const Tensor& k) { return masked_amax(x, k); },
         [](const Tensor& x, const Tensor& k, std::int64_t d, bool kd) { return masked_amax(x, k, d, kd); });
  m.def("prod_backward", [](const Tensor& g, const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
        return dim ? prod_backward(g, x, *dim, keepdim) : prod_backward(g, x);
      }, nb::arg("grad"), nb::arg("input"), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);

  // Scans.
  auto scan = [&](const char* name, auto f) {
    m.def(name, f, nb::arg("input"), nb::arg("dim"));
    t.def(name, f, nb::arg("dim"));
  };
  scan("cumsum", [](const Tensor& x, std::int64_t d) { return cumsum(x, d); });
  scan("cumprod", [](const Tensor& x, std::int64_t d) { return cumprod(x, d); });
  scan("logcumsumexp", [](const Tensor& x, std::int64_t d) { return logcumsumexp(x, d); });
  scan("cummax", [](const Tensor& x, std::int64_t d) { return cummax(x, d); });
  scan("cummin", [](const Tensor& x, std::int64_t d) { return cummin(x, d); });

  // Softmax.
  auto sm = [&](const char* name, auto plain, auto mixed) {
    auto f = [=](const Tensor& x, std::int64_t dim, OD dtype) { return dtype ? mixed(x, dim, *dtype) : plain(x, dim); };
    m.def(name, f, nb::arg("input"), nb::arg("dim") = -1, nb::arg("dtype") = nb::none());
    t.def(name, f, nb::arg("dim") = -1, nb::arg("dtype") = nb::none());
  };
  sm("softmax", [](const Tensor& x, std::int64_t d) { return softmax(x, d); },
     [](const Tensor& x, std::int64_t d, DType dt) { return softmax(x, d, dt); });
  sm("log_softmax", [](const Tensor& x, std::int64_t d) { return log_softmax(x, d); },
     [](const Tensor& x, std::int64_t d, DType dt) { return log_softmax(x, d, dt); });
  m.def("softmax_backward", &softmax_backward, nb::arg("grad"), nb::arg("output"), nb::arg("dim") = -1);
  m.def("log_softmax_backward", &log_softmax_backward, nb::arg("grad"), nb::arg("output"), nb::arg("dim") = -1);

  // Norms over the last dim (ferrite's forms: they return the saved statistics too).
  // Mixed precision (keyword only): out_dtype F16/BF16 writes y of an F32 input in that dtype
  // (y.to(dtype) in one pass); the backward takes such a half grad and adds `residual` to dx,
  // and dx_cast F16/BF16 also returns dx.to(dx_cast) from the same pass, as one more element
  // at the end of the tuple (only when given, so the calls without it keep their tuples).
  m.def("layer_norm", [](const Tensor& x, OT w, OT b, double eps, OD out_dtype) {
        auto r = layer_norm(x, or_undefined(w), or_undefined(b), eps, {.out_dtype = out_dtype});
        return nb::make_tuple(r.y, r.mean, r.rstd);
      }, nb::arg("input"), nb::arg("weight") = nb::none(), nb::arg("bias") = nb::none(), nb::arg("eps") = 1e-5,
      nb::kw_only(), nb::arg("out_dtype") = nb::none(),
      "Layer norm over the last dim: (y, mean, rstd); out_dtype F16/BF16 for an F32 input.");
  m.def("layer_norm_backward", [](const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, OT w,
                                  OT residual, OD dx_cast) {
        auto r = layer_norm_backward(g, x, mean, rstd, or_undefined(w),
                                     {.residual = or_undefined(residual), .dx_cast = dx_cast});
        if (dx_cast) return nb::make_tuple(r.dx, or_none(r.dweight), r.dbias, r.dx_cast);
        return nb::make_tuple(r.dx, or_none(r.dweight), r.dbias);
      }, nb::arg("grad"), nb::arg("input"), nb::arg("mean"), nb::arg("rstd"), nb::arg("weight") = nb::none(),
      nb::kw_only(), nb::arg("residual") = nb::none(), nb::arg("dx_cast") = nb::none(),
      "(dx, dweight or None, dbias), and dx.to(dx_cast) last when dx_cast (F16/BF16, F32 input) is given; "
      "dx includes residual.");
  m.def("rms_norm", [](const Tensor& x, OT w, double eps, OD out_dtype) {
        auto r = rms_norm(x, or_undefined(w), eps, {.out_dtype = out_dtype});
        return nb::make_tuple(r.y, r.rstd);
      }, nb::arg("input"), nb::arg("weight") = nb::none(), nb::arg("eps") = 1e-6, nb::kw_only(),
      nb::arg("out_dtype") = nb::none(), "RMS norm over the last dim: (y, rstd); out_dtype F16/BF16 for an F32 input.");
  m.def("rms_norm_backward", [](const Tensor& g, const Tensor& x, const Tensor& rstd, OT w, OT residual,
                                OD dx_cast) {
        auto r = rms_norm_backward(g, x, rstd, or_undefined(w), {.residual = or_undefined(residual), .dx_cast = dx_cast});
        if (dx_cast) return nb::make_tuple(r.dx, or_none(r.dweight), r.dx_cast);
        return nb::make_tuple(r.dx, or_none(r.dweight));
      }, nb::arg("grad"), nb::arg("input"), nb::arg("rstd"), nb::arg("weight") = nb::none(), nb::kw_only(),
      nb::arg("residual") = nb::none(), nb::arg("dx_cast") = nb::none(),
      "(dx, dweight or None), and dx.to(dx_cast) last when dx_cast (F16/BF16, F32 input) is given; dx includes "
      "residual.");
}

}  // namespace ferrite::py

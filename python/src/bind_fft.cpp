// ferrite.fft: torch.fft's names, arguments and norm strings over ferrite/fft.hpp, and the
// CUDA plan cache (torch.backends.cuda.cufft_plan_cache's counters).
#include "common.hpp"

namespace ferrite::py {

namespace {

using ODims = std::optional<fft::Dims>;

fft::Norm norm_mode(const std::optional<std::string>& norm, const char* op) {
  if (!norm || *norm == "backward") return fft::Norm::Backward;
  if (*norm == "ortho") return fft::Norm::Ortho;
  if (*norm == "forward") return fft::Norm::Forward;
  FERRITE_THROW(InvalidArgument, "fft.", op, ": norm must be None, 'backward', 'ortho' or 'forward', got '", *norm,
                "'");
}

// s= and dim= as torch takes them: None, an int or a sequence of ints.
ODims dims_or_none(nb::handle h, const char* what) {
  if (h.is_none()) return std::nullopt;
  return int_list(h, what);
}

using OneDim = Tensor (*)(const Tensor&, std::optional<std::int64_t>, std::int64_t, fft::Norm);
using TwoDim = Tensor (*)(const Tensor&, ODims, fft::Dims, fft::Norm);
using AnyDim = Tensor (*)(const Tensor&, ODims, ODims, fft::Norm);

void one_dim(nb::module_& f, const char* name, OneDim op, const char* doc) {
  f.def(name, [op, name](const Tensor& x, std::optional<std::int64_t> n, std::int64_t dim,
                         const std::optional<std::string>& norm) { return op(x, n, dim, norm_mode(norm, name)); },
        nb::arg("input"), nb::arg("n") = nb::none(), nb::arg("dim") = -1, nb::arg("norm") = nb::none(), doc);
}

void two_dim(nb::module_& f, const char* name, TwoDim op) {
  f.def(name, [op, name](const Tensor& x, nb::handle s, nb::handle dim, const std::optional<std::string>& norm) {
        return op(x, dims_or_none(s, "s"), int_list(dim, "dim"), norm_mode(norm, name));
      }, nb::arg("input"), nb::arg("s").none() = nb::none(), nb::arg("dim") = nb::make_tuple(-2, -1),
      nb::arg("norm") = nb::none());
}

void any_dim(nb::module_& f, const char* name, AnyDim op) {
  f.def(name, [op, name](const Tensor& x, nb::handle s, nb::handle dim, const std::optional<std::string>& norm) {
        return op(x, dims_or_none(s, "s"), dims_or_none(dim, "dim"), norm_mode(norm, name));
      }, nb::arg("input"), nb::arg("s").none() = nb::none(), nb::arg("dim").none() = nb::none(),
      nb::arg("norm") = nb::none(), "All dims by default, or the last len(s) when only s is given.");
}

}  // namespace

void bind_fft(nb::module_& m) {
  nb::module_ f = submodule(m, "fft", "torch.fft's transforms over ferrite::fft (F32/C64 single, F64/C128 double).");
  one_dim(f, "fft", [](const Tensor& x, std::optional<std::int64_t> n, std::int64_t d, fft::Norm k) {
    return fft::fft(x, n, d, k);
  }, "C2C along dim; real input is promoted to complex.");
  one_dim(f, "ifft", [](const Tensor& x, std::optional<std::int64_t> n, std::int64_t d, fft::Norm k) {
    return fft::ifft(x, n, d, k);
  }, "");
  one_dim(f, "rfft", [](const Tensor& x, std::optional<std::int64_t> n, std::int64_t d, fft::Norm k) {
    return fft::rfft(x, n, d, k);
  }, "Real input: n/2 + 1 complex outputs along dim.");
  one_dim(f, "irfft", [](const Tensor& x, std::optional<std::int64_t> n, std::int64_t d, fft::Norm k) {
    return fft::irfft(x, n, d, k);
  }, "n real outputs (default 2 * (size - 1)).");
  one_dim(f, "hfft", [](const Tensor& x, std::optional<std::int64_t> n, std::int64_t d, fft::Norm k) {
    return fft::hfft(x, n, d, k);
  }, "");
  one_dim(f, "ihfft", [](const Tensor& x, std::optional<std::int64_t> n, std::int64_t d, fft::Norm k) {
    return fft::ihfft(x, n, d, k);
  }, "");
  two_dim(f, "fft2", [](const Tensor& x, ODims s, fft::Dims d, fft::Norm k) { return fft::fft2(x, s, d, k); });
  two_dim(f, "ifft2", [](const Tensor& x, ODims s, fft::Dims d, fft::Norm k) { return fft::ifft2(x, s, d, k); });
  two_dim(f, "rfft2", [](const Tensor& x, ODims s, fft::Dims d, fft::Norm k) { return fft::rfft2(x, s, d, k); });
  two_dim(f, "irfft2", [](const Tensor& x, ODims s, fft::Dims d, fft::Norm k) { return fft::irfft2(x, s, d, k); });
  any_dim(f, "fftn", [](const Tensor& x, ODims s, ODims d, fft::Norm k) { return fft::fftn(x, s, d, k); });
  any_dim(f, "ifftn", [](const Tensor& x, ODims s, ODims d, fft::Norm k) { return fft::ifftn(x, s, d, k); });
  any_dim(f, "rfftn", [](const Tensor& x, ODims s, ODims d, fft::Norm k) { return fft::rfftn(x, s, d, k); });
  any_dim(f, "irfftn", [](const Tensor& x, ODims s, ODims d, fft::Norm k) { return fft::irfftn(x, s, d, k); });

  f.def("fftfreq", [](std::int64_t n, double d, std::optional<DType> dtype, std::optional<Device> device) {
        return fft::fftfreq(n, d, dtype.value_or(DType::F32), device.value_or(Device::cpu()));
      }, nb::arg("n"), nb::arg("d") = 1.0, nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      "[0, 1, ..., -n/2, ..., -1] / (d * n).");
  f.def("rfftfreq", [](std::int64_t n, double d, std::optional<DType> dtype, std::optional<Device> device) {
        return fft::rfftfreq(n, d, dtype.value_or(DType::F32), device.value_or(Device::cpu()));
      }, nb::arg("n"), nb::arg("d") = 1.0, nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      "[0, 1, ..., n/2] / (d * n).");
  f.def("fftshift", [](const Tensor& x, nb::handle dim) { return fft::fftshift(x, dims_or_none(dim, "dim")); },
        nb::arg("input"), nb::arg("dim").none() = nb::none(), "The zero frequency to the centre of each dim.");
  f.def("ifftshift", [](const Tensor& x, nb::handle dim) { return fft::ifftshift(x, dims_or_none(dim, "dim")); },
        nb::arg("input"), nb::arg("dim").none() = nb::none());

  const nb::object info_t = result_type(m, "fft_plan_cache_info", "size capacity hits misses");
  f.def("plan_cache_info", [info_t](Device device) {
        const FftPlanCacheInfo i = fft::plan_cache_info(device);
        return named(info_t, i.size, i.capacity, i.hits, i.misses);
      }, nb::arg("device"), "(size, capacity, hits, misses) of the device's cuFFT plan cache (zeros on the CPU).");
  f.def("set_plan_cache_capacity", &fft::set_plan_cache_capacity, nb::arg("device"), nb::arg("capacity"),
        "Evicts least recently used plans down to capacity; 0 keeps none.");
  f.def("clear_plan_cache", &fft::clear_plan_cache, nb::arg("device"));
}

}  // namespace ferrite::py

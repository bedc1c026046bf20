// Random numbers (ferrite/random.hpp): ferrite.random (the C++ namespace) and torch's
// spellings at the top level: Generator, manual_seed, get_rng_state/set_rng_state, rand,
// randn, randint, bernoulli, rand_like, randn_like, Tensor.normal_/uniform_. A state is the
// named tuple (seed, offset): the Philox key and the call counter, the same on every device.
#include "common.hpp"

namespace ferrite::py {

namespace {

using random::Generator;
using random::RngState;
using OD = std::optional<DType>;
using ODev = std::optional<Device>;

// The draws' device: the generator's when only it is given (as torch does with a CUDA
// generator), else device= or the CPU.
Device draw_device(ODev device, const Generator* g) {
  if (device) return *device;
  return g ? g->device() : Device::cpu();
}

}  // namespace

void bind_random(nb::module_& m, nb::class_<Tensor>& t) {
  nb::module_ r = submodule(m, "random", "Philox random numbers: generators, seeds and draws (ferrite::random).");
  const nb::object state_t = result_type(m, "rng_state", "seed offset");
  auto state_tuple = [state_t](RngState s) { return named(state_t, s.seed, s.offset); };

  nb::class_<Generator>(r, "Generator",
                        "A Philox4x32-10 stream for one device (torch.Generator). Copies share the stream.")
      .def(nb::init<std::uint64_t, Device>(), nb::arg("seed") = 0, nb::arg("device") = Device::cpu())
      .def("__init__", [](Generator* g, Device device) { new (g) Generator(0, device); }, nb::arg("device"))
      .def_prop_ro("device", &Generator::device)
      .def("manual_seed", [](Generator& g, std::uint64_t seed) -> Generator& {
        g.manual_seed(seed);
        return g;
      }, nb::arg("seed"), nb::rv_policy::reference, "seed = seed, offset = 0; returns the generator.")
      .def("initial_seed", [](const Generator& g) { return g.state().seed; })
      .def("get_state", [state_tuple](const Generator& g) { return state_tuple(g.state()); }, "(seed, offset).")
      .def("set_state", [](Generator& g, nb::handle state) -> Generator& {
        g.set_state(state_from(state));
        return g;
      }, nb::arg("new_state"), nb::rv_policy::reference)
      .def("__repr__", [](const Generator& g) {
        const RngState s = g.state();
        return "Generator(device=" + g.device().str() + ", seed=" + std::to_string(s.seed) +
               ", offset=" + std::to_string(s.offset) + ")";
      });
  m.attr("Generator") = r.attr("Generator");

  r.def("default_generator", &random::default_generator, nb::arg("device") = Device::cpu(),
        "The device's default generator (seed 0 until seeded).");
  auto seed_all = [](std::uint64_t seed) {
    random::manual_seed(seed);
    return random::default_generator(Device::cpu());
  };
  for (nb::module_* mod : {&m, &r}) {
    mod->def("manual_seed", seed_all, nb::arg("seed"),
             "Seeds the default generators of the CPU and of every GPU (offset 0); returns the CPU's.");
  }
  r.def("manual_seed", [](Device device, std::uint64_t seed) { random::manual_seed(device, seed); }, nb::arg("device"),
        nb::arg("seed"), "Seeds one device's default generator.");
  r.def("get_state", [state_tuple](Device device) { return state_tuple(random::get_state(device)); },
        nb::arg("device") = Device::cpu(), "The default generator's (seed, offset).");
  r.def("set_state", [](Device device, nb::handle state) { random::set_state(device, state_from(state)); },
        nb::arg("device"), nb::arg("state"));
  m.def("get_rng_state", [state_tuple](Device device) { return state_tuple(random::get_state(device)); },
        nb::arg("device") = Device::cpu(), "(seed, offset) of the device's default generator.");
  m.def("set_rng_state", [](nb::handle state, Device device) { random::set_state(device, state_from(state)); },
        nb::arg("new_state"), nb::arg("device") = Device::cpu());

  const auto gen = nb::arg("generator").none() = nb::none();
  const auto dt = nb::arg("dtype") = nb::none();
  const auto dv = nb::arg("device") = nb::none();
  for (nb::module_* mod : {&m, &r}) {
    mod->def("rand", [](nb::args size, Generator* g, OD dtype, ODev device) {
          return random::rand(shape_args(size, "rand"), dtype.value_or(DType::F32), draw_device(device, g), g);
        }, nb::arg("size"), nb::kw_only(), gen, dt, dv, "Uniform on [0, 1).");
    mod->def("randn", [](nb::args size, Generator* g, OD dtype, ODev device) {
          return random::randn(shape_args(size, "randn"), dtype.value_or(DType::F32), draw_device(device, g), g);
        }, nb::arg("size"), nb::kw_only(), gen, dt, dv, "Standard normal.");
    mod->def("randint", [](std::int64_t low, std::int64_t high, nb::handle size, Generator* g, OD dtype, ODev device) {
          return random::randint(low, high, int_list(size, "randint"), dtype.value_or(DType::I64),
                                 draw_device(device, g), g);
        }, nb::arg("low"), nb::arg("high"), nb::arg("size"), nb::kw_only(), gen, dt, dv, "Uniform integers on [low, high).");
    mod->def("randint", [](std::int64_t high, nb::handle size, Generator* g, OD dtype, ODev device) {
          return random::randint(0, high, int_list(size, "randint"), dtype.value_or(DType::I64), draw_device(device, g),
                                 g);
        }, nb::arg("high"), nb::arg("size"), nb::kw_only(), gen, dt, dv);
    mod->def("bernoulli", [](const Tensor& probs, std::optional<double> p, Generator* g) {
          return p ? random::bernoulli(probs.shape(), *p, probs.dtype(), probs.device(), g) : random::bernoulli(probs, g);
        }, nb::arg("input"), nb::arg("p") = nb::none(), nb::kw_only(), gen,
        "1 where a uniform draw is below input (or p), else 0; input's dtype, shape and device.");
  }
  m.def("rand_like", [](const Tensor& x, OD dtype, ODev device) {
        return random::rand(x.shape(), dtype.value_or(x.dtype()), device.value_or(x.device()));
      }, nb::arg("input"), nb::kw_only(), dt, dv);
  m.def("randn_like", [](const Tensor& x, OD dtype, ODev device) {
        return random::randn(x.shape(), dtype.value_or(x.dtype()), device.value_or(x.device()));
      }, nb::arg("input"), nb::kw_only(), dt, dv);

  // In place (contiguous float tensors), returning the tensor as torch's do.
  auto normal = [](const Tensor& x, double mean, double std, Generator* g) { return random::normal_(x, mean, std, g); };
  auto uniform = [](const Tensor& x, double from, double to, Generator* g) { return random::uniform_(x, from, to, g); };
  t.def("normal_", normal, nb::arg("mean") = 0.0, nb::arg("std") = 1.0, nb::kw_only(), gen);
  t.def("uniform_", uniform, nb::arg("from") = 0.0, nb::arg("to") = 1.0, nb::kw_only(), gen);
  r.def("normal_", normal, nb::arg("input"), nb::arg("mean") = 0.0, nb::arg("std") = 1.0, nb::kw_only(), gen);
  r.def("uniform_", uniform, nb::arg("input"), nb::arg("from") = 0.0, nb::arg("to") = 1.0, nb::kw_only(), gen);
}

}  // namespace ferrite::py

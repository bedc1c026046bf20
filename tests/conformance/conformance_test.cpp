// Runs every conformance entry, for every dtype it takes, on one backend:
//   ferrite_conformance --backend=cpu    the CPU backend against host references
//   ferrite_conformance --backend=cuda   the CUDA backend against the CPU backend
// Exit code 77 (ctest: skipped) with a reason when the CUDA backend has no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <numeric>

#include "conformance/conformance.hpp"

namespace ferrite::conformance {
namespace {

Device g_device = Device::cpu();

struct Param {
  std::size_t entry;
  DType dtype;
};

std::vector<Param> all_params() {
  std::vector<Param> params;
  for (std::size_t i = 0; i < registry().size(); ++i)
    for (DType d : registry()[i].dtypes) params.push_back({i, d});
  return params;
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  std::string name = registry()[info.param.entry].op + "_" + std::string(dtype_name(info.param.dtype));
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name + "_" + std::to_string(info.index);
}

// What a failure prints so that it can be repeated: the base seed and the one test.
std::string repeat_command() {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return "inputs of base seed " + std::to_string(base_seed()) + "; repeat with: FERRITE_TEST_SEED=" +
         std::to_string(base_seed()) + " ferrite_conformance --backend=" + (g_device.is_cpu() ? "cpu" : "cuda") +
         " --gtest_filter=" + test->test_suite_name() + "." + test->name();
}

// An entry's outputs for one case (single-output entries go through the same path).
std::vector<Tensor> run_entry(const Entry& entry, const Case& c) {
  if (entry.run_outputs) return entry.run_outputs(c);
  return {entry.run(c.inputs)};
}

class Conformance : public ::testing::TestWithParam<Param> {};

TEST_P(Conformance, MatchesReference) {
  const Entry& entry = registry()[GetParam().entry];
  const DType dtype = GetParam().dtype;
  if (entry.unavailable)
    if (const std::string why = entry.unavailable(g_device); !why.empty()) GTEST_SKIP() << why;
  // The same inputs every run unless FERRITE_TEST_SEED asks for others; every failure says
  // how to repeat it.
  Rng rng(case_seed(base_seed(), entry.op, dtype));
  SCOPED_TRACE(repeat_command());
  ferrite::testing::set_memory_checks(true);
  const std::int64_t violations_before = ferrite::testing::guard_violations();
  const std::int64_t in_use_before = memory_stats(g_device).in_use_bytes;

  auto run = [&](const Case& c) { return run_entry(entry, c); };
  auto reference = [&](const Case& c) -> std::vector<Tensor> {
    if (entry.reference_outputs) return entry.reference_outputs(c);
    return {entry.reference(c.inputs)};
  };
  auto backend_tolerance = [&](std::size_t output) {
    return entry.output_backend_tolerance ? entry.output_backend_tolerance(dtype, output) : entry.backend_tolerance(dtype);
  };

  for (const auto& [case_index, c] : cases_to_run(entry, dtype, rng)) {
    SCOPED_TRACE(entry.op + " " + std::string(dtype_name(dtype)) + " case " + c.label);
    if (g_device.is_cpu()) {
      const std::vector<Tensor> actual = run(c);
      const std::vector<Tensor> expected = reference(c);
      ASSERT_EQ(actual.size(), expected.size());
      for (std::size_t i = 0; i < actual.size(); ++i)
        EXPECT_EQ(compare(actual[i], expected[i], entry.reference_tolerance(dtype)), "")
            << "CPU backend vs reference, output " << i;
    } else {
      Case on_device = c;
      for (Tensor& t : on_device.inputs) t = t.to(g_device);
      const std::vector<Tensor> actual = run(on_device);
      // The same inputs again: GPU results must be deterministic, bit for bit (no floating
      // atomics, no order that depends on scheduling).
      const std::vector<Tensor> again = run(on_device);
      const std::vector<Tensor> expected = run(c);
      ASSERT_EQ(actual.size(), expected.size());
      for (std::size_t i = 0; i < actual.size(); ++i) {
        EXPECT_EQ(actual[i].device(), g_device);
        const Tensor host = actual[i].to(Device::cpu());
        EXPECT_EQ(compare(host, expected[i], backend_tolerance(i)), "") << "CUDA backend vs CPU backend, output " << i;
        EXPECT_EQ(host.to_bytes(), again[i].to(Device::cpu()).to_bytes())
            << "CUDA output " << i << " differs between two runs on the same inputs";
      }
    }
  }
  if (entry.errors) {
    for (const ErrorCase& e : entry.errors(dtype)) {
      SCOPED_TRACE("error case " + e.label);
      EXPECT_EQ(expect_error([&] { e.call(g_device); }, e.kind, e.message_fragment), "");
    }
  }
  synchronize(g_device);  // frees are stream-ordered; counters move at the call, but be sure
  EXPECT_EQ(memory_stats(g_device).in_use_bytes, in_use_before) << "allocator in-use bytes changed: a leak";
  EXPECT_EQ(ferrite::testing::guard_violations(), violations_before) << "an op wrote past the end of its output";
  ferrite::testing::set_memory_checks(false);
}

INSTANTIATE_TEST_SUITE_P(Ops, Conformance, ::testing::ValuesIn(all_params()), param_name);

// The strided pass: every case again with each input replaced by a view of the same values
// (a transposed storage for rank >= 2; for ranks 1 and 0 a storage offset of one element,
// which puts the data off the 16-byte grid that vector loads want). Ops read views through their strides or through one dense
// copy, so the results must be bit for bit those of the contiguous inputs.
Tensor strided_twin(const Tensor& t) {
  if (t.dim() == 0) {
    const Tensor base = empty({2}, t.dtype(), t.device());
    const Tensor view = base.select(0, 1);
    view.copy_(t);
    return view;
  }
  if (t.dim() == 1) {  // contiguous, but one element into its storage: off the 16-byte grid
    const std::int64_t n = t.size(0);
    const Tensor view = empty({n + 1}, t.dtype(), t.device()).narrow(0, 1, n);
    view.copy_(t);
    return view;
  }
  Shape swapped = t.shape();
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  const Tensor view = empty(swapped, t.dtype(), t.device()).transpose(-1, -2);
  view.copy_(t);
  return view;
}

// The row-strided pass, for the elementwise ops (the engines' view kernels): rows of a
// storage one element wider (narrowed: row strides off the 16-byte grid for most widths;
// rank 3 and up merge into rank 2), starting one element in for odd cases + inputs (off the
// grid) and at the storage's start for even ones (the first row aligned, the others not: the
// vector paths must check every row), alternating by input with a transposed view of such a
// storage (scattered columns beside row-strided partners: the GPU engine's tile). Rank 1:
// every other element, one element in. Rank 0 as above.
Tensor row_strided_twin(const Tensor& t, std::size_t input, std::size_t case_index) {
  if (t.dim() == 0) return strided_twin(t);
  if (t.dim() == 1) {
    const std::int64_t n = t.size(0);
    const Tensor view = empty({2 * n + 1}, t.dtype(), t.device()).slice(0, 1, 2 * n + 1, 2);
    view.copy_(t);
    return view;
  }
  Shape wider = t.shape();
  if (input % 2 == 0) {
    wider.back() += 1;
    const std::int64_t start = static_cast<std::int64_t>((case_index + input / 2) % 2);
    const Tensor view = empty(wider, t.dtype(), t.device()).narrow(-1, start, t.shape().back());
    view.copy_(t);
    return view;
  }
  std::swap(wider[wider.size() - 1], wider[wider.size() - 2]);
  wider.back() += 1;
  const Tensor view =
      empty(wider, t.dtype(), t.device()).narrow(-1, 1, t.shape()[t.shape().size() - 2]).transpose(-1, -2);
  view.copy_(t);
  return view;
}

// Every case of the entry again with each input k replaced by twin(input, k): the results
// must be bit for bit those of the contiguous inputs on the same device.
void check_views_match(const Param& param, Tensor (*twin)(const Tensor&, std::size_t, std::size_t)) {
  const Entry& entry = registry()[param.entry];
  const DType dtype = param.dtype;
  if (entry.unavailable)  // a library this device lacks (GTEST_SKIP returns from this helper only)
    if (const std::string why = entry.unavailable(g_device); !why.empty()) GTEST_SKIP() << why;
  Rng rng(case_seed(base_seed(), entry.op, dtype));
  SCOPED_TRACE(repeat_command());
  auto run = [&](const Case& c) { return run_entry(entry, c); };
  // The index counts every case, kept or not, so under FERRITE_CONFORMANCE_MAX_ELEMENTS the
  // twins of the cases that run are those of a run without the limit.
  for (const auto& [case_index, c] : cases_to_run(entry, dtype, rng)) {
    SCOPED_TRACE(entry.op + " " + std::string(dtype_name(dtype)) + " case " + c.label);
    Case dense = c, strided = c;
    for (std::size_t k = 0; k < c.inputs.size(); ++k) {
      dense.inputs[k] = c.inputs[k].to(g_device);
      strided.inputs[k] = twin(dense.inputs[k], k, case_index);
      ASSERT_EQ(strided.inputs[k].to_bytes(), dense.inputs[k].to_bytes()) << "input " << k << " twin";
    }
    const std::vector<Tensor> expected = run(dense);
    const std::vector<Tensor> actual = run(strided);
    // A reduction reads a transposed view as its dense block, in memory order: a float sum
    // adds in another order, so against the contiguous input it agrees within the entry's
    // tolerance (PermutedReductionConformance checks it bit for bit against that block). A C2C
    // FFT reads such a view in place through a plan of its strides, which rounds differently.
    bool memory_order = false;
    for (const Tensor& t : strided.inputs) memory_order = memory_order || !t.is_contiguous();
    memory_order = memory_order && (entry.on_dense_block || entry.reads_views_in_place) &&
                   (is_floating(dtype) || is_complex(dtype));
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
      EXPECT_EQ(actual[i].shape(), expected[i].shape()) << "output " << i;
      EXPECT_EQ(actual[i].dtype(), expected[i].dtype()) << "output " << i;
      if (memory_order) {
        const Tolerance tol =
            entry.output_backend_tolerance ? entry.output_backend_tolerance(dtype, i) : entry.backend_tolerance(dtype);
        EXPECT_EQ(compare(actual[i].to(Device::cpu()), expected[i].to(Device::cpu()), tol), "")
            << "output " << i << " from a transposed input, against the contiguous input's result";
        continue;
      }
      EXPECT_TRUE(actual[i].to_bytes() == expected[i].to_bytes())
          << "output " << i << " from strided inputs differs from the contiguous inputs' result: "
          << compare(actual[i].to(Device::cpu()), expected[i].to(Device::cpu()), {});
    }
  }
}

class StridedConformance : public ::testing::TestWithParam<Param> {};

TEST_P(StridedConformance, ViewsGiveTheSameResultsAsContiguousInputs) {
  check_views_match(GetParam(), [](const Tensor& t, std::size_t, std::size_t) { return strided_twin(t); });
}

INSTANTIATE_TEST_SUITE_P(Ops, StridedConformance, ::testing::ValuesIn(all_params()), param_name);

// The elementwise entries only (op names of OpGroup::Elementwise, and the casts, which are
// registered as to_<dtype> and read views through the same engines): the other families make
// such views dense before their kernels, which the transposed pass above already covers.
bool is_elementwise_op(const std::string& name) {
  if (name.starts_with("to_")) return true;
#define FERRITE_OP_IS_ELEMENTWISE(id, text, family) \
  if (name == text) return op_group(Op::id) == OpGroup::Elementwise;
  FERRITE_FOR_EACH_OP(FERRITE_OP_IS_ELEMENTWISE)
#undef FERRITE_OP_IS_ELEMENTWISE
  return false;
}

std::vector<Param> elementwise_params() {
  std::vector<Param> params = all_params();
  std::erase_if(params, [](const Param& p) { return !is_elementwise_op(registry()[p.entry].op); });
  return params;
}

class RowStridedConformance : public ::testing::TestWithParam<Param> {};

TEST_P(RowStridedConformance, RowStridedViewsGiveTheSameResultsAsContiguousInputs) {
  check_views_match(GetParam(), row_strided_twin);
}

INSTANTIATE_TEST_SUITE_P(Elementwise, RowStridedConformance, ::testing::ValuesIn(elementwise_params()), param_name);

// The permuted pass, for the reductions (Entry::on_dense_block): each case's input of rank 2
// and up again as a view of several permutations of a dense block (the last two dims
// swapped; for rank 3 and up also all dims reversed and rotated by one), the block at the
// start of its storage for the first and one element in (off the 16-byte grid) for the
// others. A reduction reads such a view as the block itself, with the dims mapped through
// the permutation, so its results must be bit for bit those of the same op over the dense
// block (put back in the view's dim order), and within the entry's tolerance of the
// contiguous input's (the same values; a float sum adds in memory order, as PyTorch's).
std::vector<std::vector<std::int64_t>> view_permutations(std::int64_t rank) {
  std::vector<std::int64_t> swap_last(static_cast<std::size_t>(rank));
  std::iota(swap_last.begin(), swap_last.end(), 0);
  std::swap(swap_last[swap_last.size() - 1], swap_last[swap_last.size() - 2]);
  if (rank < 3) return {swap_last};
  std::vector<std::int64_t> reversed(swap_last.size()), rotated(swap_last.size());
  for (std::int64_t d = 0; d < rank; ++d) {
    reversed[static_cast<std::size_t>(d)] = rank - 1 - d;
    rotated[static_cast<std::size_t>(d)] = (d + 1) % rank;
  }
  return {swap_last, reversed, rotated};
}

/// `out`, a result of the op over the dense block, in the view's dim order: its dims are the
/// block's dims (keepdim) or the block's kept dims, in the block's order.
Tensor in_view_order(const Tensor& out, const std::vector<std::int64_t>& perm, const std::vector<bool>& reduced) {
  if (out.dim() == 0) return out;
  if (out.dim() == static_cast<std::int64_t>(perm.size())) return out.permute(perm).contiguous();
  std::vector<bool> dense_reduced(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) dense_reduced[static_cast<std::size_t>(perm[i])] = reduced[i];
  std::vector<std::int64_t> kept_dense, back;
  for (std::size_t j = 0; j < perm.size(); ++j)
    if (!dense_reduced[j]) kept_dense.push_back(static_cast<std::int64_t>(j));
  for (std::size_t i = 0; i < perm.size(); ++i)
    if (!reduced[i])
      back.push_back(std::find(kept_dense.begin(), kept_dense.end(), perm[i]) - kept_dense.begin());
  return out.permute(back).contiguous();
}

std::vector<Param> memory_order_params() {
  std::vector<Param> params = all_params();
  std::erase_if(params, [](const Param& p) { return !registry()[p.entry].on_dense_block; });
  return params;
}

class PermutedReductionConformance : public ::testing::TestWithParam<Param> {};

TEST_P(PermutedReductionConformance, PermutedViewsReduceAsTheirDenseBlock) {
  const Entry& entry = registry()[GetParam().entry];
  const DType dtype = GetParam().dtype;
  Rng rng(case_seed(base_seed(), entry.op, dtype));
  SCOPED_TRACE(repeat_command());
  auto run = [&](const Case& c) { return run_entry(entry, c); };
  int checked = 0;
  for (const auto& [case_index, c] : cases_to_run(entry, dtype, rng)) {
    ASSERT_EQ(c.inputs.size(), 1u) << "on_dense_block is for single-input reductions";
    const Tensor x = c.inputs[0].to(g_device);
    if (x.dim() < 2) continue;
    Case plain = c;
    plain.inputs = {x};
    const std::vector<Tensor> expected_values = run(plain);
    const auto perms = view_permutations(x.dim());
    for (std::size_t k = 0; k < perms.size(); ++k) {
      const std::vector<std::int64_t>& perm = perms[k];
      SCOPED_TRACE(entry.op + " " + std::string(dtype_name(dtype)) + " case " + c.label + ", permutation " +
                   std::to_string(k));
      std::vector<std::int64_t> inverse(perm.size());
      for (std::size_t i = 0; i < perm.size(); ++i) inverse[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
      const Tensor values = x.permute(inverse).contiguous();  // values.permute(perm) is x
      const std::int64_t start = k == 0 ? 0 : 1;
      const Tensor dense =
          empty({values.numel() + start}, dtype, g_device).narrow(0, start, values.numel()).view(values.shape());
      dense.copy_(values);
      Case on_view = c;
      on_view.inputs = {dense.permute(perm)};
      ASSERT_EQ(on_view.inputs[0].to_bytes(), x.to_bytes());
      const auto [on_block, reduced] = entry.on_dense_block(c, dense, perm);
      const std::vector<Tensor> actual = run(on_view);
      const std::vector<Tensor> block = run(on_block);
      ASSERT_EQ(actual.size(), expected_values.size());
      ASSERT_EQ(block.size(), expected_values.size());
      for (std::size_t i = 0; i < actual.size(); ++i) {
        EXPECT_EQ(actual[i].shape(), expected_values[i].shape()) << "output " << i;
        EXPECT_EQ(actual[i].dtype(), expected_values[i].dtype()) << "output " << i;
        EXPECT_TRUE(actual[i].is_contiguous()) << "output " << i;
        const Tensor expected = in_view_order(block[i], perm, reduced).reshape(expected_values[i].shape());
        EXPECT_TRUE(actual[i].to_bytes() == expected.to_bytes())
            << "output " << i << " of the view differs from the op over its dense block: "
            << compare(actual[i].to(Device::cpu()), expected.to(Device::cpu()), {});
        const Tolerance tol =
            entry.output_backend_tolerance ? entry.output_backend_tolerance(dtype, i) : entry.backend_tolerance(dtype);
        EXPECT_EQ(compare(actual[i].to(Device::cpu()), expected_values[i].to(Device::cpu()), tol), "")
            << "output " << i << " of the view, against the contiguous input's result";
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0) << "no case of rank 2 or more";
}

INSTANTIATE_TEST_SUITE_P(Reductions, PermutedReductionConformance, ::testing::ValuesIn(memory_order_params()),
                         param_name);

// The default seed must give the same inputs on every run (the suite is repeatable). A few
// entries that draw inputs in different ways (random, extremes, special rows, near-one
// products, forward outputs as inputs), one dtype each, keep this quick.
TEST(ConformanceSeeds, DefaultSeedGivesTheSameInputsTwice) {
  const std::vector<std::string> ops = {"add", "exp", "sum", "prod_backward", "softmax_backward", "layer_norm", "logcumsumexp"};
  int checked = 0;
  for (const Entry& entry : registry()) {
    if (entry.dtypes.empty() || std::find(ops.begin(), ops.end(), entry.op) == ops.end()) continue;
    ++checked;
    const DType dtype = entry.dtypes.front();
    Rng first_rng(case_seed(kDefaultSeed, entry.op, dtype)), second_rng(case_seed(kDefaultSeed, entry.op, dtype));
    const std::vector<Case> first = entry.cases(dtype, first_rng), second = entry.cases(dtype, second_rng);
    ASSERT_EQ(first.size(), second.size()) << entry.op;
    for (std::size_t i = 0; i < first.size(); ++i) {
      ASSERT_EQ(first[i].inputs.size(), second[i].inputs.size()) << entry.op << " case " << first[i].label;
      EXPECT_EQ(first[i].ints, second[i].ints) << entry.op << " case " << first[i].label;
      for (std::size_t k = 0; k < first[i].inputs.size(); ++k)
        EXPECT_EQ(first[i].inputs[k].to_bytes(), second[i].inputs[k].to_bytes())
            << entry.op << " case " << first[i].label << " input " << k;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(ops.size())) << "an entry named above is missing from the registry";
  // Different ops and dtypes draw different streams.
  EXPECT_NE(case_seed(kDefaultSeed, "sum", DType::F32), case_seed(kDefaultSeed, "sum", DType::F64));
  EXPECT_NE(case_seed(kDefaultSeed, "sum", DType::F32), case_seed(kDefaultSeed, "prod", DType::F32));
}

}  // namespace
}  // namespace ferrite::conformance

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string backend_name = "cpu";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--backend=", 10) == 0) backend_name = argv[i] + 10;
  if (backend_name == "cuda") {
    if (ferrite::cuda_device_count() == 0) {
      std::cout << "SKIPPED: no CUDA device on this machine (" << (FERRITE_WITH_CUDA ? "CUDA backend built" : "built without CUDA")
                << "); the CUDA conformance run needs a GPU\n";
      return 77;
    }
    ferrite::conformance::g_device = ferrite::Device::cuda(0);
  }
  std::uint64_t seed = 0;
  try {
    seed = ferrite::conformance::base_seed();
  } catch (const ferrite::Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  std::cout << "conformance on " << ferrite::conformance::g_device.str() << ": "
            << ferrite::conformance::registry().size() << " entries, base seed " << seed
            << (seed == ferrite::conformance::kDefaultSeed ? " (the default)" : " (FERRITE_TEST_SEED)") << "\n";
  return RUN_ALL_TESTS();
}

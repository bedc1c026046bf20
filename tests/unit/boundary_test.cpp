// What the public boundary refuses or repairs before an op can misbehave: Bool bytes other
// than 0/1, Buffers that promise more elements than their storage, enum values outside their
// tables, Scalars that do not fit, host memory that is not there, devices that do not exist.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "conformance/conformance.hpp"
#include "core/host_scratch.hpp"
#include "ferrite/cuda.hpp"
#include "ferrite/ferrite.hpp"

namespace ferrite {
namespace {

using conformance::expect_error;

// ---- Bool bytes ----

Tensor bool_from_bytes(std::vector<std::uint8_t> bytes) {
  const auto n = static_cast<std::int64_t>(bytes.size());
  return Tensor::from_bytes(bytes.data(), bytes.size(), DType::Bool, {n});
}

TEST(BoolBytes, FromBytesNormalisesEveryNonzeroByteToTrue) {
  const Tensor b = bool_from_bytes({2, 0, 255, 1});
  EXPECT_EQ(b.to_bytes(), (std::vector<std::uint8_t>{1, 0, 1, 1}));
  EXPECT_TRUE(any(bool_from_bytes({2, 0})).item<bool>());
  EXPECT_TRUE(all(bool_from_bytes({2, 3})).item<bool>());
  EXPECT_EQ(sum(bool_from_bytes({2, 3})).item<std::int64_t>(), 2);
  EXPECT_EQ(bool_from_bytes({2, 0}).to(DType::F32).to_vector<float>(), (std::vector<float>{1, 0}));
  EXPECT_EQ(logical_not(bool_from_bytes({2, 0})).to_vector<bool>(), (std::vector<bool>{false, true}));
}

// ---- Buffer and Tensor constructors ----

TEST(Boundary, BufferCannotPromiseMoreElementsThanItsStorage) {
  auto storage = backend(Device::cpu()).allocate(16, Device::cpu());
  EXPECT_EQ(Buffer(storage, DType::F32, 4).numel(), 4);
  EXPECT_EQ(expect_error([&] { (void)Buffer(storage, DType::F32, 5); }, ErrorKind::InvalidArgument,
                         "Buffer: 5 elements of F32 do not fit in a storage of 16 bytes (room for 4)"), "");
  EXPECT_EQ(expect_error([&] { (void)Tensor(Buffer(storage, DType::F64, 3), {3}); }, ErrorKind::InvalidArgument,
                         "do not fit in a storage of 16 bytes"), "");
  EXPECT_EQ(expect_error([&] { (void)Buffer(storage, DType::F32, -1); }, ErrorKind::InvalidArgument,
                         "Buffer: negative numel -1"), "");
  EXPECT_EQ(expect_error([&] { (void)Buffer(nullptr, DType::F32, 1); }, ErrorKind::InvalidArgument,
                         "storage of 0 bytes"), "");
  EXPECT_EQ(expect_error([&] { (void)Buffer(storage, static_cast<DType>(42), 1); }, ErrorKind::InvalidArgument,
                         "Buffer: dtype value 42 is not a DType"), "");
}

// ---- enum values outside their tables ----

// A backend that claims a device kind that does not exist; every op is unreachable.
class BogusKindBackend final : public Backend {
 public:
  DeviceKind kind() const override { return static_cast<DeviceKind>(2); }
  std::string name() const override { return "bogus"; }
  int device_count() const override { return 1; }
  bool supports(Op, DType) const override { return false; }
  std::shared_ptr<Storage> allocate(std::size_t, Device) override { return nullptr; }
  MemoryStats memory_stats(Device) const override { return {}; }
  void copy_from_host(const void*, const Buffer&, std::size_t) override {}
  void copy_to_host(const Buffer&, void*, std::size_t) override {}
  void copy(const Buffer&, const Buffer&) override {}
  void fill(const Buffer&, Scalar) override {}
  void arange(const Buffer&, double, double) override {}
  void synchronize(Device) override {}
  void cast(const Buffer&, const Buffer&, const ElementwiseLayout&) override {}
  void unary(Op, const Buffer&, const Buffer&, const UnaryParams&, const ElementwiseLayout&) override {}
  void unary_backward(Op, const Buffer&, const Buffer&, const Buffer&, const UnaryParams&,
                      const ElementwiseLayout&) override {}
  void binary(Op, const Buffer&, const Buffer&, const Buffer&, const ElementwiseLayout&) override {}
  void where(const Buffer&, const Buffer&, const Buffer&, const Buffer&, const ElementwiseLayout&) override {}
  bool has_inf_nan(const Buffer&) override { return false; }
  ReductionOps& reductions() override { return backend(Device::cpu()).reductions(); }
  ShapeOps& shape_ops() override { return backend(Device::cpu()).shape_ops(); }
  MatmulOps& matmul_ops() override { return backend(Device::cpu()).matmul_ops(); }
  SparseOps& sparse_ops() override { return backend(Device::cpu()).sparse_ops(); }
  ConvOps& conv_ops() override { return backend(Device::cpu()).conv_ops(); }
  AttentionOps& attention_ops() override { return backend(Device::cpu()).attention_ops(); }
  LinalgOps& linalg_ops() override { return backend(Device::cpu()).linalg_ops(); }
  FftOps& fft_ops() override { return backend(Device::cpu()).fft_ops(); }
};

TEST(Boundary, OutOfRangeEnumsAreInvalidArgument) {
  const auto bad_dtype = static_cast<DType>(42);
  EXPECT_EQ(expect_error([&] { (void)empty({2}, bad_dtype); }, ErrorKind::InvalidArgument,
                         "dtype value 42 is not a DType"), "");
  EXPECT_EQ(expect_error([&] { (void)zeros({2}, bad_dtype); }, ErrorKind::InvalidArgument,
                         "full: dtype value 42 is not a DType"), "");
  EXPECT_EQ(expect_error([&] { (void)zeros({2}).to(bad_dtype); }, ErrorKind::InvalidArgument, "is not a DType"), "");
  EXPECT_FALSE(supports(Op::Add, bad_dtype));

  const Device bad_device{static_cast<DeviceKind>(2), 0};
  EXPECT_EQ(bad_device.str(), "device-kind-2:0");
  EXPECT_EQ(expect_error([&] { (void)zeros({2}, DType::F32, bad_device); }, ErrorKind::InvalidArgument,
                         "backend: device kind 2 is not a DeviceKind"), "");
  EXPECT_EQ(expect_error([] { register_backend(std::make_shared<BogusKindBackend>()); }, ErrorKind::InvalidArgument,
                         "register_backend: device kind 2 is not a DeviceKind"), "");
  EXPECT_EQ(expect_error([&] { (void)backend(bad_device); }, ErrorKind::InvalidArgument, "device kind 2"), "");
  EXPECT_FALSE(supports(Op::Add, DType::F32, bad_device));
}

// ---- devices ----

TEST(Boundary, DevicesPrintTheirIndexAndMissingGpusAreUnsupported) {
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_EQ((Device{DeviceKind::CPU, 1}).str(), "cpu:1");
  EXPECT_EQ(Device::cuda(3).str(), "cuda:3");
  EXPECT_EQ(expect_error([] { (void)zeros({1}, DType::F32, Device{DeviceKind::CPU, 1}); }, ErrorKind::InvalidArgument,
                         "device cpu:1 is not available"), "");
  // ferrite/cuda.hpp: without a GPU, every control that needs one throws Unsupported (the
  // CUDA build used to say InvalidArgument here, the CPU-only build Unsupported). On a GPU
  // machine these calls succeed, which the CUDA tests cover; the part below applies only
  // without one (a condition, not a skip: a GPU check must show no skipped test).
  if (cuda::device_count() > 0) return;
  for (auto call : std::vector<std::function<void()>>{[] { (void)cuda::current_stream(0); },
                                                      [] { (void)cuda::default_stream(0); },
                                                      [] { cuda::empty_cache(0); },
                                                      [] { cuda::reset_peak_memory(0); }})
    EXPECT_EQ(expect_error(call, ErrorKind::Unsupported, ""), "");
}

// ---- Scalars ----

TEST(Boundary, ScalarToInt64IsDefinedOrAnError) {
  EXPECT_EQ(Scalar(2.7).to_int64(), 2);
  EXPECT_EQ(Scalar(-2.7).to_int64(), -2);
  EXPECT_EQ(Scalar(-9223372036854775808.0).to_int64(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(Scalar(std::numeric_limits<std::int64_t>::max()).to_int64(), std::numeric_limits<std::int64_t>::max());
  for (double v : {std::nan(""), 1e300, -1e300, 9223372036854775808.0, std::numeric_limits<double>::infinity()})
    EXPECT_EQ(expect_error([v] { (void)Scalar(v).to_int64(); }, ErrorKind::InvalidArgument,
                           "cannot be converted to type int64 without overflow"), "")
        << v;
  EXPECT_FALSE(Scalar(std::numeric_limits<std::uint64_t>::max()).is_integral());
  EXPECT_TRUE(Scalar(std::uint64_t(1) << 63 >> 1).is_integral());
}

TEST(Boundary, IntegerFillsCheckForOverflow) {
  EXPECT_EQ(expect_error([] { (void)full({1}, std::numeric_limits<std::uint64_t>::max(), DType::I64); },
                         ErrorKind::InvalidArgument,
                         "full: value 1.8446744073709552e+19 cannot be converted to type I64 without overflow"), "");
  EXPECT_EQ(expect_error([] { (void)full({1}, std::int64_t(1) << 40, DType::I32); }, ErrorKind::InvalidArgument,
                         "full: value 1099511627776 cannot be converted to type I32"), "");
  EXPECT_EQ(expect_error([] { (void)full({1}, std::nan(""), DType::I32); }, ErrorKind::InvalidArgument,
                         "cannot be converted to type I32"), "");
  EXPECT_EQ(expect_error([] { (void)full({1}, 1e19, DType::I64); }, ErrorKind::InvalidArgument,
                         "cannot be converted to type I64"), "");
  EXPECT_EQ(full({1}, std::numeric_limits<std::int64_t>::min(), DType::I64).item<std::int64_t>(),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(full({1}, -2147483648LL, DType::I32).item<std::int32_t>(), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(full({1}, -2.5, DType::I32).item<std::int32_t>(), -2);  // truncation, as torch.full
  EXPECT_EQ(full({1}, std::numeric_limits<std::uint64_t>::max(), DType::F32).item<float>(), 18446744073709551616.0f);
}

// ---- host memory ----

TEST(HostScratch, ImpossibleSizesAreOutOfMemory) {
  EXPECT_EQ(expect_error([] { (void)detail::host_scratch<float>(std::int64_t(1) << 62, "t"); }, ErrorKind::OutOfMemory,
                         "t: out of host memory for a scratch buffer of 4611686018427387904 elements of 4 bytes"), "");
  EXPECT_EQ(expect_error([] { (void)detail::host_scratch<float>(-1, "t"); }, ErrorKind::OutOfMemory, ""), "");
  EXPECT_EQ(detail::host_scratch<int>(3, "t", 7), (std::vector<int>{7, 7, 7}));
}

// fftfreq and rfftfreq build their n values on the host: an n no host can hold was a
// std::length_error (2^62, 2^63 - 1) or std::bad_alloc (2^40) leaving the library (found by
// api_fuzz_test, seeds 1 and 2). These sizes fail before any allocation, under ASan too.
TEST(HostScratch, FrequenciesOfAnImpossibleLengthAreOutOfMemory) {
  EXPECT_EQ(expect_error([] { (void)fft::fftfreq(std::numeric_limits<std::int64_t>::max()); }, ErrorKind::OutOfMemory,
                         "fftfreq: out of host memory for a scratch buffer of 9223372036854775807 elements of 8 bytes"),
            "");
  EXPECT_EQ(expect_error([] { (void)fft::rfftfreq(std::int64_t(1) << 62, 1.0, DType::F64); }, ErrorKind::OutOfMemory,
                         "rfftfreq: out of host memory"), "");
  EXPECT_EQ(fft::rfftfreq(4).to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f}));
}

// A host request larger than the host's physical memory is refused before malloc: where the
// kernel overcommits (the GPU machine), malloc of 8 TiB succeeded and zero-filling it ran past
// the CUDA API fuzz's call limit (fftfreq, linspace and chunk's index list at 2^40 + 3; session
// 17). Here the bound is what refuses, whatever vm.overcommit_memory says.
TEST(HostScratch, MoreThanThePhysicalMemoryIsRefusedUpFront) {
  const std::uint64_t physical = detail::host_physical_memory_bytes();
  ASSERT_GT(physical, std::uint64_t(1) << 26);
  const auto count = static_cast<std::int64_t>(physical / sizeof(double) + 1);
  EXPECT_EQ(expect_error([&] { (void)detail::host_scratch<double>(count, "t"); }, ErrorKind::OutOfMemory,
                         "t: out of host memory for a scratch buffer of " + std::to_string(count) + " elements"), "");
  EXPECT_EQ(expect_error([] { (void)fft::fftfreq((std::int64_t(1) << 40) + 3); }, ErrorKind::OutOfMemory,
                         "fftfreq: out of host memory"), "");
  EXPECT_EQ(expect_error([] { (void)linspace(0, 1, (std::int64_t(1) << 40) + 3, DType::I64); }, ErrorKind::OutOfMemory,
                         "linspace: out of host memory"), "");
  // chunk of an empty dim into 2^40 + 3 pieces: the sizes list alone is 8 TiB.
  EXPECT_EQ(expect_error([] { (void)chunk(zeros({1, 0, 3}), (std::int64_t(1) << 40) + 3, 1); }, ErrorKind::OutOfMemory,
                         "chunk: out of host memory"), "");
  // The CPU backend's allocator: the same bound, and the next allocation works.
  EXPECT_EQ(expect_error([&] { (void)empty({static_cast<std::int64_t>(physical / 8 + 1)}, DType::F64); },
                         ErrorKind::OutOfMemory, "more than the host's " + std::to_string(physical) +
                                                     " bytes of physical memory"), "");
  EXPECT_EQ(full({2}, 3.0, DType::F64).to_vector<double>(), (std::vector<double>{3, 3}));
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

// In a death-test child: caps the address space at 1 GiB above what is mapped now, runs op and
// exits 0 for Error(OutOfMemory), 1 when op fitted, 2 for another Error, 4 for anything else.
[[noreturn]] void run_with_capped_memory(const std::function<void()>& op) {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  statm >> pages;
  const rlim_t cap = pages * 4096 + (rlim_t(1) << 30);
  const rlimit limit{cap, cap};
  setrlimit(RLIMIT_AS, &limit);
  int code = 1;
  try {
    op();
  } catch (const Error& e) {
    code = e.kind() == ErrorKind::OutOfMemory ? 0 : 2;
  } catch (...) {
    code = 4;  // a std exception left the library
  }
  std::exit(code);
}

// The ops, whose CPU kernels need host scratch about twice their output, in a child
// process whose address space is capped at 1 GiB above what it uses: the output fits, the
// scratch does not. Each must end in Error(OutOfMemory), never std::bad_alloc.
TEST(HostScratch, OpsTurnAFailedScratchAllocationIntoOutOfMemory) {
  if (kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer reserves address space and aborts on failed allocations";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::vector<std::pair<const char*, std::function<void()>>> ops{
      {"embedding_backward",
       [] { (void)nn::embedding_backward(zeros({1, 1}, DType::F16), from_vector<std::int64_t>({0}, {1}), 200000000); }},
      {"scatter_add",
       [] {
         (void)scatter_add(zeros({200000000}, DType::F16), 0, from_vector<std::int64_t>({0}, {1}), zeros({1}, DType::F16));
       }},
      {"matmul", [] { (void)matmul(zeros({200000000, 1}, DType::BF16), zeros({1, 1}, DType::BF16)); }},
      {"prod_backward", [] { (void)prod_backward(zeros({1}, DType::F16), zeros({1, 100000000}, DType::F16), 1); }},
      // 128 MiB of BF16 q = k = v and out fit, their three 512 MiB copies in double do not.
      {"scaled_dot_product_attention",
       [] {
         const Tensor q = zeros({1, 1, 1 << 20, 64}, DType::BF16);
         (void)nn::scaled_dot_product_attention(q, q, q);
       }},
  };
  for (const auto& [name, op] : ops) EXPECT_EXIT(run_with_capped_memory(op), ::testing::ExitedWithCode(0), "") << name;
}

}  // namespace
}  // namespace ferrite

// The front-end conveniences on a GPU: printing (a device copy to the host, device= shown),
// operators with a Scalar made on the tensor's device, factories built on the device, and
// item/to_vector conversions. Values are compared with the same calls on the CPU.
#include <gtest/gtest.h>

#include "conformance/conformance.hpp"
#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA

namespace ferrite {
namespace {

const Device kGpu = Device::cuda(0);

TEST(CudaFrontend, PrintsFromTheDevice) {
  EXPECT_EQ(to_string(from_vector<float>({1, 2, 3, 4}, {2, 2}, kGpu)),
            "tensor([[1., 2.],\n        [3., 4.]], device='cuda:0')");
  EXPECT_EQ(to_string(zeros({0}, DType::I32, kGpu)), "tensor([], device='cuda:0', dtype=I32)");
  EXPECT_EQ(to_string(from_vector(std::vector<bool>{true, false}, {2}, kGpu)),
            "tensor([ True, False], device='cuda:0', dtype=Bool)");
  const std::string cpu = to_string(arange(0.0, 2000.0, 1.0, DType::BF16));
  const std::string gpu = to_string(arange(0.0, 2000.0, 1.0, DType::BF16, kGpu));
  // The same text, with the device before the dtype.
  EXPECT_EQ(gpu, cpu.substr(0, cpu.rfind("dtype=")) + "device='cuda:0', " + cpu.substr(cpu.rfind("dtype=")));
}

TEST(CudaFrontend, OperatorsWithScalarsRunOnTheDevice) {
  const Tensor a = from_vector<std::int32_t>({-7, 7, 5}, {3});
  const Tensor g = a.to(kGpu);
  EXPECT_EQ(((g + 1) * 2 % 5).to_vector<std::int32_t>(), ((a + 1) * 2 % 5).to_vector<std::int32_t>());
  EXPECT_EQ(((g > 0) & (g != 7)).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ((~g ^ 3).to_vector<std::int32_t>(), (~a ^ 3).to_vector<std::int32_t>());
  const Tensor h = from_vector<float>({3, 5}, {2}).to(DType::BF16);
  Tensor hg = h.to(kGpu);
  hg *= 0.5;
  hg -= hg;
  EXPECT_EQ(hg.device(), kGpu);
  EXPECT_EQ(hg.dtype(), DType::BF16);
  EXPECT_EQ((1 - hg).to(DType::F32).to_vector<float>(), (std::vector<float>{1, 1}));
}

TEST(CudaFrontend, FactoriesMatchTheCpu) {
  for (DType d : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64, DType::Bool}) {
    EXPECT_EQ(eye(5, 7, d, kGpu).to_bytes(), eye(5, 7, d).to_bytes()) << dtype_name(d);
    EXPECT_EQ(ones({3, 2}, d, kGpu).to_bytes(), ones({3, 2}, d).to_bytes()) << dtype_name(d);
    const Tensor like = zeros({4, 1}, d, kGpu);
    EXPECT_EQ(zeros_like(like).device(), kGpu);
    EXPECT_EQ(ones_like(like).to_bytes(), ones({4, 1}, d).to_bytes()) << dtype_name(d);
    if (d == DType::Bool) continue;
    EXPECT_EQ(linspace(-3, 7.5, 1001, d, kGpu).to_bytes(), linspace(-3, 7.5, 1001, d).to_bytes()) << dtype_name(d);
    EXPECT_EQ(logspace(0, 3, 7, 2, d, kGpu).to_bytes(), logspace(0, 3, 7, 2, d).to_bytes()) << dtype_name(d);
  }
  const Tensor t = tensor({{1.f, 2.f}, {3.f, 4.f}}, kGpu);
  EXPECT_EQ(t.device(), kGpu);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
}

TEST(CudaFrontend, ItemAndToVectorConvert) {
  const Tensor x = from_vector<float>({2.75f, -1e20f, 0.f}, {3}, kGpu);
  EXPECT_EQ(x.to_vector<std::int32_t>(), x.to(Device::cpu()).to_vector<std::int32_t>());
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{2.75, -1e20f, 0}));
  EXPECT_EQ(full({}, 7, DType::I64, kGpu).item<double>(), 7.0);
  EXPECT_EQ(conformance::expect_error([] { (void)zeros({1}, DType::C64, kGpu).item<float>(); },
                                      ErrorKind::DTypeMismatch, "to_vector: asked for F32"),
            "");
}

}  // namespace
}  // namespace ferrite

#endif  // FERRITE_WITH_CUDA

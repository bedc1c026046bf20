// Strided views on a GPU: the same sequence of view ops and in-place writes through views on
// the CPU and on CUDA must leave the same values (and the view metadata is device-independent).
// Offsets off the 16-byte grid reach every kind of kernel here (vectorised engines must not
// assume the allocation's alignment).
#include <gtest/gtest.h>

#include "conformance/conformance.hpp"
#include "ferrite/ferrite.hpp"

#if FERRITE_WITH_CUDA

namespace ferrite {
namespace {

// Views, writes through views, and ops reading views; returns the tensors to compare.
std::vector<Tensor> scenario(Device device) {
  const Tensor x = arange(0, 4 * 6 * 5, 1, DType::F32, device).reshape({4, 6, 5}) * 0.25 - 7;
  std::vector<Tensor> results;
  results.push_back(x.transpose(0, 2).contiguous());
  results.push_back(x.slice(1, 1, 6, 2).contiguous());
  results.push_back(x.select(2, 3).t().contiguous());
  results.push_back(x.diagonal(1, 1, 2).contiguous());
  results.push_back(x.flatten().unfold(0, 7, 3).contiguous());
  results.push_back(exp(x.permute({2, 0, 1})).contiguous());          // memory-order unary
  results.push_back(add(x.narrow(2, 1, 3), x.narrow(2, 2, 3)));       // misaligned operands
  results.push_back(sum(x.transpose(1, 2), 1));                       // reduction of a view
  results.push_back(softmax(x.narrow(2, 1, 4), -1));                  // row-wise op of a view
  results.push_back(matmul(x.select(0, 1).t(), x.select(0, 2)));      // product of views
  results.push_back(x.narrow(2, 1, 3).to(DType::BF16));               // cast of an offset view
  results.push_back(relu(x.select(0, 3).select(0, 5).narrow(0, 1, 3))); // unary on an offset view
  const Tensor y = x.clone();
  y.select(1, 2).fill_(3);                  // offset view, off the grid
  y.transpose(0, 2).select(0, 4).mul_(-1);  // strided target
  y.narrow(2, 1, 2).add_(y.narrow(2, 2, 2)); // overlapping operand, read first
  y.diagonal(0, 1, 2).zero_();
  y.slice(0, 0, 4, 3).copy_(x.select(0, 1)); // broadcast source
  results.push_back(y);
  const Tensor e = from_vector<float>({1, 2, 3}, {3, 1}).to(device).expand({3, 4});
  results.push_back(add(e, e.t().t()));
  return results;
}

TEST(CudaViews, ViewsAndWritesThroughViewsMatchTheCpu) {
  const std::vector<Tensor> cpu = scenario(Device::cpu());
  const std::vector<Tensor> gpu = scenario(Device::cuda(0));
  ASSERT_EQ(cpu.size(), gpu.size());
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_EQ(gpu[i].device(), Device::cuda(0)) << "result " << i;
    EXPECT_EQ(gpu[i].shape(), cpu[i].shape()) << "result " << i;
    EXPECT_EQ(gpu[i].strides(), cpu[i].strides()) << "result " << i;
    EXPECT_EQ(conformance::compare(gpu[i].to(Device::cpu()), cpu[i], conformance::default_tolerance(cpu[i].dtype())), "")
        << "result " << i;
  }
}

TEST(CudaViews, ExpandedTargetsAreRefusedOnTheDevice) {
  const Tensor e = zeros({1, 3}, DType::F32, Device::cuda(0)).expand({2, 3});
  EXPECT_EQ(conformance::expect_error([&] { e.fill_(1); }, ErrorKind::InvalidArgument, "single memory location"), "");
}

}  // namespace
}  // namespace ferrite

#endif

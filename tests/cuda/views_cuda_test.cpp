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

// The engine's view kernels (elementwise_views.cuh) against the CPU, bit for bit: narrowed
// rows at odd offsets and widths (the strided kernel; 3-D views that merge to 2-D; sizes
// that are no multiple of any vector width or of its items per thread), transposed operands
// beside row-strided, broadcast and Bool ones (the tile; edges of partial tiles), each dtype
// size the kernels move.
std::vector<Tensor> engine_views(Device device) {
  std::vector<Tensor> results;
  for (const DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
    const Tensor x = (arange(0, 67 * 133, 1, DType::F32, device).reshape({67, 133}) * 0.01 - 40).to(dtype);
    const Tensor y = (arange(0, 133 * 67, 1, DType::F32, device).reshape({133, 67}) * 0.02 - 90).to(dtype);
    const Tensor xn = x.narrow(1, 3, 129), yn = y.t().narrow(1, 1, 129);  // [67, 129] each
    results.push_back(exp(xn * 0.01));                                     // product contiguous
    results.push_back(exp(xn));                                            // strided unary
    results.push_back(sigmoid(x.narrow(0, 1, 65).narrow(1, 1, 131)));
    // The first row on the 16-byte grid, the others not (row stride 133): no vector loads.
    results.push_back(add(x.narrow(1, 0, 128), x.narrow(1, 4, 128)));
    results.push_back(mul(x.narrow(1, 0, 128), x.select(0, 0).narrow(0, 0, 128)));
    results.push_back(add(xn, yn));                                        // tile + row-strided
    results.push_back(mul(y.t(), x));                                      // tile
    results.push_back(sub(x, y.t()));                                      // tile, the other operand
    results.push_back(div(y.t().narrow(0, 5, 61), x.narrow(0, 2, 61).select(1, 7).unsqueeze(1)));  // column bcast
    results.push_back(maximum(y.t(), x.select(0, 3)));                     // row broadcast
    results.push_back(lt(y.t(), x));                                       // Bool out
    results.push_back(where(x > 0, y.t(), x));                             // 3 operands, Bool cond
    const Tensor x3 = x.reshape({67, 7, 19}).narrow(2, 1, 17);             // [67, 7, 17], rows 19 apart
    results.push_back(neg(x3));
    results.push_back(add(x3, x3.narrow(0, 0, 1)));                        // broadcast over dim 0
    if (dtype == DType::F16 || dtype == DType::BF16) results.push_back(relu(xn, DType::F32));  // mixed
    // Casts and backward passes read views through the strided kernel too.
    results.push_back(xn.to(DType::F64));                                  // strided cast
    results.push_back(x3.to(dtype == DType::F32 ? DType::BF16 : DType::F32));  // rank 3
    results.push_back(gelu_backward(yn, xn));                              // both strided
    results.push_back(silu_backward(xn, x.narrow(1, 0, 129)));             // first row aligned
    results.push_back(tanh_backward(y.t(), y.t()));                        // alike: memory order
    results.push_back(sigmoid_backward(x, y.t()));                         // one transposed: copied
  }
  const Tensor i = arange(0, 41 * 57, 1, DType::I64, device).reshape({41, 57}) - 1000;
  results.push_back(neg(i.narrow(1, 1, 55)));
  results.push_back(remainder(i.t().narrow(1, 1, 40), i.t().narrow(1, 0, 40) * 0 + 7));
  const Tensor b = remainder(i, i * 0 + 3) == 0;                            // Bool
  results.push_back(logical_not(b.narrow(1, 1, 55)));
  results.push_back(logical_xor(b.t(), b.t().contiguous()));
  // Casts to and from integer, Bool and complex dtypes read views through the strided kernel.
  results.push_back(i.narrow(1, 1, 55).to(DType::F32));
  results.push_back(b.narrow(1, 1, 55).to(DType::I32));
  results.push_back(i.slice(1, 0, 57, 3).to(DType::Bool));
  results.push_back(i.reshape({41, 3, 19}).narrow(2, 1, 17).to(DType::I32));  // rank 3
  const Tensor z = i.narrow(1, 1, 55).to(DType::C128);                        // from an integer view
  results.push_back(z.narrow(1, 1, 53).to(DType::C64));                       // complex to complex
  results.push_back(z.narrow(1, 1, 53).to(DType::F64));                       // complex to real
  results.push_back(b.narrow(0, 1, 39).narrow(1, 2, 50).to(DType::C64));      // Bool to complex
  results.push_back(exp(full({1, 3}, 0.5, DType::F32, device).narrow(1, 1, 1)));  // one element
  results.push_back(exp(zeros({4, 3}, DType::F32, device).narrow(1, 1, 0)));        // empty
  const Tensor big = arange(0, 1 << 20, 1, DType::F32, device).reshape({1024, 1024}) * 1e-6;
  results.push_back(exp(big.narrow(1, 1, 1021)));                         // many blocks
  results.push_back(add(big.t(), big));                                   // many tiles
  return results;
}

TEST(CudaViews, ViewKernelsOfTheEngineMatchTheCpuBitForBit) {
  const std::vector<Tensor> cpu = engine_views(Device::cpu());
  const std::vector<Tensor> gpu = engine_views(Device::cuda(0));
  ASSERT_EQ(cpu.size(), gpu.size());
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_EQ(gpu[i].shape(), cpu[i].shape()) << "result " << i;
    // The conformance suite's tolerances: exp and sigmoid round differently in the host's and
    // the device's math libraries. (Views against dense operands on one device, bit for bit,
    // is the suite's RowStridedConformance pass.)
    EXPECT_EQ(conformance::compare(gpu[i].to(Device::cpu()), cpu[i], conformance::default_tolerance(cpu[i].dtype())), "")
        << "result " << i;
  }
}

// Views whose element offsets pass 2^31 while their element count is small: the unary ops
// stage them through a dense copy, the binary ones index in 64 bits. 4 GiB of device memory.
TEST(CudaViews, OffsetsPastThirtyTwoBitsAreStillRight) {
  const std::int64_t row = (std::int64_t(1) << 31) + 16;
  const Tensor storage = zeros({2, row}, DType::Bool, Device::cuda(0));
  storage.select(0, 1).narrow(0, 0, 8).fill_(true);
  const Tensor view = storage.narrow(1, 3, 3);  // rows 2^31 + 16 elements apart
  const std::vector<std::uint8_t> expected_not = {1, 1, 1, 0, 0, 0};
  const Tensor flipped = logical_not(view);
  EXPECT_TRUE(flipped.is_contiguous());
  EXPECT_EQ(flipped.to(Device::cpu()).to_bytes(), std::vector<std::uint8_t>(expected_not.begin(), expected_not.end()));
  const Tensor both = logical_xor(view, storage.narrow(1, 5, 3));
  EXPECT_EQ(both.to(Device::cpu()).to_bytes(), std::vector<std::uint8_t>(6, 0));
  EXPECT_EQ(view.to(DType::I32).to(Device::cpu()).to_vector<std::int32_t>(), std::vector<std::int32_t>({0, 0, 0, 1, 1, 1}));
}

// The same for a floating cast and a backward pass, which read smaller views through their
// strides (8 GiB of device memory).
TEST(CudaViews, FloatingCastsAndBackwardPassesPastThirtyTwoBitOffsets) {
  const std::int64_t row = (std::int64_t(1) << 31) + 16;
  const Tensor storage = zeros({2, row}, DType::BF16, Device::cuda(0));
  storage.select(0, 1).narrow(0, 0, 8).fill_(2.0);
  const Tensor view = storage.narrow(1, 3, 3);  // [[0, 0, 0], [2, 2, 2]], rows 2^31 + 16 apart
  EXPECT_EQ(view.to(DType::F32).to(Device::cpu()).to_vector<float>(), std::vector<float>({0, 0, 0, 2, 2, 2}));
  const Tensor grad = relu_backward(view, view);  // grad * (x > 0)
  EXPECT_TRUE(grad.is_contiguous());
  EXPECT_EQ(grad.to(DType::F32).to(Device::cpu()).to_vector<float>(), std::vector<float>({0, 0, 0, 2, 2, 2}));
}

// Casts of every dtype pair and reductions of transposed views allocate only their result on
// the device (a dense copy of the view would be a second allocation). The reductions are
// short enough along the dim (< 1024) that the column kernel takes no scratch for partials.
TEST(CudaViews, CastsAndReductionsOfViewsAllocateOnlyTheirResult) {
  const Device gpu = Device::cuda(0);
  const Tensor x = arange(0, 64 * 48, 1, DType::F32, gpu).reshape({64, 48}) * 0.5 - 700;
  auto allocations_of = [&](auto&& op) {
    synchronize(gpu);
    const auto before = memory_stats(gpu).allocations;
    const Tensor out = op();
    return memory_stats(gpu).allocations - before;
  };
  for (const DType from : {DType::I32, DType::Bool, DType::C64}) {
    const Tensor v = x.to(from).narrow(1, 1, 45);
    for (const DType to : {DType::F32, DType::I64, DType::C128}) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " to " + std::string(dtype_name(to)));
      EXPECT_EQ(allocations_of([&] { return v.to(to); }), 1);
      EXPECT_EQ(v.to(to).to(Device::cpu()).to_bytes(), v.to(Device::cpu()).to(to).to_bytes());
    }
  }
  const Tensor xt = x.t();  // [48, 64]
  for (const std::int64_t d : {0, 1}) {
    SCOPED_TRACE("dim " + std::to_string(d));
    EXPECT_EQ(allocations_of([&] { return sum(xt, d); }), 1);
    EXPECT_EQ(allocations_of([&] { return amax(xt, d, true); }), 1);
    EXPECT_EQ(allocations_of([&] { return argmax(xt, d); }), 1);
    // The same op over the dense block, bit for bit: sum over dim d of x.t() is over 1 - d of x.
    EXPECT_EQ(sum(xt, d).to(Device::cpu()).to_bytes(), sum(x, 1 - d).to(Device::cpu()).to_bytes());
    EXPECT_EQ(argmax(xt, d).to(Device::cpu()).to_bytes(), argmax(x, 1 - d).to(Device::cpu()).to_bytes());
  }
}

TEST(CudaViews, ExpandedTargetsAreRefusedOnTheDevice) {
  const Tensor e = zeros({1, 3}, DType::F32, Device::cuda(0)).expand({2, 3});
  EXPECT_EQ(conformance::expect_error([&] { e.fill_(1); }, ErrorKind::InvalidArgument, "single memory location"), "");
}

}  // namespace
}  // namespace ferrite

#endif

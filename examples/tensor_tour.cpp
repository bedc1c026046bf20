// A tour of ferrite's tensor API for a LibTorch user (docs/api.md): factories, operators,
// printing, views that share storage, in-place writes through views, reductions and a matrix
// product. Runs on the first GPU when there is one, else on the CPU backend. Exit status 0
// when every printed result is the expected one.
#include <ferrite/ferrite.hpp>

#include <cmath>
#include <iostream>

using namespace ferrite;

int main() {
  const Device device = cuda_device_count() > 0 ? Device::cuda(0) : Device::cpu();
  bool ok = true;
  auto expect = [&ok](bool condition, const char* what) {
    if (!condition) std::cerr << "unexpected: " << what << "\n";
    ok = ok && condition;
  };

  // Factories and operators; a scalar takes the tensor's dtype.
  const Tensor x = tensor({{1.f, -2.f, 3.f}, {-4.f, 5.f, -6.f}}, device);
  const Tensor bias = full({3}, 0.5, DType::F32, device);
  const Tensor y = relu(x + bias).to(DType::BF16);
  std::cout << "relu(x + bias) in BF16:\n" << y << "\n";
  expect(sum(y).item<double>() == 10.5, "sum of relu(x + bias)");

  // Views share storage: a transposed view, a column, a strided slice.
  const Tensor grid = arange(0, 12, 1, DType::F32, device).reshape({3, 4});
  const Tensor column = grid.select(1, 2);                 // grid[:, 2]
  const Tensor every_other = grid.slice(1, 0, 4, 2);       // grid[:, ::2]
  std::cout << "grid:\n" << grid << "\ngrid.t() strides: " << shape_str(grid.t().strides())
            << ", column: " << column << "\n";
  expect(grid.t().storage() == grid.storage(), "t() is a view");
  expect(column.to_vector<float>() == std::vector<float>{2, 6, 10}, "select");

  // In-place writes land in the base tensor, through any view.
  column.fill_(-1);
  every_other.mul_(10);
  grid.select(0, 0) += 100;
  std::cout << "after writes through views:\n" << grid << "\n";
  expect(grid.to_vector<float>() ==
             std::vector<float>{100, 101, 90, 103, 40, 5, -10, 7, 80, 9, -10, 11},
         "writes through views");

  // Ops take views directly; results are contiguous.
  const Tensor gram = matmul(grid, grid.t());              // [3, 3]
  auto [best, where_best] = max(grid, 1);                  // values and indices along dim 1
  std::cout << "grid @ grid.t():\n" << gram << "\nrow maxima " << best << " at " << where_best << "\n";
  expect(where_best.to_vector<std::int64_t>() == std::vector<std::int64_t>{3, 0, 0}, "max indices");
  expect(gram.is_contiguous() && std::abs(gram.to_vector<float>()[0] - 38910.0f) < 1e-3f, "matmul of views");

  // Errors name the op, the dtypes and the shapes.
  try {
    (void)(x + y);  // F32 + BF16: no silent promotion
    expect(false, "mixed dtypes refused");
  } catch (const Error& e) {
    std::cout << "error as expected: " << e.what() << "\n";
    expect(e.kind() == ErrorKind::DTypeMismatch, "DTypeMismatch");
  }
  std::cout << (ok ? "tensor_tour: all results as expected\n" : "tensor_tour: FAILED\n");
  return ok ? 0 : 1;
}

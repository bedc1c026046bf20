#include <ferrite/ferrite.hpp>

#include <iostream>

int main() {
  const ferrite::Tensor a = ferrite::from_vector<float>({1, 2, 3}, {3});
  const ferrite::Tensor b = ferrite::full({3}, 10.0f);
  const auto sum = ferrite::add(a, b).to_vector<float>();
  std::cout << "consumer: " << sum[0] << " " << sum[1] << " " << sum[2] << "\n";

  // The README's example in the operator style: the installed headers carry the operators,
  // factories and printing.
  using namespace ferrite;
  const Tensor x = tensor({{1.f, -2.f, 3.f}, {-4.f, 5.f, -6.f}});
  const Tensor bias = full({3}, 0.5);
  const Tensor y = relu(x + bias).to(DType::BF16);
  std::cout << y << "\n";
  const bool printed = to_string(y) == "tensor([[1.5000, 0.0000, 3.5000],\n        [0.0000, 5.5000, 0.0000]], dtype=BF16)";
  const double total = ferrite::sum(y).item<double>();  // BF16 read as double (a host cast)
  return sum == std::vector<float>{11, 12, 13} && printed && total == 10.5 ? 0 : 1;
}

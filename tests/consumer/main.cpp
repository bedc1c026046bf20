#include <ferrite/ferrite.hpp>

#include <iostream>

int main() {
  const ferrite::Tensor a = ferrite::from_vector<float>({1, 2, 3}, {3});
  const ferrite::Tensor b = ferrite::full({3}, 10.0f);
  const auto sum = ferrite::add(a, b).to_vector<float>();
  std::cout << "consumer: " << sum[0] << " " << sum[1] << " " << sum[2] << "\n";
  return sum == std::vector<float>{11, 12, 13} ? 0 : 1;
}

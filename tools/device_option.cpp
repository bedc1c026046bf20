// `--device` parsing: strict, so that a typo is an error instead of some other device.
#include <charconv>

#include "tools/commands.hpp"

namespace ferrite::tools {

std::optional<Device> parse_device(std::string_view text) {
  if (text == "cpu" || text == "cpu:0") return Device::cpu();
  if (text == "cuda") return Device::cuda(0);
  constexpr std::string_view prefix = "cuda:";
  if (!text.starts_with(prefix)) return std::nullopt;
  const std::string_view digits = text.substr(prefix.size());
  // from_chars would accept a leading '-'; an index is digits only.
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  int index = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (error != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;  // out of int range
  return Device::cuda(index);
}

}  // namespace ferrite::tools

// `ferrite generate`: sample text from a checkpoint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ferrite/device.hpp"

namespace ferrite::gpt {

struct GenerateOptions {
  std::string checkpoint;
  std::string prompt = "\n";
  std::optional<Device> device;
  std::int64_t tokens = 200;  // bytes to generate
  double temperature = 0.8;   // 0: greedy
  std::int64_t top_k = 40;    // 0: the whole vocabulary
  std::uint64_t seed = 42;
};

int run_generate(const GenerateOptions& options);

}  // namespace ferrite::gpt

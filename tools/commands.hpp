// The ferrite program's commands and their options, shared by tools/ferrite_main.cpp (which
// parses the command line into them) and the files that run each command.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/device.hpp"

namespace ferrite::tools {

/// `--device` values: "cpu", "cuda" (cuda:0) or "cuda:N" with N a decimal int. Anything else
/// (a sign, spaces, "gpu", "cpu:1", an index that does not fit an int) gives nullopt. Whether
/// the device exists on this machine is checked when the command runs.
std::optional<Device> parse_device(std::string_view text);

int run_info();

struct BenchOptions {
  std::optional<Device> device;  // unset: cuda:0 when there is a GPU, else the CPU
  std::string json_path;
  std::vector<std::string> filter;  // case names or globs; empty: every case
  bool quick = false;
  bool list = false;
};
int run_bench(const BenchOptions& options);

}  // namespace ferrite::tools

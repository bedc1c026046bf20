// The ferrite command line program.
//   ferrite info                 devices, library versions, registered backends
//   ferrite bench [options]      the benchmark cases (see bench/bench_main.cpp)
#include <cstring>
#include <iostream>
#include <string>

#include "ferrite/error.hpp"

namespace ferrite::tools {
int run_info();
int run_bench(int argc, char** argv);
}  // namespace ferrite::tools

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  try {
    if (command == "info") return ferrite::tools::run_info();
    if (command == "bench") return ferrite::tools::run_bench(argc - 2, argv + 2);
  } catch (const ferrite::Error& e) {
    std::cerr << "ferrite " << command << ": " << ferrite::error_kind_name(e.kind()) << ": " << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: ferrite info\n"
               "       ferrite bench [--device cpu|cuda:N] [--json FILE] [--quick] [--filter TEXT]\n";
  return command.empty() || command == "help" || command == "--help" ? 0 : 2;
}

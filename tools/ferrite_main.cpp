// The ferrite command line program.
//   ferrite info                 devices, library versions, registered backends
//   ferrite bench [options]      the benchmark cases (bench/bench_main.cpp; `ferrite bench --help`)
// Exit status: 0 success (and -h/--help), 1 the command failed, 2 a usage error.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "ferrite/error.hpp"
#include "tools/commands.hpp"

namespace {

constexpr int kUsageError = 2;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ferrite: a C++20/CUDA tensor library's command line program", "ferrite"};
  app.require_subcommand(1);
  CLI::App* info = app.add_subcommand("info", "Devices, compute capability, memory; CUDA, cuBLAS, cuDNN, NCCL versions");
  CLI::App* bench = app.add_subcommand("bench", "Time the benchmark cases of docs/performance.md on one device");
  ferrite::tools::BenchOptions bench_options;
  ferrite::tools::add_bench_options(*bench, bench_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help is a success (stdout); every other parse error is a usage error (stderr).
    const int code = app.exit(e);
    return code == 0 ? 0 : kUsageError;
  }

  const char* command = info->parsed() ? "info" : "bench";
  try {
    if (info->parsed()) return ferrite::tools::run_info();
    return ferrite::tools::run_bench(bench_options);
  } catch (const ferrite::Error& e) {
    std::cerr << "ferrite " << command << ": " << ferrite::error_kind_name(e.kind()) << ": " << e.what() << "\n";
  } catch (const std::exception& e) {
    // Not expected (the library throws only ferrite::Error), but a message beats an abort.
    std::cerr << "ferrite " << command << ": " << e.what() << "\n";
  }
  return 1;
}

// The ferrite command line program.
//   ferrite info                 devices, library versions, registered backends
//   ferrite bench [options]      the benchmark cases (bench/bench_main.cpp; `ferrite bench --help`)
// Exit status: 0 success (and -h/--help), 1 the command failed, 2 a usage error.
// Every option is declared here: CLI11 is a large header, so one translation unit includes it.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "ferrite/error.hpp"
#include "tools/commands.hpp"

namespace {

constexpr int kUsageError = 2;

using ferrite::tools::BenchOptions;

void add_bench_options(CLI::App& command, BenchOptions& options) {
  command
      .add_option_function<std::string>(
          "--device",
          [&options](const std::string& text) {
            options.device = ferrite::tools::parse_device(text);
            if (!options.device)
              throw CLI::ValidationError("--device", "'" + text + "' is not a device: use cpu, cuda or cuda:N");
          },
          "cpu, cuda or cuda:N (default: cuda:0 when there is a GPU, else cpu)")
      ->type_name("DEVICE");
  CLI::Option* json =
      command.add_option("--json", options.json_path, "Also write the results to this file (JSON)")->type_name("FILE");
  command
      .add_option("--filter", options.filter,
                  "Only the cases whose names match one of these comma-separated patterns: an exact name, or a "
                  "glob with * ? [...] (softmax*, *_bf16); a pattern that matches no case is an error")
      ->delimiter(',')
      ->type_name("NAMES");
  command.add_flag("--quick", options.quick, "Small sizes and 5 samples: a sanity run, not a measurement");
  command.add_flag("--list", options.list, "Print the names and shapes of the cases (after --filter) without timing them")
      ->excludes(json);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ferrite: a C++20/CUDA tensor library's command line program", "ferrite"};
  app.require_subcommand(1);
  CLI::App* info = app.add_subcommand("info", "Devices, compute capability, memory; CUDA, cuBLAS, cuDNN, NCCL versions");
  CLI::App* bench = app.add_subcommand("bench", "Time the benchmark cases of docs/performance.md on one device");
  BenchOptions bench_options;
  add_bench_options(*bench, bench_options);

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

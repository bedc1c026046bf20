// The ferrite command line program.
//   ferrite info                 devices, library versions, registered backends
//   ferrite bench [options]      the benchmark cases (bench/bench_main.cpp; `ferrite bench --help`)
//   ferrite train [options]      train the GPT example (examples/gpt/; `ferrite train --help`)
//   ferrite generate [options]   sample text from a `ferrite train` checkpoint
// Exit status: 0 success (and -h/--help), 1 the command failed, 2 a usage error.
// Every option is declared here: CLI11 is a large header, so one translation unit includes it.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "examples/gpt/generate.hpp"
#include "examples/gpt/train.hpp"
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

// --device for train and generate, with the same strict parsing as bench.
void add_device_option(CLI::App& command, std::optional<ferrite::Device>& device) {
  command
      .add_option_function<std::string>(
          "--device",
          [&device](const std::string& text) {
            device = ferrite::tools::parse_device(text);
            if (!device)
              throw CLI::ValidationError("--device", "'" + text + "' is not a device: use cpu, cuda or cuda:N");
          },
          "cpu, cuda or cuda:N (default: cuda:0 when there is a GPU, else cpu)")
      ->type_name("DEVICE");
}

void add_train_options(CLI::App& command, ferrite::gpt::TrainOptions& options) {
  command.add_option("--preset", options.preset, "Model size: tiny (CPU-sized) or gpt2-small (12 x 768, context 1024)")
      ->capture_default_str();
  add_device_option(command, options.device);
  command.add_option("--data", options.data,
                     "Training text: a UTF-8 file, or a directory whose files are concatenated in name order "
                     "(default: /usr/share/common-licenses); the last 10% is the validation split")
      ->type_name("PATH");
  command.add_option("--steps", options.steps, "Train until this many optimizer steps in all (tiny: 400)")
      ->check(CLI::NonNegativeNumber);
  command.add_option("--batch", options.batch, "Sequences per micro-batch (tiny: 16)")->check(CLI::PositiveNumber);
  command.add_option("--accum", options.accum, "Micro-batches accumulated per optimizer step (default 1)")
      ->check(CLI::PositiveNumber);
  command.add_option("--lr", options.lr, "Peak learning rate (tiny: 3e-3)")->check(CLI::PositiveNumber);
  command.add_option("--dropout", options.dropout,
                     "Dropout probability of the embeddings and of each residual branch (GPT-2 used 0.1; "
                     "default 0, or the resumed checkpoint's)")
      ->check(CLI::Range(0.0, 0.999999));
  command.add_option("--warmup", options.warmup, "Linear warm-up steps")->check(CLI::NonNegativeNumber);
  command.add_option("--schedule-steps", options.schedule_steps,
                     "Length of the cosine schedule (default: --steps, or the resumed checkpoint's)")
      ->check(CLI::PositiveNumber);
  command.add_option("--seed", options.seed, "Seed of the initial weights and the batch sampler");
  command.add_option("--log-every", options.log_every, "A progress line every N steps")->check(CLI::PositiveNumber);
  command.add_option("--eval-every", options.eval_every, "Validation loss every N steps and at the end (0: never)")
      ->check(CLI::NonNegativeNumber);
  command.add_option("--eval-batches", options.eval_batches, "Batches in a validation pass")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command.add_option("--resume", options.resume, "Continue from this checkpoint (bit for bit)")->type_name("FILE");
  command.add_option("--checkpoint", options.checkpoint, "Write a checkpoint (safetensors) here at the end")
      ->type_name("FILE");
  command.add_option("--save-every", options.save_every, "Also write the checkpoint every N steps")
      ->check(CLI::NonNegativeNumber);
  command.add_option("--precision", options.precision,
                     "f32, or bf16: BF16 activations as PyTorch's autocast (linear layers, GELU, attention); "
                     "master weights, AdamW, the residual stream, LayerNorm and the loss stay F32")
      ->check(CLI::IsMember({"f32", "bf16"}))
      ->capture_default_str();
  command.add_option("--json", options.json, "Also write a JSON Lines log (config, each progress line, summary)")
      ->type_name("FILE");
  command.add_option("--dump-grads", options.dump_grads,
                     "Write the first step's gradients (before clipping) to this safetensors file")
      ->type_name("FILE");
  command.add_flag("--profile", options.profile,
                   "Time every step after the first phase by phase (each bracketed by device synchronisations, "
                   "so profiled steps run slower) and print where the time goes at the end");
}

void add_generate_options(CLI::App& command, ferrite::gpt::GenerateOptions& options) {
  command.add_option("--checkpoint", options.checkpoint, "A checkpoint written by ferrite train")
      ->required()
      ->type_name("FILE");
  command.add_option("--prompt", options.prompt, "Text to continue");
  add_device_option(command, options.device);
  command.add_option("--tokens", options.tokens, "Bytes to generate")->check(CLI::NonNegativeNumber)->capture_default_str();
  command.add_option("--temperature", options.temperature, "Sampling temperature (0: greedy)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command.add_option("--top-k", options.top_k, "Sample among the k most likely bytes (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command.add_option("--seed", options.seed, "Sampling seed")->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ferrite: a C++20/CUDA tensor library's command line program", "ferrite"};
  app.require_subcommand(1);
  CLI::App* info = app.add_subcommand("info", "Devices, compute capability, memory; CUDA, cuBLAS, cuDNN, NCCL versions");
  CLI::App* bench = app.add_subcommand("bench", "Time the benchmark cases of docs/performance.md on one device");
  BenchOptions bench_options;
  add_bench_options(*bench, bench_options);
  CLI::App* train = app.add_subcommand("train", "Train the GPT example (examples/gpt/) on a text file");
  ferrite::gpt::TrainOptions train_options;
  add_train_options(*train, train_options);
  CLI::App* generate = app.add_subcommand("generate", "Sample text from a ferrite train checkpoint");
  ferrite::gpt::GenerateOptions generate_options;
  add_generate_options(*generate, generate_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help is a success (stdout); every other parse error is a usage error (stderr).
    const int code = app.exit(e);
    return code == 0 ? 0 : kUsageError;
  }

  const char* command = info->parsed() ? "info" : train->parsed() ? "train" : generate->parsed() ? "generate" : "bench";
  try {
    if (info->parsed()) return ferrite::tools::run_info();
    if (train->parsed()) return ferrite::gpt::run_train(train_options);
    if (generate->parsed()) return ferrite::gpt::run_generate(generate_options);
    return ferrite::tools::run_bench(bench_options);
  } catch (const ferrite::Error& e) {
    std::cerr << "ferrite " << command << ": " << ferrite::error_kind_name(e.kind()) << ": " << e.what() << "\n";
  } catch (const std::exception& e) {
    // Not expected (the library throws only ferrite::Error), but a message beats an abort.
    std::cerr << "ferrite " << command << ": " << e.what() << "\n";
  }
  return 1;
}

// `ferrite train`: the training loop with progress lines, evaluation, checkpoints and a JSON log.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ferrite/device.hpp"

namespace ferrite::gpt {

struct TrainOptions {
  std::string preset = "tiny";
  std::optional<Device> device;  // unset: cuda:0 when there is a GPU, else the CPU
  std::string data;              // file or directory; empty: kDefaultCorpus
  std::optional<std::int64_t> steps;           // train until this many optimizer steps in all
  std::optional<std::int64_t> batch;           // sequences per micro-batch
  std::optional<std::int64_t> accum;           // micro-batches per step
  std::optional<double> lr;                    // peak learning rate
  std::optional<double> dropout;               // embedding and residual dropout probability
  std::optional<std::int64_t> warmup;          // warm-up steps
  std::optional<std::int64_t> schedule_steps;  // cosine length (default: --steps, or the checkpoint's)
  std::optional<std::uint64_t> seed;
  std::optional<std::int64_t> log_every, eval_every;
  std::int64_t eval_batches = 8;
  std::string resume;      // checkpoint to continue from
  std::string checkpoint;  // written at the end (and every save_every steps)
  std::int64_t save_every = 0;
  std::string precision = "f32";  // "f32", or "bf16": BF16 activations as autocast (model.hpp, Precision)
  std::string json;        // JSON Lines log
  std::string dump_grads;  // the first step's gradients (before clipping), for parity checks
  bool profile = false;    // time each step's phases (phase_profile.hpp) and print them at the end
};

/// Runs the command; returns the exit status. Errors are ferrite::Error.
int run_train(const TrainOptions& options);

/// The device to use: the one asked for (checked to exist) or the default.
Device resolve_device(const std::optional<Device>& requested);

}  // namespace ferrite::gpt

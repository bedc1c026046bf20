// A training checkpoint: the weights, AdamW's moments, the step, the batch sampler's and the
// dropout generator's states and both configs, in one safetensors file. Tensor names are GPT-2's ("h.0.attn.c_attn.weight")
// for the weights and "optim.m." / "optim.v." + that name for the moments.
#pragma once

#include <cstdint>
#include <string>

#include "examples/gpt/config.hpp"
#include "examples/gpt/model.hpp"

namespace ferrite::gpt {

struct TrainState {
  ModelConfig model;
  TrainConfig train;
  Weights weights;
  Weights m, v;                 // AdamW moments (undefined tensors when not loaded)
  std::int64_t step = 0;        // optimizer steps taken
  std::uint64_t data_rng = 0;   // SplitMix64 state of the training batch sampler
  random::RngState dropout_rng;  // the dropout generator's (seed, offset)
};

void save_checkpoint(const std::string& path, const TrainState& state);

/// Loads a checkpoint written by save_checkpoint onto `device`. With `with_optimizer`
/// false only the weights are read (for sampling). InvalidArgument for a missing tensor or
/// one whose shape is not what the stored config implies.
TrainState load_checkpoint(const std::string& path, Device device, bool with_optimizer);

}  // namespace ferrite::gpt

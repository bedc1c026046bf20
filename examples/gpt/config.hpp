// The model's shape and the training hyperparameters, and the named presets.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace ferrite::gpt {

/// The architecture: everything that decides the parameters' names and shapes. Two configs
/// that differ here cannot share a checkpoint.
struct ModelConfig {
  std::int64_t vocab = 256;  // byte-level tokens: no tokenizer to download
  std::int64_t context = 64;
  std::int64_t n_layer = 2;
  std::int64_t n_head = 4;
  std::int64_t n_embd = 64;

  std::int64_t head_dim() const { return n_embd / n_head; }
  /// Parameters of the model (the tied LM head counted once).
  std::int64_t parameter_count() const;
  /// Model FLOPs per trained token (forward + backward): 6 per weight of the matrices the
  /// token passes through, plus the attention scores and their use (PaLM's accounting).
  double flops_per_token() const;
  bool operator==(const ModelConfig&) const = default;
  std::string str() const;  // "layers 2, heads 4, width 64, context 64, vocab 256"
  /// Stored in a checkpoint's metadata as model.* keys, and read back (InvalidArgument when
  /// a key is missing or not a number).
  void to_metadata(std::map<std::string, std::string>& metadata) const;
  static ModelConfig from_metadata(const std::map<std::string, std::string>& metadata);
};

/// What the training loop does with the model; stored in a checkpoint so that a resumed run
/// (and examples/gpt/torch_reference.py) continues with the same schedule.
struct TrainConfig {
  std::int64_t batch = 16;           // sequences per micro-batch
  std::int64_t accum = 1;            // micro-batches per optimizer step
  double lr = 1e-3;                  // peak learning rate
  double min_lr_ratio = 0.1;         // the cosine ends at lr * min_lr_ratio
  std::int64_t warmup = 20;          // linear warm-up steps
  std::int64_t schedule_steps = 0;   // the cosine's length (0: the run's --steps)
  double weight_decay = 0.1;         // on matrices only
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double grad_clip = 1.0;            // global gradient norm; 0 disables
  std::uint64_t seed = 1337;         // initial weights and the batch sampler
  double dropout = 0;                // embedding and residual dropout (GPT-2: 0.1); 0 disables

  void to_metadata(std::map<std::string, std::string>& metadata) const;
  static TrainConfig from_metadata(const std::map<std::string, std::string>& metadata);
};

struct Preset {
  ModelConfig model;
  TrainConfig train;
  std::int64_t steps = 0;       // default --steps
  std::int64_t log_every = 10;  // default progress line interval
  std::int64_t eval_every = 50;
};

/// "tiny" (a CPU-sized model) or "gpt2-small" (12 layers, 12 heads, width 768, context
/// 1024); InvalidArgument naming the known presets otherwise.
Preset preset(std::string_view name);

}  // namespace ferrite::gpt

// Presets and the metadata form of the configs.
#include "examples/gpt/config.hpp"

#include <charconv>
#include <sstream>

#include "ferrite/error.hpp"

namespace ferrite::gpt {

std::int64_t ModelConfig::parameter_count() const {
  const std::int64_t c = n_embd;
  const std::int64_t per_block = 2 * c + (3 * c * c + 3 * c) + (c * c + c) + 2 * c + (4 * c * c + 4 * c) + (4 * c * c + c);
  return vocab * c + context * c + n_layer * per_block + 2 * c;
}

double ModelConfig::flops_per_token() const {
  const double c = static_cast<double>(n_embd);
  const double matrices = static_cast<double>(n_layer) * 12.0 * c * c + static_cast<double>(vocab) * c;
  return 6.0 * matrices + 12.0 * static_cast<double>(n_layer) * c * static_cast<double>(context);
}

std::string ModelConfig::str() const {
  std::ostringstream out;
  out << "layers " << n_layer << ", heads " << n_head << ", width " << n_embd << ", context " << context << ", vocab "
      << vocab;
  return out.str();
}

namespace {

const std::string& required(const std::map<std::string, std::string>& metadata, const std::string& key) {
  const auto it = metadata.find(key);
  FERRITE_CHECK(it != metadata.end(), InvalidArgument, "checkpoint: metadata has no '", key,
                "' (not a checkpoint written by ferrite train?)");
  return it->second;
}

std::int64_t int_value(const std::map<std::string, std::string>& metadata, const std::string& key) {
  const std::string& text = required(metadata, key);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  FERRITE_CHECK(error == std::errc{} && end == text.data() + text.size(), InvalidArgument, "checkpoint: metadata '",
                key, "' is '", text, "', not an integer");
  return value;
}

std::uint64_t uint_value(const std::map<std::string, std::string>& metadata, const std::string& key) {
  const std::string& text = required(metadata, key);
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  FERRITE_CHECK(error == std::errc{} && end == text.data() + text.size(), InvalidArgument, "checkpoint: metadata '",
                key, "' is '", text, "', not an unsigned integer");
  return value;
}

double double_value(const std::map<std::string, std::string>& metadata, const std::string& key) {
  const std::string& text = required(metadata, key);
  std::istringstream in(text);
  double value = 0;
  in >> value;
  FERRITE_CHECK(!in.fail() && in.eof(), InvalidArgument, "checkpoint: metadata '", key, "' is '", text,
                "', not a number");
  return value;
}

// Enough digits that the value reads back exactly.
std::string exact(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

}  // namespace

void ModelConfig::to_metadata(std::map<std::string, std::string>& metadata) const {
  metadata["model.vocab"] = std::to_string(vocab);
  metadata["model.context"] = std::to_string(context);
  metadata["model.n_layer"] = std::to_string(n_layer);
  metadata["model.n_head"] = std::to_string(n_head);
  metadata["model.n_embd"] = std::to_string(n_embd);
}

ModelConfig ModelConfig::from_metadata(const std::map<std::string, std::string>& metadata) {
  ModelConfig config;
  config.vocab = int_value(metadata, "model.vocab");
  config.context = int_value(metadata, "model.context");
  config.n_layer = int_value(metadata, "model.n_layer");
  config.n_head = int_value(metadata, "model.n_head");
  config.n_embd = int_value(metadata, "model.n_embd");
  return config;
}

void TrainConfig::to_metadata(std::map<std::string, std::string>& metadata) const {
  metadata["train.batch"] = std::to_string(batch);
  metadata["train.accum"] = std::to_string(accum);
  metadata["train.lr"] = exact(lr);
  metadata["train.min_lr_ratio"] = exact(min_lr_ratio);
  metadata["train.warmup"] = std::to_string(warmup);
  metadata["train.schedule_steps"] = std::to_string(schedule_steps);
  metadata["train.weight_decay"] = exact(weight_decay);
  metadata["train.beta1"] = exact(beta1);
  metadata["train.beta2"] = exact(beta2);
  metadata["train.eps"] = exact(eps);
  metadata["train.grad_clip"] = exact(grad_clip);
  metadata["train.seed"] = std::to_string(seed);
  metadata["train.dropout"] = exact(dropout);
}

TrainConfig TrainConfig::from_metadata(const std::map<std::string, std::string>& metadata) {
  TrainConfig config;
  config.batch = int_value(metadata, "train.batch");
  config.accum = int_value(metadata, "train.accum");
  config.lr = double_value(metadata, "train.lr");
  config.min_lr_ratio = double_value(metadata, "train.min_lr_ratio");
  config.warmup = int_value(metadata, "train.warmup");
  config.schedule_steps = int_value(metadata, "train.schedule_steps");
  config.weight_decay = double_value(metadata, "train.weight_decay");
  config.beta1 = double_value(metadata, "train.beta1");
  config.beta2 = double_value(metadata, "train.beta2");
  config.eps = double_value(metadata, "train.eps");
  config.grad_clip = double_value(metadata, "train.grad_clip");
  config.seed = uint_value(metadata, "train.seed");
  // Checkpoints written before dropout existed trained without it.
  config.dropout = metadata.count("train.dropout") ? double_value(metadata, "train.dropout") : 0.0;
  return config;
}

Preset preset(std::string_view name) {
  Preset p;
  if (name == "tiny") {
    // Sized for two CPU cores: a visibly falling loss within a minute or two.
    p.model = {.vocab = 256, .context = 64, .n_layer = 2, .n_head = 4, .n_embd = 64};
    p.train.batch = 16;
    p.train.lr = 3e-3;
    p.train.warmup = 20;
    p.steps = 400;
    p.log_every = 20;
    p.eval_every = 100;
  } else if (name == "gpt2-small") {
    p.model = {.vocab = 256, .context = 1024, .n_layer = 12, .n_head = 12, .n_embd = 768};
    p.train.batch = 16;
    p.train.lr = 6e-4;
    p.train.warmup = 100;
    p.steps = 2000;
    p.log_every = 10;
    p.eval_every = 200;
  } else {
    FERRITE_THROW(InvalidArgument, "unknown preset '", name, "': use tiny or gpt2-small");
  }
  return p;
}

}  // namespace ferrite::gpt

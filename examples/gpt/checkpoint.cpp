// Checkpoint layout on top of the safetensors reader and writer.
#include "examples/gpt/checkpoint.hpp"

#include "examples/gpt/safetensors.hpp"

namespace ferrite::gpt {

void save_checkpoint(const std::string& path, const TrainState& state) {
  std::map<std::string, std::string> metadata;
  metadata["format"] = "ferrite-gpt-1";
  metadata["step"] = std::to_string(state.step);
  metadata["data_rng"] = std::to_string(state.data_rng);
  metadata["dropout_rng.seed"] = std::to_string(state.dropout_rng.seed);
  metadata["dropout_rng.offset"] = std::to_string(state.dropout_rng.offset);
  state.model.to_metadata(metadata);
  state.train.to_metadata(metadata);
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, tensor] : state.weights.named()) tensors.emplace_back(name, *tensor);
  if (state.m.wte.defined()) {
    for (const auto& [name, tensor] : state.m.named()) tensors.emplace_back("optim.m." + name, *tensor);
    for (const auto& [name, tensor] : state.v.named()) tensors.emplace_back("optim.v." + name, *tensor);
  }
  save_safetensors(path, tensors, metadata);
}

namespace {

std::uint64_t parse_u64(const std::map<std::string, std::string>& metadata, const std::string& key,
                        const std::string& path) {
  const auto it = metadata.find(key);
  FERRITE_CHECK(it != metadata.end() && !it->second.empty() &&
                    it->second.find_first_not_of("0123456789") == std::string::npos,
                InvalidArgument, "checkpoint: ", path, " has no valid '", key, "' in its metadata");
  return std::stoull(it->second);
}

// Fills every tensor of `target` (already shaped from the config) from file[prefix + name].
void take(SafeTensors& file, const std::string& prefix, Weights& target, const std::string& path) {
  for (auto& [name, tensor] : target.named()) {
    const auto it = file.tensors.find(prefix + name);
    FERRITE_CHECK(it != file.tensors.end(), InvalidArgument, "checkpoint: ", path, " has no tensor '", prefix + name,
                  "'");
    FERRITE_CHECK(it->second.shape() == tensor->shape() && it->second.dtype() == tensor->dtype(), InvalidArgument,
                  "checkpoint: ", path, ": '", prefix + name, "' is ", it->second.description(), ", expected ",
                  tensor->description());
    *tensor = it->second;
  }
}

}  // namespace

TrainState load_checkpoint(const std::string& path, Device device, bool with_optimizer) {
  SafeTensors file = load_safetensors(path, device);
  const auto format = file.metadata.find("format");
  FERRITE_CHECK(format != file.metadata.end() && format->second == "ferrite-gpt-1", InvalidArgument, "checkpoint: ",
                path, " is not a ferrite train checkpoint (metadata 'format' is not ferrite-gpt-1)");
  TrainState state;
  state.model = ModelConfig::from_metadata(file.metadata);
  state.train = TrainConfig::from_metadata(file.metadata);
  state.step = static_cast<std::int64_t>(parse_u64(file.metadata, "step", path));
  state.data_rng = parse_u64(file.metadata, "data_rng", path);
  // Checkpoints written before dropout existed have no generator state (they ran without it).
  if (file.metadata.count("dropout_rng.seed")) {
    state.dropout_rng.seed = parse_u64(file.metadata, "dropout_rng.seed", path);
    state.dropout_rng.offset = parse_u64(file.metadata, "dropout_rng.offset", path);
  }
  // Shapes (and dtype) from the config; the values from the file.
  const auto wte = file.tensors.find("wte.weight");
  state.weights = zero_weights(state.model, wte != file.tensors.end() ? wte->second.dtype() : DType::F32, device);
  take(file, "", state.weights, path);
  if (with_optimizer) {
    state.m = zeros_like(state.weights);
    state.v = zeros_like(state.weights);
    take(file, "optim.m.", state.m, path);
    take(file, "optim.v.", state.v, path);
  }
  return state;
}

}  // namespace ferrite::gpt

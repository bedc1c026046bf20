// A small reader and writer of the safetensors format (huggingface/safetensors): an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype, shape and byte
// range (plus a "__metadata__" map of strings), then the raw little-endian bytes.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ferrite/ferrite.hpp"

namespace ferrite::gpt {

struct SafeTensors {
  std::map<std::string, std::string> metadata;
  std::map<std::string, Tensor> tensors;
};

/// Writes the tensors (copied to the host) in the given order. Written to path + ".tmp" and
/// renamed, so an interrupted save never leaves a truncated file under `path`.
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata);

/// Reads every tensor onto `device`. InvalidArgument naming the file for anything malformed
/// (bad header, byte ranges outside the file, a dtype ferrite lacks).
SafeTensors load_safetensors(const std::string& path, Device device);

}  // namespace ferrite::gpt

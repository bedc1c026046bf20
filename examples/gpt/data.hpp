// The training text: a byte corpus split into train and validation, and the batch sampler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferrite/ferrite.hpp"

namespace ferrite::gpt {

/// Where the text comes from when --data is not given: the license texts every Debian
/// system installs (package base-files).
inline constexpr const char* kDefaultCorpus = "/usr/share/common-licenses";

struct Corpus {
  std::string source;               // the path given
  std::int64_t files = 0;           // files read (1 for a file)
  std::vector<std::uint8_t> train;  // the first 90% of the bytes
  std::vector<std::uint8_t> val;    // the last 10%
};

/// Reads `path`: a file, or a directory whose regular files (not symbolic links, not
/// subdirectories) are concatenated in name order. Byte-level tokens, so any encoding works;
/// the text is meant to be UTF-8. InvalidArgument when the path does not exist, is empty, or
/// either split is shorter than context + 1 bytes (one training window).
Corpus load_corpus(const std::string& path, std::int64_t context);

/// splitmix64: a 64-bit state that a checkpoint stores, so a resumed run draws the same
/// batches (examples/gpt/torch_reference.py has the same generator).
struct SplitMix64 {
  std::uint64_t state = 0;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

struct Batch {
  Tensor inputs;   // [B, T] I64
  Tensor targets;  // [B, T] I64, the inputs shifted by one byte
};

/// `batch` windows of context + 1 bytes at offsets rng.next() % (size - context), copied to
/// `device` in one transfer each for inputs and targets.
Batch sample_batch(const std::vector<std::uint8_t>& data, std::int64_t batch, std::int64_t context, SplitMix64& rng,
                   Device device);

}  // namespace ferrite::gpt

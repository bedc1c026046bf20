// Corpus loading and batch sampling.
#include "examples/gpt/data.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace ferrite::gpt {

namespace {

void append_file(const std::filesystem::path& path, std::vector<std::uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  FERRITE_CHECK(in.good(), InvalidArgument, "data: cannot read ", path.string());
  out.insert(out.end(), std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

Corpus load_corpus(const std::string& path, std::int64_t context) {
  namespace fs = std::filesystem;
  Corpus corpus;
  corpus.source = path;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  FERRITE_CHECK(fs::exists(status), InvalidArgument, "data: ", path, " does not exist");
  std::vector<std::uint8_t> bytes;
  if (fs::is_directory(status)) {
    std::vector<fs::path> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(path, error))
      if (!entry.is_symlink() && entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) append_file(file, bytes);
    corpus.files = static_cast<std::int64_t>(files.size());
  } else {
    append_file(path, bytes);
    corpus.files = 1;
  }
  FERRITE_CHECK(!bytes.empty(), InvalidArgument, "data: ", path, " is empty");
  const std::int64_t n = static_cast<std::int64_t>(bytes.size());
  const std::int64_t n_val = n / 10;
  const std::int64_t window = context + 1;
  FERRITE_CHECK(n_val >= window, InvalidArgument, "data: ", path, " has ", n, " bytes; with a context of ", context,
                " it needs at least ", 10 * window, " (the last 10% is the validation split, which must hold one window of ",
                window, " bytes)");
  corpus.train.assign(bytes.begin(), bytes.end() - n_val);
  corpus.val.assign(bytes.end() - n_val, bytes.end());
  return corpus;
}

Batch sample_batch(const std::vector<std::uint8_t>& data, std::int64_t batch, std::int64_t context, SplitMix64& rng,
                   Device device) {
  const std::uint64_t starts = data.size() - static_cast<std::size_t>(context);  // offsets 0 .. size - context - 1
  std::vector<std::int64_t> inputs(static_cast<std::size_t>(batch * context));
  std::vector<std::int64_t> targets(inputs.size());
  for (std::int64_t row = 0; row < batch; ++row) {
    const std::size_t offset = static_cast<std::size_t>(rng.next() % starts);
    for (std::int64_t j = 0; j < context; ++j) {
      inputs[static_cast<std::size_t>(row * context + j)] = data[offset + static_cast<std::size_t>(j)];
      targets[static_cast<std::size_t>(row * context + j)] = data[offset + static_cast<std::size_t>(j) + 1];
    }
  }
  return {from_vector(inputs, {batch, context}, device), from_vector(targets, {batch, context}, device)};
}

}  // namespace ferrite::gpt

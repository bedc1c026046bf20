// Sampling: the model runs on the last `context` bytes; the last position's logits come back
// to the host, where temperature and top-k pick the next byte. (No KV cache: each byte runs
// the whole window again, which is fine at the sizes this example trains.)
#include "examples/gpt/generate.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>

#include "examples/gpt/checkpoint.hpp"
#include "examples/gpt/data.hpp"
#include "examples/gpt/train.hpp"

namespace ferrite::gpt {

namespace {

std::int64_t sample(std::vector<float> logits, double temperature, std::int64_t top_k, SplitMix64& rng) {
  const std::int64_t v = static_cast<std::int64_t>(logits.size());
  if (temperature <= 0) return std::max_element(logits.begin(), logits.end()) - logits.begin();
  std::vector<std::int64_t> order(static_cast<std::size_t>(v));
  std::iota(order.begin(), order.end(), 0);
  const std::int64_t k = top_k > 0 ? std::min(top_k, v) : v;
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](std::int64_t a, std::int64_t b) { return logits[a] > logits[b]; });
  const double top = logits[static_cast<std::size_t>(order[0])];
  std::vector<double> weights(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i)
    weights[i] = std::exp((logits[static_cast<std::size_t>(order[i])] - top) / temperature);
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53 * total;
  for (std::int64_t i = 0; i < k; ++i) {
    if ((u -= weights[i]) < 0) return order[i];
  }
  return order[k - 1];
}

}  // namespace

int run_generate(const GenerateOptions& options) {
  const Device device = resolve_device(options.device);
  const TrainState state = load_checkpoint(options.checkpoint, device, /*with_optimizer=*/false);
  const ModelConfig& mc = state.model;
  std::vector<std::int64_t> tokens(options.prompt.begin(), options.prompt.end());
  for (std::int64_t& t : tokens) t &= 0xFF;  // bytes (char may be signed)
  if (tokens.empty()) tokens.push_back('\n');
  SplitMix64 rng{options.seed};
  std::cout << options.prompt << std::flush;
  for (std::int64_t i = 0; i < options.tokens; ++i) {
    const std::size_t window = std::min<std::size_t>(tokens.size(), static_cast<std::size_t>(mc.context));
    std::vector<std::int64_t> last(tokens.end() - static_cast<std::ptrdiff_t>(window), tokens.end());
    const Tensor idx = from_vector(last, {1, static_cast<std::int64_t>(window)}, device);
    const Tensor logits = forward(state.weights, mc, idx, nullptr);  // [window, vocab]
    const std::int64_t next = sample(logits.select(0, -1).to_vector<float>(), options.temperature, options.top_k, rng);
    tokens.push_back(next);
    std::cout << static_cast<char>(next) << std::flush;
  }
  std::cout << "\n";
  return 0;
}

}  // namespace ferrite::gpt

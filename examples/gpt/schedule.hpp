// The learning rate at each step: linear warm-up, then a cosine down to lr * min_lr_ratio at
// `schedule_steps`, flat after that. Computed on the host (a scalar per step).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "examples/gpt/config.hpp"

namespace ferrite::gpt {

/// `step` counts from 0 (the step about to be taken).
inline double learning_rate(const TrainConfig& config, std::int64_t step) {
  if (step < config.warmup) return config.lr * static_cast<double>(step + 1) / static_cast<double>(config.warmup);
  const double min_lr = config.lr * config.min_lr_ratio;
  if (step >= config.schedule_steps) return min_lr;
  const double progress = static_cast<double>(step - config.warmup) /
                          static_cast<double>(std::max<std::int64_t>(1, config.schedule_steps - config.warmup));
  return min_lr + 0.5 * (1.0 + std::cos(std::numbers::pi * progress)) * (config.lr - min_lr);
}

}  // namespace ferrite::gpt

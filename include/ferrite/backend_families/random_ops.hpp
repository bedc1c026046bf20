// The backend interface of the random draws and dropout (issue #17). Both backends derive
// every element from src/core/philox.hpp with the same counter layout, so a (seed, offset)
// gives the same bits on each. Buffers are validated and contiguous.
#pragma once

#include <cstdint>

#include "ferrite/buffer.hpp"
#include "ferrite/dtype.hpp"

namespace ferrite {

enum class RandomKind : std::uint8_t {
  Uniform,    ///< out = a + b * U[0, 1)
  Normal,     ///< out = a + b * N(0, 1)
  Integer,    ///< out = low + (bits mod range), I32/I64
  Bernoulli,  ///< out = U[0, 1) < p (p = a, or probs[i] when probs is given) ? 1 : 0
};

struct RandomDesc {
  RandomKind kind = RandomKind::Uniform;
  std::uint64_t seed = 0, offset = 0;
  double a = 0, b = 1;              ///< Uniform/Normal: shift and scale; Bernoulli: p
  std::int64_t low = 0;             ///< Integer
  std::uint64_t range = 1;          ///< Integer: high - low, >= 1
};

/// Dropout's parameters: an element is kept when its 24 random bits (word i % 4 of group
/// i / 4, shifted right by 8) are >= threshold = ceil(p * 2^24); kept elements are scaled.
struct DropoutDesc {
  std::uint64_t seed = 0, offset = 0;
  std::uint32_t threshold = 0;
  double scale = 1;  ///< 1 / (1 - p); 0 when p == 1
};

class RandomOps {
 public:
  virtual ~RandomOps() = default;
  /// Fills `out` (float dtype, or I32/I64 for Integer). `probs` (Bernoulli only) has out's
  /// dtype and numel, or is an empty Buffer.
  virtual void fill(const RandomDesc& desc, const Buffer& out, const Buffer& probs) = 0;
  /// out = x * (keep ? scale : 0), mask = keep (Bool). x, out one float dtype.
  virtual void dropout(const DropoutDesc& desc, const Buffer& x, const Buffer& out, const Buffer& mask) = 0;
  /// out = grad * (mask ? scale : 0).
  virtual void dropout_backward(const Buffer& grad, const Buffer& mask, double scale, const Buffer& out) = 0;
};

}  // namespace ferrite

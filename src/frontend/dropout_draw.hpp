// Dropout's keep threshold and scale from its probability, shared by nn::dropout and
// attention's dropout (nn_training.cpp, attention.cpp), so both drop the same elements for the
// same draw.
#pragma once

#include <cmath>
#include <cstdint>

#include "ferrite/error.hpp"

namespace ferrite::frontend {

/// InvalidArgument unless p is in [0, 1] (NaN included).
inline void check_dropout_p(const char* op, const char* name, double p) {
  FERRITE_CHECK(p >= 0 && p <= 1, InvalidArgument, op, ": ", name, " must be in [0, 1], got ", p);
}

/// Keep iff 24 random bits >= ceil(p * 2^24): P(keep) = 1 - p for every p that is a multiple
/// of 2^-24, and within 2^-24 of it otherwise; 0 for p = 0 (everything kept).
inline std::uint32_t dropout_threshold(double p) { return static_cast<std::uint32_t>(std::ceil(p * 16777216.0)); }

/// What kept elements are multiplied by: 1 / (1 - p), 0 when p == 1.
inline double dropout_scale(double p) { return p >= 1 ? 0.0 : 1.0 / (1.0 - p); }

}  // namespace ferrite::frontend

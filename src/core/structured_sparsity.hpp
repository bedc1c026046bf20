// The pruning rule of 2:4 (semi-)structured sparsity, shared by the CPU loop and the CUDA
// kernel so that both backends keep exactly the same elements (ferrite/sparse.hpp,
// docs/families/sparse.md). Compiled for host and device.
#pragma once

#include "core/numeric.hpp"
#include "ferrite/half.hpp"

namespace ferrite::structured {

/// The largest group cuSPARSELt's 50% pattern uses: 4 (2:4) for F16/BF16, 2 (1:2) for F32.
inline constexpr int kMaxGroup = 4;

/// Whether element i of a group outranks element j: NaN above every number, then larger
/// magnitude (|-0| = |+0|), then the lower position on a tie.
FERRITE_HOST_DEVICE bool outranks(float mi, bool nan_i, int i, float mj, bool nan_j, int j) {
  if (nan_i != nan_j) return nan_i;
  if (!nan_i && mi != mj) return mi > mj;
  return i < j;
}

/// out[0, group) = in[0, group) with all but the group / 2 top-ranked elements set to +0; the
/// kept ones are copied bit for bit (a kept -0 stays -0). `group` is 2 or 4; in and out may
/// be the same array.
template <class T>
FERRITE_HOST_DEVICE void prune_group(const T* in, T* out, int group) {
  float magnitude[kMaxGroup];
  bool nan[kMaxGroup];
  T value[kMaxGroup];
  for (int j = 0; j < group; ++j) {
    value[j] = in[j];
    const float w = static_cast<float>(detail::widen(value[j]));
    nan[j] = w != w;
    magnitude[j] = w < 0 ? -w : w;
  }
  const int keep = group / 2;
  for (int j = 0; j < group; ++j) {
    int above = 0;
    for (int i = 0; i < group; ++i)
      if (i != j && outranks(magnitude[i], nan[i], i, magnitude[j], nan[j], j)) ++above;
    out[j] = above < keep ? value[j] : T{};
  }
}

}  // namespace ferrite::structured

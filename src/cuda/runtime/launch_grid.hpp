// Grid sizes for kernel launches, shared by every CUDA family.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ferrite::cuda {

/// Blocks that cover `work` items at `per_block` items each, for kernels that give each
/// block exactly its share (the caller keeps `work` within the grid's 2^31 - 1 blocks).
inline unsigned blocks_for(std::int64_t work, std::int64_t per_block) {
  return static_cast<unsigned>((work + per_block - 1) / per_block);
}

/// Blocks for a grid-stride kernel: enough to cover `work`, at least one, at most `cap`
/// (the kernel's loop covers the rest).
inline unsigned grid_stride_blocks(std::int64_t work, std::int64_t per_block,
                                   std::int64_t cap = std::int64_t(1) << 30) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((work + per_block - 1) / per_block, 1, cap));
}

}  // namespace ferrite::cuda

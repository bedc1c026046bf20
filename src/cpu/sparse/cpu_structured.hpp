// The CPU backend's 2:4 semi-structured sparsity (SparseOps' structured_* methods): the
// shared pruning rule over every group, and the product computed densely from the pruned
// matrix (no compressed form on the CPU).
#pragma once

#include <cstdint>

#include "ferrite/buffer.hpp"

namespace ferrite::cpu::structured_ops {

void prune(const Buffer& dense, const Buffer& out, std::int64_t rows, std::int64_t cols, int group);
void matmul(const Buffer& pruned, const Buffer& b, bool b_transposed, const Buffer& c, bool c_transposed,
            std::int64_t m, std::int64_t k, std::int64_t n);

}  // namespace ferrite::cpu::structured_ops

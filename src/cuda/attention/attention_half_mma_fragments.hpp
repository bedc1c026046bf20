// Index maps of the F16/BF16 tensor-core attention backward (attention_half_mma_bwd.cu), as
// plain constexpr functions so a host unit test (tests/unit/attention_half_mma_fragments_test.cpp)
// can replay one warp's products with them against plain matrix products: a wrong fragment
// index would otherwise only show as wrong numbers on the GPU. The kernels compute their lanes'
// shared-memory addresses and the C -> A register hand-over with these same functions.
//
// Three kinds of map:
//  - the PTX ISA's fragment layout of mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32
//    ("Matrix Fragments for mma.m16n8k16 with floating point type"): which element of A (16x16,
//    row), B (16x8, col) and C/D (16x8, F32) element i of lane `lane` holds, group g = lane / 4,
//    quad lane q = lane % 4. A and B elements come two to a 32-bit register, element 2r (low
//    half) and 2r + 1 (high half) in register r;
//  - the PTX ISA's layout of ldmatrix.sync.aligned.m8n8.x4(.trans).shared.b16: lane l supplies
//    the address of row l % 8 of matrix l / 8 (each row 8 consecutive 16-bit elements, 16
//    bytes); register r of every lane comes from matrix r; without .trans lane l receives
//    (row l / 4, columns 2 (l % 4), + 1) of it, with .trans (rows 2 (l % 4), + 1, column l / 4);
//  - the kernels' own choices: which row and column each lane addresses for each ldmatrix, which
//    streamed row (key or query) an MMA n or k index stands for, and which score accumulators
//    make the second product's A registers.
#pragma once

#if defined(__CUDACC__)
#define FERRITE_HALF_MMA_HD __host__ __device__
#else
#define FERRITE_HALF_MMA_HD
#endif

namespace ferrite::cuda::attention::half_mma {

// ---- PTX fragment layout of m16n8k16 with .f16/.bf16 inputs and .f32 accumulators ----
// A (16 x 16, row): a0, a1 (g, 2q + i % 2), a2, a3 (g + 8, ...), a4, a5 (g, 2q + 8 + i % 2),
// a6, a7 (g + 8, 2q + 8 + i % 2): row g for 0 <= i < 2 or 4 <= i < 6, else g + 8.
FERRITE_HALF_MMA_HD constexpr int a_row(int lane, int i) { return lane / 4 + ((i / 2) % 2 == 1 ? 8 : 0); }
FERRITE_HALF_MMA_HD constexpr int a_col(int lane, int i) { return 2 * (lane % 4) + (i & 1) + (i >= 4 ? 8 : 0); }
// B (16 x 8, k x n, col): b0, b1 (k = 2q + i % 2, n = g), b2, b3 (k = 2q + 8 + i % 2, n = g).
FERRITE_HALF_MMA_HD constexpr int b_row(int lane, int i) { return 2 * (lane % 4) + (i & 1) + (i >= 2 ? 8 : 0); }
FERRITE_HALF_MMA_HD constexpr int b_col(int lane, int /*i*/) { return lane / 4; }
// C/D (16 x 8, F32): c0, c1 (g, 2q + i % 2), c2, c3 (g + 8, 2q + i % 2).
FERRITE_HALF_MMA_HD constexpr int c_row(int lane, int i) { return lane / 4 + 8 * (i >> 1); }
FERRITE_HALF_MMA_HD constexpr int c_col(int lane, int i) { return 2 * (lane % 4) + (i & 1); }

// ---- PTX layout of ldmatrix .m8n8 .x4 .b16 ----
// The row of its matrix whose address lane `lane` supplies, and that matrix.
FERRITE_HALF_MMA_HD constexpr int ldsm_addr_row(int lane) { return lane % 8; }
FERRITE_HALF_MMA_HD constexpr int ldsm_addr_matrix(int lane) { return lane / 8; }
// Element h (0: low half, 1: high half) of the register a lane receives from an 8 x 8 matrix
// (the same for each of the four registers, each from its own matrix).
FERRITE_HALF_MMA_HD constexpr int ldsm_row(int lane, int h, bool trans) {
  return trans ? 2 * (lane % 4) + h : lane / 4;
}
FERRITE_HALF_MMA_HD constexpr int ldsm_col(int lane, int h, bool trans) {
  return trans ? lane / 4 : 2 * (lane % 4) + h;
}

// ---- The kernels' choices ----
// Both kernels run two products per (own tile, streamed tile) pair: a score product C = A_own
// B_streamed^T over the head dims (16 own rows of the warp x 8 streamed rows an n-tile), then C,
// turned into P or dS in registers and rounded to the dtype, as the A operand of C x (streamed
// rows x head dims). All tiles sit in shared memory row-major (one row per query or key, its
// head dims consecutive), so every fragment comes from one ldmatrix.x4 per 4 registers:
//
// The score's A (own rows x dims, one 16-dim k-step): matrix m holds own rows 8 (m % 2) ..
// + 7 and dims 8 (m / 2) .. + 7 of the step, so lane l addresses own row l % 16 at dim
// 8 (l / 16); registers 0..3 are then a0a1, a2a3, a4a5, a6a7, k standing for the step's dims in
// order.
FERRITE_HALF_MMA_HD constexpr int own_addr_row(int lane) { return lane % 16; }
FERRITE_HALF_MMA_HD constexpr int own_addr_col(int lane) { return 8 * (lane / 16); }
// The score's B (streamed rows as n, dims as k) for one n-tile and two k-steps (32 dims): matrix
// m holds the n-tile's 8 streamed rows at dims 8m .. + 7, so lane l addresses the n-tile's
// streamed row l % 8 at dim 8 (l / 8); registers 2s, 2s + 1 are b0b1, b2b3 of k-step s.
FERRITE_HALF_MMA_HD constexpr int score_addr_row(int lane) { return lane % 8; }
FERRITE_HALF_MMA_HD constexpr int score_addr_col(int lane) { return 8 * (lane / 8); }
// The score's n-tile j, index n: streamed row 8j + n of the warp's streamed rows.
FERRITE_HALF_MMA_HD constexpr int score_row(int j, int n) { return 8 * j + n; }
// The second product's k-step J, index k: streamed row 16J + k, so its k = 0..7 are the score's
// n-tile 2J and k = 8..15 its n-tile 2J + 1, in the same order.
FERRITE_HALF_MMA_HD constexpr int second_row(int J, int k) { return 16 * J + k; }
// Hence A register r (elements 2r, 2r + 1: same own row, k = 2q and 2q + 1 (+ 8)) of k-step J is
// score n-tile a_from_c_tile(J, r)'s accumulators a_from_c_reg(r, 0) (low half) and
// a_from_c_reg(r, 1) (high half): (own row g or g + 8, streamed row 2q + h of the n-tile).
FERRITE_HALF_MMA_HD constexpr int a_from_c_tile(int J, int r) { return 2 * J + r / 2; }
FERRITE_HALF_MMA_HD constexpr int a_from_c_reg(int r, int h) { return 2 * (r % 2) + h; }
// The second product's B (streamed rows as k, dims as n) for one k-step and two n-tiles (16
// dims), with .trans: matrix m holds streamed rows 8 (m % 2) .. + 7 of the step and dims
// 8 (m / 2) .. + 7, so lane l addresses streamed row l % 16 of the step at dim 8 (l / 16);
// registers 0, 1 are b0b1, b2b3 of the first n-tile, 2, 3 of the second.
FERRITE_HALF_MMA_HD constexpr int second_addr_row(int lane) { return lane % 16; }
FERRITE_HALF_MMA_HD constexpr int second_addr_col(int lane) { return 8 * (lane / 16); }
// The output's n-tile nt, index n: head dim 8 nt + n (so a lane holds dims 8 nt + 2q, + 1 of
// its rows g and g + 8: one 4-byte store of two F16/BF16 each).
FERRITE_HALF_MMA_HD constexpr int out_dim(int nt, int n) { return 8 * nt + n; }

// ---- The masked dk/dv kernel's mask tile ----
// Shared [64 keys][kMaskTileStride rows] of raw mask elements (1-byte Bool or 2-byte F16/BF16),
// the block's keys by the streamed tile's rows. Role 0's lane reads, for n-tile j, rows
// mask_pair_row(j, lane) and + 1 of its key mask_pair_key(lane, i) (of the warp's 16) as one
// 2- or 4-byte pair: C registers i = 0, 1 (key g) and 2, 3 (key g + 8), i & 1 the pair's half.
constexpr int kMaskTileStride = 66;
FERRITE_HALF_MMA_HD constexpr int mask_tile_at(int key, int row) { return key * kMaskTileStride + row; }
FERRITE_HALF_MMA_HD constexpr int mask_pair_key(int lane, int i) { return lane / 4 + 8 * (i >> 1); }
FERRITE_HALF_MMA_HD constexpr int mask_pair_row(int j, int lane) { return 8 * j + 2 * (lane % 4); }
// The tile is written by 32 threads at a time storing 32 consecutive keys of one row: distinct
// 4-byte banks for elements of `bytes` bytes (each thread's element in a word of its own).
constexpr bool mask_tile_stores_conflict_free(int bytes) {
  bool used[32] = {};
  for (int key = 0; key < 32; ++key) {
    const int bank = (mask_tile_at(key, 0) * bytes / 4) % 32;
    if (used[bank]) return false;
    used[bank] = true;
  }
  return true;
}

// ---- Shared-memory row strides and bank conflicts ----
// Every tile's rows are D + 8 elements apart (16 bytes past a multiple of 128): an ldmatrix
// phase reads one matrix, 8 rows of 16 bytes at the same column, which then fall in 8 distinct
// 16-byte bank groups. Checked here for a stride in elements.
constexpr bool ldsm_conflict_free(int stride_elems) {
  bool used[8] = {};
  for (int r = 0; r < 8; ++r) {
    const int group = (r * stride_elems * 2 / 16) % 8;
    if (used[group]) return false;
    used[group] = true;
  }
  return (stride_elems * 2) % 16 == 0;  // every row 16-byte aligned (cp.async, ldmatrix)
}

// ---- The forward's staged mask tile (attention_half_mma_fwd.cu) ----
// The forward (own rows = query rows, streamed rows = keys, as the dq kernel) stages its mask
// tile row-major, 64 keys a row of `elem`-byte elements (1: Bool, 2: additive), rows
// mask_row_bytes apart (64 elem + 16: on the 16-byte grid for cp.async, and the 8 rows x 4 lanes
// of one read in distinct banks). A lane reads the pair of its score registers i = 2 hr, 2 hr + 1
// of n-tile j (keys score_row(j, c_col(lane, 0)), + 1: c_col's pair) of staged row `row` with
// one 2-byte (Bool) or 4-byte (additive) load at this offset.
FERRITE_HALF_MMA_HD constexpr int mask_row_bytes(int elem) { return 64 * elem + 16; }
FERRITE_HALF_MMA_HD constexpr int mask_pair_offset(int lane, int row, int j, int elem) {
  return row * mask_row_bytes(elem) + score_row(j, c_col(lane, 0)) * elem;
}

}  // namespace ferrite::cuda::attention::half_mma

#undef FERRITE_HALF_MMA_HD

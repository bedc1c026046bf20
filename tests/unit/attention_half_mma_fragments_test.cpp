// The F16/BF16 tensor-core attention backward (src/cuda/attention/attention_half_mma_bwd.cu) on
// the host, no GPU needed: its index maps (attention_half_mma_fragments.hpp: PTX's m16n8k16
// .bf16/.f16 fragment layout, ldmatrix's .x4 and .x4.trans layout, and the kernels' choice of
// addresses, rows, dims and the C -> A register hand-over) replayed for one warp of each
// kernel, with an emulated ldmatrix reading a row-major shared tile and an emulated MMA,
// against plain matrix products: the score product C = A_own B_streamed^T over D dims, then
// X (P or dS, placed in C's accumulators as the kernels place it) times the streamed rows.
// Small integers keep every sum exact, so the comparisons are equalities.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "cuda/attention/attention_half_mma_fragments.hpp"

namespace ferrite::cuda::attention::half_mma {
namespace {

constexpr int kLanes = 32;

using AFrag = double[kLanes][8];  // element i: register i / 2, half i % 2
using BFrag = double[kLanes][4];
using CFrag = double[kLanes][4];
using Regs = double[kLanes][4][2];  // an ldmatrix.x4's four registers, two halves each

// A row-major tile as the kernels stage it (one row per key or query, head dims consecutive).
struct Tile {
  int rows, cols;
  std::vector<double> e;
  double at(int r, int c) const {
    EXPECT_TRUE(r >= 0 && r < rows && c >= 0 && c < cols) << "tile element (" << r << ", " << c << ")";
    return e[static_cast<std::size_t>(r * cols + c)];
  }
};

// ldmatrix.sync.aligned.m8n8.x4(.trans).shared.b16: lane l supplies the (row, column) of row
// l % 8 of matrix l / 8 (16 bytes from there: 8 elements); each lane gets register r from matrix r.
template <class Addr>
void emulated_ldsm(Regs& out, const Tile& t, Addr addr, bool trans) {
  int row_of[4][8], col_of[4][8];
  for (int lane = 0; lane < kLanes; ++lane) {
    const auto [r, c] = addr(lane);
    row_of[ldsm_addr_matrix(lane)][ldsm_addr_row(lane)] = r;
    col_of[ldsm_addr_matrix(lane)][ldsm_addr_row(lane)] = c;
    ASSERT_EQ(c % 8, 0) << "ldmatrix rows start on 16 bytes";
  }
  for (int lane = 0; lane < kLanes; ++lane)
    for (int m = 0; m < 4; ++m)
      for (int h = 0; h < 2; ++h) {
        const int mr = ldsm_row(lane, h, trans), mc = ldsm_col(lane, h, trans);
        out[lane][m][h] = t.at(row_of[m][mr], col_of[m][mr] + mc);
      }
}

// One warp's m16n8k16 from the fragment layout: d = a b + c, every A and B element held by
// exactly one lane.
void emulated_mma(CFrag& c, const AFrag& a, const BFrag& b) {
  double am[16][16] = {}, bm[16][8] = {};
  int a_seen[16][16] = {}, b_seen[16][8] = {};
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 8; ++i) {
      am[a_row(lane, i)][a_col(lane, i)] = a[lane][i];
      ++a_seen[a_row(lane, i)][a_col(lane, i)];
    }
    for (int i = 0; i < 4; ++i) {
      bm[b_row(lane, i)][b_col(lane, i)] = b[lane][i];
      ++b_seen[b_row(lane, i)][b_col(lane, i)];
    }
  }
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k) ASSERT_EQ(a_seen[r][k], 1) << "A element (" << r << ", " << k << ")";
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) ASSERT_EQ(b_seen[k][n], 1) << "B element (" << k << ", " << n << ")";
  for (int lane = 0; lane < kLanes; ++lane)
    for (int i = 0; i < 4; ++i) {
      double sum = c[lane][i];
      for (int k = 0; k < 16; ++k) sum += am[c_row(lane, i)][k] * bm[k][c_col(lane, i)];
      c[lane][i] = sum;
    }
}

// Entries of the PTX ISA's m16n8k16 .f16/.bf16 layout (lane 5: group 1, quad lane 1) and of
// ldmatrix's; every element of A, B and C held exactly once.
TEST(HalfMmaFragments, MatchThePtxLayout) {
  const int a_want[8][2] = {{1, 2}, {1, 3}, {9, 2}, {9, 3}, {1, 10}, {1, 11}, {9, 10}, {9, 11}};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(a_row(5, i), a_want[i][0]) << i;
    EXPECT_EQ(a_col(5, i), a_want[i][1]) << i;
  }
  const int b_want[4] = {2, 3, 10, 11};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(b_row(5, i), b_want[i]) << i;
    EXPECT_EQ(b_col(5, i), 1) << i;
  }
  EXPECT_EQ(c_row(5, 0), 1);
  EXPECT_EQ(c_col(5, 1), 3);
  EXPECT_EQ(c_row(31, 3), 15);
  EXPECT_EQ(c_col(31, 3), 7);
  // ldmatrix: lane 5 gets (row 1, cols 2, 3); with .trans (rows 2, 3, col 1).
  EXPECT_EQ(ldsm_row(5, 0, false), 1);
  EXPECT_EQ(ldsm_col(5, 1, false), 3);
  EXPECT_EQ(ldsm_row(5, 1, true), 3);
  EXPECT_EQ(ldsm_col(5, 0, true), 1);
  int a_seen[16][16] = {}, b_seen[16][8] = {}, c_seen[16][8] = {}, l_seen[2][8][8] = {};
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 8; ++i) ++a_seen[a_row(lane, i)][a_col(lane, i)];
    for (int i = 0; i < 4; ++i) ++b_seen[b_row(lane, i)][b_col(lane, i)], ++c_seen[c_row(lane, i)][c_col(lane, i)];
    for (int t = 0; t < 2; ++t)
      for (int h = 0; h < 2; ++h) ++l_seen[t][ldsm_row(lane, h, t == 1)][ldsm_col(lane, h, t == 1)];
  }
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k) EXPECT_EQ(a_seen[r][k], 1);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) EXPECT_EQ(b_seen[k][n] * c_seen[k][n], 1);
  for (int t = 0; t < 2; ++t)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) EXPECT_EQ(l_seen[t][r][c], 1);
}

// The kernels' hard-coded uses of the layout: a lane's score register i is own row g + 8 (i >> 1)
// (row0 + 8 hr in the kernels) and streamed row score_row(j, c_col(lane, i)); the output store
// writes registers 2 hr, 2 hr + 1 of n-tile nt as dims out_dim(nt, 2q) and + 1 of row g + 8 hr.
TEST(HalfMmaFragments, KernelsHardCodedRowsAndStores) {
  for (int lane = 0; lane < kLanes; ++lane)
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(c_row(lane, i), lane / 4 + 8 * (i >> 1));
      for (int nt = 0; nt < 16; ++nt)
        EXPECT_EQ(out_dim(nt, c_col(lane, i)), out_dim(nt, 2 * (lane % 4)) + (i & 1));
    }
  EXPECT_TRUE(ldsm_conflict_free(64 + 8));
  EXPECT_TRUE(ldsm_conflict_free(128 + 8));
  EXPECT_FALSE(ldsm_conflict_free(64));  // rows 128 bytes apart: an 8-way conflict
}

// One warp of a kernel: own rows own0 .. + 15 of a 64-row own tile, streamed rows s0 .. s0 +
// 8 NT - 1 of a 64-row streamed tile (two, for the score and for the second product), D dims.
// The score exactly as score() addresses it, X placed in its accumulators as the kernels' dS/P
// loop does, then second() with its A built from them (a_from_c_*) and its B by ldmatrix.trans.
void replay_warp(unsigned seed, int D, int NT, int own0, int s0) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(-8, 8);
  auto tile = [&](int rows, int cols) {
    Tile t{rows, cols, std::vector<double>(static_cast<std::size_t>(rows * cols))};
    for (double& e : t.e) e = u(rng);
    return t;
  };
  const Tile own = tile(64, D), stream = tile(64, D), stream2 = tile(64, D), x = tile(16, 8 * NT);

  CFrag c[8];  // NT <= 8
  for (auto& t : c)
    for (auto& l : t)
      for (double& e : l) e = 0;
  for (int ch = 0; ch < D; ch += 32) {
    AFrag a[2];
    for (int st = 0; st < 2; ++st) {
      Regs r;
      emulated_ldsm(
          r, own,
          [&](int lane) { return std::pair{own0 + own_addr_row(lane), ch + 16 * st + own_addr_col(lane)}; }, false);
      for (int lane = 0; lane < kLanes; ++lane)
        for (int i = 0; i < 8; ++i) a[st][lane][i] = r[lane][i / 2][i % 2];
    }
    for (int j = 0; j < NT; ++j) {
      Regs r;
      emulated_ldsm(
          r, stream, [&](int lane) { return std::pair{s0 + 8 * j + score_addr_row(lane), ch + score_addr_col(lane)}; },
          false);
      for (int st = 0; st < 2; ++st) {
        BFrag b;
        for (int lane = 0; lane < kLanes; ++lane)
          for (int i = 0; i < 4; ++i) b[lane][i] = r[lane][2 * st + i / 2][i % 2];
        emulated_mma(c[j], a[st], b);
      }
    }
  }
  for (int j = 0; j < NT; ++j)
    for (int lane = 0; lane < kLanes; ++lane)
      for (int i = 0; i < 4; ++i) {
        const int row = c_row(lane, i), r = score_row(j, c_col(lane, i));
        double want = 0;
        for (int d = 0; d < D; ++d) want += own.at(own0 + row, d) * stream.at(s0 + r, d);
        ASSERT_EQ(c[j][lane][i], want)
            << "score, D " << D << " own row " << row << " streamed row " << r;
      }

  // X into the accumulators: register i of n-tile j is (own row c_row, streamed row score_row).
  for (int j = 0; j < NT; ++j)
    for (int lane = 0; lane < kLanes; ++lane)
      for (int i = 0; i < 4; ++i)
        c[j][lane][i] = x.at(c_row(lane, i), score_row(j, c_col(lane, i)));
  CFrag o[16];  // D / 8 <= 16
  for (auto& t : o)
    for (auto& l : t)
      for (double& e : l) e = 0;
  for (int J = 0; J < NT / 2; ++J) {
    AFrag a;
    for (int lane = 0; lane < kLanes; ++lane)
      for (int r = 0; r < 4; ++r)
        for (int h = 0; h < 2; ++h)
          a[lane][2 * r + h] = c[a_from_c_tile(J, r)][lane][a_from_c_reg(r, h)];
    // The A operand's element (row, k) must be X's (row, second_row(J, k)): checked through the
    // product below, and directly here for a clearer message.
    for (int lane = 0; lane < kLanes; ++lane)
      for (int i = 0; i < 8; ++i)
        ASSERT_EQ(a[lane][i], x.at(a_row(lane, i), second_row(J, a_col(lane, i)))) << "A from C, lane " << lane;
    for (int np = 0; np < D / 16; ++np) {
      Regs r;
      emulated_ldsm(
          r, stream2,
          [&](int lane) { return std::pair{s0 + 16 * J + second_addr_row(lane), 16 * np + second_addr_col(lane)}; },
          true);
      for (int half = 0; half < 2; ++half) {
        BFrag b;
        for (int lane = 0; lane < kLanes; ++lane)
          for (int i = 0; i < 4; ++i) b[lane][i] = r[lane][2 * half + i / 2][i % 2];
        emulated_mma(o[2 * np + half], a, b);
      }
    }
  }
  for (int nt = 0; nt < D / 8; ++nt)
    for (int lane = 0; lane < kLanes; ++lane)
      for (int i = 0; i < 4; ++i) {
        const int row = c_row(lane, i), dim = out_dim(nt, c_col(lane, i));
        double want = 0;
        for (int r = 0; r < 8 * NT; ++r) want += x.at(row, r) * stream2.at(s0 + r, dim);
        ASSERT_EQ(o[nt][lane][i], want)
            << "second product, D " << D << " own row " << row << " dim " << dim;
      }
  // Every output dim exactly once per row.
  std::vector<int> dims(static_cast<std::size_t>(D));
  for (int nt = 0; nt < D / 8; ++nt)
    for (int n = 0; n < 8; ++n) ++dims[static_cast<std::size_t>(out_dim(nt, n))];
  for (int k : dims) EXPECT_EQ(k, 1);
}

// The dq kernel: warp (row group rg, key half kh) takes own rows 16 rg .. and the 32 keys 32 kh
// .. of the tile (4 score n-tiles): S = Q K^T / dP = dO V^T, then dQ += dS K.
TEST(HalfMmaFragments, DqWarpReplaysBothProducts) {
  for (const int d : {64, 128})
    for (int rg = 0; rg < 4; ++rg)
      for (int kh = 0; kh < 2; ++kh) replay_warp(11u + static_cast<unsigned>(8 * rg + kh), d, 4, 16 * rg, 32 * kh);
}

// The dk/dv kernel: warp (key group kg) takes own keys 16 kg .. and all 64 rows of the streamed
// tile (8 score n-tiles): S^T = K Q^T / dP^T = V dO^T, then dV += P^T dO / dK += dS^T Q.
TEST(HalfMmaFragments, DkdvWarpReplaysBothProducts) {
  for (const int d : {64, 128})
    for (int kg = 0; kg < 4; ++kg) replay_warp(51u + static_cast<unsigned>(kg), d, 8, 16 * kg, 0);
}

}  // namespace
}  // namespace ferrite::cuda::attention::half_mma

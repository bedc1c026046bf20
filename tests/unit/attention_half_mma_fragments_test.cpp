// The F16/BF16 tensor-core attention backward (src/cuda/attention/attention_half_mma_bwd.cu) on
// the host, no GPU needed: its index maps (attention_half_mma_fragments.hpp: PTX's m16n8k16
// .bf16/.f16 fragment layout, ldmatrix's .x4 and .x4.trans layout, and the kernels' choice of
// addresses, rows, dims and the C -> A register hand-over) replayed for one warp of each
// kernel, with an emulated ldmatrix reading a row-major shared tile and an emulated MMA,
// against plain matrix products: the score product C = A_own B_streamed^T over D dims, then
// X (P or dS, placed in C's accumulators as the kernels place it) times the streamed rows.
// Small integers keep every sum exact, so the comparisons are equalities.
//
// The emulated hardware (which lane holds which element after an ldmatrix or an MMA, which lane
// supplies which row address) follows the documented layouts written out below as literal
// tables, not the header's maps: an emulation built from the maps would agree with a wrong map.
// The header's maps are compared with the tables entry by entry; the kernels' own choices (which
// row and dim each lane addresses, the C -> A hand-over) are checked through the replay.
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

// ---- The documented layouts, as data ----
// Owner of a matrix element: the lane and the index of the element in that lane's fragment
// (a_i, b_i, c_i of the MMA; for ldmatrix, the half of the destination register: 0 the low 16
// bits, 1 the high). Grids in the PTX ISA figures' orientation (row, column). Sources, the PTX ISA
// (https://docs.nvidia.com/cuda/parallel-thread-execution/): "Matrix Fragments for mma.m16n8k16
// with floating point type" (#warp-level-matrix-fragment-mma-16816-float: the A, B and C/D
// figures and their row/col formulas for .f16/.bf16 inputs and .f32 accumulators) and
// "Warp-level matrix load instruction: ldmatrix" (#warp-level-matrix-instructions-ldmatrix: the
// address table, the 8x8 fragment figure, and .trans: "the matrix is loaded in column-major
// format"). Cross-checked entry by entry against CUTLASS's CuTe traits (NVIDIA/cutlass
// include/cute/atom/mma_traits_sm80.hpp: SM80_16x8x16_F16F16F16F16_TN, whose layouts the
// F32F16F16F32 and F32BF16BF16F32 atoms inherit; include/cute/atom/copy_traits_sm75.hpp:
// SM75_U32x4_LDSM_N, SM75_U16x8_LDSM_T).
struct Owner {
  int lane, elem;
};

// m16n8k16 A (16 x 16, row m, column k), .f16/.bf16: a0..a7 in four 32-bit registers, low to high.
constexpr Owner kPtxA[16][16] = {
    {{ 0, 0}, { 0, 1}, { 1, 0}, { 1, 1}, { 2, 0}, { 2, 1}, { 3, 0}, { 3, 1},  // row 0
     { 0, 4}, { 0, 5}, { 1, 4}, { 1, 5}, { 2, 4}, { 2, 5}, { 3, 4}, { 3, 5}},
    {{ 4, 0}, { 4, 1}, { 5, 0}, { 5, 1}, { 6, 0}, { 6, 1}, { 7, 0}, { 7, 1},  // row 1
     { 4, 4}, { 4, 5}, { 5, 4}, { 5, 5}, { 6, 4}, { 6, 5}, { 7, 4}, { 7, 5}},
    {{ 8, 0}, { 8, 1}, { 9, 0}, { 9, 1}, {10, 0}, {10, 1}, {11, 0}, {11, 1},  // row 2
     { 8, 4}, { 8, 5}, { 9, 4}, { 9, 5}, {10, 4}, {10, 5}, {11, 4}, {11, 5}},
    {{12, 0}, {12, 1}, {13, 0}, {13, 1}, {14, 0}, {14, 1}, {15, 0}, {15, 1},  // row 3
     {12, 4}, {12, 5}, {13, 4}, {13, 5}, {14, 4}, {14, 5}, {15, 4}, {15, 5}},
    {{16, 0}, {16, 1}, {17, 0}, {17, 1}, {18, 0}, {18, 1}, {19, 0}, {19, 1},  // row 4
     {16, 4}, {16, 5}, {17, 4}, {17, 5}, {18, 4}, {18, 5}, {19, 4}, {19, 5}},
    {{20, 0}, {20, 1}, {21, 0}, {21, 1}, {22, 0}, {22, 1}, {23, 0}, {23, 1},  // row 5
     {20, 4}, {20, 5}, {21, 4}, {21, 5}, {22, 4}, {22, 5}, {23, 4}, {23, 5}},
    {{24, 0}, {24, 1}, {25, 0}, {25, 1}, {26, 0}, {26, 1}, {27, 0}, {27, 1},  // row 6
     {24, 4}, {24, 5}, {25, 4}, {25, 5}, {26, 4}, {26, 5}, {27, 4}, {27, 5}},
    {{28, 0}, {28, 1}, {29, 0}, {29, 1}, {30, 0}, {30, 1}, {31, 0}, {31, 1},  // row 7
     {28, 4}, {28, 5}, {29, 4}, {29, 5}, {30, 4}, {30, 5}, {31, 4}, {31, 5}},
    {{ 0, 2}, { 0, 3}, { 1, 2}, { 1, 3}, { 2, 2}, { 2, 3}, { 3, 2}, { 3, 3},  // row 8
     { 0, 6}, { 0, 7}, { 1, 6}, { 1, 7}, { 2, 6}, { 2, 7}, { 3, 6}, { 3, 7}},
    {{ 4, 2}, { 4, 3}, { 5, 2}, { 5, 3}, { 6, 2}, { 6, 3}, { 7, 2}, { 7, 3},  // row 9
     { 4, 6}, { 4, 7}, { 5, 6}, { 5, 7}, { 6, 6}, { 6, 7}, { 7, 6}, { 7, 7}},
    {{ 8, 2}, { 8, 3}, { 9, 2}, { 9, 3}, {10, 2}, {10, 3}, {11, 2}, {11, 3},  // row 10
     { 8, 6}, { 8, 7}, { 9, 6}, { 9, 7}, {10, 6}, {10, 7}, {11, 6}, {11, 7}},
    {{12, 2}, {12, 3}, {13, 2}, {13, 3}, {14, 2}, {14, 3}, {15, 2}, {15, 3},  // row 11
     {12, 6}, {12, 7}, {13, 6}, {13, 7}, {14, 6}, {14, 7}, {15, 6}, {15, 7}},
    {{16, 2}, {16, 3}, {17, 2}, {17, 3}, {18, 2}, {18, 3}, {19, 2}, {19, 3},  // row 12
     {16, 6}, {16, 7}, {17, 6}, {17, 7}, {18, 6}, {18, 7}, {19, 6}, {19, 7}},
    {{20, 2}, {20, 3}, {21, 2}, {21, 3}, {22, 2}, {22, 3}, {23, 2}, {23, 3},  // row 13
     {20, 6}, {20, 7}, {21, 6}, {21, 7}, {22, 6}, {22, 7}, {23, 6}, {23, 7}},
    {{24, 2}, {24, 3}, {25, 2}, {25, 3}, {26, 2}, {26, 3}, {27, 2}, {27, 3},  // row 14
     {24, 6}, {24, 7}, {25, 6}, {25, 7}, {26, 6}, {26, 7}, {27, 6}, {27, 7}},
    {{28, 2}, {28, 3}, {29, 2}, {29, 3}, {30, 2}, {30, 3}, {31, 2}, {31, 3},  // row 15
     {28, 6}, {28, 7}, {29, 6}, {29, 7}, {30, 6}, {30, 7}, {31, 6}, {31, 7}},
};

// m16n8k16 B (16 x 8, row k, column n), .f16/.bf16: b0..b3 in two 32-bit registers, low to high.
constexpr Owner kPtxB[16][8] = {
    {{ 0, 0}, { 4, 0}, { 8, 0}, {12, 0}, {16, 0}, {20, 0}, {24, 0}, {28, 0}},  // row 0
    {{ 0, 1}, { 4, 1}, { 8, 1}, {12, 1}, {16, 1}, {20, 1}, {24, 1}, {28, 1}},  // row 1
    {{ 1, 0}, { 5, 0}, { 9, 0}, {13, 0}, {17, 0}, {21, 0}, {25, 0}, {29, 0}},  // row 2
    {{ 1, 1}, { 5, 1}, { 9, 1}, {13, 1}, {17, 1}, {21, 1}, {25, 1}, {29, 1}},  // row 3
    {{ 2, 0}, { 6, 0}, {10, 0}, {14, 0}, {18, 0}, {22, 0}, {26, 0}, {30, 0}},  // row 4
    {{ 2, 1}, { 6, 1}, {10, 1}, {14, 1}, {18, 1}, {22, 1}, {26, 1}, {30, 1}},  // row 5
    {{ 3, 0}, { 7, 0}, {11, 0}, {15, 0}, {19, 0}, {23, 0}, {27, 0}, {31, 0}},  // row 6
    {{ 3, 1}, { 7, 1}, {11, 1}, {15, 1}, {19, 1}, {23, 1}, {27, 1}, {31, 1}},  // row 7
    {{ 0, 2}, { 4, 2}, { 8, 2}, {12, 2}, {16, 2}, {20, 2}, {24, 2}, {28, 2}},  // row 8
    {{ 0, 3}, { 4, 3}, { 8, 3}, {12, 3}, {16, 3}, {20, 3}, {24, 3}, {28, 3}},  // row 9
    {{ 1, 2}, { 5, 2}, { 9, 2}, {13, 2}, {17, 2}, {21, 2}, {25, 2}, {29, 2}},  // row 10
    {{ 1, 3}, { 5, 3}, { 9, 3}, {13, 3}, {17, 3}, {21, 3}, {25, 3}, {29, 3}},  // row 11
    {{ 2, 2}, { 6, 2}, {10, 2}, {14, 2}, {18, 2}, {22, 2}, {26, 2}, {30, 2}},  // row 12
    {{ 2, 3}, { 6, 3}, {10, 3}, {14, 3}, {18, 3}, {22, 3}, {26, 3}, {30, 3}},  // row 13
    {{ 3, 2}, { 7, 2}, {11, 2}, {15, 2}, {19, 2}, {23, 2}, {27, 2}, {31, 2}},  // row 14
    {{ 3, 3}, { 7, 3}, {11, 3}, {15, 3}, {19, 3}, {23, 3}, {27, 3}, {31, 3}},  // row 15
};

// m16n8k16 C/D (16 x 8, row m, column n), .f32: c0..c3.
constexpr Owner kPtxC[16][8] = {
    {{ 0, 0}, { 0, 1}, { 1, 0}, { 1, 1}, { 2, 0}, { 2, 1}, { 3, 0}, { 3, 1}},  // row 0
    {{ 4, 0}, { 4, 1}, { 5, 0}, { 5, 1}, { 6, 0}, { 6, 1}, { 7, 0}, { 7, 1}},  // row 1
    {{ 8, 0}, { 8, 1}, { 9, 0}, { 9, 1}, {10, 0}, {10, 1}, {11, 0}, {11, 1}},  // row 2
    {{12, 0}, {12, 1}, {13, 0}, {13, 1}, {14, 0}, {14, 1}, {15, 0}, {15, 1}},  // row 3
    {{16, 0}, {16, 1}, {17, 0}, {17, 1}, {18, 0}, {18, 1}, {19, 0}, {19, 1}},  // row 4
    {{20, 0}, {20, 1}, {21, 0}, {21, 1}, {22, 0}, {22, 1}, {23, 0}, {23, 1}},  // row 5
    {{24, 0}, {24, 1}, {25, 0}, {25, 1}, {26, 0}, {26, 1}, {27, 0}, {27, 1}},  // row 6
    {{28, 0}, {28, 1}, {29, 0}, {29, 1}, {30, 0}, {30, 1}, {31, 0}, {31, 1}},  // row 7
    {{ 0, 2}, { 0, 3}, { 1, 2}, { 1, 3}, { 2, 2}, { 2, 3}, { 3, 2}, { 3, 3}},  // row 8
    {{ 4, 2}, { 4, 3}, { 5, 2}, { 5, 3}, { 6, 2}, { 6, 3}, { 7, 2}, { 7, 3}},  // row 9
    {{ 8, 2}, { 8, 3}, { 9, 2}, { 9, 3}, {10, 2}, {10, 3}, {11, 2}, {11, 3}},  // row 10
    {{12, 2}, {12, 3}, {13, 2}, {13, 3}, {14, 2}, {14, 3}, {15, 2}, {15, 3}},  // row 11
    {{16, 2}, {16, 3}, {17, 2}, {17, 3}, {18, 2}, {18, 3}, {19, 2}, {19, 3}},  // row 12
    {{20, 2}, {20, 3}, {21, 2}, {21, 3}, {22, 2}, {22, 3}, {23, 2}, {23, 3}},  // row 13
    {{24, 2}, {24, 3}, {25, 2}, {25, 3}, {26, 2}, {26, 3}, {27, 2}, {27, 3}},  // row 14
    {{28, 2}, {28, 3}, {29, 2}, {29, 3}, {30, 2}, {30, 3}, {31, 2}, {31, 3}},  // row 15
};

// ldmatrix .m8n8 .b16, one 8 x 8 matrix as stored (row: the row whose address a lane supplied,
// column: the 16-bit element within its 16 bytes); elem: the half of the lane's register.
constexpr Owner kPtxLdsm[8][8] = {
    {{ 0, 0}, { 0, 1}, { 1, 0}, { 1, 1}, { 2, 0}, { 2, 1}, { 3, 0}, { 3, 1}},  // row 0
    {{ 4, 0}, { 4, 1}, { 5, 0}, { 5, 1}, { 6, 0}, { 6, 1}, { 7, 0}, { 7, 1}},  // row 1
    {{ 8, 0}, { 8, 1}, { 9, 0}, { 9, 1}, {10, 0}, {10, 1}, {11, 0}, {11, 1}},  // row 2
    {{12, 0}, {12, 1}, {13, 0}, {13, 1}, {14, 0}, {14, 1}, {15, 0}, {15, 1}},  // row 3
    {{16, 0}, {16, 1}, {17, 0}, {17, 1}, {18, 0}, {18, 1}, {19, 0}, {19, 1}},  // row 4
    {{20, 0}, {20, 1}, {21, 0}, {21, 1}, {22, 0}, {22, 1}, {23, 0}, {23, 1}},  // row 5
    {{24, 0}, {24, 1}, {25, 0}, {25, 1}, {26, 0}, {26, 1}, {27, 0}, {27, 1}},  // row 6
    {{28, 0}, {28, 1}, {29, 0}, {29, 1}, {30, 0}, {30, 1}, {31, 0}, {31, 1}},  // row 7
};

// The same with .trans: the stored matrix read column-major, so a lane's register holds two
// elements of one stored column (rows 2 (l % 4), + 1 of column l / 4).
constexpr Owner kPtxLdsmTrans[8][8] = {
    {{ 0, 0}, { 4, 0}, { 8, 0}, {12, 0}, {16, 0}, {20, 0}, {24, 0}, {28, 0}},  // row 0
    {{ 0, 1}, { 4, 1}, { 8, 1}, {12, 1}, {16, 1}, {20, 1}, {24, 1}, {28, 1}},  // row 1
    {{ 1, 0}, { 5, 0}, { 9, 0}, {13, 0}, {17, 0}, {21, 0}, {25, 0}, {29, 0}},  // row 2
    {{ 1, 1}, { 5, 1}, { 9, 1}, {13, 1}, {17, 1}, {21, 1}, {25, 1}, {29, 1}},  // row 3
    {{ 2, 0}, { 6, 0}, {10, 0}, {14, 0}, {18, 0}, {22, 0}, {26, 0}, {30, 0}},  // row 4
    {{ 2, 1}, { 6, 1}, {10, 1}, {14, 1}, {18, 1}, {22, 1}, {26, 1}, {30, 1}},  // row 5
    {{ 3, 0}, { 7, 0}, {11, 0}, {15, 0}, {19, 0}, {23, 0}, {27, 0}, {31, 0}},  // row 6
    {{ 3, 1}, { 7, 1}, {11, 1}, {15, 1}, {19, 1}, {23, 1}, {27, 1}, {31, 1}},  // row 7
};

// ldmatrix .x4: the lane that supplies the address of row r of matrix m (threads 0-7 the first
// matrix's rows 0-7, 8-15 the second's, ...); register m of every lane comes from matrix m.
constexpr int kPtxLdsmAddr[4][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}, {16, 17, 18, 19, 20, 21, 22, 23},
    {24, 25, 26, 27, 28, 29, 30, 31}};

// The tables inverted: where element `elem` of lane `lane` sits.
struct Pos {
  int row = -1, col = -1;
};
template <int R, int C, int E>
struct Inverse {
  Pos at[kLanes][E];
  int seen[kLanes][E] = {};  // how often the table names each (lane, elem): 1 when it is a layout
  constexpr explicit Inverse(const Owner (&t)[R][C]) {
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) {
        const Owner o = t[r][c];
        if (o.lane < 0 || o.lane >= kLanes || o.elem < 0 || o.elem >= E) continue;
        at[o.lane][o.elem] = Pos{r, c};
        ++seen[o.lane][o.elem];
      }
  }
};
constexpr Inverse<16, 16, 8> kDocA(kPtxA);
constexpr Inverse<16, 8, 4> kDocB(kPtxB);
constexpr Inverse<16, 8, 4> kDocC(kPtxC);
constexpr Inverse<8, 8, 2> kDocLdsm(kPtxLdsm);
constexpr Inverse<8, 8, 2> kDocLdsmTrans(kPtxLdsmTrans);

// A row-major tile as the kernels stage it (one row per key or query, head dims consecutive).
struct Tile {
  int rows, cols;
  std::vector<double> e;
  double at(int r, int c) const {
    EXPECT_TRUE(r >= 0 && r < rows && c >= 0 && c < cols) << "tile element (" << r << ", " << c << ")";
    return e[static_cast<std::size_t>(r * cols + c)];
  }
};

// ldmatrix.sync.aligned.m8n8.x4(.trans).shared.b16 as documented (kPtxLdsmAddr, kPtxLdsm,
// kPtxLdsmTrans): the lane kPtxLdsmAddr[m][r] supplies the (row, column) where row r of matrix m
// starts (16 bytes from there: 8 elements); each lane gets register m from matrix m.
template <class Addr>
void emulated_ldsm(Regs& out, const Tile& t, Addr addr, bool trans) {
  int row_of[4][8], col_of[4][8];
  for (int m = 0; m < 4; ++m)
    for (int r = 0; r < 8; ++r) {
      const auto [tr, tc] = addr(kPtxLdsmAddr[m][r]);
      row_of[m][r] = tr;
      col_of[m][r] = tc;
      ASSERT_EQ(tc % 8, 0) << "ldmatrix rows start on 16 bytes";
    }
  const auto& doc = trans ? kDocLdsmTrans : kDocLdsm;
  for (int lane = 0; lane < kLanes; ++lane)
    for (int m = 0; m < 4; ++m)
      for (int h = 0; h < 2; ++h) {
        const Pos p = doc.at[lane][h];  // (stored row, element within it) of each matrix
        out[lane][m][h] = t.at(row_of[m][p.row], col_of[m][p.row] + p.col);
      }
}

// One warp's m16n8k16 from the documented fragment layout (kPtxA, kPtxB, kPtxC): d = a b + c,
// every A and B element held by exactly one lane.
void emulated_mma(CFrag& c, const AFrag& a, const BFrag& b) {
  double am[16][16] = {}, bm[16][8] = {};
  int a_seen[16][16] = {}, b_seen[16][8] = {};
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 8; ++i) {
      const Pos p = kDocA.at[lane][i];
      am[p.row][p.col] = a[lane][i];
      ++a_seen[p.row][p.col];
    }
    for (int i = 0; i < 4; ++i) {
      const Pos p = kDocB.at[lane][i];
      bm[p.row][p.col] = b[lane][i];
      ++b_seen[p.row][p.col];
    }
  }
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k) ASSERT_EQ(a_seen[r][k], 1) << "A element (" << r << ", " << k << ")";
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) ASSERT_EQ(b_seen[k][n], 1) << "B element (" << k << ", " << n << ")";
  for (int lane = 0; lane < kLanes; ++lane)
    for (int i = 0; i < 4; ++i) {
      const Pos p = kDocC.at[lane][i];
      double sum = c[lane][i];
      for (int k = 0; k < 16; ++k) sum += am[p.row][k] * bm[k][p.col];
      c[lane][i] = sum;
    }
}

// Each table is a layout (every (lane, element) named exactly once: the grids' sizes then make
// every matrix element held exactly once), and every header map names the documented position:
// the maps are data the kernels compute addresses and masks from, the tables what the hardware does.
TEST(HalfMmaFragments, MapsEqualTheDocumentedTables) {
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 8; ++i) {
      ASSERT_EQ(kDocA.seen[lane][i], 1) << "kPtxA, lane " << lane << " a" << i;
      EXPECT_EQ(a_row(lane, i), kDocA.at[lane][i].row) << "a_row, lane " << lane << " a" << i;
      EXPECT_EQ(a_col(lane, i), kDocA.at[lane][i].col) << "a_col, lane " << lane << " a" << i;
    }
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(kDocB.seen[lane][i], 1) << "kPtxB, lane " << lane << " b" << i;
      ASSERT_EQ(kDocC.seen[lane][i], 1) << "kPtxC, lane " << lane << " c" << i;
      EXPECT_EQ(b_row(lane, i), kDocB.at[lane][i].row) << "b_row, lane " << lane << " b" << i;
      EXPECT_EQ(b_col(lane, i), kDocB.at[lane][i].col) << "b_col, lane " << lane << " b" << i;
      EXPECT_EQ(c_row(lane, i), kDocC.at[lane][i].row) << "c_row, lane " << lane << " c" << i;
      EXPECT_EQ(c_col(lane, i), kDocC.at[lane][i].col) << "c_col, lane " << lane << " c" << i;
    }
    for (int h = 0; h < 2; ++h) {
      ASSERT_EQ(kDocLdsm.seen[lane][h], 1) << "kPtxLdsm, lane " << lane << " half " << h;
      ASSERT_EQ(kDocLdsmTrans.seen[lane][h], 1) << "kPtxLdsmTrans, lane " << lane << " half " << h;
      EXPECT_EQ(ldsm_row(lane, h, false), kDocLdsm.at[lane][h].row) << "ldsm_row, lane " << lane << " half " << h;
      EXPECT_EQ(ldsm_col(lane, h, false), kDocLdsm.at[lane][h].col) << "ldsm_col, lane " << lane << " half " << h;
      EXPECT_EQ(ldsm_row(lane, h, true), kDocLdsmTrans.at[lane][h].row)
          << "ldsm_row .trans, lane " << lane << " half " << h;
      EXPECT_EQ(ldsm_col(lane, h, true), kDocLdsmTrans.at[lane][h].col)
          << "ldsm_col .trans, lane " << lane << " half " << h;
    }
    EXPECT_EQ(kPtxLdsmAddr[ldsm_addr_matrix(lane)][ldsm_addr_row(lane)], lane) << "ldsm address, lane " << lane;
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
      EXPECT_EQ(kDocC.at[lane][i].row, lane / 4 + 8 * (i >> 1));
      EXPECT_EQ(kDocC.at[lane][i].col, c_col(lane, i));  // the dk/dv kernel's masks and delta pairs
      for (int nt = 0; nt < 16; ++nt)
        EXPECT_EQ(out_dim(nt, kDocC.at[lane][i].col), out_dim(nt, 2 * (lane % 4)) + (i & 1));
    }
  // The masked dk/dv kernel's mask tile: register i of n-tile j reads the element of its own key
  // (C row) and streamed row (score_row of its C column), as the low (i even) or high half of a
  // pair starting at an even element (aligned for the 2- or 4-byte load).
  for (int lane = 0; lane < kLanes; ++lane)
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(mask_pair_key(lane, i), kDocC.at[lane][i].row) << "lane " << lane << " c" << i;
        EXPECT_EQ(mask_pair_row(j, lane) + (i & 1), score_row(j, kDocC.at[lane][i].col)) << "lane " << lane;
        EXPECT_EQ(mask_tile_at(mask_pair_key(lane, i), mask_pair_row(j, lane)) % 2, 0);
        EXPECT_EQ(mask_tile_at(mask_pair_key(lane, i), mask_pair_row(j, lane)) + 1,
                  mask_tile_at(mask_pair_key(lane, i), mask_pair_row(j, lane) + 1));
      }
  EXPECT_TRUE(mask_tile_stores_conflict_free(1));
  EXPECT_TRUE(mask_tile_stores_conflict_free(2));
  EXPECT_TRUE(ldsm_conflict_free(64 + 8));
  EXPECT_TRUE(ldsm_conflict_free(128 + 8));
  EXPECT_FALSE(ldsm_conflict_free(64));  // rows 128 bytes apart: an 8-way conflict
}

// The B fragment of one MMA from an ldmatrix.x4: matrices 2 pair and 2 pair + 1 (b0, b1 from the
// first, b2, b3 from the second), as the kernels pass bf[2 pair], bf[2 pair + 1].
void b_from_ldsm(BFrag& b, const Regs& r, int pair) {
  for (int lane = 0; lane < kLanes; ++lane)
    for (int i = 0; i < 4; ++i) b[lane][i] = r[lane][2 * pair + i / 2][i % 2];
}

// One warp of a kernel: own rows own0 .. + 15 of an own tile of own_rows rows (64; the forward's 128), streamed rows s0 .. s0 +
// 8 NT - 1 of a 64-row streamed tile (two, for the score and for the second product), D dims.
// The score exactly as score() addresses it, X placed in its accumulators as the kernels' dS/P
// loop does, then second() with its A built from them (a_from_c_*) and its B by ldmatrix.trans.
void replay_warp(unsigned seed, int D, int NT, int own0, int s0, int own_rows = 64) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(-8, 8);
  auto tile = [&](int rows, int cols) {
    Tile t{rows, cols, std::vector<double>(static_cast<std::size_t>(rows * cols))};
    for (double& e : t.e) e = u(rng);
    return t;
  };
  const Tile own = tile(own_rows, D), stream = tile(64, D), stream2 = tile(64, D), x = tile(16, 8 * NT);

  CFrag c[8] = {};  // NT <= 8
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
        b_from_ldsm(b, r, st);
        emulated_mma(c[j], a[st], b);
      }
    }
  }
  for (int j = 0; j < NT; ++j)
    for (int lane = 0; lane < kLanes; ++lane)
      for (int i = 0; i < 4; ++i) {
        const int row = kDocC.at[lane][i].row, r = score_row(j, kDocC.at[lane][i].col);
        double want = 0;
        for (int d = 0; d < D; ++d) want += own.at(own0 + row, d) * stream.at(s0 + r, d);
        ASSERT_EQ(c[j][lane][i], want)
            << "score, D " << D << " own row " << row << " streamed row " << r;
      }

  // X into the accumulators: register i of n-tile j holds (own row, streamed row score_row) at the
  // documented C position of (lane, i), where the hardware leaves the score.
  for (int j = 0; j < NT; ++j)
    for (int lane = 0; lane < kLanes; ++lane)
      for (int i = 0; i < 4; ++i)
        c[j][lane][i] = x.at(kDocC.at[lane][i].row, score_row(j, kDocC.at[lane][i].col));
  CFrag o[16] = {};  // D / 8 <= 16
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
        ASSERT_EQ(a[lane][i], x.at(kDocA.at[lane][i].row, second_row(J, kDocA.at[lane][i].col)))
            << "A from C, lane " << lane;
    for (int np = 0; np < D / 16; ++np) {
      Regs r;
      emulated_ldsm(
          r, stream2,
          [&](int lane) { return std::pair{s0 + 16 * J + second_addr_row(lane), 16 * np + second_addr_col(lane)}; },
          true);
      for (int half = 0; half < 2; ++half) {
        BFrag b;
        b_from_ldsm(b, r, half);
        emulated_mma(o[2 * np + half], a, b);
      }
    }
  }
  for (int nt = 0; nt < D / 8; ++nt)
    for (int lane = 0; lane < kLanes; ++lane)
      for (int i = 0; i < 4; ++i) {
        const int row = kDocC.at[lane][i].row, dim = out_dim(nt, kDocC.at[lane][i].col);
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

// The forward (attention_half_mma_fwd.cu): warp w takes query rows 16 w .. of the block's 128 and
// all 64 keys of the K/V tile (8 score n-tiles): S = Q K^T, then O += P V with P rounded in the
// accumulators' places, exactly the products replayed here.
TEST(HalfMmaFragments, ForwardWarpReplaysBothProducts) {
  for (const int d : {64, 128})
    for (int w = 0; w < 8; ++w) replay_warp(91u + static_cast<unsigned>(w), d, 8, 16 * w, 0, 128);
}

// The forward's mask reads: score register i of n-tile j (own row c_row, key score_row(j, c_col)
// at the documented C position) must find its element of the staged tile (row-major, rows
// mask_row_bytes apart) at the pair load mask_pair_offset(lane, row g + 8 (i >> 1), j) plus
// (i & 1) elements, the pair aligned for one 2- or 4-byte load, and a warp's 32 loads of one
// (n-tile, row half) in distinct banks (or the same word).
TEST(HalfMmaFragments, ForwardMaskPairsFindTheirElements) {
  for (const int elem : {1, 2}) {
    EXPECT_EQ(mask_row_bytes(elem) % 16, 0);
    for (int w = 0; w < 8; ++w)
      for (int j = 0; j < 8; ++j)
        for (int hr = 0; hr < 2; ++hr) {
          int bank_word[32];
          for (int& b : bank_word) b = -1;
          for (int lane = 0; lane < kLanes; ++lane) {
            const int row = 16 * w + c_row(lane, 2 * hr);  // the kernel's mrow
            const int pair = mask_pair_offset(lane, row, j, elem);
            EXPECT_EQ(pair % (2 * elem), 0) << "pair load alignment, lane " << lane;
            for (int e = 0; e < 2; ++e) {
              const int i = 2 * hr + e;
              const int doc_row = 16 * w + kDocC.at[lane][i].row, key = score_row(j, kDocC.at[lane][i].col);
              EXPECT_EQ(pair + e * elem, doc_row * mask_row_bytes(elem) + key * elem)
                  << "elem " << elem << " warp " << w << " lane " << lane << " n-tile " << j << " c" << i;
            }
            const int word = pair / 4, bank = word % 32;
            EXPECT_TRUE(bank_word[bank] == -1 || bank_word[bank] == word)
                << "bank conflict, elem " << elem << " lane " << lane << " n-tile " << j;
            bank_word[bank] = word;
          }
        }
  }
}

}  // namespace
}  // namespace ferrite::cuda::attention::half_mma

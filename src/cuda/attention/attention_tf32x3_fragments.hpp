// Index maps of the 3xTF32 tensor-core F32 attention forward (attention_f32_tf32x3.cu), as
// plain constexpr functions so a host unit test (tests/unit/attention_tf32x3_fragments_test.cpp)
// can replay one warp's products with them against a plain matrix product: a wrong fragment
// index would otherwise only show as wrong numbers on the GPU.
//
// Two kinds of map:
//  - the PTX ISA's fixed fragment layout of mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
//    ("Matrix Fragments for mma.m16n8k8", .tf32): which element of A (16x8, row), B (8x8, col)
//    and C/D (16x8) register i of lane `lane` holds, with group = lane / 4, quad lane = lane % 4;
//  - the kernel's own choices of which physical head dim or key each MMA k or n index stands
//    for. A matrix product does not depend on the order of its k sum, and the order of n only
//    moves output columns, so the kernel picks orders that make its shared-memory reads float4
//    and lets the scores' accumulators serve directly as the second product's A fragments.
#pragma once

#if defined(__CUDACC__)
#define FERRITE_TF32X3_HD __host__ __device__
#else
#define FERRITE_TF32X3_HD
#endif

namespace ferrite::cuda::attention::tf32x3 {

// ---- PTX fragment layout of m16n8k8 TF32 (i: the register's index in the fragment) ----
// A: a0 (g, q), a1 (g + 8, q), a2 (g, q + 4), a3 (g + 8, q + 4).
FERRITE_TF32X3_HD constexpr int a_row(int lane, int i) { return lane / 4 + 8 * (i & 1); }
FERRITE_TF32X3_HD constexpr int a_col(int lane, int i) { return lane % 4 + 4 * (i >> 1); }
// B (k x n): b0 (q, g), b1 (q + 4, g).
FERRITE_TF32X3_HD constexpr int b_row(int lane, int i) { return lane % 4 + 4 * i; }
FERRITE_TF32X3_HD constexpr int b_col(int lane, int /*i*/) { return lane / 4; }
// C/D: c0 (g, 2q), c1 (g, 2q + 1), c2 (g + 8, 2q), c3 (g + 8, 2q + 1).
FERRITE_TF32X3_HD constexpr int c_row(int lane, int i) { return lane / 4 + 8 * (i >> 1); }
FERRITE_TF32X3_HD constexpr int c_col(int lane, int i) { return 2 * (lane % 4) + (i & 1); }

// ---- The kernel's orders ----
// S = Q K^T runs over the head dims in chunks of 16 = two MMA k-steps. In step `step` (0, 1) of
// a chunk, MMA index k stands for dim 4 (k % 4) + 2 step + k / 4 of the chunk: lane quad q then
// needs dims 4q .. 4q + 3 of each row (Q) and key (K) for both steps, one float4 each.
FERRITE_TF32X3_HD constexpr int qk_dim(int step, int k) { return 4 * (k % 4) + 2 * step + k / 4; }
// S's n-tile j (0..7) covers keys 8j .. 8j + 7 of the 64-key tile in order: B's column g is key 8j + g.
FERRITE_TF32X3_HD constexpr int s_key(int j, int n) { return 8 * j + n; }
// O += P V takes the keys of S's n-tile j as its k-step j, in the order that makes S's
// accumulator fragment of that tile the A fragment: k stands for key 8j + 2 (k % 4) + k / 4,
// so A's (row g, k = q) is S's (row g, n = 2q) and (row g, k = q + 4) is S's (row g, n = 2q + 1).
FERRITE_TF32X3_HD constexpr int pv_key(int j, int k) { return 8 * j + 2 * (k % 4) + k / 4; }
// ... so register i of P's A fragment is register p_from_s(i) of S's C fragment.
FERRITE_TF32X3_HD constexpr int p_from_s(int i) { return i == 1 ? 2 : i == 2 ? 1 : i; }
// O's n-tile nt (0 .. D/8 - 1) with MMA index n stands for output dim 32 (nt / 4) + 4n + nt % 4:
// lane group g reads V's dims 32c + 4g .. + 3 as one float4 for the four n-tiles 4c .. 4c + 3,
// and lane quad q ends up holding dims 32c + 8q .. + 7 of its two rows (two float4 stores).
FERRITE_TF32X3_HD constexpr int pv_dim(int nt, int n) { return 32 * (nt / 4) + 4 * n + nt % 4; }

// ---- The backward's orders (attention_f32_tf32x3_bwd.cu) ----
// The backward runs two products per tile pair, as the forward: a score product C = A_own
// B_streamed^T over the head dims (S = Q K^T and dP = dO V^T in the dq kernel, S^T = K Q^T and
// dP^T = V dO^T in the dk/dv kernel), then C (turned into P or dS in registers) times the
// streamed tile again: A = C's accumulators, B = streamed rows x head dims (dQ += dS K, dV +=
// P^T dO, dK += dS^T Q). So each streamed tile is read both as the score product's B (lane
// group g: one row, quad q: dims 4q .. 4q + 3) and as the second product's B (quad q: two rows,
// group g: dims 4g .. 4g + 3), with no transposed copy. Head dims and the fragment shuffle
// P-from-S are the forward's (qk_dim, pv_dim, p_from_s); only the rows are permuted: n-tile j's
// index n stands for streamed row 8j + bwd_perm(n). With the identity, no row stride serves both
// reads without a 2-way bank conflict (the score read wants rows g, g + 1 16 banks apart, the
// second read rows 2q, 2q + 2, ... 8 banks apart); with bwd_perm = (0 2 1 3 6 4 7 5) and a row
// stride of 8 banks (mod 32) both are conflict-free (static_asserts in the kernel file).
FERRITE_TF32X3_HD constexpr int bwd_perm(int n) {
  return 4 * (n >> 2) + ((((n & 1) << 1) | ((n >> 1) & 1)) ^ (2 * (n >> 2)));
}
// The score product's n-tile j, index n: streamed row 8j + bwd_perm(n).
FERRITE_TF32X3_HD constexpr int bwd_stream_n(int j, int n) { return 8 * j + bwd_perm(n); }
// The second product's k-step j, index k: the streamed row of the score accumulator that
// p_from_s hands over as A's column k (as pv_key does for the identity order).
FERRITE_TF32X3_HD constexpr int bwd_stream_k(int j, int k) { return 8 * j + bwd_perm(2 * (k % 4) + k / 4); }

// ---- The kernels' float4 reads, tied to the maps ----
// Both kernels read shared memory as float4s at offsets that hard-code these maps: lane (group
// g, quad q) reads own rows g and g + 8 at dims 4q (the score's A: Q, or the backward's own
// tile), streamed row 8j + read_row(g) at dims 4q for n-tile j (the score's B: K, or the
// backward's streamed tile), streamed rows 8j + read_row(2q), 8j + read_row(2q + 1) at dims 4g
// for k-step j (the second product's B: V, or the streamed tile again), and stores output dims
// 32c + 8q .. + 7. This is true when the maps hand each lane exactly those elements, with
// score_row(j, n) the streamed row of the score's n-tile j, index n, and second_row(j, k) that
// of the second product's k-step j, index k: the forward's (s_key, pv_key, reads in key order)
// and the backward's (bwd_stream_n, bwd_stream_k, reads in bwd_perm's order). The kernel files
// static_assert it (a wrong map or read order fails their build); the unit test checks it too,
// as a CPU build compiles no .cu file.
template <class ScoreRow, class SecondRow, class ReadRow>
constexpr bool maps_match_float4_reads(ScoreRow score_row, SecondRow second_row, ReadRow read_row) {
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, q = lane % 4;
    for (int step = 0; step < 2; ++step) {
      // Own A: a_i of step `step` is component 2 step + (i >> 1) of the float4 at dim 4q of own
      // row g (i even) or g + 8 (i odd).
      for (int i = 0; i < 4; ++i)
        if (a_row(lane, i) != g + 8 * (i & 1) || qk_dim(step, a_col(lane, i)) != 4 * q + 2 * step + (i >> 1))
          return false;
      // Streamed B: b_i of step `step` is component 2 step + i of the float4 at dim 4q of
      // streamed row 8j + read_row(g).
      for (int j = 0; j < 8; ++j)
        for (int i = 0; i < 2; ++i)
          if (score_row(j, b_col(lane, i)) != 8 * j + read_row(g) ||
              qk_dim(step, b_row(lane, i)) != 4 * q + 2 * step + i)
            return false;
    }
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 4; ++i) {
        // The score's c_i is (own row g + 8 (i >> 1), streamed row 8j + read_row(2q + (i & 1))).
        if (c_row(lane, i) != g + 8 * (i >> 1) || score_row(j, c_col(lane, i)) != 8 * j + read_row(2 * q + (i & 1)))
          return false;
        // The second product's a_i is the score's c_{p_from_s(i)}: same own row, same streamed row.
        if (a_row(lane, i) != c_row(lane, p_from_s(i)) ||
            second_row(j, a_col(lane, i)) != score_row(j, c_col(lane, p_from_s(i))))
          return false;
      }
    for (int nt = 0; nt < 16; ++nt) {
      // Second B: b_i of n-tile nt is component nt % 4 of the float4 at dim 32 (nt / 4) + 4g of
      // streamed row 8j + read_row(2q + i).
      for (int j = 0; j < 8; ++j)
        for (int i = 0; i < 2; ++i)
          if (second_row(j, b_row(lane, i)) != 8 * j + read_row(2 * q + i) ||
              pv_dim(nt, b_col(lane, i)) != 32 * (nt / 4) + 4 * g + nt % 4)
            return false;
      // The output's c_i of n-tile nt is (own row g + 8 (i >> 1), dim 32 (nt / 4) + 8q + 4 (i & 1) + nt % 4).
      for (int i = 0; i < 4; ++i)
        if (c_row(lane, i) != g + 8 * (i >> 1) ||
            pv_dim(nt, c_col(lane, i)) != 32 * (nt / 4) + 8 * q + 4 * (i & 1) + nt % 4)
          return false;
    }
  }
  return true;
}

}  // namespace ferrite::cuda::attention::tf32x3

#undef FERRITE_TF32X3_HD

// Ops of the matrix products (issue #6), run by Backend::matmul_ops().
// X(enum name, front-end name, family); see ferrite/op.hpp. Every op of the group runs on
// MatmulOps::gemm (linear's bias through MatmulOps::gemm_bias where the backend fuses it);
// the names exist so errors and supports() can say which front-end call was made.
#pragma once

#define FERRITE_MATMUL_OP_LIST(X) \
  X(Matmul, "matmul", Matmul)     \
  X(Bmm, "bmm", Matmul)           \
  X(Dot, "dot", Matmul)           \
  X(Mv, "mv", Matmul)             \
  X(Vm, "vm", Matmul)             \
  X(Linear, "linear", Matmul)

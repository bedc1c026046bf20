// Ops of the matrix products (issue #6), run by Backend::matmul_ops().
// X(enum name, front-end name, family); see ferrite/op.hpp.
#pragma once

#define FERRITE_MATMUL_OP_LIST(X)

// Ops of the reductions, scans, softmax and norms (issue #4), run by Backend::reductions().
// X(enum name, front-end name, family); see ferrite/op.hpp.
#pragma once

#define FERRITE_REDUCTION_OP_LIST(X)

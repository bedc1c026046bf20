// Ops of the shape and indexing ops (issue #5), run by Backend::shape_ops().
// X(enum name, front-end name, family); see ferrite/op.hpp.
#pragma once

#define FERRITE_SHAPE_OP_LIST(X)

// Ops of the elementwise group (memory, casts, unary, binary, compare, select), run by
// Backend's own methods. X(enum name, front-end name, family); see ferrite/op.hpp.
#pragma once

#define FERRITE_ELEMENTWISE_OP_LIST(X) \
  X(Fill, "full", Memory)              \
  X(Arange, "arange", Memory)          \
  X(Copy, "clone", Memory)             \
  X(Transfer, "to(device)", Memory)    \
  X(Cast, "to(dtype)", Cast)           \
  X(Neg, "neg", Unary)                 \
  X(Relu, "relu", Unary)               \
  X(Add, "add", Binary)                \
  X(Sub, "sub", Binary)                \
  X(Mul, "mul", Binary)                \
  X(Div, "div", Binary)

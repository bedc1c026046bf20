// Ops of the elementwise group (memory, casts, unary, binary, compare, select), run by
// Backend's own methods. X(enum name, front-end name, family); see ferrite/op.hpp.
#pragma once

// Memory and casts.
#define FERRITE_ELEMENTWISE_MEMORY_OPS(X) \
  X(Fill, "full", Memory)                 \
  X(Arange, "arange", Memory)             \
  X(Copy, "clone", Memory)                \
  X(Transfer, "to(device)", Memory)       \
  X(Cast, "to(dtype)", Cast)

// Backend::unary: one input, same shape; UnaryParams carries alpha/beta.
#define FERRITE_ELEMENTWISE_UNARY_OPS(X) \
  X(Neg, "neg", Unary)                   \
  X(Abs, "abs", Unary)                   \
  X(Exp, "exp", Unary)                   \
  X(Log, "log", Unary)                   \
  X(Sqrt, "sqrt", Unary)                 \
  X(Pow, "pow", Unary)                   \
  X(Scale, "scale", Unary)               \
  X(Clamp, "clamp", Unary)               \
  X(Relu, "relu", Unary)                 \
  X(Sigmoid, "sigmoid", Unary)           \
  X(Tanh, "tanh", Unary)                 \
  X(Gelu, "gelu", Unary)                 \
  X(GeluTanh, "gelu(tanh)", Unary)       \
  X(Silu, "silu", Unary)                 \
  X(Elu, "elu", Unary)                   \
  X(Mish, "mish", Unary)                 \
  X(BitwiseNot, "bitwise_not", Unary)    \
  X(LogicalNot, "logical_not", Unary)

// Backend::unary_backward: (grad, forward input or output) -> grad of the input.
#define FERRITE_ELEMENTWISE_BACKWARD_OPS(X)                    \
  X(ReluBackward, "relu_backward", UnaryBackward)              \
  X(AbsBackward, "abs_backward", UnaryBackward)                \
  X(ClampBackward, "clamp_backward", UnaryBackward)            \
  X(SigmoidBackward, "sigmoid_backward", UnaryBackward)        \
  X(TanhBackward, "tanh_backward", UnaryBackward)              \
  X(GeluBackward, "gelu_backward", UnaryBackward)              \
  X(GeluTanhBackward, "gelu_backward(tanh)", UnaryBackward)    \
  X(SiluBackward, "silu_backward", UnaryBackward)              \
  X(EluBackward, "elu_backward", UnaryBackward)                \
  X(MishBackward, "mish_backward", UnaryBackward)

// Backend::binary with NumPy broadcasting.
#define FERRITE_ELEMENTWISE_BINARY_OPS(X) \
  X(Add, "add", Binary)                   \
  X(Sub, "sub", Binary)                   \
  X(Mul, "mul", Binary)                   \
  X(Div, "div", Binary)                   \
  X(Maximum, "maximum", Binary)           \
  X(Minimum, "minimum", Binary)           \
  X(FloorDivide, "floor_divide", Binary)  \
  X(Remainder, "remainder", Binary)       \
  X(BitwiseAnd, "bitwise_and", Binary)    \
  X(BitwiseOr, "bitwise_or", Binary)      \
  X(BitwiseXor, "bitwise_xor", Binary)    \
  X(ShiftLeft, "shift_left", Binary)      \
  X(ShiftRight, "shift_right", Binary)    \
  X(LogicalAnd, "logical_and", Binary)    \
  X(LogicalOr, "logical_or", Binary)      \
  X(LogicalXor, "logical_xor", Binary)

// Backend::binary with a Bool output.
#define FERRITE_ELEMENTWISE_COMPARE_OPS(X) \
  X(Eq, "eq", Compare)                     \
  X(Ne, "ne", Compare)                     \
  X(Lt, "lt", Compare)                     \
  X(Le, "le", Compare)                     \
  X(Gt, "gt", Compare)                     \
  X(Ge, "ge", Compare)

// Backend::where (masked_fill is a where with a rank-0 value); Backend::has_inf_nan.
#define FERRITE_ELEMENTWISE_SELECT_OPS(X) \
  X(Where, "where", Select)               \
  X(MaskedFill, "masked_fill", Select)    \
  X(HasInfNan, "has_inf_nan", Select)

#define FERRITE_ELEMENTWISE_OP_LIST(X) \
  FERRITE_ELEMENTWISE_MEMORY_OPS(X)    \
  FERRITE_ELEMENTWISE_UNARY_OPS(X)     \
  FERRITE_ELEMENTWISE_BACKWARD_OPS(X)  \
  FERRITE_ELEMENTWISE_BINARY_OPS(X)    \
  FERRITE_ELEMENTWISE_COMPARE_OPS(X)   \
  FERRITE_ELEMENTWISE_SELECT_OPS(X)

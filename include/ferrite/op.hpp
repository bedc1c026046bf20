// The op table: every op a backend can be asked about through supports(op, dtype).
// One X-macro line per op: enum name, the front-end name, its family.
#pragma once

#include <cstdint>
#include <string_view>

namespace ferrite {

#define FERRITE_FOR_EACH_OP(X)      \
  X(Fill, "full", Memory)           \
  X(Arange, "arange", Memory)       \
  X(Copy, "clone", Memory)          \
  X(Transfer, "to(device)", Memory) \
  X(Cast, "to(dtype)", Cast)        \
  X(Neg, "neg", Unary)              \
  X(Relu, "relu", Unary)            \
  X(Add, "add", Binary)             \
  X(Sub, "sub", Binary)             \
  X(Mul, "mul", Binary)             \
  X(Div, "div", Binary)

enum class OpFamily : std::uint8_t { Memory, Cast, Unary, Binary };

enum class Op : std::uint16_t {
#define FERRITE_OP_ENUM(name, text, family) name,
  FERRITE_FOR_EACH_OP(FERRITE_OP_ENUM)
#undef FERRITE_OP_ENUM
};

constexpr std::string_view op_name(Op op) {
  switch (op) {
#define FERRITE_OP_NAME(name, text, family) \
  case Op::name:                            \
    return text;
    FERRITE_FOR_EACH_OP(FERRITE_OP_NAME)
#undef FERRITE_OP_NAME
  }
  return "?";
}

constexpr OpFamily op_family(Op op) {
  switch (op) {
#define FERRITE_OP_FAMILY(name, text, family) \
  case Op::name:                              \
    return OpFamily::family;
    FERRITE_FOR_EACH_OP(FERRITE_OP_FAMILY)
#undef FERRITE_OP_FAMILY
  }
  return OpFamily::Memory;
}

inline constexpr Op kAllOps[] = {
#define FERRITE_OP_LIST(name, text, family) Op::name,
    FERRITE_FOR_EACH_OP(FERRITE_OP_LIST)
#undef FERRITE_OP_LIST
};

}  // namespace ferrite

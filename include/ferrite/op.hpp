// The op table: every op a backend can be asked about through supports(op, dtype).
// One X-macro line per op: enum name, the front-end name, its family.
#pragma once

#include <cstdint>
#include <string_view>

#include "ferrite/op_lists/elementwise.hpp"
#include "ferrite/op_lists/linalg.hpp"
#include "ferrite/op_lists/fft.hpp"
#include "ferrite/op_lists/matmul.hpp"
#include "ferrite/op_lists/reduction.hpp"
#include "ferrite/op_lists/shape.hpp"

namespace ferrite {

// Each op group keeps its list in its own header (ferrite/op_lists/), so the groups grow
// independently. X(enum name, front-end name, family).
#define FERRITE_FOR_EACH_OP(X)     \
  FERRITE_ELEMENTWISE_OP_LIST(X)   \
  FERRITE_REDUCTION_OP_LIST(X)     \
  FERRITE_SHAPE_OP_LIST(X)         \
  FERRITE_MATMUL_OP_LIST(X)        \
  FERRITE_LINALG_OP_LIST(X)        \
  FERRITE_FFT_OP_LIST(X)

enum class OpFamily : std::uint8_t {
  // elementwise group (issue #3)
  Memory, Cast, Unary, UnaryBackward, Binary, Compare, Select,
  // reduction group (issue #4)
  Reduction, Scan, RowWise,
  // shape and indexing group (issue #5)
  Shape, Index,
  // matrix products (issue #6)
  Matmul,
  // linear algebra (issue #13)
  Linalg,
  // FFT (issue #14)
  Fft,
};

/// Which backend interface runs an op: the elementwise group lives on Backend itself,
/// the others on the family objects of ferrite/backend_families/.
enum class OpGroup : std::uint8_t { Elementwise, Reduction, Shape, Matmul, Linalg, Fft };

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

constexpr OpGroup op_group(Op op) {
  switch (op) {
#define FERRITE_OP_GROUP_CASE(name, text, family) case Op::name:
    FERRITE_ELEMENTWISE_OP_LIST(FERRITE_OP_GROUP_CASE)
    return OpGroup::Elementwise;
    FERRITE_REDUCTION_OP_LIST(FERRITE_OP_GROUP_CASE)
    return OpGroup::Reduction;
    FERRITE_SHAPE_OP_LIST(FERRITE_OP_GROUP_CASE)
    return OpGroup::Shape;
    FERRITE_MATMUL_OP_LIST(FERRITE_OP_GROUP_CASE)
    return OpGroup::Matmul;
    FERRITE_LINALG_OP_LIST(FERRITE_OP_GROUP_CASE)
    return OpGroup::Linalg;
    FERRITE_FFT_OP_LIST(FERRITE_OP_GROUP_CASE)
    return OpGroup::Fft;
#undef FERRITE_OP_GROUP_CASE
  }
  return OpGroup::Elementwise;
}

inline constexpr Op kAllOps[] = {
#define FERRITE_OP_LIST(name, text, family) Op::name,
    FERRITE_FOR_EACH_OP(FERRITE_OP_LIST)
#undef FERRITE_OP_LIST
};

}  // namespace ferrite

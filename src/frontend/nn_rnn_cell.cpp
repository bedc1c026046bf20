// Front end of the fused recurrent cells (torch._thnn_fused_gru_cell / _lstm_cell and their
// backward passes): shape checks, outputs, and the bias gradients as batch sums of the gate
// gradients (as PyTorch does).
#include <string>

#include "core/extent.hpp"
#include "ferrite/reduction.hpp"
#include "frontend/nn_conv_common.hpp"

namespace ferrite::nn {
namespace {

// gates [B, parts*H] (hidden_gates the same), state [B, H], biases [parts*H]; returns H.
std::int64_t check_cell(const char* op, int parts, const Tensor& ig, const Tensor& hg, const Tensor& state,
                        const std::optional<Tensor>& ib, const std::optional<Tensor>& hb) {
  frontend::check_defined(op, {&ig, &hg, &state});
  frontend::check_float_input(op, ig);
  frontend::check_same_device(op, {&ig, &hg, &state});
  frontend::check_same_dtype(op, {&ig, &hg, &state});
  FERRITE_CHECK(ig.dim() == 2 && ig.shape()[1] % parts == 0, ShapeMismatch, op, ": input_gates ", ig.description(),
                " must be [B, ", parts, " * H]");
  const std::int64_t b = ig.shape()[0], h = ig.shape()[1] / parts;
  FERRITE_CHECK(hg.shape() == ig.shape(), ShapeMismatch, op, ": hidden_gates ", hg.description(),
                " must have input_gates' shape ", shape_str(ig.shape()));
  FERRITE_CHECK(state.shape() == (Shape{b, h}), ShapeMismatch, op, ": state ", state.description(), " must be [",
                b, ", ", h, "]");
  FERRITE_CHECK(ib.has_value() == hb.has_value(), InvalidArgument, op,
                ": input_bias and hidden_bias must be given both or neither");
  if (ib) {
    frontend::check_defined(op, {&*ib, &*hb});
    frontend::check_same_device(op, {&ig, &*ib, &*hb});
    frontend::check_same_dtype(op, {&ig, &*ib, &*hb});
    for (const Tensor* t : {&*ib, &*hb})
      FERRITE_CHECK(t->shape() == (Shape{parts * h}), ShapeMismatch, op, ": bias ", t->description(), " must be [",
                    parts * h, "]");
  }
  return h;
}

Tensor sum_rows(const Tensor& t) { return sum(t, 0); }

// Whether `ws` is the workspace [B, parts * H] of state [B, H]: parts * H is compared
// without overflowing (it overflowed int64 for H near 2^63 / 5, an empty state's dim;
// UBSan, found by api_fuzz_test).
bool is_workspace(const Tensor& ws, const Tensor& state, std::int64_t parts) {
  if (state.dim() != 2) return false;
  const auto width = detail::mul_if_fits(parts, state.shape()[1]);
  return width && ws.shape() == (Shape{state.shape()[0], *width});
}

}  // namespace

GruCellResult gru_cell(const Tensor& ig, const Tensor& hg, const Tensor& hx, const std::optional<Tensor>& ib,
                       const std::optional<Tensor>& hb) {
  const std::int64_t h = check_cell("gru_cell", 3, ig, hg, hx, ib, hb);
  const std::int64_t b = ig.shape()[0];
  const std::int64_t width = detail::checked_mul(5, h, [&] {
    return std::string("gru_cell: the workspace [B, 5 * H] of input_gates ") + ig.description() + " overflows int64";
  });
  GruCellResult r{frontend::allocate({b, h}, ig.dtype(), ig.device()),
                  frontend::allocate({b, width}, ig.dtype(), ig.device())};
  if (b * h == 0) return r;
  Buffer ibb, hbb;
  if (ib) ibb = ib->buffer(), hbb = hb->buffer();
  frontend::conv_ops_of(ig).gru_cell(b, h, ig.buffer(), hg.buffer(), hx.buffer(), ib ? &ibb : nullptr,
                                     ib ? &hbb : nullptr, r.hy.buffer(), r.workspace.buffer());
  return r;
}

GruCellGrads gru_cell_backward(const Tensor& grad_hy, const Tensor& workspace, bool has_bias) {
  const char* op = "gru_cell_backward";
  frontend::check_defined(op, {&grad_hy, &workspace});
  frontend::check_float_input(op, grad_hy);
  frontend::check_same_device(op, {&grad_hy, &workspace});
  frontend::check_same_dtype(op, {&grad_hy, &workspace});
  FERRITE_CHECK(is_workspace(workspace, grad_hy, 5), ShapeMismatch, op, ": grad_hy ", grad_hy.description(),
                " and workspace ", workspace.description(),
                " must be [B, H] and [B, 5 * H]");
  const std::int64_t b = grad_hy.shape()[0], h = grad_hy.shape()[1];
  GruCellGrads g;
  g.input_gates = frontend::allocate({b, 3 * h}, grad_hy.dtype(), grad_hy.device());
  g.hidden_gates = frontend::allocate({b, 3 * h}, grad_hy.dtype(), grad_hy.device());
  g.hx = frontend::allocate({b, h}, grad_hy.dtype(), grad_hy.device());
  if (b * h > 0)
    frontend::conv_ops_of(grad_hy).gru_cell_backward(b, h, grad_hy.buffer(), workspace.buffer(),
                                                     g.input_gates.buffer(), g.hidden_gates.buffer(), g.hx.buffer());
  if (has_bias) {
    g.input_bias = sum_rows(g.input_gates);
    g.hidden_bias = sum_rows(g.hidden_gates);
  }
  return g;
}

LstmCellResult lstm_cell(const Tensor& ig, const Tensor& hg, const Tensor& cx, const std::optional<Tensor>& ib,
                         const std::optional<Tensor>& hb) {
  const std::int64_t h = check_cell("lstm_cell", 4, ig, hg, cx, ib, hb);
  const std::int64_t b = ig.shape()[0];
  LstmCellResult r{frontend::allocate({b, h}, ig.dtype(), ig.device()),
                   frontend::allocate({b, h}, ig.dtype(), ig.device()),
                   frontend::allocate({b, 4 * h}, ig.dtype(), ig.device())};
  if (b * h == 0) return r;
  Buffer ibb, hbb;
  if (ib) ibb = ib->buffer(), hbb = hb->buffer();
  frontend::conv_ops_of(ig).lstm_cell(b, h, ig.buffer(), hg.buffer(), cx.buffer(), ib ? &ibb : nullptr,
                                      ib ? &hbb : nullptr, r.hy.buffer(), r.cy.buffer(), r.workspace.buffer());
  return r;
}

LstmCellGrads lstm_cell_backward(const std::optional<Tensor>& grad_hy, const std::optional<Tensor>& grad_cy,
                                 const Tensor& cx, const Tensor& cy, const Tensor& workspace, bool has_bias) {
  const char* op = "lstm_cell_backward";
  frontend::check_defined(op, {&cx, &cy, &workspace});
  frontend::check_float_input(op, cx);
  frontend::check_same_device(op, {&cx, &cy, &workspace});
  frontend::check_same_dtype(op, {&cx, &cy, &workspace});
  FERRITE_CHECK(cy.shape() == cx.shape() && is_workspace(workspace, cx, 4), ShapeMismatch, op, ": cx ",
                cx.description(), ", cy ", cy.description(), " and workspace ",
                workspace.description(), " must be [B, H], [B, H] and [B, 4 * H]");
  for (const std::optional<Tensor>* t : {&grad_hy, &grad_cy})
    if (*t) {
      frontend::check_defined(op, {&**t});
      frontend::check_same_device(op, {&cx, &**t});
      frontend::check_same_dtype(op, {&cx, &**t});
      FERRITE_CHECK((*t)->shape() == cx.shape(), ShapeMismatch, op, ": grad ", (*t)->description(),
                    " must have cx's shape ", shape_str(cx.shape()));
    }
  const std::int64_t b = cx.shape()[0], h = cx.shape()[1];
  LstmCellGrads g;
  g.gates = frontend::allocate({b, 4 * h}, cx.dtype(), cx.device());
  g.cx = frontend::allocate({b, h}, cx.dtype(), cx.device());
  if (b * h > 0) {
    Buffer ghy, gcy;
    if (grad_hy) ghy = grad_hy->buffer();
    if (grad_cy) gcy = grad_cy->buffer();
    frontend::conv_ops_of(cx).lstm_cell_backward(b, h, grad_hy ? &ghy : nullptr, grad_cy ? &gcy : nullptr,
                                                 cx.buffer(), cy.buffer(), workspace.buffer(), g.gates.buffer(),
                                                 g.cx.buffer());
  }
  if (has_bias) g.bias = sum_rows(g.gates);
  return g;
}

}  // namespace ferrite::nn

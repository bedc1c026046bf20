// Front end of dropout and the fused cross-entropy (ferrite/nn_training.hpp), and
// stream_count.
#include "ferrite/nn_training.hpp"

#include <cmath>

#include "core/training_families.hpp"
#include "ferrite/elementwise.hpp"
#include "ferrite/reduction.hpp"
#include "frontend/checks.hpp"
#include "frontend/dropout_draw.hpp"

namespace ferrite {

int stream_count(Device device) {
  backend(device);  // InvalidArgument for a device that does not exist
  return 1;
}

namespace nn {
namespace {

bool is_float(DType d) { return d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16; }

void check_float(const char* op, const Tensor& x) {
  FERRITE_CHECK(is_float(x.dtype()), Unsupported, op, ": dtype ", dtype_name(x.dtype()),
                " is not supported (F32, F64, F16 or BF16)");
}

void check_p(const char* op, double p) { frontend::check_dropout_p(op, "p", p); }

using frontend::dropout_scale;

}  // namespace

DropoutResult dropout(const Tensor& x, double p, random::Generator* generator) {
  const char* op = "dropout";
  frontend::check_defined(op, {&x});
  check_float(op, x);
  check_p(op, p);
  FERRITE_CHECK(!generator || generator->device() == x.device(), DeviceMismatch, op, ": the generator belongs to ",
                generator ? generator->device().str() : "", ", x to ", x.device().str());
  DropoutResult r{frontend::allocate(x.shape(), x.dtype(), x.device()),
                  frontend::allocate(x.shape(), DType::Bool, x.device())};
  const random::RngState state =
      generator ? generator->take() : random::default_generator(x.device()).take();
  if (x.numel() == 0) return r;
  DropoutDesc d;
  d.seed = state.seed;
  d.offset = state.offset;
  d.threshold = frontend::dropout_threshold(p);
  d.scale = dropout_scale(p);
  detail::random_ops(x.device()).dropout(d, x.buffer(), r.output.buffer(), r.mask.buffer());
  return r;
}

Tensor dropout_backward(const Tensor& grad, const Tensor& mask, double p) {
  const char* op = "dropout_backward";
  frontend::check_defined(op, {&grad, &mask});
  frontend::check_same_device(op, {&grad, &mask});
  check_float(op, grad);
  check_p(op, p);
  FERRITE_CHECK(mask.dtype() == DType::Bool, DTypeMismatch, op, ": mask must be Bool, got ", mask.description());
  FERRITE_CHECK(mask.shape() == grad.shape(), ShapeMismatch, op, ": grad ", grad.description(), " and mask ",
                mask.description(), " differ in shape");
  Tensor out = frontend::allocate(grad.shape(), grad.dtype(), grad.device());
  if (grad.numel() == 0) return out;
  detail::random_ops(grad.device()).dropout_backward(grad.buffer(), mask.buffer(), dropout_scale(p), out.buffer());
  return out;
}

namespace {

struct CeShape {
  std::int64_t rows, classes;
};

CeShape check_cross_entropy(const char* op, const Tensor& logits, const Tensor& targets,
                            const CrossEntropyOptions& o) {
  frontend::check_defined(op, {&logits, &targets});
  frontend::check_same_device(op, {&logits, &targets});
  check_float(op, logits);
  FERRITE_CHECK(targets.dtype() == DType::I64, DTypeMismatch, op, ": targets must be I64 class indices, got ",
                targets.description());
  FERRITE_CHECK(o.label_smoothing >= 0 && o.label_smoothing <= 1, InvalidArgument, op,
                ": label_smoothing must be in [0, 1], got ", o.label_smoothing);
  const bool batched = logits.dim() == 2;
  FERRITE_CHECK((batched && targets.dim() == 1 && targets.shape()[0] == logits.shape()[0]) ||
                    (logits.dim() == 1 && targets.dim() == 0),
                ShapeMismatch, op, ": expects logits [N, C] with targets [N], or logits [C] with a 0-d target; got ",
                logits.description(), " and ", targets.description());
  const std::int64_t classes = batched ? logits.shape()[1] : logits.shape()[0];
  const std::int64_t rows = batched ? logits.shape()[0] : 1;
  FERRITE_CHECK(classes > 0 || rows == 0, InvalidArgument, op, ": logits ", logits.description(), " have no classes");
  return {rows, classes};
}

CrossEntropyDesc desc_of(const CeShape& s, const CrossEntropyOptions& o) {
  return {s.rows, s.classes, o.ignore_index, o.label_smoothing};
}

}  // namespace

CrossEntropyForward cross_entropy_forward(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& o) {
  const char* op = "cross_entropy";
  const CeShape s = check_cross_entropy(op, logits, targets, o);
  const Device dev = logits.device();
  Tensor loss_rows = frontend::allocate({s.rows}, DType::F32, dev);
  Tensor lse = frontend::allocate({s.rows}, DType::F32, dev);
  Tensor counted = frontend::allocate({s.rows}, DType::F32, dev);
  if (s.rows > 0)
    detail::training_ops(dev).cross_entropy_forward(desc_of(s, o), logits.buffer(), targets.buffer(),
                                                      loss_rows.buffer(), lse.buffer(), counted.buffer());
  CrossEntropyForward r;
  r.lse = lse;
  r.count = sum(counted);
  switch (o.reduction) {
    case Reduction::None:
      r.loss = (logits.dim() == 1 ? loss_rows.reshape({}) : loss_rows).to(logits.dtype());
      break;
    case Reduction::Sum: r.loss = sum(loss_rows).to(logits.dtype()); break;
    case Reduction::Mean: r.loss = div(sum(loss_rows), r.count).to(logits.dtype()); break;
  }
  return r;
}

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& o) {
  return cross_entropy_forward(logits, targets, o).loss;
}

Tensor cross_entropy_backward(const Tensor& grad, const Tensor& logits, const Tensor& targets,
                              const CrossEntropyForward& saved, const CrossEntropyOptions& o) {
  const char* op = "cross_entropy_backward";
  const CeShape s = check_cross_entropy(op, logits, targets, o);
  frontend::check_defined(op, {&grad, &saved.lse, &saved.count});
  frontend::check_same_device(op, {&grad, &logits, &saved.lse, &saved.count});
  FERRITE_CHECK(saved.lse.dtype() == DType::F32 && saved.lse.numel() == s.rows && saved.count.dtype() == DType::F32 &&
                    saved.count.numel() == 1,
                InvalidArgument, op, ": saved state (lse ", saved.lse.description(), ", count ",
                saved.count.description(), ") does not come from this forward");
  const bool per_row = o.reduction == Reduction::None;
  FERRITE_CHECK(per_row ? grad.numel() == s.rows && grad.dim() == (logits.dim() == 1 ? 0 : 1) : grad.dim() == 0,
                ShapeMismatch, op, ": grad ", grad.description(), " does not have the loss's shape");
  Tensor g = grad.dtype() == DType::F32 ? grad : grad.to(DType::F32);
  Tensor out = frontend::allocate(logits.shape(), logits.dtype(), logits.device());
  if (out.numel() == 0) return out;
  detail::training_ops(logits.device())
      .cross_entropy_backward(desc_of(s, o), g.buffer(), o.reduction == Reduction::Mean ? saved.count.buffer() : Buffer(),
                              logits.buffer(), targets.buffer(), saved.lse.buffer(), out.buffer());
  return out;
}

}  // namespace nn
}  // namespace ferrite

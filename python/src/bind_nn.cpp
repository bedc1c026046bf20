// ferrite.nn (attention and training ops): scaled_dot_product_attention and its backward,
// dropout, cross_entropy with its saved forward and backward (ferrite/nn.hpp,
// ferrite/nn_training.hpp). ferrite.nn.functional (ferrite/__init__.py) gives torch's
// signatures over these; here the ops keep ferrite's results (the saved statistics too).
#include <nanobind/stl/tuple.h>

#include <tuple>

#include "common.hpp"

namespace ferrite::py {

namespace {

nn::AttentionOptions attention_options(std::optional<Tensor> mask, bool is_causal, std::optional<double> scale) {
  nn::AttentionOptions o;
  o.causal = is_causal;
  o.scale = scale;
  o.mask = std::move(mask);
  return o;
}

nn::Reduction reduction_mode(const std::string& r) {
  if (r == "mean") return nn::Reduction::Mean;
  if (r == "sum") return nn::Reduction::Sum;
  if (r == "none") return nn::Reduction::None;
  FERRITE_THROW(InvalidArgument, "cross_entropy: reduction must be 'mean', 'sum' or 'none', got '", r, "'");
}

nn::CrossEntropyOptions ce_options(std::int64_t ignore_index, const std::string& reduction, double label_smoothing) {
  nn::CrossEntropyOptions o;
  o.ignore_index = ignore_index;
  o.reduction = reduction_mode(reduction);
  o.label_smoothing = label_smoothing;
  return o;
}

}  // namespace

void bind_nn(nb::module_& m) {
  nb::module_ nn = submodule(m, "nn", "Neural-network ops.");
  const nb::object attention_t = result_type(m, "scaled_dot_product_attention", "out logsumexp");
  const nb::object attention_grads_t = result_type(m, "scaled_dot_product_attention_backward", "dq dk dv");
  const nb::object dropout_t = result_type(m, "dropout", "output mask");
  const nb::object ce_t = result_type(m, "cross_entropy_forward", "loss lse count");

  nn.def("scaled_dot_product_attention", [attention_t](const Tensor& q, const Tensor& k, const Tensor& v,
                                                       std::optional<Tensor> attn_mask, bool is_causal,
                                                       std::optional<double> scale, double dropout_p,
                                                       random::Generator* generator) {
        nn::AttentionOptions o = attention_options(std::move(attn_mask), is_causal, scale);
        o.dropout_p = dropout_p;
        o.generator = generator;
        auto r = nn::scaled_dot_product_attention(q, k, v, o);
        return named(attention_t, r.out, r.logsumexp);
      }, nb::arg("query"), nb::arg("key"), nb::arg("value"), nb::arg("attn_mask") = nb::none(),
      nb::arg("is_causal") = false, nb::kw_only(), nb::arg("scale") = nb::none(), nb::arg("dropout_p") = 0.0,
      nb::arg("generator").none() = nb::none(),
      "(out, logsumexp) of dropout(softmax(scale q kᵀ + mask)) v. q [B, Hq, Sq, D], k/v [B, Hkv, Sk, D]; "
      "grouped-query attention when Hkv divides Hq; attn_mask Bool (true = attend) or additive. dropout_p > 0 "
      "draws once from generator (default: the device's): its get_state() from before the call is the backward's "
      "dropout_state.");
  nn.def("scaled_dot_product_attention_backward", [attention_grads_t](
             const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
             const Tensor& logsumexp, std::optional<Tensor> attn_mask, bool is_causal, std::optional<double> scale,
             std::optional<std::tuple<Tensor, Tensor, Tensor>> into, bool deterministic, double dropout_p,
             nb::handle dropout_state) {
        nn::AttentionOptions o = attention_options(std::move(attn_mask), is_causal, scale);
        o.deterministic = deterministic;
        o.dropout_p = dropout_p;
        if (!dropout_state.is_none())
          o.dropout_state = state_from(dropout_state, "scaled_dot_product_attention_backward: dropout_state");
        if (into) {
          const nn::AttentionGrads g{std::get<0>(*into), std::get<1>(*into), std::get<2>(*into)};
          nn::scaled_dot_product_attention_backward_out(g, grad_out, q, k, v, out, logsumexp, o);
          return named(attention_grads_t, g.dq, g.dk, g.dv);
        }
        auto r = nn::scaled_dot_product_attention_backward(grad_out, q, k, v, out, logsumexp, o);
        return named(attention_grads_t, r.dq, r.dk, r.dv);
      }, nb::arg("grad_out"), nb::arg("query"), nb::arg("key"), nb::arg("value"), nb::arg("out"),
      nb::arg("logsumexp"), nb::arg("attn_mask") = nb::none(), nb::arg("is_causal") = false, nb::kw_only(),
      nb::arg("scale") = nb::none(), nb::arg("out_grads") = nb::none(), nb::arg("deterministic") = true,
      nb::arg("dropout_p") = 0.0, nb::arg("dropout_state") = nb::none(),
      "(dq, dk, dv) from the forward's out and logsumexp; repeats bit for bit unless deterministic=False (then "
      "the GPU may take cuDNN's faster atomic backward for F16/BF16). out_grads=(dq, dk, dv): tensors of any "
      "strides (e.g. the slices of one [B, S, 3, H, D] gradient) written in place and returned. dropout_p > 0 "
      "needs dropout_state, the (seed, offset) the forward drew at (its generator's get_state() before it).");

  nn.def("dropout", [dropout_t](const Tensor& x, double p, random::Generator* generator) {
        auto r = nn::dropout(x, p, generator);
        return named(dropout_t, r.output, r.mask);
      }, nb::arg("input"), nb::arg("p") = 0.5, nb::kw_only(), nb::arg("generator").none() = nb::none(),
      "(output, mask) in training mode: each element zeroed with probability p, the rest scaled by 1/(1-p). The "
      "same (seed, offset) drops the same elements on every device.");
  nn.def("dropout_backward", &nn::dropout_backward, nb::arg("grad"), nb::arg("mask"), nb::arg("p"));

  nn.def("cross_entropy", [](const Tensor& logits, const Tensor& target, std::int64_t ignore_index,
                             const std::string& reduction, double label_smoothing) {
        return nn::cross_entropy(logits, target, ce_options(ignore_index, reduction, label_smoothing));
      }, nb::arg("input"), nb::arg("target"), nb::kw_only(), nb::arg("ignore_index") = -100,
      nb::arg("reduction") = "mean", nb::arg("label_smoothing") = 0.0,
      "Class-index targets (int64); logits [N, C] or [C]; accumulated in float32.");
  nn.def("cross_entropy_forward", [ce_t](const Tensor& logits, const Tensor& target, std::int64_t ignore_index,
                                         const std::string& reduction, double label_smoothing) {
        auto r = nn::cross_entropy_forward(logits, target, ce_options(ignore_index, reduction, label_smoothing));
        return named(ce_t, r.loss, r.lse, r.count);
      }, nb::arg("input"), nb::arg("target"), nb::kw_only(), nb::arg("ignore_index") = -100,
      nb::arg("reduction") = "mean", nb::arg("label_smoothing") = 0.0,
      "(loss, lse, count): the loss and what the backward needs.");
  nn.def("cross_entropy_backward", [](const Tensor& grad, const Tensor& logits, const Tensor& target,
                                      const Tensor& lse, const Tensor& count, std::int64_t ignore_index,
                                      const std::string& reduction, double label_smoothing) {
        nn::CrossEntropyForward saved{Tensor(), lse, count};
        return nn::cross_entropy_backward(grad, logits, target, saved,
                                          ce_options(ignore_index, reduction, label_smoothing));
      }, nb::arg("grad"), nb::arg("input"), nb::arg("target"), nb::arg("lse"), nb::arg("count"), nb::kw_only(),
      nb::arg("ignore_index") = -100, nb::arg("reduction") = "mean", nb::arg("label_smoothing") = 0.0,
      "The gradient w.r.t. the logits; lse and count from cross_entropy_forward.");

  m.def("stream_count", &stream_count, nb::arg("device"), "Streams ferrite enqueues work on for the device (1).");
}

}  // namespace ferrite::py

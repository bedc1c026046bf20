// ferrite.optim: the fused multi-tensor steps (ferrite/optim.hpp) with the argument names of
// torch.optim's functional API (torch.optim._functional.adam / adamw / sgd): lists of
// tensors updated in place, hyper-parameters as keywords, found_inf to skip on the device.
#include "common.hpp"

namespace ferrite::py {

namespace {

using Tensors = std::vector<Tensor>;
using OTensors = std::optional<Tensors>;
using OT = std::optional<Tensor>;

optim::AdamTensors adam_tensors(Tensors params, Tensors grads, Tensors exp_avgs, Tensors exp_avg_sqs,
                                OTensors max_exp_avg_sqs, OTensors master_params) {
  return {std::move(params),  std::move(grads), std::move(exp_avgs), std::move(exp_avg_sqs),
          max_exp_avg_sqs.value_or(Tensors{}), master_params.value_or(Tensors{})};
}

template <class Step>
void def_adam(nb::module_& o, const char* name, Step step, double default_weight_decay, const char* doc) {
  o.def(name, [step](Tensors params, Tensors grads, Tensors exp_avgs, Tensors exp_avg_sqs, OTensors max_exp_avg_sqs,
                     std::int64_t step_count, double lr, double beta1, double beta2, double eps, double weight_decay,
                     bool amsgrad, bool maximize, OTensors master_params, OT found_inf) {
        optim::AdamOptions opt;
        opt.lr = lr;
        opt.beta1 = beta1;
        opt.beta2 = beta2;
        opt.eps = eps;
        opt.weight_decay = weight_decay;
        opt.amsgrad = amsgrad;
        opt.maximize = maximize;
        step(adam_tensors(std::move(params), std::move(grads), std::move(exp_avgs), std::move(exp_avg_sqs),
                          std::move(max_exp_avg_sqs), std::move(master_params)),
             step_count, opt, undefined_if_none(found_inf));
      }, nb::arg("params"), nb::arg("grads"), nb::arg("exp_avgs"), nb::arg("exp_avg_sqs"),
      nb::arg("max_exp_avg_sqs") = nb::none(), nb::kw_only(), nb::arg("step"), nb::arg("lr") = 1e-3,
      nb::arg("beta1") = 0.9, nb::arg("beta2") = 0.999, nb::arg("eps") = 1e-8,
      nb::arg("weight_decay") = default_weight_decay, nb::arg("amsgrad") = false, nb::arg("maximize") = false,
      nb::arg("master_params") = nb::none(), nb::arg("found_inf") = nb::none(), doc);
}

}  // namespace

void bind_optim(nb::module_& m) {
  nb::module_ o = submodule(m, "optim", "Fused optimizer steps over lists of tensors, in place (ferrite::optim).");
  def_adam(o, "adam", [](const optim::AdamTensors& t, std::int64_t s, const optim::AdamOptions& opt,
                         const Tensor& f) { optim::adam(t, s, opt, f); }, 0.0,
           "One Adam step (L2 weight decay added to the gradient) over every parameter; step is the 1-based count "
           "for bias correction. Parameters float32/bfloat16/float16 with float32 state; master_params: float32 "
           "copies updated instead, the params receiving their rounding. found_inf nonzero skips the step.");
  def_adam(o, "adamw", [](const optim::AdamTensors& t, std::int64_t s, const optim::AdamOptions& opt,
                          const Tensor& f) { optim::adamw(t, s, opt, f); }, 1e-2,
           "One AdamW step (decoupled weight decay, default 1e-2 as torch.optim.AdamW).");
  o.def("sgd", [](Tensors params, Tensors grads, OTensors momentum_buffer_list, bool first_step, double lr,
                  double momentum, double dampening, double weight_decay, bool nesterov, bool maximize,
                  OTensors master_params, OT found_inf) {
        optim::SgdOptions opt;
        opt.lr = lr;
        opt.momentum = momentum;
        opt.dampening = dampening;
        opt.weight_decay = weight_decay;
        opt.nesterov = nesterov;
        opt.maximize = maximize;
        optim::sgd({std::move(params), std::move(grads), momentum_buffer_list.value_or(Tensors{}),
                    master_params.value_or(Tensors{})},
                   first_step, opt, undefined_if_none(found_inf));
      }, nb::arg("params"), nb::arg("grads"), nb::arg("momentum_buffer_list") = nb::none(), nb::kw_only(),
      nb::arg("first_step") = false, nb::arg("lr") = 1e-3, nb::arg("momentum") = 0.0, nb::arg("dampening") = 0.0,
      nb::arg("weight_decay") = 0.0, nb::arg("nesterov") = false, nb::arg("maximize") = false,
      nb::arg("master_params") = nb::none(), nb::arg("found_inf") = nb::none(),
      "One SGD step; momentum buffers (float32) are needed when momentum != 0, and first_step=True initialises "
      "them to the gradient as torch does for a parameter without a buffer.");
}

}  // namespace ferrite::py

// Matrix products: matmul, mm, bmm, dot, mv, vm with ferrite's options as keywords
// (transpose_a, transpose_b, out_dtype, compute), and nn.linear (with its residual keyword).
// ferrite/matmul.hpp, ferrite/nn.hpp.
#include "common.hpp"

namespace ferrite::py {

namespace {

MatmulCompute compute_mode(const std::string& s) {
  if (s == "default") return MatmulCompute::Default;
  if (s == "float32" || s == "f32") return MatmulCompute::F32;
  if (s == "tf32") return MatmulCompute::TF32;
  if (s == "bfloat16" || s == "bf16") return MatmulCompute::BF16;
  if (s == "float16" || s == "f16") return MatmulCompute::F16;
  FERRITE_THROW(InvalidArgument, "matmul: compute must be 'default', 'float32', 'tf32', 'bfloat16' or 'float16', got '",
                s, "'");
}

template <class F>
void product(nb::module_& m, nb::class_<Tensor>& t, const char* name, F f, const char* doc) {
  auto g = [f](const Tensor& a, const Tensor& b, bool ta, bool tb, std::optional<DType> out_dtype,
               const std::string& compute) {
    MatmulOptions o;
    o.transpose_a = ta;
    o.transpose_b = tb;
    o.out_dtype = out_dtype;
    o.compute = compute_mode(compute);
    return f(a, b, o);
  };
  m.def(name, g, nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("transpose_a") = false,
        nb::arg("transpose_b") = false, nb::arg("out_dtype") = nb::none(), nb::arg("compute") = "default", doc);
  t.def(name, g, nb::arg("other"), nb::kw_only(), nb::arg("transpose_a") = false, nb::arg("transpose_b") = false,
        nb::arg("out_dtype") = nb::none(), nb::arg("compute") = "default", doc);
}

}  // namespace

void bind_matmul(nb::module_& m, nb::class_<Tensor>& t) {
  product(m, t, "matmul", [](const Tensor& a, const Tensor& b, const MatmulOptions& o) { return matmul(a, b, o); },
          "torch.matmul (vectors, matrices, broadcast batches). transpose_b=True multiplies by b's transpose "
          "(a Linear weight); out_dtype=float32 for F16/BF16 inputs; compute='tf32'|'bfloat16'|'float16' for F32.");
  product(m, t, "mm", [](const Tensor& a, const Tensor& b, const MatmulOptions& o) { return mm(a, b, o); },
          "[m, k] x [k, n].");
  product(m, t, "bmm", [](const Tensor& a, const Tensor& b, const MatmulOptions& o) { return bmm(a, b, o); },
          "[b, m, k] x [b, k, n].");
  product(m, t, "dot", [](const Tensor& a, const Tensor& b, const MatmulOptions& o) { return dot(a, b, o); },
          "Sum of a[i] * b[i] of two vectors (0-d).");
  product(m, t, "mv", [](const Tensor& a, const Tensor& b, const MatmulOptions& o) { return mv(a, b, o); },
          "[m, k] x [k].");
  product(m, t, "vm", [](const Tensor& a, const Tensor& b, const MatmulOptions& o) { return vm(a, b, o); },
          "[k] x [k, n].");
  m.def("matmul_out", [](const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) -> Tensor {
        return matmul_out(out, a, b, alpha, beta);
      }, nb::arg("out"), nb::arg("input"), nb::arg("other"), nb::arg("alpha") = 1.0, nb::arg("beta") = 0.0,
      "out = alpha * input @ other + beta * out, in place; returns out.");
  // ferrite.nn.linear: here for the compute keyword's parsing, shared with the products above.
  nb::module_ nn = submodule(m, "nn", "Neural-network ops.");
  nn.def("linear", [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, std::optional<DType> out_dtype,
                      const std::string& compute, std::optional<Tensor> residual) {
        return nn::linear(x, w, b,
                          {.out_dtype = out_dtype, .compute = compute_mode(compute), .residual = std::move(residual)});
      }, nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(), nb::kw_only(),
      nb::arg("out_dtype") = nb::none(), nb::arg("compute") = "default", nb::arg("residual") = nb::none(),
      "torch.nn.functional.linear: input @ weight.T + bias with weight [out, in] and bias [out] (or None); the "
      "bias is added before the result's one rounding (inside the GEMM on CUDA). residual (ferrite's extension, "
      "keyword only): a tensor of the result's shape and dtype added in the same rounding, "
      "residual + input @ weight.T + bias (on CUDA cuBLASLt's C matrix).");
  m.def("set_allow_tf32", &set_allow_tf32, nb::arg("allow"));
  m.def("allow_tf32", &allow_tf32);
}

}  // namespace ferrite::py

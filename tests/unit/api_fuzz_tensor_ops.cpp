// The API fuzz's tensor op families (api_fuzz.hpp): elementwise with broadcasting and aliasing
// outputs, operators and in-place ops, factories, reductions and scans, softmax and norms,
// views and shape ops, indexing and scatter.
#include "unit/api_fuzz.hpp"

namespace ferrite::api_fuzz {

#define OP(name, ...) ops.push_back(FuzzOp{name, [](Ctx& c) __VA_ARGS__})
#define N(name, ...) c.note(name, __VA_ARGS__)

void add_tensor_ops(std::vector<FuzzOp>& ops) {
  using BinFn = Tensor (*)(const Tensor&, const Tensor&);

  // ---- elementwise binary, broadcasting ----
  struct Unary {
    const char* name;
    Tensor (*fn)(const Tensor&);
    std::vector<DType> dtypes;
  };
  struct Binary {
    const char* name;
    BinFn fn;
    std::vector<DType> dtypes;  // what a tame call draws from (empty: any)
  };
  const std::vector<DType> ints = {DType::I32, DType::I64, DType::Bool}, bools = {DType::Bool};
  const std::vector<Binary> binaries = {
      {"add", static_cast<BinFn>(&add)}, {"sub", static_cast<BinFn>(&sub)}, {"mul", static_cast<BinFn>(&mul)},
      {"div", static_cast<BinFn>(&div)}, {"maximum", &maximum}, {"minimum", &minimum},
      {"floor_divide", &floor_divide, ints}, {"remainder", &remainder, ints}, {"bitwise_and", &bitwise_and, ints},
      {"bitwise_or", &bitwise_or, ints}, {"bitwise_xor", &bitwise_xor, ints}, {"shift_left", &shift_left, ints},
      {"shift_right", &shift_right, ints}, {"logical_and", &logical_and, bools}, {"logical_or", &logical_or, bools},
      {"logical_xor", &logical_xor, bools}, {"eq", &eq}, {"ne", &ne}, {"lt", &lt}, {"le", &le}, {"gt", &gt}, {"ge", &ge},
      {"relu_backward", &relu_backward}, {"abs_backward", &abs_backward}, {"sigmoid_backward", &sigmoid_backward},
      {"tanh_backward", &tanh_backward}, {"silu_backward", &silu_backward}, {"mish_backward", &mish_backward}};
  for (const auto& bin : binaries) {
    const bool backward = std::string(bin.name).find("_backward") != std::string::npos;  // same shapes
    ops.push_back(FuzzOp{bin.name, [fn = bin.fn, pool = bin.dtypes, backward](Ctx& c) {
                           const Shape s = c.shape();
                           const DType da = c.tame && !pool.empty() ? c.pick(pool) : c.any_dtype();
                           const DType db = c.tame || c.one_in(2) ? da : c.any_dtype();
                           const Tensor a = N("a", c.tensor(da, s));
                           const Tensor b = N("b", c.one_in(10) ? a : c.tensor(db, backward && c.tame ? s : c.partner(s)));
                           touch(fn(a, b));
                         }});
  }
  OP("add(out_dtype)", {
    const Shape s = c.shape();
    const Tensor a = N("a", c.any_tensor());
    const Tensor b = N("b", c.tensor(c.bad(2) || !a.defined() ? c.any_dtype() : a.dtype(), c.partner(a.defined() ? a.shape() : s)));
    const DType d = N("out_dtype", c.any_dtype());
    touch(c.one_in(2) ? add(a, b, d) : div(a, b, d));
  });
  OP("binary_out(alias)", {
    const Shape s = c.shape();
    const DType d = c.any_dtype();
    const Tensor a = N("a", c.tensor(d, s)), b = N("b", c.tensor(c.bad(3) ? c.any_dtype() : d, c.partner(s)));
    Tensor out;
    switch (c.u(0, 4)) {
      case 0: out = a; break;
      case 1: out = b; break;
      case 2: out = a.defined() && a.dim() >= 2 ? a.transpose(0, 1) : a; break;
      case 3: out = c.tensor(c.any_dtype(), c.partner(s)); break;
      default: out = a.defined() && a.dim() >= 1 && a.size(0) >= 1 ? a.select(0, 0).unsqueeze(0).expand(a.shape()) : a;
    }
    N("out", out);
    switch (c.u(0, 3)) {
      case 0: add_out(a, b, out); break;
      case 1: sub_out(a, b, out); break;
      case 2: mul_out(a, b, out); break;
      default: div_out(a, b, out);
    }
    touch(out);
  });
  OP("where", {
    const Shape s = c.shape();
    const Tensor cond = N("cond", c.tensor(c.bad(4) ? c.any_dtype() : DType::Bool, c.partner(s)));
    const DType d = c.any_dtype();
    const Tensor x = N("x", c.tensor(d, s)), y = N("y", c.tensor(c.bad(3) ? c.any_dtype() : d, c.partner(s)));
    touch(where(cond, x, y));
  });
  OP("masked_fill", {
    const Tensor x = N("x", c.any_tensor());
    const Tensor m = N("mask", c.tensor(c.bad(4) ? c.any_dtype() : DType::Bool,
                                        c.partner(x.defined() ? x.shape() : Shape{})));
    const Scalar v = c.scalar_arg();
    N("value", v.to_double());
    if (c.one_in(2)) touch(masked_fill(x, m, v));
    else masked_fill_(x, m, v), touch(x);
  });

  // ---- scalar operators ----
  OP("operator(scalar)", {
    const Tensor a = N("a", c.any_tensor());
    const Scalar s = c.scalar_arg();
    N("scalar", s.to_double());
    switch (c.u(0, 9)) {
      case 0: touch(a + s); break;
      case 1: touch(s - a); break;
      case 2: touch(a * s); break;
      case 3: touch(s / a); break;
      case 4: touch(a % s); break;
      case 5: touch(a == s); break;
      case 6: touch(s < a); break;
      case 7: touch(a & s); break;
      case 8: touch(s ^ a); break;
      default: touch(a >= s);
    }
  });

  // ---- unary ----
  using UnFn = Tensor (*)(const Tensor&);
  const std::vector<Unary> unary_table = {
      {"neg", &neg, {}}, {"abs", &abs, {}}, {"relu", static_cast<UnFn>(&relu)}, {"exp", &exp}, {"log", &log},
      {"sqrt", &sqrt}, {"sigmoid", static_cast<UnFn>(&sigmoid)}, {"tanh", &tanh}, {"silu", &silu},
      {"mish", &mish}, {"bitwise_not", &bitwise_not, ints}, {"logical_not", &logical_not, bools},
      {"operator-", static_cast<UnFn>(&operator-)}, {"operator~", &operator~, ints}};
  for (const auto& un : unary_table)
    ops.push_back(FuzzOp{un.name, [fn = un.fn, pool = un.dtypes](Ctx& c) {
                           const DType d = c.tame && !pool.empty() ? c.pick(pool) : c.any_dtype();
                           touch(fn(N("x", c.tensor(d, c.shape()))));
                         }});
  OP("unary(params)", {
    const Tensor x = N("x", c.any_tensor());
    const double p = N("p", c.real_arg());
    switch (c.u(0, 5)) {
      case 0: touch(pow(x, p)); break;
      case 1: touch(scale(x, p)); break;
      case 2: touch(elu(x, p)); break;
      case 3: touch(gelu(x, N("approx", c.bad(10) ? static_cast<GeluApproximation>(7) : GeluApproximation::Tanh))); break;
      case 4: touch(relu(x, N("out_dtype", c.any_dtype()))); break;
      default: touch(sigmoid(x, N("out_dtype", c.any_dtype())));
    }
  });
  OP("clamp", {
    const Tensor x = N("x", c.any_tensor());
    const std::optional<double> lo = N("lo", c.one_in(3) ? std::nullopt : std::optional<double>(c.real_arg()));
    const std::optional<double> hi = N("hi", c.one_in(3) ? std::nullopt : std::optional<double>(c.real_arg()));
    switch (c.u(0, 2)) {
      case 0: touch(clamp(x, lo, hi)); break;
      case 1: clamp_(x, lo, hi); touch(x); break;
      default: touch(clamp_backward(N("grad", c.tensor(c.any_dtype(), c.partner(x.defined() ? x.shape() : Shape{}))),
                                    x, lo, hi));
    }
  });
  OP("unary_backward(params)", {
    const Tensor x = N("x", c.float_tensor());
    const Tensor g = N("grad", c.tensor(c.same_or_any(x), c.same_or_partner(x)));
    if (c.one_in(2)) touch(gelu_backward(g, x, c.one_in(2) ? GeluApproximation::None : GeluApproximation::Tanh));
    else touch(elu_backward(g, x, N("alpha", c.real_arg())));
  });
  OP("has_inf_nan", { (void)has_inf_nan(N("x", c.any_tensor())); });
  OP("broadcast_shapes", {
    const Shape a = N("a", c.bad(5) ? Shape{c.absurd(), 2} : c.shape());
    (void)broadcast_shapes(a, N("b", c.partner(a)));
  });

  // ---- casts, copies, in-place ----
  OP("to/clone/contiguous", {
    const Tensor x = N("x", c.any_tensor());
    switch (c.u(0, 2)) {
      case 0: touch(x.to(N("dtype", c.any_dtype()))); break;
      case 1: touch(x.clone()); break;
      default: touch(x.contiguous());
    }
  });
  OP("inplace", {
    const Tensor a = N("a", c.any_tensor());
    Tensor b;
    switch (c.u(0, 3)) {
      case 0: b = a; break;
      case 1: b = a.defined() && a.dim() >= 2 ? a.transpose(0, 1) : a; break;
      case 2: b = a.defined() && a.dim() >= 1 ? a.flatten().slice(0, 0, a.numel() / 2 + 1).reshape(
                                                   Shape{std::min<std::int64_t>(a.numel(), a.numel() / 2 + 1)})
                                              : a;
              break;
      default: b = c.tensor(c.any_dtype(), c.partner(a.defined() ? a.shape() : Shape{}));
    }
    N("b", b);
    const Scalar s = c.scalar_arg();
    switch (c.u(0, 8)) {
      case 0: add_(a, b); break;
      case 1: sub_(a, s); break;
      case 2: mul_(a, b); break;
      case 3: div_(a, c.one_in(2) ? Scalar(0) : s); break;
      case 4: copy_(a, b); break;
      case 5: fill_(a, s); break;
      case 6: zero_(a); break;
      case 7: a.div_(b); break;
      default: a.copy_(b);
    }
    touch(a);
  });
  OP("from_bytes", {
    const DType d = N("dtype", c.any_dtype());
    const Shape s = N("shape", c.bad(4) ? Shape{c.size_arg(), c.size_arg()} : c.shape());
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(c.u(0, 64)), 0xFF);
    N("nbytes", bytes.size());
    touch(Tensor::from_bytes(bytes.data(), bytes.size(), d, s, c.factory_device()));
  });

  // ---- factories ----
  OP("factory", {
    Shape s = c.shape();
    if (c.one_in(3)) s = Shape{c.size_arg(), c.size_arg()};
    if (c.bad(4)) s.push_back(c.absurd());
    N("shape", s);
    const DType d = N("dtype", c.any_dtype());
    switch (c.u(0, 3)) {
      case 0: touch(empty(s, d, c.factory_device())); break;
      case 1: touch(zeros(s, d, c.factory_device())); break;
      case 2: touch(ones(s, d, c.factory_device())); break;
      default: {
        const Scalar v = c.scalar_arg();
        N("value", v.to_double());
        touch(full(s, v, d, c.factory_device()));
      }
    }
  });
  OP("arange/linspace/eye", {
    const DType d = N("dtype", c.any_dtype());
    switch (c.u(0, 4)) {
      case 0: {
        const double start = N("start", c.one_in(4) ? c.real_arg() : double(c.u(-5, 5)));
        const double end = N("end", c.one_in(6) ? double(c.absurd()) : (c.one_in(4) ? c.real_arg() : double(c.u(-5, 50))));
        const double step = N("step", c.one_in(4) ? c.real_arg() : double(c.pick<std::int64_t>({1, 2, -1, 0})));
        touch(arange(start, end, step, d, c.factory_device()));
        break;
      }
      case 1: touch(arange(N("n", c.size_arg()), d, c.factory_device())); break;
      case 2: touch(eye(N("n", c.size_arg()), N("m", c.one_in(2) ? -1 : c.size_arg()), d, c.factory_device())); break;
      case 3: touch(linspace(N("start", c.real_arg()), N("end", c.real_arg()), N("steps", c.size_arg()), d,
                             c.factory_device()));
              break;
      default: touch(logspace(N("start", c.real_arg()), N("end", c.real_arg()), N("steps", c.size_arg()),
                              N("base", c.real_arg()), d, c.factory_device()));
    }
  });
  OP("like", {
    const Tensor x = N("x", c.any_tensor());
    const DType d = N("dtype", c.any_dtype());
    switch (c.u(0, 3)) {
      case 0: touch(empty_like(x, d)); break;
      case 1: touch(zeros_like(x)); break;
      case 2: touch(ones_like(x, d)); break;
      default: touch(full_like(x, c.scalar_arg(), d));
    }
  });

  // ---- reductions ----
  OP("reduce(all)", {
    const Tensor x = N("x", c.any_tensor());
    switch (c.u(0, 9)) {
      case 0: touch(sum(x)); break;
      case 1: touch(mean(x)); break;
      case 2: touch(prod(x)); break;
      case 3: touch(amin(x)); break;
      case 4: touch(amax(x)); break;
      case 5: touch(any(x)); break;
      case 6: touch(all(x)); break;
      case 7: touch(argmax(x)); break;
      case 8: touch(argmin(x)); break;
      default: touch(c.one_in(2) ? sum(x, N("dtype", c.any_dtype())) : mean(x, N("dtype", c.any_dtype())));
    }
  });
  OP("reduce(dim)", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t dim = N("dim", c.dim_arg(x.defined() ? x.dim() : 1));
    const bool keep = N("keepdim", c.one_in(2));
    switch (c.u(0, 11)) {
      case 0: touch(sum(x, dim, keep)); break;
      case 1: touch(mean(x, dim, keep)); break;
      case 2: touch(prod(x, dim, keep)); break;
      case 3: touch(amin(x, dim, keep)); break;
      case 4: touch(amax(x, dim, keep)); break;
      case 5: touch(any(x, dim, keep)); break;
      case 6: touch(all(x, dim, keep)); break;
      case 7: touch(argmax(x, dim, keep)); break;
      case 8: touch(argmin(x, dim, keep)); break;
      case 9: touch(max(x, dim, keep)); break;
      case 10: touch(min(x, dim, keep)); break;
      default: touch(sum(x, dim, keep, N("dtype", c.any_dtype())));
    }
  });
  OP("reduce(dims)", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t rank = x.defined() ? x.dim() : 1;
    std::vector<std::int64_t> dims;
    for (std::int64_t i = 0, n = c.u(0, 3); i < n; ++i) {
      const std::int64_t d = c.dim_arg(rank);
      if (!c.tame || std::find(dims.begin(), dims.end(), d) == dims.end()) dims.push_back(d);
    }
    N("dims", Shape(dims));
    const bool keep = N("keepdim", c.one_in(2));
    switch (c.u(0, 5)) {
      case 0: touch(sum(x, dims, keep)); break;
      case 1: touch(mean(x, dims, keep)); break;
      case 2: touch(amin(x, dims, keep)); break;
      case 3: touch(amax(x, dims, keep)); break;
      case 4: touch(any(x, dims, keep)); break;
      default: touch(all(x, dims, keep));
    }
  });
  OP("masked_amin/amax", {
    const Tensor x = N("x", c.any_tensor());
    const Tensor m = N("mask", c.tensor(c.bad(4) ? c.any_dtype() : DType::Bool, c.same_or_partner(x)));
    if (c.one_in(2)) touch(c.one_in(2) ? masked_amin(x, m) : masked_amax(x, m));
    else touch(masked_amax(x, m, N("dim", c.dim_arg(x.defined() ? x.dim() : 1)), c.one_in(2)));
  });
  OP("prod_backward", {
    const Tensor x = N("x", c.any_tensor());
    if (c.one_in(2)) {
      touch(prod_backward(N("grad", c.tensor(c.same_or_any(x), c.bad(3) ? c.shape() : Shape{})), x));
    } else {
      const std::int64_t dim = N("dim", c.dim_arg(x.defined() ? x.dim() : 1));
      const bool keep = N("keepdim", c.one_in(2));
      Shape gs = x.defined() ? x.shape() : Shape{};
      if (!gs.empty() && dim >= -x.dim() && dim < x.dim()) {
        const auto d = static_cast<std::size_t>(dim < 0 ? dim + x.dim() : dim);
        if (keep) gs[d] = 1;
        else gs.erase(gs.begin() + static_cast<std::ptrdiff_t>(d));
      }
      touch(prod_backward(N("grad", c.tensor(c.same_or_any(x), c.bad(4) ? c.shape() : gs)), x, dim, keep));
    }
  });
  OP("scan", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t dim = N("dim", c.dim_arg(x.defined() ? x.dim() : 1));
    switch (c.u(0, 4)) {
      case 0: touch(cumsum(x, dim)); break;
      case 1: touch(cumprod(x, dim)); break;
      case 2: touch(logcumsumexp(x, dim)); break;
      case 3: touch(cummax(x, dim)); break;
      default: touch(cummin(x, dim));
    }
  });
  OP("softmax", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t dim = N("dim", c.dim_arg(x.defined() ? x.dim() : 1));
    switch (c.u(0, 3)) {
      case 0: touch(softmax(x, dim)); break;
      case 1: touch(log_softmax(x, dim, N("dtype", c.any_dtype()))); break;
      case 2: touch(softmax_backward(N("grad", c.tensor(c.same_or_any(x), c.same_or_partner(x))), x, dim));
              break;
      default: touch(log_softmax_backward(
                   N("grad", c.tensor(c.same_or_any(x), c.same_or_partner(x))), x, dim));
    }
  });
  OP("layer_norm/rms_norm", {
    const Tensor x = N("x", c.float_tensor(c.tame ? 1 : 0));
    const std::int64_t last = x.defined() && x.dim() > 0 ? x.size(-1) : 1;
    const Shape ws = c.bad(5) ? c.shape(0, 2) : Shape{last};
    const Tensor w = N("weight", c.one_in(3) ? Tensor() : c.tensor(c.same_or_any(x), ws));
    const Tensor b = N("bias", c.one_in(3) ? Tensor() : c.tensor(c.same_or_any(x), c.bad(5) ? c.shape(0, 2) : ws));
    const double eps = N("eps", c.one_in(3) ? c.real_arg() : 1e-5);
    LayerNormOptions lo;
    if (c.one_in(4)) lo.out_dtype = N("out_dtype", c.any_dtype());
    if (c.one_in(2)) {
      const LayerNormResult r = layer_norm(x, w, b, eps, lo);
      touch(r.y), touch(r.mean), touch(r.rstd);
      const Tensor g = N("grad", c.bad(4) ? c.float_tensor() : c.tensor(c.float_dtype(), r.y.shape()));
      LayerNormBackwardOptions bo;
      if (c.one_in(4)) bo.dx_cast = N("dx_cast", c.any_dtype());
      if (c.one_in(5)) bo.residual = N("residual", c.bad(2) ? c.float_tensor() : c.tensor(x.dtype(), x.shape()));
      const LayerNormGrads gr = layer_norm_backward(g, x, c.bad(8) ? r.rstd : r.mean, r.rstd,
                                                    c.bad(8) ? b : w, bo);
      touch(gr.dx), touch(gr.dweight), touch(gr.dbias), touch(gr.dx_cast);
    } else {
      RmsNormOptions ro;
      ro.out_dtype = lo.out_dtype;
      const RmsNormResult r = rms_norm(x, w, eps, ro);
      touch(r.y), touch(r.rstd);
      const Tensor g = N("grad", c.bad(4) ? c.float_tensor() : c.tensor(c.float_dtype(), r.y.shape()));
      const RmsNormGrads gr = rms_norm_backward(g, x, r.rstd, w);
      touch(gr.dx), touch(gr.dweight);
    }
  });

  // ---- views ----
  OP("view/reshape", {
    const Tensor x = N("x", c.any_tensor());
    Shape s;
    const std::int64_t n = x.defined() ? x.numel() : 1;
    switch (c.u(0, 3)) {
      case 0: s = {n}; break;
      case 1: s = {-1}; break;
      case 2: s = {c.size_arg(), -1}; break;
      default: s = c.shape();
    }
    if (c.bad(5)) s.push_back(c.pick<std::int64_t>({-1, -2, 0, c.absurd()}));
    N("shape", s);
    touch(c.one_in(2) ? x.view(s) : x.reshape(s));
  });
  OP("slice/narrow/select", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t dim = N("dim", c.dim_arg(x.defined() ? x.dim() : 1));
    const std::int64_t a = N("a", c.bad(8) ? c.absurd() : c.u(-6, 6));
    const std::int64_t b = N("b", c.bad(8) ? c.absurd() : c.u(-6, 8));
    switch (c.u(0, 2)) {
      case 0: touch(x.slice(dim, a, b, N("step", c.bad(6) ? c.absurd() : c.u(-1, 3)))); break;
      case 1: touch(x.narrow(dim, a, b)); break;
      default: touch(x.select(dim, a));
    }
  });
  OP("squeeze/unsqueeze/flatten", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t r = x.defined() ? x.dim() : 1;
    const std::int64_t d = N("d", c.dim_arg(r + 1));
    switch (c.u(0, 4)) {
      case 0: touch(x.unsqueeze(d)); break;
      case 1: touch(x.squeeze()); break;
      case 2: touch(x.squeeze(d)); break;
      case 3: touch(x.flatten(d, N("end", c.dim_arg(r)))); break;
      default: {
        const Shape s = N("sizes", c.bad(3) ? c.shape(0, 3) : Shape{c.size_arg(), -1});
        touch(x.unflatten(d, s));
      }
    }
  });
  OP("expand", {
    const Tensor x = N("x", c.any_tensor());
    Shape s = x.defined() ? x.shape() : Shape{};
    for (auto& d : s)
      if (c.one_in(2)) d = c.one_in(3) ? -1 : c.size_arg();
    if (c.one_in(3)) s.insert(s.begin(), c.size_arg());
    N("shape", s);
    const Tensor e = x.expand(s);  // not touched: a legal view may have 2^62 elements
    if (e.numel() <= kMaxElements) touch(e);
  });
  OP("transpose/permute", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t r = x.defined() ? x.dim() : 1;
    switch (c.u(0, 4)) {
      case 0: touch(transpose(x, N("d0", c.dim_arg(r)), N("d1", c.dim_arg(r)))); break;
      case 1: touch(permute(x, N("dims", Shape(c.perm(r))))); break;
      case 2: touch(x.t()); break;
      case 3: touch(x.mT()); break;
      default: touch(x.diagonal(N("offset", c.bad(5) ? c.absurd() : c.u(-3, 3)), N("d1", c.dim_arg(r)),
                                N("d2", c.dim_arg(r))));
    }
  });
  OP("unfold", {
    const Tensor x = N("x", c.any_tensor());
    touch(x.unfold(N("dim", c.dim_arg(x.defined() ? x.dim() : 1)), N("size", c.size_arg()),
                   N("step", c.size_arg())));
  });
  OP("as_strided/strided_copy", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t rank = c.u(0, 3);
    Shape s, st;
    for (std::int64_t i = 0; i < rank; ++i) {
      s.push_back(c.bad(10) ? c.absurd() : c.small());
      st.push_back(c.bad(10) ? c.absurd() : c.u(-1, 5));
    }
    if (c.bad(8)) st.push_back(1);  // a rank mismatch
    N("shape", s), N("strides", st);
    const std::int64_t off = N("offset", c.bad(8) ? c.absurd() : c.u(0, 8));
    switch (c.u(0, 2)) {
      case 0: {
        const Tensor v = x.as_strided(s, st, off);
        if (v.numel() <= kMaxElements) touch(v);
        break;
      }
      case 1: touch(strided_copy(x, s, st, off)); break;
      default: {
        const Tensor src = N("src", c.tensor(x.defined() ? x.dtype() : DType::F32, c.bad(3) ? c.shape() : s));
        strided_scatter(x, src, s, st, off);
        touch(x);
      }
    }
  });
  OP("cat/stack", {
    const DType d = c.any_dtype();
    const Shape s = c.shape();
    const std::int64_t n = c.u(c.tame ? 1 : 0, 4);
    std::vector<Tensor> ts;
    for (std::int64_t i = 0; i < n; ++i) {
      Shape si = s;
      if (!si.empty() && c.one_in(2)) si[static_cast<std::size_t>(c.u(0, static_cast<std::int64_t>(si.size()) - 1))] = c.small();
      if (c.bad(10)) si = c.shape();
      ts.push_back(N("t", c.tensor(c.bad(5) ? c.any_dtype() : d, si)));
    }
    const std::int64_t dim = N("dim", c.dim_arg(static_cast<std::int64_t>(s.size()) + 1));
    touch(c.one_in(2) ? cat(ts, dim) : stack(ts, dim));
  });
  OP("split/chunk/repeat/roll", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t r = x.defined() ? x.dim() : 1;
    const std::int64_t dim = N("dim", c.dim_arg(r));
    switch (c.u(0, 3)) {
      case 0: {
        std::vector<std::int64_t> sizes;
        for (std::int64_t i = 0, n = c.u(0, 3); i < n; ++i) sizes.push_back(c.size_arg());
        touch(split(x, N("sizes", Shape(sizes)), dim));
        break;
      }
      case 1: touch(chunk(x, N("n", c.size_arg()), dim)); break;
      case 2: {
        std::vector<std::int64_t> reps;
        for (std::int64_t i = 0, n = c.u(0, 5); i < n; ++i) reps.push_back(c.bad(10) ? c.absurd() : c.u(0, 3));
        touch(repeat(x, N("reps", Shape(reps))));
        break;
      }
      default: touch(roll(x, N("shift", c.bad(5) ? c.absurd() : c.u(-5, 5)), dim));
    }
  });
  OP("index_select/gather/scatter_add", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t r = x.defined() ? x.dim() : 1;
    const std::int64_t dim = N("dim", c.dim_arg(r));
    const std::int64_t bound = x.defined() && dim >= -r && dim < r && r > 0 ? x.size(dim < 0 ? dim + r : dim) : 3;
    switch (c.u(0, 2)) {
      case 0: touch(index_select(x, dim, N("index", c.index_tensor(c.shape(0, 2), bound)))); break;
      case 1: {
        Shape is = x.defined() ? x.shape() : Shape{};
        for (auto& d : is) if (c.one_in(3)) d = c.small();
        touch(gather(x, dim, N("index", c.index_tensor(is, bound))));
        break;
      }
      default: {
        Shape is = x.defined() ? x.shape() : Shape{};
        for (auto& d : is) if (c.one_in(3)) d = std::min<std::int64_t>(d, c.small());
        const Tensor idx = N("index", c.index_tensor(is, bound));
        const Tensor src = N("src", c.tensor(c.bad(4) ? c.any_dtype() : (x.defined() ? x.dtype() : DType::F32),
                                             c.bad(4) ? c.shape() : is));
        touch(scatter_add(x, dim, idx, src));
      }
    }
  });
  OP("masked_select/scatter", {
    const Tensor x = N("x", c.any_tensor());
    const Tensor m = N("mask", c.tensor(c.bad(4) ? c.any_dtype() : DType::Bool,
                                        c.partner(x.defined() ? x.shape() : Shape{})));
    if (c.one_in(2)) touch(masked_select(x, m));
    else touch(masked_scatter(x, m, N("source", c.tensor(c.bad(4) ? c.any_dtype() : (x.defined() ? x.dtype() : DType::F32),
                                                         c.shape(0, 2)))));
  });
  OP("embedding", {
    const Tensor w = N("weight", c.float_tensor(0, 3));
    const std::int64_t rows = w.defined() && w.dim() > 0 ? w.size(0) : 3;
    const Tensor idx = N("indices", c.index_tensor(c.shape(0, 2), rows));
    if (c.one_in(2)) {
      touch(nn::embedding(w, idx));
    } else {
      Shape gs = idx.defined() ? idx.shape() : Shape{};
      gs.push_back(c.small());
      touch(nn::embedding_backward(N("grad", c.tensor(c.float_dtype(), c.bad(4) ? c.shape() : gs)), idx,
                                   N("num", c.bad(6) ? c.absurd() : rows)));
    }
  });
  OP("slice_write/read", {
    const Tensor cache = N("cache", c.any_tensor(1, 4));
    if (c.one_in(2)) {
      touch(slice_read(cache, N("len", c.bad(5) ? c.absurd() : c.u(-1, 6))));
    } else {
      Shape s = cache.defined() ? cache.shape() : Shape{};
      if (s.size() >= 2 && c.one_in(2)) s[s.size() - 2] = c.small();
      if (c.bad(5)) s = c.shape();
      const Tensor src = N("src", c.tensor(c.bad(4) ? c.any_dtype() : (cache.defined() ? cache.dtype() : DType::F32), s));
      slice_write(cache, src, N("pos", c.bad(5) ? c.absurd() : c.u(-1, 6)));
      touch(cache);
    }
  });

}

#undef OP
#undef N

}  // namespace ferrite::api_fuzz

// The API fuzz's model-level op families (api_fuzz.hpp): matmul and linear, attention,
// convolution and pooling, recurrent cells, dropout, cross-entropy and optimizers, linear
// algebra, FFT, sparse matrices, random numbers, and the accessors, buffers and printing.
#include "unit/api_fuzz.hpp"

namespace ferrite::api_fuzz {

#define OP(name, ...) ops.push_back(FuzzOp{name, [](Ctx& c) __VA_ARGS__})
#define N(name, ...) c.note(name, __VA_ARGS__)

void add_nn_ops(std::vector<FuzzOp>& ops) {
  // ---- matmul ----
  OP("matmul", {
    // The variant first, then ranks that suit it (any ranks when not tame).
    const std::int64_t variant = c.u(0, 6);
    static constexpr std::int64_t kRanks[7][2] = {{-1, -1}, {2, 2}, {3, 3}, {1, 1}, {2, 1}, {1, 2}, {2, 2}};
    const bool any_rank = !c.tame || variant == 0 || c.one_in(4);
    const std::int64_t ra = any_rank ? c.u(0, 4) : kRanks[variant][0], rb = any_rank ? c.u(0, 4) : kRanks[variant][1];
    const std::int64_t m = c.small(), k = c.small(), n = c.small();
    Shape batch;
    for (std::int64_t i = 0; i < 2; ++i) batch.push_back(c.small() % 3 + (c.one_in(3) ? 0 : 1));
    auto mk = [&](std::int64_t rank, std::int64_t r0, std::int64_t r1) {
      if (rank == 0) return Shape{};
      if (rank == 1) return Shape{r1};
      Shape s(batch.end() - std::min<std::int64_t>(rank - 2, 2), batch.end());
      s.push_back(r0), s.push_back(r1);
      if (c.bad(8)) s[static_cast<std::size_t>(c.u(0, rank - 1))] += 1;
      return s;
    };
    const DType d = c.bad(4) ? c.any_dtype() : c.float_dtype();
    MatmulOptions o;
    o.transpose_a = N("ta", c.one_in(4));
    o.transpose_b = N("tb", c.one_in(4));
    Shape sa = mk(ra, m, k), sb = mk(rb, k, n);
    if (rb == 1) sb = {k};
    if (o.transpose_a && sa.size() >= 2) std::swap(sa[sa.size() - 1], sa[sa.size() - 2]);
    if (o.transpose_b && sb.size() >= 2) std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
    const Tensor a = N("a", c.tensor(d, sa)), b = N("b", c.tensor(c.bad(5) ? c.any_dtype() : d, sb));
    if (c.one_in(4)) o.out_dtype = N("out_dtype", c.any_dtype());
    if (c.one_in(4)) o.compute = N("compute", static_cast<MatmulCompute>(c.u(0, c.bad(5) ? 6 : 4)));
    switch (variant) {
      case 0: touch(matmul(a, b, o)); break;
      case 1: touch(mm(a, b, o)); break;
      case 2: touch(bmm(a, b, o)); break;
      case 3: touch(dot(a, b, o)); break;
      case 4: touch(mv(a, b, o)); break;
      case 5: touch(vm(a, b, o)); break;
      default: {
        Tensor out;
        switch (c.u(0, 2)) {
          case 0: out = c.tame ? c.tensor(d, {m, n}) : a; break;
          case 1: out = c.tame && m == k ? a : b; break;  // tame: in place when a is [m, m]
          default: out = c.tensor(c.bad(4) ? c.any_dtype() : d, sa.size() >= 2 ? Shape{m, n} : c.shape());
        }
        N("out", out);
        matmul_out(out, a, b, N("alpha", c.one_in(3) ? c.real_arg() : 1.0), N("beta", c.one_in(2) ? c.real_arg() : 0.0), o);
        touch(out);
      }
    }
  });
  OP("linear", {
    const DType d = c.float_dtype();
    const std::int64_t in = c.small(), out = c.small();
    Shape xs = c.shape(0, 2);
    xs.push_back(in);
    const Tensor x = N("x", c.tensor(d, c.bad(6) ? c.shape() : xs));
    const Tensor w = N("weight", c.tensor(c.bad(5) ? c.any_dtype() : d, c.bad(6) ? c.shape() : Shape{out, in}));
    std::optional<Tensor> bias;
    if (c.one_in(2)) bias = N("bias", c.tensor(c.bad(5) ? c.any_dtype() : d, c.bad(5) ? c.shape(0, 2) : Shape{out}));
    nn::LinearOptions o;
    if (c.one_in(4)) o.out_dtype = N("out_dtype", c.any_dtype());
    if (c.one_in(4)) {
      Shape rs = xs;
      rs.back() = out;
      o.residual = N("residual", c.tensor(c.bad(3) ? c.float_dtype() : (o.out_dtype ? *o.out_dtype : d), c.partner(rs)));
    }
    if (c.one_in(3)) {
      const Tensor o2 = N("out", c.bad(3) ? x : c.tensor(d, c.partner(Shape{out})));
      nn::linear_out(o2, x, w, bias, o);
      touch(o2);
    } else {
      touch(nn::linear(x, w, bias, o));
    }
  });

  // ---- attention ----
  OP("scaled_dot_product_attention", {
    const DType d = c.float_dtype();
    const std::int64_t b = c.small() % 3, hq = c.pick<std::int64_t>({1, 2, 4}), sq = c.small(), sk = c.small();
    const std::int64_t hk = c.one_in(3) ? (c.bad(3) ? 3 : (hq % 2 == 0 ? hq / 2 : hq)) : hq;
    const std::int64_t dh = c.pick<std::int64_t>({0, 1, 4, 8, 16}), dv = c.bad(4) ? c.small() : dh;
    auto sh = [&](Shape s) { return c.bad(12) ? c.shape() : s; };
    const Tensor q = N("q", c.tensor(d, sh({b, hq, sq, dh})));
    const Tensor k = N("k", c.tensor(c.bad(8) ? c.any_dtype() : d, sh({b, hk, sk, dh})));
    const Tensor v = N("v", c.tensor(c.bad(8) ? c.any_dtype() : d, sh({b, hk, sk, dv})));
    nn::AttentionOptions o;
    o.causal = N("causal", c.one_in(3));
    if (c.one_in(4)) o.scale = N("scale", c.real_arg());
    if (c.one_in(4)) {
      Shape ms = {b, hq, sq, sk};
      for (auto& e : ms) if (c.one_in(3)) e = 1;
      o.mask = N("mask", c.tensor(c.one_in(2) ? DType::Bool : (c.one_in(2) ? d : c.any_dtype()), sh(ms)));
    }
    random::Generator gen = c.generator(c.u(0, 1000));
    if (c.one_in(4)) {
      o.dropout_p = N("dropout_p", c.prob_arg());
      if (c.one_in(2)) o.generator = &gen;
    }
    o.deterministic = c.one_in(2);
    const nn::AttentionResult r = nn::scaled_dot_product_attention(q, k, v, o);
    touch(r.out), touch(r.logsumexp);
    if (c.one_in(2)) {
      o.dropout_state = r.dropout_state;
      const Tensor g = N("grad_out", c.tensor(c.bad(6) ? c.any_dtype() : d, c.bad(8) ? c.shape() : r.out.shape()));
      const Tensor lse = c.bad(8) ? N("lse", c.float_tensor()) : r.logsumexp;
      if (c.one_in(3)) {
        nn::AttentionGrads grads{c.tensor(d, q.shape()), c.bad(4) ? q : c.tensor(d, k.shape()),
                                 c.tensor(c.bad(6) ? c.any_dtype() : d, v.shape())};
        N("dq", grads.dq), N("dk", grads.dk), N("dv", grads.dv);
        nn::scaled_dot_product_attention_backward_out(grads, g, q, k, v, r.out, lse, o);
        touch(grads.dq), touch(grads.dk), touch(grads.dv);
      } else {
        const nn::AttentionGrads gr = nn::scaled_dot_product_attention_backward(g, q, k, v, r.out, lse, o);
        touch(gr.dq), touch(gr.dk), touch(gr.dv);
      }
    }
  });

  // ---- convolution and pooling ----
  OP("conv2d", {
    const DType d = c.float_dtype();
    const std::int64_t n = c.small() % 3, g = c.pick<std::int64_t>({1, 1, 2}), ci = g * (c.small() % 3 + 1),
                       co = g * (c.small() % 3 + 1), h = c.small() + 1, w = c.small() + 1, kh = c.u(1, 3), kw = c.u(1, 3);
    const Tensor x = N("x", c.tensor(d, c.bad(8) ? c.shape() : Shape{n, ci, h, w}));
    const Tensor wt = N("weight", c.tensor(c.bad(8) ? c.any_dtype() : d, c.bad(8) ? c.shape() : Shape{co, ci / g, kh, kw}));
    std::optional<Tensor> bias;
    if (c.one_in(2)) bias = N("bias", c.tensor(d, c.bad(6) ? c.shape(0, 2) : Shape{co}));
    nn::Conv2dOptions o;
    auto p2 = [&](std::int64_t lo, std::int64_t hi) {
      return nn::Size2{c.bad(10) ? c.absurd() : c.u(lo, hi), c.bad(10) ? c.absurd() : c.u(lo, hi)};
    };
    o.stride = p2(1, 3), o.padding = p2(0, 2), o.dilation = p2(1, 2);
    o.groups = c.bad(8) ? c.absurd() : (c.one_in(6) ? c.u(0, 3) : g);
    N("stride", Shape{o.stride[0], o.stride[1]}), N("padding", Shape{o.padding[0], o.padding[1]}),
        N("dilation", Shape{o.dilation[0], o.dilation[1]}), N("groups", o.groups);
    if (c.one_in(2)) {
      touch(nn::conv2d(x, wt, bias, o));
    } else {
      const Tensor gr = N("grad", c.tensor(d, c.bad(3) ? c.shape(4, 4) : Shape{n, co, h, w}));
      const std::array<bool, 3> mask = {c.one_in(2), c.one_in(2), c.one_in(2)};
      const nn::Conv2dGrads r = nn::conv2d_backward(gr, x, wt, o, mask);
      touch(r.input), touch(r.weight), touch(r.bias);
    }
  });
  OP("pool2d", {
    const DType d = c.bad(5) ? c.any_dtype() : c.float_dtype();
    const Tensor x = N("x", c.tensor(d, c.bad(6) ? c.shape() : c.shape(3, 4)));
    auto p2 = [&](std::int64_t lo, std::int64_t hi) {
      return nn::Size2{c.bad(12) ? c.absurd() : c.u(lo, hi), c.bad(12) ? c.absurd() : c.u(lo, hi)};
    };
    const nn::Size2 k = p2(c.tame ? 1 : 0, 3), pad = p2(0, 1);
    const std::optional<nn::Size2> stride = c.one_in(2) ? std::nullopt : std::optional<nn::Size2>(p2(0, 3));
    const bool ceil = c.one_in(2);
    N("kernel", Shape{k[0], k[1]}), N("padding", Shape{pad[0], pad[1]}), N("ceil", ceil);
    if (stride) N("stride", Shape{(*stride)[0], (*stride)[1]});
    switch (c.u(0, 2)) {
      case 0: {
        nn::MaxPool2dOptions o{k, stride, pad, p2(1, 2), ceil};
        N("dilation", Shape{o.dilation[0], o.dilation[1]});
        const nn::MaxPool2dResult r = nn::max_pool2d(x, o);
        touch(r.values), touch(r.indices);
        if (c.one_in(2)) {
          const Tensor g = N("grad", c.tensor(d, c.bad(5) ? c.shape() : r.values.shape()));
          const Tensor idx = c.bad(5) ? N("indices", c.index_tensor(r.indices.shape(), 1 << 20)) : r.indices;
          touch(nn::max_pool2d_backward(g, x, idx, o));
        }
        break;
      }
      case 1: {
        nn::AvgPool2dOptions o;
        o.kernel_size = k, o.stride = stride, o.padding = pad, o.ceil_mode = ceil;
        o.count_include_pad = c.one_in(2);
        if (c.one_in(4)) o.divisor_override = N("divisor", c.bad(2) ? c.absurd() : c.u(-1, 3));
        const Tensor y = nn::avg_pool2d(x, o);
        touch(y);
        if (c.one_in(2)) touch(nn::avg_pool2d_backward(N("grad", c.tensor(d, c.bad(5) ? c.shape() : y.shape())), x, o));
        break;
      }
      default: {
        const nn::Size2 os = p2(0, 4);
        N("output_size", Shape{os[0], os[1]});
        const Tensor y = nn::adaptive_avg_pool2d(x, os);
        touch(y);
        if (c.one_in(2)) touch(nn::adaptive_avg_pool2d_backward(N("grad", c.tensor(d, c.bad(5) ? c.shape() : y.shape())), x));
      }
    }
  });
  OP("rnn_cell", {
    const DType d = c.float_dtype();
    const std::int64_t b = c.small(), h = c.small();
    const bool gru = N("gru", c.one_in(2));
    const std::int64_t g = gru ? 3 : 4;
    auto sh = [&](Shape s) { return c.bad(10) ? c.shape() : s; };
    const Tensor ig = N("input_gates", c.tensor(d, sh({b, g * h})));
    const Tensor hg = N("hidden_gates", c.tensor(c.bad(8) ? c.any_dtype() : d, sh({b, g * h})));
    const Tensor hx = N("hx", c.tensor(d, sh({b, h})));
    std::optional<Tensor> ib, hb;
    if (c.one_in(2)) ib = N("input_bias", c.tensor(d, sh({g * h}))), hb = N("hidden_bias", c.tensor(d, sh({g * h})));
    if (gru) {
      const nn::GruCellResult r = nn::gru_cell(ig, hg, hx, ib, hb);
      touch(r.hy), touch(r.workspace);
      const nn::GruCellGrads gr = nn::gru_cell_backward(N("grad_hy", c.tensor(d, sh(r.hy.shape()))),
                                                        c.bad(6) ? c.float_tensor() : r.workspace, c.one_in(2));
      touch(gr.input_gates), touch(gr.hidden_gates), touch(gr.hx), touch(gr.input_bias), touch(gr.hidden_bias);
    } else {
      const nn::LstmCellResult r = nn::lstm_cell(ig, hg, hx, ib, hb);
      touch(r.hy), touch(r.cy), touch(r.workspace);
      std::optional<Tensor> ghy, gcy;
      if (c.one_in(2)) ghy = N("grad_hy", c.tensor(d, sh(r.hy.shape())));
      if (c.one_in(2)) gcy = N("grad_cy", c.tensor(d, sh(r.cy.shape())));
      const nn::LstmCellGrads gr = nn::lstm_cell_backward(ghy, gcy, hx, c.bad(6) ? hx : r.cy,
                                                          c.bad(6) ? c.float_tensor() : r.workspace, c.one_in(2));
      touch(gr.gates), touch(gr.cx), touch(gr.bias);
    }
  });

  // ---- training ----
  OP("dropout", {
    const Tensor x = N("x", c.any_tensor());
    const double p = N("p", c.prob_arg());
    random::Generator gen = c.generator(c.u(0, 99));
    const nn::DropoutResult r = nn::dropout(x, p, c.one_in(2) ? &gen : nullptr);
    touch(r.output), touch(r.mask);
    if (c.one_in(2)) {
      const Tensor g = N("grad", c.tensor(c.any_dtype(), c.bad(4) ? c.shape() : r.output.shape()));
      touch(nn::dropout_backward(g, c.bad(6) ? x : r.mask, N("p2", c.one_in(3) ? c.prob_arg() : p)));
    }
  });
  OP("cross_entropy", {
    const DType d = c.float_dtype();
    const std::int64_t n = c.small(), k = c.small();
    const Tensor logits = N("logits", c.tensor(d, c.bad(6) ? c.shape() : Shape{n, k}));
    const Tensor t = N("targets", c.index_tensor(c.bad(6) ? c.shape(0, 2) : Shape{n}, k));
    nn::CrossEntropyOptions o;
    o.ignore_index = N("ignore_index", c.one_in(4) ? c.u(-1, 3) : -100);
    o.label_smoothing = N("label_smoothing", c.one_in(3) ? c.prob_arg() : 0.0);
    o.reduction = N("reduction", static_cast<nn::Reduction>(c.bad(20) ? 9 : c.u(0, 2)));
    if (c.one_in(2)) {
      touch(nn::cross_entropy(logits, t, o));
    } else {
      const nn::CrossEntropyForward f = nn::cross_entropy_forward(logits, t, o);
      touch(f.loss), touch(f.lse), touch(f.count);
      const Tensor g = N("grad", c.tensor(d, c.bad(4) ? c.shape(0, 1) : f.loss.shape()));
      touch(nn::cross_entropy_backward(g, logits, t, f, o));
    }
  });
  OP("optim", {
    const DType d = c.float_dtype();
    const std::int64_t n = c.u(0, 2);
    const Shape s = c.shape(0, 2);
    auto list = [&](const char* name, DType dt) {
      std::vector<Tensor> v;
      for (std::int64_t i = 0, m = c.bad(8) ? c.u(0, 3) : n; i < m; ++i)
        v.push_back(N(name, c.tensor(c.bad(8) ? c.any_dtype() : dt, c.bad(8) ? c.shape() : s)));
      return v;
    };
    const Tensor found = c.one_in(4) ? N("found_inf", c.any_tensor(0, 1)) : Tensor();
    if (c.one_in(2)) {
      optim::AdamTensors t{list("param", d), list("grad", d), list("exp_avg", DType::F32), list("exp_avg_sq", DType::F32),
                           {}, {}};
      optim::AdamOptions o;
      o.lr = N("lr", c.tame ? 0.01 : c.real_arg());
      o.amsgrad = c.one_in(3);
      if (o.amsgrad) t.max_exp_avg_sqs = list("max_exp_avg_sq", DType::F32);
      if (c.one_in(4)) t.master_params = list("master", DType::F32);
      const std::int64_t step = N("step", c.bad(5) ? c.absurd() : c.u(c.tame ? 1 : 0, 3));
      if (c.one_in(2)) optim::adam(t, step, o, found);
      else optim::adamw(t, step, o, found);
    } else {
      optim::SgdOptions o;
      o.lr = N("lr", c.tame ? 0.01 : c.real_arg());
      o.momentum = N("momentum", c.one_in(2) ? 0.0 : c.real_arg());
      o.nesterov = c.one_in(3);
      optim::SgdTensors t{list("param", d), list("grad", d), o.momentum != 0 ? list("buf", DType::F32) : std::vector<Tensor>{},
                          {}};
      optim::sgd(t, c.one_in(2), o, found);
    }
  });

  // ---- linear algebra ----
  OP("linalg", {
    const DType d = c.bad(5) ? c.any_dtype() : c.pick<DType>({DType::F32, DType::F64, DType::C64, DType::C128});
    const std::int64_t n = c.small() % 6, m = c.one_in(3) ? c.small() % 6 : n;
    Shape s = c.shape(0, 1);
    s.push_back(n), s.push_back(m);
    if (c.bad(8)) s = c.shape();
    const Tensor a = N("a", c.tensor(d, s));
    auto rhs = [&]() {
      Shape bs = s;
      if (bs.size() >= 2) bs.back() = c.small() % 4;
      if (c.one_in(3) && bs.size() >= 2) bs.pop_back();
      if (c.bad(8)) bs = c.shape();
      return N("b", c.tensor(c.bad(6) ? c.any_dtype() : d, bs));
    };
    switch (c.u(0, 14)) {
      case 0: touch(linalg::cholesky(a, c.one_in(2))); break;
      case 1: { auto r = linalg::cholesky_ex(a); touch(r.L), touch(r.info); break; }
      case 2: touch(linalg::solve(a, rhs())); break;
      case 3: { auto r = linalg::solve_ex(a, rhs()); touch(r.result), touch(r.info); break; }
      case 4: {
        const linalg::LuFactor f = linalg::lu_factor(a);
        touch(f.LU), touch(f.pivots);
        const Tensor piv = c.bad(4) ? N("pivots", c.index_tensor(f.pivots.shape(), 8)) : f.pivots;
        touch(linalg::lu_solve(f.LU, piv, rhs()));
        break;
      }
      case 5: { auto r = linalg::lu(a); touch(r.P), touch(r.L), touch(r.U); break; }
      case 6: { auto r = linalg::qr(a, N("mode", static_cast<linalg::QrMode>(c.u(0, c.bad(10) ? 5 : 2)))); touch(r.Q), touch(r.R); break; }
      case 7: { auto r = linalg::eigh(a, N("uplo", c.pick<char>({'L', 'U', 'x', '\0'}))); touch(r.eigenvalues), touch(r.eigenvectors); break; }
      case 8: touch(linalg::eigvalsh(a)); break;
      case 9: { auto r = linalg::svd(a, c.one_in(2)); touch(r.U), touch(r.S), touch(r.Vh); break; }
      case 10: touch(linalg::svdvals(a)); break;
      case 11: { auto r = linalg::eig(a); touch(r.eigenvalues), touch(r.eigenvectors); break; }
      case 12: touch(linalg::eigvals(a)); break;
      case 13: touch(linalg::lstsq(a, rhs())); break;
      default: { auto r = linalg::lu_factor_ex(a); touch(r.LU), touch(r.pivots), touch(r.info); touch(linalg::inv(a)); }
    }
  });

  // ---- FFT ----
  OP("fft1", {
    const DType d = c.bad(5) ? c.any_dtype() : c.pick<DType>({DType::F32, DType::F64, DType::C64, DType::C128, DType::F16});
    const Tensor x = N("x", c.tensor(d, c.shape()));
    const std::optional<std::int64_t> n =
        N("n", c.one_in(2) ? std::nullopt : std::optional<std::int64_t>(c.bad(6) ? c.absurd() : c.u(0, 9)));
    const std::int64_t dim = N("dim", c.dim_arg(x.defined() ? x.dim() : 1));
    const auto norm = N("norm", static_cast<fft::Norm>(c.bad(20) ? 7 : c.u(0, 2)));
    switch (c.u(0, 5)) {
      case 0: touch(fft::fft(x, n, dim, norm)); break;
      case 1: touch(fft::ifft(x, n, dim, norm)); break;
      case 2: touch(fft::rfft(x, n, dim, norm)); break;
      case 3: touch(fft::irfft(x, n, dim, norm)); break;
      case 4: touch(fft::hfft(x, n, dim, norm)); break;
      default: touch(fft::ihfft(x, n, dim, norm));
    }
  });
  OP("fftn", {
    const DType d = c.bad(5) ? c.any_dtype() : c.pick<DType>({DType::F32, DType::F64, DType::C64, DType::C128});
    const Tensor x = N("x", c.tensor(d, c.shape()));
    const std::int64_t r = x.defined() ? x.dim() : 1;
    std::optional<fft::Dims> s, dims;
    if (c.one_in(2)) {
      fft::Dims v;
      for (std::int64_t i = 0, k = c.u(0, 3); i < k; ++i) v.push_back(c.bad(8) ? c.absurd() : c.u(-1, 6));
      s = v;
      N("s", Shape(v));
    }
    if (c.one_in(2)) {
      fft::Dims v;
      for (std::int64_t i = 0, k = c.u(0, 3); i < k; ++i) v.push_back(c.dim_arg(r));
      dims = v;
      N("dim", Shape(v));
    }
    switch (c.u(0, 7)) {
      case 0: touch(fft::fftn(x, s, dims)); break;
      case 1: touch(fft::ifftn(x, s, dims)); break;
      case 2: touch(fft::rfftn(x, s, dims)); break;
      case 3: touch(fft::irfftn(x, s, dims)); break;
      case 4: touch(fft::fft2(x, s, dims ? *dims : fft::Dims{-2, -1})); break;
      case 5: touch(fft::irfft2(x, s, dims ? *dims : fft::Dims{-2, -1})); break;
      case 6: touch(fft::fftshift(x, dims)); break;
      default: touch(fft::ifftshift(x, dims));
    }
  });
  OP("fftfreq", {
    const std::int64_t n = N("n", c.size_arg());
    const double dd = N("d", c.real_arg());
    const DType dt = N("dtype", c.any_dtype());
    touch(c.one_in(2) ? fft::fftfreq(n, dd, dt, c.factory_device()) : fft::rfftfreq(n, dd, dt, c.factory_device()));
  });

  // ---- sparse ----
  OP("sparse(dense)", {
    const DType d = c.bad(5) ? c.any_dtype() : c.pick<DType>({DType::F32, DType::F64, DType::F16, DType::C64});
    const std::int64_t r = c.small(), k = c.small();
    Tensor x = N("x", c.tensor(d, c.bad(8) ? c.shape() : Shape{r, k}));
    if (x.defined() && x.numel() > 0 && c.one_in(2)) x = x * (c.dense(DType::Bool, x.shape()));  // make it sparse
    const auto layout = N("layout", static_cast<sparse::Layout>(c.bad(20) ? 5 : c.u(0, 2)));
    const DType id = N("index_dtype", c.index_dtype());
    const sparse::SparseMatrix a = sparse::from_dense(x, layout, id);
    touch(a.values());
    switch (c.u(0, 9)) {
      case 0: touch(sparse::to_dense(a)); break;
      case 1: touch(sparse::to_dense(sparse::to_csr(a))); break;
      case 2: touch(sparse::to_dense(sparse::to_csc(a))); break;
      case 3: touch(sparse::to_dense(sparse::coalesce(sparse::to_coo(a)))); break;
      case 4: touch(sparse::to_dense(sparse::transpose(a))); break;
      case 5: touch(sparse::spmv(a, N("v", c.tensor(c.bad(4) ? c.any_dtype() : d, {c.bad(4) ? c.small() : k})))); break;
      case 6: touch(sparse::spmm(a, N("b", c.tensor(c.bad(4) ? c.any_dtype() : d, {c.bad(4) ? c.small() : k, c.small()})))); break;
      case 7: touch(sparse::spmm(N("b", c.tensor(d, {c.small(), c.bad(4) ? c.small() : r})), a)); break;
      case 8: {
        const sparse::SparseMatrix b = sparse::from_dense(N("y", c.tensor(d, c.one_in(3) ? Shape{k, c.small()} : Shape{r, k})),
                                                          c.one_in(2) ? layout : sparse::Layout::CSR, id);
        touch(sparse::to_dense(c.one_in(2) ? sparse::spgemm(a, b) : sparse::add(a, b, c.real_arg())));
        break;
      }
      default: {
        const std::int64_t inner = c.small();
        const sparse::SparseMatrix s = sparse::sddmm(a, N("m1", c.tensor(d, {r, inner})),
                                                     N("m2", c.tensor(d, {c.bad(5) ? c.small() : inner, k})),
                                                     c.real_arg(), c.real_arg());
        touch(s.values());
      }
    }
  });
  OP("sparse(raw)", {
    const std::int64_t rows = N("rows", c.size_arg()), cols = N("cols", c.size_arg());
    const std::int64_t nnz = c.small();
    const std::int64_t layout = N("layout", c.u(0, 2));
    // Compressed pointers: rows + 1 (CSR) or cols + 1 (CSC) of them, nondecreasing up to nnz
    // in a tame call; COO: nnz row indices.
    const std::int64_t outer = layout == 0 ? rows : cols, inner = layout == 0 ? cols : rows;
    Tensor first;
    if (layout != 2 && c.tame && outer >= 0 && outer <= 64) {
      std::vector<std::int64_t> ptr(static_cast<std::size_t>(outer + 1), 0);
      for (std::size_t i = 1; i < ptr.size(); ++i) ptr[i] = std::min<std::int64_t>(nnz, ptr[i - 1] + c.u(0, 2));
      ptr.back() = nnz;
      first = N("first", c.tensor_of(ptr, {outer + 1}));
    } else {
      first = N("first", c.index_tensor({c.one_in(2) || outer < 0 || outer > 64 ? nnz : outer + 1},
                                        layout == 2 ? std::max<std::int64_t>(rows, 1) : 4));
    }
    const Tensor second = N("second", c.index_tensor({nnz}, layout == 2 ? std::max<std::int64_t>(cols, 1)
                                                                         : std::max<std::int64_t>(inner, 1)));
    const Tensor values = N("values", c.tensor(c.float_dtype(), {c.bad(6) ? c.small() : nnz}));
    sparse::SparseMatrix a;
    switch (layout) {
      case 0: a = sparse::csr(first, second, values, rows, cols); break;
      case 1: a = sparse::csc(first, second, values, rows, cols); break;
      default: a = sparse::coo(first, second, values, rows, cols);
    }
    std::int64_t cells = 0;
    if (!__builtin_mul_overflow(a.rows(), a.cols(), &cells) && cells <= kMaxElements) touch(sparse::to_dense(a));
    if (a.cols() <= 64 && c.one_in(2)) touch(sparse::spmv(a, N("x", c.tensor(a.dtype(), {a.cols()}))));
  });
  OP("sparse24", {
    const DType d = c.bad(4) ? c.any_dtype() : c.pick<DType>({DType::F16, DType::BF16, DType::F32});
    // cuSPARSELt's rule: rows and cols multiples of 32 bytes (16 F16/BF16 elements, 8 F32).
    const std::int64_t q = is_valid_dtype(d) && dtype_size(d) > 0 ? 32 / static_cast<std::int64_t>(dtype_size(d)) : 8;
    const std::int64_t rows = q * (c.small() % 3) + (c.bad(4) ? c.small() : 0), cols = q * (c.small() % 3 + 1);
    const Tensor x = N("x", c.tensor(d, c.bad(6) ? c.shape() : Shape{rows, cols}));
    const Tensor p = sparse::prune_24(x);
    touch(p);
    const sparse::Sparse24Matrix m = sparse::compress_24(c.bad(6) ? x : p);
    touch(sparse::decompress_24(m));
    const std::int64_t dense = q / 2 * (c.small() % 3) + (c.bad(4) ? c.small() : 0);  // 16 bytes
    if (c.one_in(2)) touch(sparse::matmul_24(m, N("b", c.tensor(d, {c.bad(4) ? c.small() : m.cols(), dense}))));
    else touch(sparse::linear_24(N("x2", c.tensor(d, {dense, c.bad(4) ? c.small() : m.cols()})), m));
  });

  // ---- random ----
  OP("random", {
    Shape s = c.shape();
    if (c.bad(6)) s.push_back(c.absurd());
    N("shape", s);
    const DType d = N("dtype", c.any_dtype());
    random::Generator gen = c.generator(c.u(0, 99));
    random::Generator* g = c.one_in(2) ? &gen : nullptr;
    switch (c.u(0, 6)) {
      case 0: touch(random::rand(s, d, c.factory_device(), g)); break;
      case 1: touch(random::randn(s, d, c.factory_device(), g)); break;
      case 2: touch(random::randint(N("low", c.bad(5) ? c.absurd() : c.u(-3, 3)),
                                    N("high", c.bad(5) ? c.absurd() : c.u(-3, 5)), s, d, c.factory_device(), g));
              break;
      case 3: touch(random::bernoulli(s, N("p", c.prob_arg()), d, c.factory_device(), g)); break;
      case 4: touch(random::bernoulli(N("probs", c.any_tensor()), g)); break;
      case 5: {
        const Tensor x = N("x", c.any_tensor());
        random::normal_(x, N("mean", c.real_arg()), N("std", c.real_arg()), g);
        touch(x);
        break;
      }
      default: {
        const Tensor x = N("x", c.any_tensor());
        random::uniform_(x, N("from", c.real_arg()), N("to", c.real_arg()), g);
        touch(x);
      }
    }
  });
  OP("accessors", {
    const Tensor x = N("x", c.any_tensor());
    const std::int64_t d = N("d", c.dim_arg(x.defined() ? x.dim() : 1));
    switch (c.u(0, 7)) {
      case 0: (void)x.size(d); break;
      case 1: (void)x.stride(d); break;
      case 2: (void)x.item<double>(); break;
      case 3: (void)x.item<std::int64_t>(); break;
      case 4: (void)x.to_vector<std::complex<float>>(); break;
      case 5: (void)x.to_vector<bool>(); break;
      case 6: (void)x.to_vector<Half>(); break;
      default: (void)x.data_ptr();
    }
  });
  OP("buffer", {
    const DType d = N("dtype", c.any_dtype());
    const auto bytes = static_cast<std::size_t>(N("bytes", c.u(0, 64)));
    auto storage = backend(c.device).allocate(bytes, c.device);
    const std::int64_t numel = N("numel", c.bad(4) ? c.absurd() : c.u(0, 16));
    const Shape s = N("shape", c.one_in(2) ? Shape{numel} : c.shape(0, 2));
    touch(Tensor(Buffer(storage, d, numel), s));
  });
  OP("print", {
    const Tensor x = N("x", c.any_tensor());
    std::ostringstream s;
    s << x;
    (void)x.description();
  });
}

#undef OP
#undef N

}  // namespace ferrite::api_fuzz

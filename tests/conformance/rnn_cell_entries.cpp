// Conformance entries of the fused recurrent cells: gru_cell and lstm_cell (PyTorch's
// _thnn_fused_* layout and gate order) against their equations written here in long double,
// and their backward passes against central finite differences of those equations.
#include <cmath>

#include "conformance/conv_test_support.hpp"

namespace ferrite::conformance {
namespace {

using namespace conv_test;

long double sig(long double x) { return 1 / (1 + std::exp(-x)); }

// inputs: ig [B, 3H], hg [B, 3H], hx [B, H], ib [3H], hb [3H]; outputs hy then workspace.
LVec ref_gru(const std::vector<LVec>& in, std::int64_t b, std::int64_t h, bool bias, bool with_workspace) {
  LVec hy, ws;
  for (std::int64_t r = 0; r < b; ++r) {
    for (std::int64_t j = 0; j < h; ++j) {
      auto at = [&](int which, int gate) {
        const long double v = in[static_cast<std::size_t>(which)][static_cast<std::size_t>(r * 3 * h + gate * h + j)];
        return v + (bias ? in[static_cast<std::size_t>(which + 3)][static_cast<std::size_t>(gate * h + j)] : 0);
      };
      const long double rg = sig(at(0, 0) + at(1, 0)), z = sig(at(0, 1) + at(1, 1));
      const long double n = std::tanh(at(0, 2) + rg * at(1, 2));
      const long double prev = in[2][static_cast<std::size_t>(r * h + j)];
      hy.push_back((1 - z) * n + z * prev);
    }
    if (with_workspace)
      for (int part = 0; part < 5; ++part)
        for (std::int64_t j = 0; j < h; ++j) {
          auto at = [&](int which, int gate) {
            const long double v = in[static_cast<std::size_t>(which)][static_cast<std::size_t>(r * 3 * h + gate * h + j)];
            return v + (bias ? in[static_cast<std::size_t>(which + 3)][static_cast<std::size_t>(gate * h + j)] : 0);
          };
          const long double rg = sig(at(0, 0) + at(1, 0)), z = sig(at(0, 1) + at(1, 1));
          const long double n = std::tanh(at(0, 2) + rg * at(1, 2));
          const long double values[5] = {rg, z, n, in[2][static_cast<std::size_t>(r * h + j)], at(1, 2)};
          ws.push_back(values[part]);
        }
  }
  if (with_workspace) hy.insert(hy.end(), ws.begin(), ws.end());
  return hy;
}

// inputs: ig [B, 4H], hg [B, 4H], cx [B, H], ib [4H], hb [4H]; outputs hy, cy (then workspace).
LVec ref_lstm(const std::vector<LVec>& in, std::int64_t b, std::int64_t h, bool bias, bool with_workspace) {
  LVec hy, cy, ws(static_cast<std::size_t>(b * 4 * h));
  for (std::int64_t r = 0; r < b; ++r)
    for (std::int64_t j = 0; j < h; ++j) {
      long double pre[4];
      for (int g = 0; g < 4; ++g) {
        const auto o = static_cast<std::size_t>(r * 4 * h + g * h + j);
        pre[g] = in[0][o] + in[1][o] + (bias ? in[3][static_cast<std::size_t>(g * h + j)] + in[4][static_cast<std::size_t>(g * h + j)] : 0);
      }
      const long double i = sig(pre[0]), f = sig(pre[1]), g = std::tanh(pre[2]), o = sig(pre[3]);
      const long double c = f * in[2][static_cast<std::size_t>(r * h + j)] + i * g;
      cy.push_back(c);
      hy.push_back(o * std::tanh(c));
      const long double act[4] = {i, f, g, o};
      for (int k = 0; k < 4; ++k) ws[static_cast<std::size_t>(r * 4 * h + k * h + j)] = act[k];
    }
  hy.insert(hy.end(), cy.begin(), cy.end());
  if (with_workspace) hy.insert(hy.end(), ws.begin(), ws.end());
  return hy;
}

struct CellShape {
  std::int64_t b, h;
  bool bias;
};
const std::vector<CellShape> kCellShapes = {{3, 5, true}, {3, 5, false}, {1, 1, true}, {0, 4, true}, {4, 17, true}};

std::vector<Case> cell_cases(DType d, Rng& rng, int parts, bool backward) {
  std::vector<Case> cases;
  for (const CellShape& s : kCellShapes) {
    std::vector<Tensor> in = {random({s.b, parts * s.h}, d, rng, -2, 2), random({s.b, parts * s.h}, d, rng, -2, 2),
                              random({s.b, s.h}, d, rng, -2, 2), random({parts * s.h}, d, rng, -1, 1),
                              random({parts * s.h}, d, rng, -1, 1)};
    if (backward) {
      in.push_back(random({s.b, s.h}, d, rng, -1, 1));  // grad_hy
      if (parts == 4) in.push_back(random({s.b, s.h}, d, rng, -1, 1));  // grad_cy
    }
    cases.push_back({"B " + std::to_string(s.b) + ", H " + std::to_string(s.h) + (s.bias ? "" : ", no bias"), in,
                     {s.b, s.h, s.bias}});
  }
  return cases;
}

std::optional<Tensor> bias_of(const Case& c, std::size_t i) {
  return c.ints[2] ? std::optional<Tensor>(c.inputs[i]) : std::nullopt;
}

std::vector<LVec> values_of(const Case& c, std::size_t count) {
  std::vector<LVec> v;
  for (std::size_t i = 0; i < count; ++i) v.push_back(reference::values(c.inputs[i]));
  return v;
}

std::vector<Tensor> split(const LVec& all, const std::vector<Shape>& shapes, DType d) {
  std::vector<Tensor> out;
  std::size_t at = 0;
  for (const Shape& s : shapes) {
    const auto n = static_cast<std::size_t>(shape_numel(s));
    out.push_back(to_dtype(LVec(all.begin() + static_cast<std::ptrdiff_t>(at), all.begin() + static_cast<std::ptrdiff_t>(at + n)), s, d));
    at += n;
  }
  return out;
}

Entry gru_entry() {
  Entry e;
  e.op = "gru_cell";
  e.dtypes = kFloat;
  e.cases = [](DType d, Rng& rng) { return cell_cases(d, rng, 3, false); };
  e.run_outputs = [](const Case& c) {
    auto r = nn::gru_cell(c.inputs[0], c.inputs[1], c.inputs[2], bias_of(c, 3), bias_of(c, 4));
    return std::vector<Tensor>{r.hy, r.workspace};
  };
  e.reference_outputs = [](const Case& c) {
    const std::int64_t b = c.ints[0], h = c.ints[1];
    return split(ref_gru(values_of(c, 5), b, h, c.ints[2] != 0, true), {{b, h}, {b, 5 * h}}, c.inputs[0].dtype());
  };
  e.reference_tolerance = rounded;
  e.backend_tolerance = rounded;
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"gates not divisible by 3", [d](Device dev) {
           (void)nn::gru_cell(zeros({2, 7}, d, dev), zeros({2, 7}, d, dev), zeros({2, 2}, d, dev));
         }, ErrorKind::ShapeMismatch, "gru_cell: input_gates [2, 7]"},
        // An empty batch with H = 2^61: 5 * H overflowed int64 (UBSan, found by api_fuzz_test).
        {"workspace width past int64", [d](Device dev) {
           const std::int64_t h = std::int64_t(1) << 61;
           (void)nn::gru_cell(zeros({0, 3 * h}, d, dev), zeros({0, 3 * h}, d, dev), zeros({0, h}, d, dev));
         }, ErrorKind::InvalidArgument, "gru_cell: the workspace [B, 5 * H] of input_gates [0, 6917529027641081856]"},
        {"one bias only", [d](Device dev) {
           (void)nn::gru_cell(zeros({2, 6}, d, dev), zeros({2, 6}, d, dev), zeros({2, 2}, d, dev), zeros({6}, d, dev));
         }, ErrorKind::InvalidArgument, "gru_cell: input_bias and hidden_bias must be given both or neither"},
        {"integer gates", [](Device dev) {
           (void)nn::gru_cell(zeros({2, 6}, DType::I32, dev), zeros({2, 6}, DType::I32, dev), zeros({2, 2}, DType::I32, dev));
         }, ErrorKind::Unsupported, "gru_cell: dtype I32 is not supported"}};
  };
  return e;
}

Entry gru_backward_entry() {
  Entry e;
  e.op = "gru_cell_backward";
  e.dtypes = kFloat;
  e.cases = [](DType d, Rng& rng) { return cell_cases(d, rng, 3, true); };
  e.run_outputs = [](const Case& c) {
    auto f = nn::gru_cell(c.inputs[0], c.inputs[1], c.inputs[2], bias_of(c, 3), bias_of(c, 4));
    auto g = nn::gru_cell_backward(c.inputs[5], f.workspace, c.ints[2] != 0);
    std::vector<Tensor> out{g.input_gates, g.hidden_gates, g.hx};
    if (c.ints[2]) out.insert(out.end(), {g.input_bias, g.hidden_bias});
    return out;
  };
  e.reference_outputs = [](const Case& c) {
    const std::int64_t b = c.ints[0], h = c.ints[1];
    const bool bias = c.ints[2] != 0;
    const auto f = [b, h, bias](const std::vector<LVec>& in) { return ref_gru(in, b, h, bias, false); };
    const LVec g = reference::values(c.inputs[5]);
    std::vector<Tensor> out;
    for (std::size_t i = 0; i < (bias ? 5u : 3u); ++i)
      out.push_back(to_dtype(finite_difference(values_of(c, 5), i, g, f, 1e-5L), c.inputs[i].shape(), c.inputs[0].dtype()));
    return out;
  };
  e.reference_tolerance = gradient;
  e.backend_tolerance = gradient;
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{{"workspace of the wrong shape", [d](Device dev) {
                                     (void)nn::gru_cell_backward(zeros({2, 3}, d, dev), zeros({2, 14}, d, dev), true);
                                   }, ErrorKind::ShapeMismatch, "gru_cell_backward: grad_hy [2, 3]"},
                                  // 5 * H overflowed int64 (UBSan, found by api_fuzz_test).
                                  {"H = 2^62", [d](Device dev) {
                                     (void)nn::gru_cell_backward(zeros({0, std::int64_t(1) << 62}, d, dev),
                                                                 zeros({0, 1}, d, dev), false);
                                   }, ErrorKind::ShapeMismatch, "gru_cell_backward: grad_hy [0, 4611686018427387904]"}};
  };
  return e;
}

Entry lstm_entry() {
  Entry e;
  e.op = "lstm_cell";
  e.dtypes = kFloat;
  e.cases = [](DType d, Rng& rng) { return cell_cases(d, rng, 4, false); };
  e.run_outputs = [](const Case& c) {
    auto r = nn::lstm_cell(c.inputs[0], c.inputs[1], c.inputs[2], bias_of(c, 3), bias_of(c, 4));
    return std::vector<Tensor>{r.hy, r.cy, r.workspace};
  };
  e.reference_outputs = [](const Case& c) {
    const std::int64_t b = c.ints[0], h = c.ints[1];
    return split(ref_lstm(values_of(c, 5), b, h, c.ints[2] != 0, true), {{b, h}, {b, h}, {b, 4 * h}},
                 c.inputs[0].dtype());
  };
  e.reference_tolerance = rounded;
  e.backend_tolerance = rounded;
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{{"cx of the wrong shape", [d](Device dev) {
                                     (void)nn::lstm_cell(zeros({2, 8}, d, dev), zeros({2, 8}, d, dev), zeros({2, 3}, d, dev));
                                   }, ErrorKind::ShapeMismatch, "lstm_cell: state [2, 3]"}};
  };
  return e;
}

// inputs ig, hg, cx, ib, hb, grad_hy, grad_cy; ints[3]: which grads are given (1 hy, 2 cy).
Entry lstm_backward_entry() {
  Entry e;
  e.op = "lstm_cell_backward";
  e.dtypes = kFloat;
  e.cases = [](DType d, Rng& rng) {
    auto cases = cell_cases(d, rng, 4, true);
    for (auto& c : cases) c.ints.push_back(3);
    Case only_hy = cases[0], only_cy = cases[0];
    only_hy.label += ", grad_hy only";
    only_hy.ints[3] = 1;
    only_cy.label += ", grad_cy only";
    only_cy.ints[3] = 2;
    cases.push_back(only_hy);
    cases.push_back(only_cy);
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    auto f = nn::lstm_cell(c.inputs[0], c.inputs[1], c.inputs[2], bias_of(c, 3), bias_of(c, 4));
    const std::optional<Tensor> ghy = c.ints[3] & 1 ? std::optional<Tensor>(c.inputs[5]) : std::nullopt;
    const std::optional<Tensor> gcy = c.ints[3] & 2 ? std::optional<Tensor>(c.inputs[6]) : std::nullopt;
    auto g = nn::lstm_cell_backward(ghy, gcy, c.inputs[2], f.cy, f.workspace, c.ints[2] != 0);
    std::vector<Tensor> out{g.gates, g.cx};
    if (c.ints[2]) out.push_back(g.bias);
    return out;
  };
  e.reference_outputs = [](const Case& c) {
    const std::int64_t b = c.ints[0], h = c.ints[1];
    const bool bias = c.ints[2] != 0;
    const auto f = [b, h, bias](const std::vector<LVec>& in) { return ref_lstm(in, b, h, bias, false); };
    LVec w = reference::values(c.inputs[5]), gc = reference::values(c.inputs[6]);
    if (!(c.ints[3] & 1)) std::fill(w.begin(), w.end(), 0);
    if (!(c.ints[3] & 2)) std::fill(gc.begin(), gc.end(), 0);
    w.insert(w.end(), gc.begin(), gc.end());
    const DType d = c.inputs[0].dtype();
    std::vector<Tensor> out{to_dtype(finite_difference(values_of(c, 5), 0, w, f, 1e-5L), c.inputs[0].shape(), d),
                            to_dtype(finite_difference(values_of(c, 5), 2, w, f, 1e-5L), c.inputs[2].shape(), d)};
    if (bias) out.push_back(to_dtype(finite_difference(values_of(c, 5), 3, w, f, 1e-5L), c.inputs[3].shape(), d));
    return out;
  };
  e.reference_tolerance = gradient;
  e.backend_tolerance = gradient;
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{{"grad of the wrong shape", [d](Device dev) {
                                     (void)nn::lstm_cell_backward(zeros({2, 2}, d, dev), std::nullopt, zeros({2, 3}, d, dev),
                                                                  zeros({2, 3}, d, dev), zeros({2, 12}, d, dev), false);
                                   }, ErrorKind::ShapeMismatch, "lstm_cell_backward: grad [2, 2]"},
                                  // 4 * H overflowed int64 (UBSan, found by api_fuzz_test).
                                  {"H = 2^62", [d](Device dev) {
                                     const Tensor c = zeros({0, std::int64_t(1) << 62}, d, dev);
                                     (void)nn::lstm_cell_backward(std::nullopt, std::nullopt, c, c, zeros({0, 4}, d, dev), false);
                                   }, ErrorKind::ShapeMismatch, "lstm_cell_backward: cx [0, 4611686018427387904]"}};
  };
  return e;
}

FERRITE_CONFORMANCE(gru_entry());
FERRITE_CONFORMANCE(gru_backward_entry());
FERRITE_CONFORMANCE(lstm_entry());
FERRITE_CONFORMANCE(lstm_backward_entry());

}  // namespace
}  // namespace ferrite::conformance

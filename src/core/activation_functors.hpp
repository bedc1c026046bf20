// Floating-point unary ops, activations and their backward passes, as functors on wide
// values (float for F32/F16/BF16, double for F64), shared by the CPU and CUDA backends.
//
// Rules beyond the formulas (docs/families/elementwise.md):
//  * NaN in, NaN out (except where a select ignores the value: relu_backward and
//    clamp_backward pick 0 or grad by comparisons, as torch).
//  * Limits instead of Inf * 0 = NaN: gelu, silu and mish of -Inf are -0 (their limit);
//    the derivatives of gelu, silu and mish are 1 above +1e4 and 0 below -1e4, where the
//    true values equal those to the precision of any dtype and the formulas would meet
//    Inf * 0.
//  * Forms chosen for accuracy where torch's text would cancel: the tanh-gelu as
//    x * sigmoid(2u) (the same function as 0.5x(1 + tanh u)); gelu through erfc in double
//    (floats use torch's erf form for speed: normal_cdf).
#pragma once

#include <limits>
#include <type_traits>

#include "core/elementwise_math.hpp"
#include "ferrite/backend.hpp"
#include "ferrite/error.hpp"
#include "ferrite/op.hpp"

namespace ferrite::detail {

inline constexpr double kSqrt1_2 = 0.70710678118654752440;        // 1/sqrt(2)
inline constexpr double kInvSqrt2Pi = 0.39894228040143267794;     // 1/sqrt(2 pi)
inline constexpr double kSqrt2OverPi = 0.79788456080286535588;    // sqrt(2/pi)
inline constexpr double kGeluTanhCoeff = 0.044715;
inline constexpr double kSaturation = 1e4;  // see the header comment

template <class W>
FERRITE_HOST_DEVICE W sigmoid_of(W x) {
  return W(1) / (W(1) + math::exp(-x));
}

/// The standard normal CDF Phi(x). Double: 0.5 erfc(-x / sqrt 2), accurate in the far left
/// tail. Float (F32, F16, BF16): torch's 0.5 (1 + erf(x / sqrt 2)), because CUDA's erff
/// costs about half of erfcf and gelu on floats must run at memory speed; for x < -3 it
/// loses relative accuracy to cancellation but stays within 1e-7 absolute of Phi.
template <class W>
FERRITE_HOST_DEVICE W normal_cdf(W x) {
  if constexpr (std::is_same_v<W, float>)
    return W(0.5) * (W(1) + math::erf(x * W(kSqrt1_2)));
  else
    return W(0.5) * math::erfc(-x * W(kSqrt1_2));
}

template <class W>
FERRITE_HOST_DEVICE W softplus_of(W x) {
  return x > W(20) ? x : math::log1p(math::exp(x));  // torch's threshold 20
}

// ---- forward ----

struct ExpFn {
  template <class W> FERRITE_HOST_DEVICE W operator()(W x) const { return math::exp(x); }
};
struct LogFn {
  template <class W> FERRITE_HOST_DEVICE W operator()(W x) const { return math::log(x); }
};
struct SqrtFn {
  template <class W> FERRITE_HOST_DEVICE W operator()(W x) const { return math::sqrt(x); }
};

/// x ** exponent. Exponents 0, 1, 2, 0.5 and -1 take exact shortcuts (x*x, sqrt, 1/x);
/// pow(x, 0) = 1 even for NaN x, as C and torch.
struct PowFn {
  double exponent;
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W x) const {
    if (exponent == 0) return W(1);
    if (exponent == 1) return x;
    if (exponent == 2) return x * x;
    if (exponent == 0.5) return math::sqrt(x);
    if (exponent == -1) return W(1) / x;
    return math::pow(x, W(exponent));
  }
};

struct ScaleFn {
  double factor;
  template <class W> FERRITE_HOST_DEVICE W operator()(W x) const { return x * W(factor); }
};

/// min(max(x, lo), hi) with NaN kept; lo > hi gives hi everywhere (torch.clamp).
struct ClampFn {
  double lo, hi;
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W x) const {
    if (x != x) return x;
    const W r = x < W(lo) ? W(lo) : x;
    return r > W(hi) ? W(hi) : r;
  }
};

struct SigmoidFn {
  template <class W> FERRITE_HOST_DEVICE W operator()(W x) const { return sigmoid_of(x); }
};
struct TanhFn {
  template <class W> FERRITE_HOST_DEVICE W operator()(W x) const { return math::tanh(x); }
};

/// x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)) (see normal_cdf for the form per type).
struct GeluFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W x) const {
    if (x < W(-kSaturation)) return -W(0);
    return x * normal_cdf(x);
  }
};

/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) = x * sigmoid(2u).
struct GeluTanhFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W x) const {
    if (x < W(-kSaturation)) return -W(0);
    const W u = W(kSqrt2OverPi) * (x + W(kGeluTanhCoeff) * x * x * x);
    return x / (W(1) + math::exp(W(-2) * u));
  }
};

struct SiluFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W x) const {
    if (x < W(-kSaturation)) return -W(0);
    return x / (W(1) + math::exp(-x));
  }
};

/// x for x > 0, alpha (e^x - 1) otherwise.
struct EluFn {
  double alpha;
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W x) const {
    return x > W(0) ? x : W(alpha) * math::expm1(x);
  }
};

/// x tanh(softplus(x)).
struct MishFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W x) const {
    if (x < W(-kSaturation)) return -W(0);
    return x * math::tanh(softplus_of(x));
  }
};

// ---- backward: (grad, x) -> grad * f'(x) ----

/// grad where x > 0, else 0 (torch's threshold_backward: x <= 0 picks 0, NaN x passes grad).
struct ReluBackwardFn {
  template <class W> FERRITE_HOST_DEVICE W operator()(W g, W x) const { return x <= W(0) ? W(0) : g; }
};

/// grad * sign(x): sign(0) = 0, sign(NaN) = NaN (torch: grad * x.sgn()).
struct AbsBackwardFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W g, W x) const {
    const W sign = x != x ? x : W((x > W(0)) - (x < W(0)));
    return g * sign;
  }
};

/// grad where lo <= x <= hi (both bounds inclusive, as torch), else 0; NaN x gives 0.
struct ClampBackwardFn {
  double lo, hi;
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W g, W x) const {
    return (x >= W(lo) && x <= W(hi)) ? g : W(0);
  }
};

/// From the forward output y: grad * (1 - y) * y.
struct SigmoidBackwardFn {
  template <class W> FERRITE_HOST_DEVICE W operator()(W g, W y) const { return g * (W(1) - y) * y; }
};

/// From the forward output y: grad * (1 - y^2).
struct TanhBackwardFn {
  template <class W> FERRITE_HOST_DEVICE W operator()(W g, W y) const { return g * (W(1) - y * y); }
};

template <class W>
FERRITE_HOST_DEVICE bool saturated(W x) {
  return x > W(kSaturation) || x < W(-kSaturation);  // false for NaN
}

/// Phi(x) + x phi(x).
struct GeluBackwardFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W g, W x) const {
    if (saturated(x)) return x > W(0) ? g : g * W(0);
    const W cdf = normal_cdf(x);
    const W pdf = W(kInvSqrt2Pi) * math::exp(W(-0.5) * x * x);
    return g * (cdf + x * pdf);
  }
};

/// d/dx of 0.5 x (1 + tanh u), u = k (x + c x^3).
struct GeluTanhBackwardFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W g, W x) const {
    if (saturated(x)) return x > W(0) ? g : g * W(0);
    const W x2 = x * x;
    const W t = math::tanh(W(kSqrt2OverPi) * (x + W(kGeluTanhCoeff) * x2 * x));
    const W du = W(kSqrt2OverPi) * (W(1) + W(3 * kGeluTanhCoeff) * x2);
    return g * (W(0.5) * (W(1) + t) + W(0.5) * x * (W(1) - t * t) * du);
  }
};

/// s (1 + x (1 - s)), s = sigmoid(x).
struct SiluBackwardFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W g, W x) const {
    if (saturated(x)) return x > W(0) ? g : g * W(0);
    const W s = sigmoid_of(x);
    return g * (s * (W(1) + x * (W(1) - s)));
  }
};

/// From the forward input: grad for x > 0, grad * alpha * e^x otherwise (torch: NaN x
/// passes grad).
struct EluBackwardFn {
  double alpha;
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W g, W x) const {
    return x <= W(0) ? g * W(alpha) * math::exp(x) : g;
  }
};

/// tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2), sp = softplus(x).
struct MishBackwardFn {
  template <class W>
  FERRITE_HOST_DEVICE W operator()(W g, W x) const {
    if (saturated(x)) return x > W(0) ? g : g * W(0);
    const W t = math::tanh(softplus_of(x));
    return g * (t + x * sigmoid_of(x) * (W(1) - t * t));
  }
};

// ---- op -> functor, for the backends (each group in its own dispatcher so a translation
// unit instantiates only the kernels it is about) ----

/// exp, log, sqrt, pow, scale, clamp.
template <class F>
void with_math_functor(Op op, const UnaryParams& p, F&& f) {
  switch (op) {
    case Op::Exp: return f(ExpFn{});
    case Op::Log: return f(LogFn{});
    case Op::Sqrt: return f(SqrtFn{});
    case Op::Pow: return f(PowFn{p.alpha});
    case Op::Scale: return f(ScaleFn{p.alpha});
    case Op::Clamp: return f(ClampFn{p.alpha, p.beta});
    default: FERRITE_THROW(Unsupported, op_name(op), " is not a floating math op");
  }
}

/// sigmoid, tanh, gelu (both forms), silu, elu, mish.
constexpr bool is_activation(Op op) {
  return op == Op::Sigmoid || op == Op::Tanh || op == Op::Gelu || op == Op::GeluTanh || op == Op::Silu ||
         op == Op::Elu || op == Op::Mish;
}
template <class F>
void with_activation_functor(Op op, const UnaryParams& p, F&& f) {
  switch (op) {
    case Op::Sigmoid: return f(SigmoidFn{});
    case Op::Tanh: return f(TanhFn{});
    case Op::Gelu: return f(GeluFn{});
    case Op::GeluTanh: return f(GeluTanhFn{});
    case Op::Silu: return f(SiluFn{});
    case Op::Elu: return f(EluFn{p.alpha});
    case Op::Mish: return f(MishFn{});
    default: FERRITE_THROW(Unsupported, op_name(op), " is not an activation");
  }
}

template <class F>
void with_backward_functor(Op op, const UnaryParams& p, F&& f) {
  switch (op) {
    case Op::ReluBackward: return f(ReluBackwardFn{});
    case Op::AbsBackward: return f(AbsBackwardFn{});
    case Op::ClampBackward: return f(ClampBackwardFn{p.alpha, p.beta});
    case Op::SigmoidBackward: return f(SigmoidBackwardFn{});
    case Op::TanhBackward: return f(TanhBackwardFn{});
    case Op::GeluBackward: return f(GeluBackwardFn{});
    case Op::GeluTanhBackward: return f(GeluTanhBackwardFn{});
    case Op::SiluBackward: return f(SiluBackwardFn{});
    case Op::EluBackward: return f(EluBackwardFn{p.alpha});
    case Op::MishBackward: return f(MishBackwardFn{});
    default: FERRITE_THROW(Unsupported, op_name(op), " is not a backward op");
  }
}

}  // namespace ferrite::detail

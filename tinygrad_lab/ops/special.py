"""Special functions: erfc, erfinv, lgamma, digamma, entr, the normal distribution's ndtri and log_ndtr,
polygamma, the modified Bessel functions i0, i1 (and their scaled forms i0e, i1e), xlogy, xlog1py, the
regularized incomplete gamma functions igamma and igammac, sinc and logit.

NumPy has none of them: each forward calls the backend's special function (SciPy's on the CPU,
CuPy's on a GPU: `backend.special(name)`), and casts its result back to the input's dtype.
Each backward is written with ops, so second derivatives work (digamma's derivative is
polygamma(1, x), whose derivative is polygamma(2, x), ...).
"""
from __future__ import annotations

import math

from .. import dtypes
from ..autograd.tensor_base import TensorBase
from . import elementwise as ew
from .elementwise import _arr, _unbroadcast, add, div, mul, sub
from .op import Op, constant
from .promotion import as_float, binary_op

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
_LOG_SQRT_2PI = math.log(_SQRT_2PI)


def _special(name: str, function: str, grad, doc: str, saves: str = "x"):
    """A unary Function computed by the backend's special function `function`;
    `grad(saved, g)` with ops -> dx, where `saves` ("x" or "out") says what backward reads."""

    def forward(ctx, x):
        d = x._data
        out = ctx.device.backend.special(function)(d).astype(d.dtype, copy=False)
        ctx.save_for_backward(x if saves == "x" else out)
        return out

    def backward(ctx, g):
        (saved,) = ctx.saved_tensors
        return grad(saved, g)

    cls = type(name, (Op,), {"forward": staticmethod(forward), "backward": staticmethod(backward), "__doc__": doc})

    def op(x):
        return cls.apply(as_float(x))

    op.__name__, op.__doc__ = name.lower(), doc
    return cls, op


Erfc, erfc = _special("Erfc", "erfc", lambda x, g: ew.neg(mul(g, mul(ew.exp(ew.neg(mul(x, x))), _TWO_OVER_SQRT_PI))),
                      "the complementary error function 1 - erf(x), accurate where erf(x) is near 1. "
                      "Backward: -g * 2/sqrt(pi) * exp(-x**2)")
Erfinv, erfinv = _special("Erfinv", "erfinv",
                          lambda out, g: mul(g, mul(ew.exp(mul(out, out)), math.sqrt(math.pi) / 2)),
                          "the inverse error function: erf(erfinv(y)) = y for y in (-1, 1). "
                          "Backward: g * sqrt(pi)/2 * exp(out**2)", saves="out")
Lgamma, lgamma = _special("Lgamma", "gammaln", lambda x, g: mul(g, digamma(x)),
                          "log |Gamma(x)|. Backward: g * digamma(x)")
Digamma, digamma = _special("Digamma", "psi", lambda x, g: mul(g, polygamma(1, x)),
                            "digamma(x) = d/dx log Gamma(x). Backward: g * polygamma(1, x)")
Entr, entr = _special("Entr", "entr", lambda x, g: mul(g, ew.neg(add(ew.log(x), 1.0))),
                      "-x log x (0 at 0, -inf below 0). Backward: -g * (log x + 1): +inf at 0, NaN below 0")
Ndtri, ndtri = _special("Ndtri", "ndtri", lambda out, g: mul(g, mul(ew.exp(mul(mul(out, out), 0.5)), _SQRT_2PI)),
                        "the standard normal quantile, the inverse of ndtr (accurate for p near 0, where "
                        "sqrt 2 * erfinv(2p - 1) is not). Backward: g * sqrt(2 pi) * exp(out**2 / 2)", saves="out")
LogNdtr, log_ndtr = _special(
    "LogNdtr", "log_ndtr", lambda x, g: mul(g, ew.exp(sub(sub(mul(mul(x, x), -0.5), log_ndtr(x)), _LOG_SQRT_2PI))),
    "log of the standard normal CDF, accurate far into the left tail (log_ndtr(-100) = -5005.5, where the CDF "
    "underflows). Backward: g * pdf(x) / cdf(x), computed as exp(-x**2 / 2 - log_ndtr(x)) / sqrt(2 pi)")


# ---------------------------------------------------------------- modified Bessel functions of the first kind

def _i1_slope(x, scaled: bool):
    """d/dx of i1(x) = i0(x) - i1(x) / x (0.5 at x = 0); of the scaled i1e(x) = exp(-|x|) i1(x), the same
    with i0e and i1e, less sign(x) * i1e(x). Written with ops, so the slope has gradients of its own."""
    zero = ew.eq(x, 0)
    safe = ew.where(zero, 1.0, x)  # keeps 0/0 out of the graph
    first, second = (i0e(x), i1e(safe)) if scaled else (i0(x), i1(safe))
    slope = sub(first, div(second, safe))
    if scaled:
        slope = sub(slope, mul(ew.sign(x), second))
    return ew.where(zero, 0.5, slope)


I0, i0 = _special("I0", "i0", lambda x, g: mul(g, i1(x)),
                  "the modified Bessel function of the first kind of order 0. Backward: g * i1(x)")
I1, i1 = _special("I1", "i1", lambda x, g: mul(g, _i1_slope(x, False)),
                  "the modified Bessel function of the first kind of order 1. Backward: g * (i0(x) - i1(x) / x), "
                  "g / 2 at x = 0")
I0e, i0e = _special("I0e", "i0e", lambda x, g: mul(g, sub(i1e(x), mul(ew.sign(x), i0e(x)))),
                    "exp(-|x|) * i0(x), which does not overflow. Backward: g * (i1e(x) - sign(x) * i0e(x))")
I1e, i1e = _special("I1e", "i1e", lambda x, g: mul(g, _i1_slope(x, True)),
                    "exp(-|x|) * i1(x). Backward: g * (i0e(x) - i1e(x) / x - sign(x) * i1e(x)), g / 2 at x = 0")


class Polygamma(Op):
    """The n-th derivative of digamma. Backward: g * polygamma(n + 1, x)."""

    @staticmethod
    def forward(ctx, n, x):
        ctx.n = n
        ctx.save_for_backward(x)
        d = x._data
        return ctx.device.backend.special("polygamma")(n, d).astype(d.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return None, mul(g, polygamma(ctx.n + 1, x))


def polygamma(n: int, x):
    """The n-th derivative of digamma at x, as torch.polygamma (n = 0 is digamma)."""
    if not isinstance(n, int) or n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n (got n={n})")
    return digamma(x) if n == 0 else Polygamma.apply(n, as_float(x))


def mvlgamma(x, p: int):
    """The multivariate log-gamma function of dimension p, as torch.mvlgamma:
    sum over j < p of lgamma(x - j/2), plus p(p-1)/4 * log(pi)."""
    terms = [lgamma(sub(x, j / 2)) for j in range(p)]
    total = terms[0]
    for t in terms[1:]:
        total = add(total, t)
    return add(total, p * (p - 1) / 4 * math.log(math.pi))


# ---------------------------------------------------------------- x * log(y), sinc

class Xlogy(Op):
    """x * log(y), and 0 where x == 0 (unless y is NaN), so 0 * log(0) counts as 0.
    Backward: d/dx = g * log(y), but 0 where x == 0 and log(y) is not finite (y <= 0); d/dy = g * x / y
    (as PyTorch)."""

    function = "xlogy"
    pole = 0.0  # where log(y) is -inf (and below it NaN)

    @classmethod
    def forward(cls, ctx, x, y):
        ctx.save_for_backward(x, y)
        a, b = _arr(x), _arr(y)
        out = ctx.device.backend.special(cls.function)(a, b)
        return out.astype((a if hasattr(a, "dtype") else b).dtype, copy=False)

    @classmethod
    def backward(cls, ctx, g):
        x, y = ctx.saved_tensors
        n = ctx.needs_input_grad
        fn = xlogy if cls.function == "xlogy" else xlog1py
        at_pole = ew.le(y, cls.pole) if isinstance(y, TensorBase) else bool(y <= cls.pole)
        masked = ew.logical_and(ew.eq(x, 0), at_pole)
        gx = _unbroadcast(ctx, ew.where(masked, 0.0, fn(g, y)), 0) if n[0] else None
        gy = _unbroadcast(ctx, mul(g, div(x, y if cls.function == "xlogy" else add(y, 1))), 1) if n[1] else None
        return gx, gy


class Xlog1py(Xlogy):
    """x * log(1 + y), and 0 where x == 0 (unless y is NaN).
    Backward: d/dx = g * log1p(y), but 0 where x == 0 and y <= -1; d/dy = g * x / (1 + y)."""

    function = "xlog1py"
    pole = -1.0


xlogy = binary_op(Xlogy, "xlogy", min_category=dtypes.FLOAT, doc="x * log(y), 0 where x == 0")
xlog1py = binary_op(Xlog1py, "xlog1py", min_category=dtypes.FLOAT, doc="x * log1p(y), 0 where x == 0")


# ---------------------------------------------------------------- the regularized incomplete gamma functions

class Igamma(Xlogy):
    """P(a, x): the integral of t**(a - 1) e**-t from 0 to x, over Gamma(a) (SciPy's gammainc).
    Backward: d/dx = g * x**(a - 1) e**-x / Gamma(a); d/da raises NotImplementedError, as in PyTorch."""

    function, sign = "gammainc", 1.0

    @classmethod
    def backward(cls, ctx, g):
        a, x = ctx.saved_tensors
        name = "igamma" if cls.sign > 0 else "igammac"
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented (the gradient with "
                                      f"respect to a, of shape {list(a._data.shape)}; detach() it)")
        density = ew.exp(sub(sub(xlogy(sub(a, 1.0), x), x), lgamma(a)))  # x**(a-1) e**-x / Gamma(a)
        return None, _unbroadcast(ctx, mul(g, mul(density, cls.sign)), 1)


class Igammac(Igamma):
    """Q(a, x) = 1 - P(a, x), the upper tail (SciPy's gammaincc). Backward: d/dx = -g * x**(a - 1) e**-x / Gamma(a);
    d/da raises NotImplementedError, as in PyTorch."""

    function, sign = "gammaincc", -1.0


_igamma = binary_op(Igamma, "igamma", min_category=dtypes.FLOAT)
_igammac = binary_op(Igammac, "igammac", min_category=dtypes.FLOAT)


def igamma(input, other):  # noqa: A002 (PyTorch's parameter names)
    """The regularized lower incomplete gamma function P(input, other), as torch.igamma and
    torch.special.gammainc. Deviation: integer tensors are computed in the default float dtype (PyTorch
    refuses them)."""
    return _igamma(*_two_tensors(input, other, "igamma"))


def igammac(input, other):  # noqa: A002
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other), as
    torch.igammac and torch.special.gammaincc."""
    return _igammac(*_two_tensors(input, other, "igammac"))


def _two_tensors(input, other, op: str) -> tuple:  # noqa: A002
    """(input, other), or PyTorch's TypeError where one is not a tensor."""
    for i, (name, t) in enumerate((("input", input), ("other", other))):
        if not isinstance(t, TensorBase):
            raise TypeError(f"{op}(): argument '{name}' (position {i + 1}) must be Tensor, not {type(t).__name__}")
    return input, other


class Sinc(Op):
    """sin(pi x) / (pi x), 1 at x = 0. Backward: g * (cos(pi x) pi x - sin(pi x)) / (pi x**2), 0 at x = 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.sinc(x._data)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        zero = ew.eq(x, 0)
        safe = ew.where(zero, 1.0, x)  # keeps 0/0 out of the graph (its gradient would be NaN too)
        px = mul(safe, math.pi)
        slope = div(sub(mul(ew.cos(px), px), ew.sin(px)), mul(px, safe))
        return mul(g, ew.where(zero, 0.0, slope))


def sinc(x):
    """The normalized sinc function sin(pi x) / (pi x), as torch.sinc."""
    return Sinc.apply(as_float(x))


class Logit(Op):
    """log(x / (1 - x)), of x clamped to [eps, 1 - eps] when eps is given. Backward: g / (x (1 - x)):
    infinite at 0 and 1, NaN outside [0, 1] (no eps) or 0 outside [eps, 1 - eps] (as PyTorch)."""

    @staticmethod
    def forward(ctx, x, eps):
        ctx.save_for_backward(x)
        ctx.eps = eps
        z = x._data if eps is None else x._data.clip(eps, 1.0 - eps)
        return ctx.xp.log(z / (1.0 - z))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        lo, hi, outside = (0.0, 1.0, math.nan) if ctx.eps is None else (ctx.eps, 1.0 - ctx.eps, 0.0)
        return ew.where(ew.logical_or(ew.lt(x, lo), ew.gt(x, hi)), outside, div(g, mul(x, sub(1.0, x)))), None


def logit(x, eps: float | None = None):
    """log(x / (1 - x)), as torch.logit; with eps, x is clamped to [eps, 1 - eps] first (and the
    gradient is 0 outside that interval)."""
    return Logit.apply(as_float(x), eps)

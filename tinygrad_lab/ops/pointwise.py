"""More elementwise math: trigonometric and hyperbolic functions, exp and log in other bases (with
frexp and ldexp), atan2, hypot, copysign, fmod, logaddexp, the NaN-ignoring fmax/fmin, heaviside,
nextafter, the integer ops (gcd, lcm, shifts), the finiteness tests and nan_to_num, the complex-number
names for real tensors (conj, real, isreal, ...), Poisson draws; then the fused forms that are
compositions of ops (lerp, addcmul, addcdiv, clamp_min/max, square, fill_diagonal, ...).

As in elementwise.py, each op's forward computes on backend arrays and its backward is
written with differentiable ops (gradients of gradients work). Integer inputs of the
float functions are computed in the default float dtype, as in PyTorch.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..autograd.tensor_base import TensorBase, make
from . import elementwise as ew
from .elementwise import _arr, _unary, _unbroadcast, add, div, mul, sqrt, sub
from .op import Op, constant, tensor_args
from .promotion import apply_binary, as_float, as_operand, binary_op, cast, promote

_LN2, _LN10 = math.log(2.0), math.log(10.0)


# ---------------------------------------------------------------- trigonometric and hyperbolic

Tan, tan = _unary("Tan", lambda xp, x: xp.tan(x), lambda x, out, g: mul(g, add(mul(out, out), 1)),
                  "tangent. Backward: g * (1 + tan(x)**2)", saves="out")
Asin, asin = _unary("Asin", lambda xp, x: xp.arcsin(x), lambda x, out, g: div(g, sqrt(sub(1, mul(x, x)))),
                    "arcsine. Backward: g / sqrt(1 - x**2)")
Acos, acos = _unary("Acos", lambda xp, x: xp.arccos(x), lambda x, out, g: ew.neg(div(g, sqrt(sub(1, mul(x, x))))),
                    "arccosine. Backward: -g / sqrt(1 - x**2)")
Atan, atan = _unary("Atan", lambda xp, x: xp.arctan(x), lambda x, out, g: div(g, add(mul(x, x), 1)),
                    "arctangent. Backward: g / (1 + x**2)")
Sinh, sinh = _unary("Sinh", lambda xp, x: xp.sinh(x), lambda x, out, g: mul(g, cosh(x)),
                    "hyperbolic sine. Backward: g * cosh(x)")
Cosh, cosh = _unary("Cosh", lambda xp, x: xp.cosh(x), lambda x, out, g: mul(g, sinh(x)),
                    "hyperbolic cosine. Backward: g * sinh(x)")
Asinh, asinh = _unary("Asinh", lambda xp, x: xp.arcsinh(x), lambda x, out, g: div(g, sqrt(add(mul(x, x), 1))),
                      "inverse hyperbolic sine. Backward: g / sqrt(x**2 + 1)")
Acosh, acosh = _unary("Acosh", lambda xp, x: xp.arccosh(x),
                      lambda x, out, g: div(g, sqrt(mul(sub(x, 1), add(x, 1)))),
                      "inverse hyperbolic cosine. Backward: g / sqrt((x - 1) * (x + 1))")
Atanh, atanh = _unary("Atanh", lambda xp, x: xp.arctanh(x), lambda x, out, g: div(g, sub(1, mul(x, x))),
                      "inverse hyperbolic tangent. Backward: g / (1 - x**2)")


# ---------------------------------------------------------------- exp and log in other bases

Log2, log2 = _unary("Log2", lambda xp, x: xp.log2(x), lambda x, out, g: div(g, mul(x, _LN2)),
                    "base-2 logarithm. Backward: g / (x * ln 2)")
Log10, log10 = _unary("Log10", lambda xp, x: xp.log10(x), lambda x, out, g: div(g, mul(x, _LN10)),
                      "base-10 logarithm. Backward: g / (x * ln 10)")
Expm1, expm1 = _unary("Expm1", lambda xp, x: xp.expm1(x), lambda x, out, g: mul(g, add(out, 1)),
                      "e**x - 1, accurate near 0. Backward: g * (out + 1)", saves="out")
Exp2, exp2 = _unary("Exp2", lambda xp, x: xp.exp2(x), lambda x, out, g: mul(g, mul(out, _LN2)),
                    "2**x. Backward: g * 2**x * ln 2", saves="out")
Frac, _frac = _unary("Frac", lambda xp, x: x - xp.trunc(x), lambda x, out, g: g,
                     "the fractional part x - trunc(x), with x's sign. Backward: g", saves="")


def frac(x):
    """x - trunc(x), as torch.frac (float tensors only, as PyTorch)."""
    if x._data.dtype.kind != "f":
        raise NotImplementedError(f'"frac_{x._device.type}" not implemented for \'{dtypes.scalar_name(x._data.dtype)}\' '
                                  f'(input of shape {list(x._data.shape)}; frac takes floating point tensors)')
    return _frac(x)


class Frexp(Op):
    """x split as mantissa * 2**exponent, |mantissa| in [0.5, 1), the exponent an int32 (0, inf and NaN
    keep themselves with exponent 0). Backward: d mantissa/dx = 2**-exponent; the exponent has no gradient."""

    @staticmethod
    def forward(ctx, x):
        mantissa, exponent = ctx.xp.frexp(x._data)
        exponent = exponent.astype(np.int32, copy=False)
        ctx.save_for_backward(exponent)  # an output: backward gets it back as a tensor
        return mantissa, exponent

    @staticmethod
    def backward(ctx, g, _g_exponent):
        (exponent,) = ctx.saved_tensors
        return div(g, exp2(cast(exponent, g._data.dtype)))


class FrexpResult(NamedTuple):
    """What frexp returns: PyTorch's (mantissa, exponent) named tuple."""

    mantissa: TensorBase
    exponent: TensorBase


@tensor_args("input")
def frexp(input) -> FrexpResult:  # noqa: A002 (PyTorch's parameter name)
    """(mantissa, exponent) with input = mantissa * 2**exponent, as torch.frexp (float tensors only)."""
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"frexp() only supports floating-point dtypes (got {input.dtype}, input of shape "
                           f"{list(input._data.shape)})")
    return FrexpResult(*Frexp.apply(input))


@tensor_args("input", "other")
def ldexp(input, other):  # noqa: A002
    """input * 2**other, as torch.ldexp: other is a tensor (of any number dtype); two integer tensors give
    the default float dtype. Composed of ops (exp2, mul), so both arguments get gradients."""
    if not isinstance(other, TensorBase):
        raise TypeError(f"ldexp(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    input, other = promote(input, other, op="ldexp", min_category=dtypes.FLOAT)
    return mul(input, exp2(other))


# ---------------------------------------------------------------- binary math

class Atan2(Op):
    """The angle of the point (b, a): atan(a / b) in the right quadrant.
    Backward: d/da = g * b / (a**2 + b**2), d/db = -g * a / (a**2 + b**2), both 0 where a**2 + b**2 is 0
    (at the origin, or underflowing: as PyTorch)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return ctx.xp.arctan2(_arr(a), _arr(b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n = ctx.needs_input_grad
        squares = add(mul(a, a), mul(b, b))
        scale = ew.where(ew.eq(squares, 0), 0.0, div(g, squares))
        return (_unbroadcast(ctx, mul(scale, b), 0) if n[0] else None,
                _unbroadcast(ctx, ew.neg(mul(scale, a)), 1) if n[1] else None)


class Hypot(Op):
    """sqrt(a**2 + b**2) without overflow. Backward: d/da = g * a / out, d/db = g * b / out."""

    @staticmethod
    def forward(ctx, a, b):
        out = ctx.xp.hypot(_arr(a), _arr(b))
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        n = ctx.needs_input_grad
        scale = div(g, out)
        return (_unbroadcast(ctx, mul(scale, a), 0) if n[0] else None,
                _unbroadcast(ctx, mul(scale, b), 1) if n[1] else None)


class Copysign(Op):
    """|a| with the sign of b. Backward: d/da = g * out / a (the sign flip), 0 where a == 0;
    d/db = 0 (as PyTorch)."""

    @staticmethod
    def forward(ctx, a, b):
        out = ctx.xp.copysign(_arr(a), _arr(b))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        n = ctx.needs_input_grad
        zero = ew.eq(a, 0)
        flip = ew.where(zero, 0.0, div(out, ew.where(zero, 1.0, a)))  # the second where keeps 0/0 out of the graph
        return (_unbroadcast(ctx, mul(g, flip), 0) if n[0] else None,
                _unbroadcast(ctx, ew.zeros_like(g), 1) if n[1] else None)


class Fmod(Op):
    """a - trunc(a / b) * b, with the sign of a (C's fmod).
    Backward: d/da = g, d/db = -g * trunc(a / b)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return ctx.xp.fmod(_arr(a), _arr(b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n = ctx.needs_input_grad
        return (_unbroadcast(ctx, g, 0) if n[0] else None,
                _unbroadcast(ctx, ew.neg(mul(g, ew.trunc(div(a, b)))), 1) if n[1] else None)


class LogAddExp(Op):
    """log(e**a + e**b) without overflow. Backward: d/da = g * sigmoid(a - b), d/db = g * sigmoid(b - a)
    (= e**(a - out), e**(b - out); so where one of them is infinite the other's gradient is 0, not NaN)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return ctx.xp.logaddexp(_arr(a), _arr(b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n = ctx.needs_input_grad
        return (_unbroadcast(ctx, mul(g, ew.sigmoid(sub(a, b))), 0) if n[0] else None,
                _unbroadcast(ctx, mul(g, ew.sigmoid(sub(b, a))), 1) if n[1] else None)


atan2 = arctan2 = binary_op(Atan2, "atan2", min_category=dtypes.FLOAT, doc="atan(a / b) in the right quadrant")
hypot = binary_op(Hypot, "hypot", min_category=dtypes.FLOAT, doc="sqrt(a**2 + b**2)")
copysign = binary_op(Copysign, "copysign", min_category=dtypes.FLOAT, doc="|a| with the sign of b")
fmod = binary_op(Fmod, "fmod", doc="a - trunc(a / b) * b (the sign of a)")
logaddexp = binary_op(LogAddExp, "logaddexp", min_category=dtypes.FLOAT, doc="log(e**a + e**b)")


def logaddexp2(a, b):
    """log2(2**a + 2**b), as torch.logaddexp2."""
    return div(logaddexp(mul(a, _LN2), mul(b, _LN2)), _LN2)


# ---------------------------------------------------------------- NaN-ignoring max/min, heaviside, nextafter

class Fmax(Op):
    """max(a, b), where NaN loses to a number (NaN only where both are). Backward (as PyTorch): g goes
    to a where a >= b or b is NaN, else to b; on ties all of it goes to a (maximum splits it)."""

    @staticmethod
    def forward(ctx, a, b):
        a, b = _arr(a), _arr(b)
        ctx.save_for_backward(ctx.xp.asarray((a >= b) | (b != b)))  # True: the gradient goes to a
        return ctx.xp.fmax(a, b)

    @staticmethod
    def backward(ctx, g):
        (to_a,) = ctx.saved_tensors
        n = ctx.needs_input_grad
        mask = constant(ctx, to_a)
        return (_unbroadcast(ctx, ew.where(mask, g, 0.0), 0) if n[0] else None,
                _unbroadcast(ctx, ew.where(mask, 0.0, g), 1) if n[1] else None)


class Fmin(Op):
    """min(a, b), where NaN loses to a number. Backward: g goes to a where a <= b or b is NaN, else to b."""

    @staticmethod
    def forward(ctx, a, b):
        a, b = _arr(a), _arr(b)
        ctx.save_for_backward(ctx.xp.asarray((a <= b) | (b != b)))
        return ctx.xp.fmin(a, b)

    backward = Fmax.backward


class Heaviside(Op):
    """The step function: 0 where x < 0 (and where x is NaN), `values` where x == 0, 1 where x > 0.
    Its output requires grad when x does, but backward raises, as PyTorch's does."""

    @staticmethod
    def forward(ctx, x, values):
        x, v = _arr(x), _arr(values)
        return ctx.xp.where(x == 0, v, x > 0).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("the derivative for 'heaviside' is not implemented (a step function has no useful "
                           "gradient); detach() its inputs")


class NextAfter(Op):
    """The next float after a in the direction of b. Backward (as PyTorch): g to a where a != b, else 0;
    none to b."""

    @staticmethod
    def forward(ctx, a, b):
        a, b = _float_checked(ctx, a, b, "nextafter")
        ctx.save_for_backward(ctx.xp.asarray(a != b))
        return ctx.xp.nextafter(a, b)

    @staticmethod
    def backward(ctx, g):
        (moved,) = ctx.saved_tensors
        n = ctx.needs_input_grad
        return (_unbroadcast(ctx, ew.where(constant(ctx, moved), g, 0.0), 0) if n[0] else None,
                _unbroadcast(ctx, ew.zeros_like(g), 1) if n[1] else None)


def _float_checked(ctx, a, b, op: str) -> tuple:
    return ew.kind_checked(ctx, a, b, op, "f", "floating point tensors")


# Deviation: a Python number is accepted on either side (PyTorch's fmax, fmin and nextafter take tensors only)
fmax = binary_op(Fmax, "fmax", doc="elementwise max ignoring NaN, as torch.fmax (a number is accepted too)")
fmin = binary_op(Fmin, "fmin", doc="elementwise min ignoring NaN, as torch.fmin (a number is accepted too)")
nextafter = binary_op(NextAfter, "nextafter", doc="the next float after a towards b, as torch.nextafter "
                                                  "(floats only; a number is accepted too)")


@tensor_args("input", "values")
def heaviside(input, values):  # noqa: A002 (PyTorch's parameter names)
    """The step function, as torch.heaviside: `values` must be a tensor of input's dtype (as PyTorch)."""
    if input._data.dtype != values._data.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes (got {input.dtype} "
                           f"and {values.dtype}; convert values with .to(input.dtype))")
    return apply_binary(Heaviside, input, values, "heaviside")


# ---------------------------------------------------------------- integer ops: gcd, lcm, shifts (no gradient)

def _integer_op(name: str, op: str, compute, doc: str):
    """A binary op of integer tensors, with no gradient: compute(xp, a, b) on the arrays. Deviation (as for
    fmax, fmin, nextafter): either operand may be a Python number, where PyTorch takes tensors only."""
    def forward(ctx, a, b):
        return compute(ctx.xp, *ew.kind_checked(ctx, a, b, op, "iu", "integer tensors"))

    cls = type(name, (Op,), {"differentiable": False, "forward": staticmethod(forward), "__doc__": doc})
    return cls, binary_op(cls, op, doc=doc)


def _shift(xp, a, b, left: bool):
    """a << b or a >> b as PyTorch defines the shifts NumPy leaves undefined: by a negative count or by
    the width of the type or more, << gives 0 and >> gives the sign (0, or -1 for a negative a)."""
    dt = xp.result_type(a, b)
    b = xp.asarray(b)  # a number (a scalar of a's dtype) as a 0-d array: CuPy's where takes arrays
    outside = (b < 0) | (b >= 8 * dt.itemsize)
    count = xp.where(outside, 0, b).astype(dt, copy=False)
    if left:
        out = xp.where(outside, 0, xp.left_shift(a, count))
    else:
        out = xp.where(outside, xp.where(a < 0, -1, 0), xp.right_shift(a, count))
    return out.astype(dt, copy=False)


Gcd, gcd = _integer_op("Gcd", "gcd", lambda xp, a, b: xp.gcd(a, b),
                       "The greatest common divisor of integers, >= 0 (as torch.gcd; no gradient).")
Lcm, lcm = _integer_op("Lcm", "lcm", lambda xp, a, b: xp.lcm(a, b),
                       "The least common multiple of integers, >= 0 (as torch.lcm; no gradient).")
LeftShift, bitwise_left_shift = _integer_op("LeftShift", "lshift", lambda xp, a, b: _shift(xp, a, b, True),
                                            "a << b for integer tensors (as torch.bitwise_left_shift; no gradient).")
RightShift, bitwise_right_shift = _integer_op("RightShift", "rshift", lambda xp, a, b: _shift(xp, a, b, False),
                                              "a >> b for integer tensors, keeping the sign "
                                              "(as torch.bitwise_right_shift; no gradient).")
bitwise_left_shift.__name__, bitwise_right_shift.__name__ = "bitwise_left_shift", "bitwise_right_shift"


# ---------------------------------------------------------------- finiteness

def _predicate(name: str, compute, doc: str):
    """A unary op with a bool result and no gradient."""
    cls = type(name, (Op,), {"differentiable": False, "__doc__": doc,
                             "forward": staticmethod(lambda ctx, x: compute(ctx.xp, x._data))})

    def op(x):
        return cls.apply(x)

    op.__name__, op.__doc__ = name.lower(), doc
    return cls, op


IsNan, isnan = _predicate("IsNan", lambda xp, x: xp.isnan(x), "True where x is NaN (no gradient).")
IsInf, isinf = _predicate("IsInf", lambda xp, x: xp.isinf(x), "True where x is +inf or -inf (no gradient).")
IsPosInf, isposinf = _predicate("IsPosInf", lambda xp, x: xp.isposinf(x), "True where x is +inf (no gradient).")
IsNegInf, isneginf = _predicate("IsNegInf", lambda xp, x: xp.isneginf(x), "True where x is -inf (no gradient).")
IsFinite, isfinite = _predicate("IsFinite", lambda xp, x: xp.isfinite(x),
                                "True where x is neither inf nor NaN (no gradient).")
SignBit, signbit = _predicate("SignBit", lambda xp, x: xp.signbit(x),
                              "True where x's sign bit is set (negative numbers and -0.0; no gradient).")


class NanToNum(Op):
    """x with NaN, +inf and -inf replaced by the given numbers (by default 0 and the dtype's largest
    and smallest). Backward: g where x was finite, 0 where it was replaced."""

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        d = x._data
        ctx.save_for_backward(ctx.xp.isfinite(d))
        return ctx.xp.nan_to_num(d, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, g):
        (finite,) = ctx.saved_tensors
        return ew.Where.apply(constant(ctx, finite), g, 0.0), None, None, None


def nan_to_num(x, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None):
    """NaN -> nan, +inf -> posinf, -inf -> neginf (defaults: 0, the dtype's largest and smallest value),
    as torch.nan_to_num; integer and bool tensors are returned as a copy."""
    if x._data.dtype.kind != "f":
        return ew.Clone.apply(x)
    return NanToNum.apply(x, nan, posinf, neginf)


# ---------------------------------------------------------------- the complex-number names, for real tensors
# tinygrad_lab has no complex dtypes: every tensor is real, so these answer as PyTorch does for a real tensor.

IsReal, isreal = _predicate("IsReal", lambda xp, x: xp.isreal(x),
                            "True everywhere: every element of a real tensor is real (as torch.isreal; no gradient).")


def is_complex(input) -> bool:  # noqa: A002 (PyTorch's parameter name)
    """False: tinygrad_lab has no complex dtypes (as torch.is_complex for a real tensor)."""
    return False


def is_conj(input) -> bool:  # noqa: A002
    """False: a real tensor is never a lazily conjugated view (as torch.is_conj)."""
    return False


def is_neg(input) -> bool:  # noqa: A002
    """False: a real tensor is never a lazily negated view (as torch.is_neg)."""
    return False


def conj(input):  # noqa: A002
    """input itself, as conj, real, resolve_conj and resolve_neg (torch's) give a real tensor: a real number is
    its own conjugate and its own real part, and a real tensor is never a lazy view to resolve. Complex dtypes
    are not supported."""
    return input


resolve_conj = resolve_neg = real = conj


def imag(input):  # noqa: A002
    """PyTorch's RuntimeError: a real tensor has no imaginary part to view (complex dtypes are not supported)."""
    raise RuntimeError(f"imag is not implemented for tensors with non-complex dtypes (got a tensor of "
                       f"{input.dtype}; tinygrad_lab has no complex dtypes).")


def is_nonzero(input) -> bool:  # noqa: A002
    """Whether the one element of input is not 0, as torch.is_nonzero (RuntimeError for more or fewer)."""
    n = input._data.size
    if n != 1:
        amount = "no values" if n == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {amount} is ambiguous (is_nonzero of a tensor of shape "
                           f"{list(input._data.shape)})")
    return bool(input._device.backend.to_host(input._data).reshape(()) != 0)


# ---------------------------------------------------------------- random draws

class Poisson(Op):
    """A count drawn from the Poisson distribution of each rate, from `stream` (a random generator of the
    backend, with NumPy's Generator.poisson), in the rates' dtype. Backward: zeros, as PyTorch's: a draw
    does not move smoothly with its rate."""

    @staticmethod
    def forward(ctx, rates, stream):
        d = rates._data
        return ctx.xp.asarray(stream.poisson(d, size=d.shape)).astype(d.dtype)

    @staticmethod
    def backward(ctx, g):
        return ew.zeros_like(g), None


class StandardGamma(Op):
    """A draw from Gamma(alpha, 1) for each alpha, from `stream` (NumPy's Generator.standard_gamma), at least the
    dtype's smallest normal number (as PyTorch). Backward, the implicit reparameterisation gradient: a draw x is
    the quantile of a fixed uniform u = P(alpha, x) (the regularised lower incomplete gamma function), so
    dx/dalpha = -(dP/dalpha) / (dP/dx): dP/dx is the density x**(alpha - 1) e**-x / Gamma(alpha), dP/dalpha a
    central difference of P in alpha (`gamma_sample_slope`)."""

    @staticmethod
    def forward(ctx, alpha, stream):
        d = alpha._data
        x = ctx.xp.asarray(stream.standard_gamma(d, size=d.shape)).astype(d.dtype)
        x = ctx.xp.maximum(x, np.finfo(d.dtype).tiny)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, g):
        alpha, x = ctx.saved_tensors
        return mul(g, constant(ctx, gamma_sample_slope(ctx.device.backend, alpha._data, x._data))), None


def gamma_sample_slope(backend, alpha, x):
    """dx/dalpha of Gamma(alpha, 1) draws x at a fixed quantile, in float64 and cast back to x's dtype. Where the
    density underflows (far tails) the slope of the scale, x / alpha, stands in."""
    special, xp = backend.special, backend.xp
    a, v = alpha.astype("float64"), x.astype("float64")
    h = 1e-5 * a
    dp_da = (special("gammainc")(a + h, v) - special("gammainc")(a - h, v)) / (2 * h)
    density = xp.exp((a - 1) * xp.log(v) - v - special("gammaln")(a))
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = -dp_da / density
    return xp.where(xp.isfinite(slope) & (density > 0), slope, v / a).astype(x.dtype)


# ---------------------------------------------------------------- compositions (their gradients come from the ops)

@tensor_args("x")
def square(x):
    """x * x, as torch.square (integers stay integers; bools give int64, as x ** 2 does)."""
    return mul(x, x) if x._data.dtype.kind != "b" else ew.pow(x, 2)


def reciprocal(x):
    """1 / x, as torch.reciprocal (integers give the default float dtype)."""
    return div(1.0, x)


def deg2rad(x):
    """Degrees to radians, as torch.deg2rad."""
    return mul(as_float(x), math.pi / 180.0)


def rad2deg(x):
    """Radians to degrees, as torch.rad2deg."""
    return mul(as_float(x), 180.0 / math.pi)


def pow_flat_at_zero(t, exponent: float):
    """t ** exponent for t >= 0, with value and gradient 0 where t is 0 (pow's gradient there is inf or
    nan for exponents below 1) and nan where t is: the powers and roots of p-norms whose gradient at a
    zero vector is 0, as PyTorch's (cdist, pdist, pairwise_distance, normalize)."""
    zero = ew.eq(t, 0.0)
    return ew.where(zero, 0.0, ew.pow(ew.where(zero, 1.0, t), exponent))


def clamp_min(x, min):  # noqa: A002 (PyTorch's parameter names)
    """max(x, min), as torch.clamp_min."""
    return ew.clamp(x, min=min)


def clamp_max(x, max):  # noqa: A002
    """min(x, max), as torch.clamp_max."""
    return ew.clamp(x, max=max)


def lerp(start, end, weight):
    """start + weight * (end - start), as torch.lerp: for |weight| >= 0.5 computed from the end
    (end - (end - start) * (1 - weight)), as PyTorch does, so that weight = 1 gives end exactly."""
    start, end = promote(start, end, op="lerp")
    diff = sub(end, start)
    if not isinstance(weight, TensorBase):
        return add(start, mul(diff, weight)) if abs(weight) < 0.5 else sub(end, mul(diff, 1.0 - weight))
    near_start = ew.lt(ew.abs(weight), 0.5)
    return ew.where(near_start, add(start, mul(diff, weight)), sub(end, mul(diff, sub(1.0, weight))))


def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """input + value * tensor1 * tensor2, as torch.addcmul."""
    return add(input, mul(mul(tensor1, tensor2), value) if value != 1 else mul(tensor1, tensor2))


def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """input + value * tensor1 / tensor2, as torch.addcdiv."""
    q = quotient(tensor1, tensor2)
    return add(input, mul(q, value) if value != 1 else q)


def quotient(tensor1, tensor2):
    """addcdiv's tensor1 / tensor2: integer tensor1 and tensor2 are refused, as in PyTorch (their
    quotient would be truncated)."""
    if all(isinstance(t, TensorBase) and t._data.dtype.kind in "biu" for t in (tensor1, tensor2)):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release addcdiv "
                           "will perform a true division of tensor1 and tensor2. Use div instead.")
    return div(tensor1, tensor2)


def float_power(a, b):
    """a ** b computed in float64, as torch.float_power."""
    a, b = as_operand(a, "float_power"), as_operand(b, "float_power")
    a = cast(a, "float64") if isinstance(a, TensorBase) else float(a)
    b = cast(b, "float64") if isinstance(b, TensorBase) else float(b)
    return ew.pow(a, b)


def fill_diagonal(x, fill_value, wrap: bool = False):
    """x with its main diagonal (a[i, i, ...]) set to fill_value, cast to x's dtype; Tensor.fill_diagonal_
    writes it in place. A 2-d x may be any shape; with wrap, a tall matrix's diagonal starts again every
    columns + 1 rows (as NumPy's fill_diagonal and PyTorch). Backward: g, 0 on the diagonal."""
    shape = tuple(x._data.shape)
    if len(shape) < 2:
        raise RuntimeError(f"fill_diagonal_: dimensions must be larger than 1 (got a tensor of shape {list(shape)})")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError(f"fill_diagonal_: all dimensions of input must be of equal length (got shape {list(shape)})")
    mask = np.zeros(shape, dtype=bool)
    np.fill_diagonal(mask, True, wrap=wrap)
    backend = x._device.backend
    fill_value = fill_value.item() if isinstance(fill_value, TensorBase) else fill_value
    index = x._device.index or 0
    value = make(backend.asarray(fill_value, dtype=x._data.dtype, index=index), x._device)
    return ew.where(make(backend.asarray(mask, index=index), x._device), value, x)

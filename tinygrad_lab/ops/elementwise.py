"""Elementwise ops: arithmetic, comparisons, unary math, where, clamp, clone.

Each op is a Function whose forward computes on backend arrays (`ctx.xp`) and
whose backward is written with these same differentiable ops, so gradients of
gradients come for free. Binary ops broadcast like NumPy, accept Python scalars
on either side and promote dtypes like PyTorch (see `dtypes.result_type`).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd.tensor_base import TensorBase, make, tensor_types
from . import broadcast
from .op import Op, constant, tensor_args
from .promotion import (SCALARS, Cast, apply_binary, as_operand, binary_op, cast, is_bool_operand,  # noqa: F401
                        promote)  # (Cast: ew.Cast)


# ---------------------------------------------------------------- arithmetic

class Add(Op):
    """a + b. Backward: d/da = g, d/db = g (each summed back over its broadcast dims)."""

    @staticmethod
    def forward(ctx, a, b):
        return _arr(a) + _arr(b)

    @staticmethod
    def backward(ctx, g):
        n = ctx.needs_input_grad
        return (_unbroadcast(ctx, g, 0) if n[0] else None, _unbroadcast(ctx, g, 1) if n[1] else None)


class Sub(Op):
    """a - b. Backward: d/da = g, d/db = -g (each summed back over its broadcast dims)."""

    @staticmethod
    def forward(ctx, a, b):
        try:
            return _arr(a) - _arr(b)
        except TypeError:  # NumPy and CuPy refuse bool - bool, as PyTorch does, with their own words
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.") from None

    @staticmethod
    def backward(ctx, g):
        n = ctx.needs_input_grad
        return (_unbroadcast(ctx, g, 0) if n[0] else None, _unbroadcast(ctx, Neg.apply(g), 1) if n[1] else None)


class Mul(Op):
    """a * b. Backward: d/da = g * b, d/db = g * a (summed back over broadcast dims)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _arr(a) * _arr(b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n = ctx.needs_input_grad
        return (_unbroadcast(ctx, Mul.apply(g, b), 0) if n[0] else None,
                _unbroadcast(ctx, Mul.apply(g, a), 1) if n[1] else None)


class Div(Op):
    """a / b. Backward: d/da = g / b, d/db = -g * (a / b) / b, which does not underflow to 0 / 0 where b**2
    would (as PyTorch; summed back over broadcast dims)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _arr(a) / _arr(b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n = ctx.needs_input_grad
        ga = _unbroadcast(ctx, div(g, b), 0) if n[0] else None
        gb = _unbroadcast(ctx, neg(mul(g, div(div(a, b), b))), 1) if n[1] else None
        return ga, gb


class Pow(Op):
    """a ** b. Backward: d/da = g * b * a**(b-1), 0 where b == 0; d/db = g * a**b * log(a),
    0 where a == 0 and b >= 0 (as PyTorch; summed back over broadcast dims)."""

    @staticmethod
    def forward(ctx, a, b):
        try:
            out = _power(_arr(a), _arr(b))
        except ValueError as e:  # integers to negative integer powers: NumPy refuses, PyTorch truncates
            if "negative integer powers" not in str(e):
                raise
            out = _integer_power(ctx.xp, _arr(a), _arr(b))
        ctx.save_for_backward(a, b, out if ctx.needs_input_grad[1] else None)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        n = ctx.needs_input_grad
        ga = gb = None
        if n[0]:
            if isinstance(b, TensorBase):
                # d/da a**b = b * a**(b-1), and 0 where b == 0 (as PyTorch)
                da = where(eq(b, 0), 0.0, mul(b, pow(a, sub(b, 1))))
            elif b == 0:
                da = zeros_like(a)
            else:  # x**2 -> 2x without a pow; otherwise b * x**(b-1)
                da = mul(a, 2) if b == 2 else mul(pow(a, b - 1), b)
            ga = _unbroadcast(ctx, mul(g, da), 0)
        if n[1]:
            # d/db a**b = a**b * log(a), and 0 where a == 0 and b >= 0 (as PyTorch)
            a_t = a if isinstance(a, TensorBase) else constant(ctx, ctx.xp.asarray(a, dtype=out._data.dtype))
            db = mul(out, log(a_t))
            db = where(logical_and(eq(a_t, 0), ge(b, 0)), 0.0, db)
            gb = _unbroadcast(ctx, mul(g, db), 1)
        return ga, gb


def _power(a, b):
    """a ** b on arrays (or numbers). ndarray's ** has fast paths for the exponents 2, 0.5 and -1;
    every other exponent runs the C library's pow() per element.
    Fast path: a float array to a whole exponent 3..8 by multiplications (repeated squaring; 3 is
    a * (a * a), the same rounding as PyTorch's cube), to -2 as 1 / (a * a) and to -0.5 as
    1 / sqrt(a). Measured on 2,000 float32 (NumPy 2.4): x ** 3 409 -> 4 us; a step of the polynomial
    fit (benchmarks/recurrent.py, with x ** 2 and x ** 3) 1.86x -> 1.17x PyTorch's time."""
    # b a Python number (or, on a GPU, the NumPy scalar it is sent as), so a is an array; a ** 2 is NumPy's square
    if b.__class__ in _PLAIN_TYPES and b != 2 and a.dtype.kind == "f":
        if b == -0.5:
            return 1 / (a ** 0.5)
        if b == -2:
            return 1 / (a * a)
        if 3 <= b <= 8 and b == int(b):
            return _whole_power(a, int(b))
    return a ** b


def _integer_power(xp, a, b):
    """a ** b for integer arrays where some exponent is negative, as PyTorch: a ** -n is 1 / a ** n
    truncated to an integer, so 1 for a = 1, ±1 for a = -1 (by the parity of n) and 0 otherwise."""
    out = a ** xp.maximum(b, 0)
    negative = b < 0
    unit = xp.where(a == -1, xp.where(b % 2 == 0, 1, -1), xp.where(a == 1, 1, 0)).astype(out.dtype)
    return xp.where(negative, unit, out)


def _whole_power(a, n: int):
    """a ** n for a whole n >= 2 by repeated squaring: a new array."""
    result, base = None, a
    while True:
        if n & 1:
            result = base if result is None else result * base
        n >>= 1
        if not n:
            return result
        base = base * base


class Maximum(Op):
    """Elementwise max(a, b). Backward: g goes to the larger input; on ties each gets g / 2
    (as PyTorch; summed back over broadcast dims)."""

    @staticmethod
    def forward(ctx, a, b):
        a, b = _arr(a), _arr(b)
        # gradient goes to the larger input, split evenly on ties (as PyTorch)
        ctx.save_for_backward((a > b) + 0.5 * (a == b))
        return ctx.xp.maximum(a, b)

    @staticmethod
    def backward(ctx, g):
        (share,) = ctx.saved_tensors
        n = ctx.needs_input_grad
        return (_unbroadcast(ctx, mul(g, constant(ctx, share.astype(g._data.dtype))), 0) if n[0] else None,
                _unbroadcast(ctx, mul(g, constant(ctx, (1 - share).astype(g._data.dtype))), 1) if n[1] else None)


class Minimum(Op):
    """Elementwise min(a, b). Backward: g goes to the smaller input; on ties each gets g / 2
    (as PyTorch; summed back over broadcast dims)."""

    @staticmethod
    def forward(ctx, a, b):
        a, b = _arr(a), _arr(b)
        ctx.save_for_backward((a < b) + 0.5 * (a == b))
        return ctx.xp.minimum(a, b)

    backward = Maximum.backward


_add = binary_op(Add, "add")
_sub = binary_op(Sub, "sub")
mul = binary_op(Mul, "mul", doc="a * b")


def add(a, b, alpha=1):
    """a + alpha * b"""
    return _add(a, b) if alpha == 1 else _add(a, mul(b, check_alpha(a, b, alpha)))


def sub(a, b, alpha=1):
    """a - alpha * b"""
    return _sub(a, b) if alpha == 1 else _sub(a, mul(b, check_alpha(a, b, alpha)))


def check_alpha(a, b, alpha):
    """add/sub's alpha, refused as PyTorch refuses it: a float alpha when both operands are integers
    (it would be truncated)."""
    if isinstance(alpha, float) and _integral(a) and _integral(b):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    return alpha


def _integral(x) -> bool:
    """Whether operand x (a tensor or a Python number) is an integer or a bool."""
    return x._data.dtype.kind in "biu" if x.__class__ in tensor_types else isinstance(x, int)


def div(a, b, rounding_mode=None):
    """True division (ints give the default float dtype, as PyTorch). rounding_mode
    'floor' or 'trunc' rounds the quotient and keeps integer dtypes integer."""
    if rounding_mode is None:
        return _true_div(a, b)
    if rounding_mode not in ("floor", "trunc"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}")
    a, b = promote(as_operand(a, "div"), as_operand(b, "div"), op="div")
    if any(isinstance(x, TensorBase) and x._data.dtype.kind == "f" for x in (a, b)):
        q = apply_binary(Div, a, b, "div")
        return floor(q) if rounding_mode == "floor" else trunc(q)
    return apply_binary(FloorDivide if rounding_mode == "floor" else TruncDivide, a, b, "div")


class Remainder(Op):
    """a - floor(a / b) * b, with the sign of b (Python's %); for floats computed from fmod, as PyTorch
    (backend.remainder: CuPy's own float % rounds differently)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return ctx.device.backend.remainder(*_int_checked(ctx, a, b, "remainder", "remainder"))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        n = ctx.needs_input_grad
        return (_unbroadcast(ctx, g, 0) if n[0] else None,
                _unbroadcast(ctx, neg(mul(g, floor(div(a, b)))), 1) if n[1] else None)


_true_div = binary_op(Div, "div", min_category=dtypes.FLOAT)
remainder = binary_op(Remainder, "remainder", doc="a - floor(a / b) * b")


_pow = binary_op(Pow, "pow", doc="a ** b")


def pow(a, b):
    """a ** b. An integer tensor to a negative Python int is refused, as in PyTorch (a negative exponent
    in a tensor gives PyTorch's truncated integer result instead)."""
    if b.__class__ is int and b < 0 and a.__class__ in tensor_types and a._data.dtype.kind in "biu":
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if is_bool_operand(b) and is_bool_operand(a):
        return _bool_power(a, b)
    return _pow(a, b)


def _bool_power(a, b):
    """A bool to a bool power: PyTorch has no kernel for it, except for a bool tensor to a Python bool,
    which it computes as x ** 1 = x and x ** 0 = 1, giving bools: x or not y."""
    if b.__class__ is bool and a.__class__ in tensor_types:
        return logical_or(a, not b)
    raise NotImplementedError("\"pow\" not implemented for 'Bool' (a bool to a bool power; "
                              "convert one of them to an integer or float dtype first)")


maximum = binary_op(Maximum, "maximum", doc="elementwise max; ties share the gradient")
minimum = binary_op(Minimum, "minimum", doc="elementwise min; ties share the gradient")


# ---------------------------------------------------------------- comparisons and logic (no gradient)

def _comparison(name: str, ufunc: str):
    """A binary op without gradient (comparisons, logic, integer division)."""
    cls = type(name, (Op,), {
        "differentiable": False,
        "forward": staticmethod(lambda ctx, a, b: getattr(ctx.xp, ufunc)(_arr(a), _arr(b))),
        "__doc__": f"Elementwise {ufunc} (no gradient).",
    })
    return cls, binary_op(cls, ufunc, doc=f"elementwise {ufunc} (no gradient)")


Eq, eq = _comparison("Eq", "equal")
Ne, ne = _comparison("Ne", "not_equal")
Lt, lt = _comparison("Lt", "less")
Le, le = _comparison("Le", "less_equal")
Gt, gt = _comparison("Gt", "greater")
Ge, ge = _comparison("Ge", "greater_equal")
LogicalAnd, logical_and = _comparison("LogicalAnd", "logical_and")
LogicalOr, logical_or = _comparison("LogicalOr", "logical_or")
LogicalXor, logical_xor = _comparison("LogicalXor", "logical_xor")
FloorDivide = type("FloorDivide", (Op,), {
    "differentiable": False, "__doc__": "Integer division rounding down (no gradient).",
    "forward": staticmethod(lambda ctx, a, b: ctx.xp.floor_divide(*_int_checked(ctx, a, b, "floor_divide", "div_floor"))),
})


def kind_checked(ctx, a, b, op: str, kinds: str, what: str) -> tuple:
    """The arrays of a and b, or PyTorch's NotImplementedError (not NumPy's TypeError or a silent answer)
    where their result dtype's kind is not in kinds: "bitwise_and_cpu" not implemented for 'Float'."""
    a, b = _arr(a), _arr(b)
    dt = ctx.xp.result_type(a, b)
    if dt.kind not in kinds:
        raise NotImplementedError(f'"{op}_{ctx.device.type}" not implemented for \'{dtypes.scalar_name(dt)}\' '
                                  f"({op} takes {what}; shapes {list(np.shape(a))} and {list(np.shape(b))})")
    return a, b


def _bitwise(name: str, ufunc: str):
    """A bitwise op: integer and bool tensors only."""
    def forward(ctx, a, b):
        return getattr(ctx.xp, ufunc)(*kind_checked(ctx, a, b, ufunc, "iub", "integer and bool tensors"))

    cls = type(name, (Op,), {"differentiable": False, "forward": staticmethod(forward),
                             "__doc__": f"Elementwise {ufunc} of integer and bool tensors (no gradient)."})
    return cls, binary_op(cls, ufunc, doc=f"elementwise {ufunc} (no gradient)")


BitwiseAnd, bitwise_and = _bitwise("BitwiseAnd", "bitwise_and")
BitwiseOr, bitwise_or = _bitwise("BitwiseOr", "bitwise_or")
BitwiseXor, bitwise_xor = _bitwise("BitwiseXor", "bitwise_xor")
class IsClose(Op):
    """|a - b| <= atol + rtol * |b| elementwise (NaNs equal only with equal_nan), as torch.isclose."""

    differentiable = False

    @staticmethod
    def forward(ctx, a, b, rtol, atol, equal_nan):
        return ctx.xp.isclose(_arr(a), _arr(b), rtol=rtol, atol=atol, equal_nan=equal_nan)


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Which elements of a and b are close (a bool tensor; no gradient)."""
    if isinstance(a, TensorBase) and isinstance(b, TensorBase) and a._data.dtype != b._data.dtype:
        raise RuntimeError(f"isclose(): expected both inputs to have same dtype, but got {a.dtype} and {b.dtype}")
    a, b = as_operand(a, "isclose"), as_operand(b, "isclose")
    return IsClose.apply(a, b, float(rtol), float(atol), bool(equal_nan))


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of a is close to b's (see isclose), as torch.allclose."""
    return bool(isclose(a, b, rtol, atol, equal_nan)._data.all())


@tensor_args("a", "b")
def equal(a, b) -> bool:
    """True if a and b have the same shape and the same elements, as torch.equal."""
    return a._data.shape == b._data.shape and bool(eq(a, b)._data.all())


TruncDivide = type("TruncDivide", (Op,), {
    "differentiable": False, "__doc__": "Integer division rounding toward zero (no gradient).",
    "forward": staticmethod(lambda ctx, a, b: _trunc_divide(ctx.xp, *_int_checked(ctx, a, b, "div", "div_trunc"))),
})


def _trunc_divide(xp, a, b):
    return xp.sign(a) * xp.sign(b) * (xp.abs(a) // xp.abs(b))


def _int_checked(ctx, a, b, op: str, kernel: str) -> tuple:
    """The arrays of a rounding division's operands. Bools are PyTorch's NotImplementedError, naming its
    `kernel` (NumPy computes in int8). A zero integer divisor is PyTorch's error: NumPy's answer, 0 with a
    warning, would be silently wrong (in floats it is inf or nan, as PyTorch). A divisor array is checked
    with `raise_if`, which a GPU reads at its next sync, not here."""
    xp = ctx.xp
    a, b = kind_checked(ctx, a, b, kernel, "iuf", "numbers, not bools")
    kind = xp.result_type(a, b)
    if kind.kind in "iu":
        error = lambda: RuntimeError(  # noqa: E731
            f"ZeroDivisionError: integer {op} by zero (a divisor of {kind} "
            f"{'shape ' + str(list(b.shape)) if hasattr(b, 'shape') else 'value 0'})")
        if hasattr(b, "shape"):
            ctx.device.backend.raise_if(xp.any(b == 0), error)
        elif b == 0:
            raise error()
    return a, b


class LogicalNot(Op):
    """Elementwise logical not (a bool result; no gradient)."""

    differentiable = False

    @staticmethod
    def forward(ctx, a):
        return ctx.xp.logical_not(a._data)


@tensor_args("a")
def logical_not(a):
    """Elementwise logical not, as torch.logical_not: True where a is zero/False (no gradient)."""
    return LogicalNot.apply(a)


class BitwiseNot(Op):
    """~a for integer and bool tensors; float tensors raise TypeError (no gradient)."""

    differentiable = False

    @staticmethod
    def forward(ctx, a):
        if a._data.dtype.kind == "f":
            raise TypeError(f"~ (bitwise_not) is only supported for integer and bool tensors, got {a.dtype}")
        return ctx.xp.invert(a._data)


@tensor_args("a")
def bitwise_not(a):
    """~a, as torch.bitwise_not: integer and bool tensors only (no gradient)."""
    return BitwiseNot.apply(a)


class Where(Op):
    """a where cond else b. Backward: g goes to a where cond and to b elsewhere (0 on the other
    side, summed back over broadcast dims); cond gets no gradient."""

    @staticmethod
    def forward(ctx, cond, a, b):
        c = cond._data
        ctx.save_for_backward(c)
        a, b = _arr(a), _arr(b)
        if b.__class__ is float and b == 0 and hasattr(a, "dtype"):
            return ctx.device.backend.masked(a, c)  # g where mask else 0: every masked backward (relu, clamp, ...)
        if a.__class__ is float and a == 0 and hasattr(b, "dtype"):
            return ctx.device.backend.masked(b, ~c)
        return ctx.xp.where(c, a, b)

    @staticmethod
    def backward(ctx, g):
        (c,) = ctx.saved_tensors
        n = ctx.needs_input_grad
        cond = constant(ctx, c)
        return (None,
                _unbroadcast(ctx, where(cond, g, 0.0), 1) if n[1] else None,
                _unbroadcast(ctx, where(cond, 0.0, g), 2) if n[2] else None)


@tensor_args("cond")
def where(cond, a, b):
    """a where cond else b (gradient flows to the chosen side)."""
    if not isinstance(cond, TensorBase) or cond._data.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got "
                           f"{cond.dtype if isinstance(cond, TensorBase) else type(cond).__name__}")
    a, b = promote(as_operand(a, "where"), as_operand(b, "where"), op="where")
    if not isinstance(a, TensorBase) and not isinstance(b, TensorBase):
        dt = dtypes.result_type([], [], [dtypes.scalar_dtype(a), dtypes.scalar_dtype(b)]).np
        a = make(cond._device.backend.xp.asarray(a, dtype=dt), cond._device)
    try:
        return Where.apply(cond, a, b)
    except ValueError:
        shapes = [list(x._data.shape) if isinstance(x, TensorBase) else [] for x in (cond, a, b)]
        raise RuntimeError(f"where: condition, input and other must be broadcastable, got shapes {shapes}") from None


# ---------------------------------------------------------------- unary math

def _unary(name: str, compute, grad, doc: str, saves: str = "x", float_math: bool = True):
    """A unary Function: `compute(xp, x) -> out`; `grad(x, out, g)` with ops -> dx.
    `saves` names what grad reads ("x", "out" or ""): only that is kept for backward,
    so an in-place change of the other is not an error. With float_math, int and bool
    inputs are computed in the default float dtype (as PyTorch)."""

    def forward(ctx, x):
        out = compute(ctx.xp, x._data)
        ctx.save_for_backward(x if saves == "x" else out if saves == "out" else None)
        return out

    def backward(ctx, g):
        (saved,) = ctx.saved_tensors
        return grad(saved, saved, g)

    cls = type(name, (Op,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                   "__doc__": doc})

    def op(x):
        if float_math and x._data.dtype.kind != "f":
            x = cast(x, dtypes.get_default_dtype().np)
        return cls.apply(x)

    op.__name__, op.__doc__ = name.lower(), doc
    return cls, tensor_args("x")(op)


Neg, _neg = _unary("Neg", lambda xp, x: -x, lambda x, out, g: neg(g), "-x", saves="", float_math=False)


@tensor_args("x")
def neg(x):
    """-x"""
    if x._data.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return _neg(x)
Exp, exp = _unary("Exp", lambda xp, x: xp.exp(x), lambda x, out, g: mul(g, out), "e**x", saves="out")
Log, log = _unary("Log", lambda xp, x: xp.log(x), lambda x, out, g: div(g, x), "natural logarithm")
Log1p, log1p = _unary("Log1p", lambda xp, x: xp.log1p(x), lambda x, out, g: div(g, add(x, 1)), "log(1 + x), accurate near 0")
Sqrt, sqrt = _unary("Sqrt", lambda xp, x: xp.sqrt(x), lambda x, out, g: div(g, mul(out, 2)), "square root",
                    saves="out")
Rsqrt, rsqrt = _unary("Rsqrt", lambda xp, x: 1 / xp.sqrt(x),
                      lambda x, out, g: mul(g, mul(pow(out, 3), -0.5)), "1 / sqrt(x)", saves="out")
Sin, sin = _unary("Sin", lambda xp, x: xp.sin(x), lambda x, out, g: mul(g, cos(x)), "sine")
Cos, cos = _unary("Cos", lambda xp, x: xp.cos(x), lambda x, out, g: neg(mul(g, sin(x))), "cosine")
Tanh, tanh = _unary("Tanh", lambda xp, x: xp.tanh(x), lambda x, out, g: mul(g, sub(1, mul(out, out))),
                    "hyperbolic tangent", saves="out")
Abs, abs = _unary("Abs", lambda xp, x: xp.abs(x), lambda x, out, g: mul(g, sign(x)), "absolute value",
                  float_math=False)


def sigmoid_into(xp, x, out=None):
    """σ(x) = 1 / (1 + e^-x), PyTorch's formula, written into `out` (a new array when None; out may be
    x). Where x is very negative e^-x overflows to inf and 1 / inf = 0, σ's limit, as in PyTorch;
    float16 is computed in float32, as PyTorch does. Four passes in place and no select (a where() on
    the sign of x mispredicts on mixed signs: (128, 784) float32 1150 -> 130 us). The Sigmoid op, the
    GRU's gates and the jit's fused kernels all compute σ here."""
    if out is None:
        out = xp.empty_like(x)
    if x.dtype == np.float16:
        out[...] = sigmoid_into(xp, x.astype(np.float32))
        return out
    xp.negative(x, out=out)
    with np.errstate(over="ignore"):
        xp.exp(out, out=out)
    out += 1
    return xp.reciprocal(out, out=out)


Sigmoid, sigmoid = _unary("Sigmoid", sigmoid_into, lambda x, out, g: mul(g, mul(out, sub(1, out))),
                          "logistic sigmoid 1 / (1 + e**-x)", saves="out")


class Relu(Op):
    """max(x, 0). Backward: g where the output is not 0 (it is positive, or NaN), else 0: so 0 at x == 0, and
    a NaN passes g on, as PyTorch."""

    @staticmethod
    def forward(ctx, x):
        d = x._data
        out = ctx.xp.maximum(d, ctx.device.backend.zero(d.dtype))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        d = out._data
        return Where.apply(constant(ctx, d != ctx.device.backend.zero(d.dtype)), g, 0.0)


@tensor_args("x")
def relu(x):
    """max(x, 0); gradient 1 where x > 0, else 0 (as PyTorch)."""
    return Relu.apply(x)


def _zero_grad(name: str, compute, doc: str):
    """Piecewise-constant ops: PyTorch gives them a gradient of zero."""

    def forward(ctx, x, *args):
        return compute(ctx.xp, x._data, *args)

    def backward(ctx, g):
        return (zeros_like(g),) + (None,) * (len(ctx.edges) - 1)

    cls = type(name, (Op,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                   "__doc__": doc})
    return cls


Sign = _zero_grad("Sign", lambda xp, x: xp.sign(x), "-1, 0 or 1 (zero gradient)")
Floor = _zero_grad("Floor", lambda xp, x: xp.floor(x), "round down (zero gradient)")
Ceil = _zero_grad("Ceil", lambda xp, x: xp.ceil(x), "round up (zero gradient)")
Trunc = _zero_grad("Trunc", lambda xp, x: xp.trunc(x), "round toward zero (zero gradient)")
Round = _zero_grad("Round", lambda xp, x, decimals: xp.round(x, decimals), "round half to even (zero gradient)")


@tensor_args("x")
def sign(x):
    """-1, 0 or 1 by the sign of x, as torch.sign (zero gradient); a bool tensor is its own sign (a copy)."""
    return Clone.apply(x) if x._data.dtype.kind == "b" else Sign.apply(x)


@tensor_args("x")
def floor(x):
    """Round down, as torch.floor (zero gradient); integer and bool tensors give a copy of x (as PyTorch)."""
    return Floor.apply(x) if x._data.dtype.kind == "f" else Clone.apply(x)


@tensor_args("x")
def ceil(x):
    """Round up, as torch.ceil (zero gradient); integer and bool tensors give a copy of x (as PyTorch)."""
    return Ceil.apply(x) if x._data.dtype.kind == "f" else Clone.apply(x)


@tensor_args("x")
def trunc(x):
    """Round toward zero, as torch.trunc (zero gradient); integer and bool tensors give a copy of x (as PyTorch)."""
    return Trunc.apply(x) if x._data.dtype.kind == "f" else Clone.apply(x)


@tensor_args("x")
def round(x, decimals: int = 0):
    """Round half to even to `decimals` places, as torch.round (zero gradient);
    integer and bool tensors give a copy of x (as PyTorch)."""
    return Round.apply(x, decimals) if x._data.dtype.kind == "f" else Clone.apply(x)


class Clamp(Op):
    """min(max(x, lo), hi). The gradient goes to x where lo <= x <= hi, to hi where max(x, lo) > hi (so to hi
    wherever lo > hi), to lo where x < lo otherwise; nowhere where x or a bound is NaN (as PyTorch). lo and hi
    may be numbers or tensors."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x, lo, hi)
        return x._data.clip(_arr(lo), _arr(hi))  # the method: np.clip's Python wrapper costs a call 1 us more

    @staticmethod
    def backward(ctx, g):
        x, lo, hi = ctx.saved_tensors
        d, n = x._data, ctx.needs_input_grad
        gx = _unbroadcast(ctx, Where.apply(constant(ctx, _within(d, lo, hi)), g, 0.0), 0) if n[0] else None
        if not (n[1] or n[2]):  # bounds that are numbers, or need no gradient
            return gx, None, None
        below = d < _arr(lo) if lo is not None else None
        above = (d if lo is None else ctx.xp.maximum(d, _arr(lo))) > _arr(hi) if hi is not None else None
        if above is not None and below is not None:  # where lo > hi the result is hi, whatever x is (as PyTorch)
            below = below & ~above
        glo = _unbroadcast(ctx, Where.apply(constant(ctx, below), g, 0.0), 1) if n[1] else None
        ghi = _unbroadcast(ctx, Where.apply(constant(ctx, above), g, 0.0), 2) if n[2] else None
        return gx, glo, ghi


_BOUNDS = {float, int, type(None)}  # clamp bounds that need no promotion with a float tensor


@tensor_args("x")
def clamp(x, min=None, max=None):
    """Limit values to [min, max] (numbers or tensors)."""
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    if x._data.dtype.kind == "f" and min.__class__ in _BOUNDS and max.__class__ in _BOUNDS:
        lo, hi = min, max  # numbers never widen a float tensor: nothing to promote
    else:
        if x._data.dtype.kind in "iu":
            min, max = _integer_bound(min, x._data.dtype), _integer_bound(max, x._data.dtype)
        x, lo, hi = promote(x, as_operand(min, "clamp") if min is not None else None,
                            as_operand(max, "clamp") if max is not None else None, op="clamp")
    try:
        return Clamp.apply(x, lo, hi)
    except ValueError:
        shapes = [list(t._data.shape) for t in (x, lo, hi) if isinstance(t, TensorBase)]
        raise RuntimeError(f"clamp: input, min and max must be broadcastable to the input, got shapes {shapes}") from None


def _within(d, lo, hi):
    """lo <= d <= hi (False where any of them is NaN); an absent bound does not limit."""
    inside = d >= _arr(lo) if lo is not None else None
    if hi is not None:
        inside = d <= _arr(hi) if inside is None else inside & (d <= _arr(hi))
    return inside


def _integer_bound(value, npd):
    """A Python int bound of an integer tensor's clamp, converted as PyTorch converts it: checked, with a
    negative value wrapping into an unsigned dtype (clamp(min=-3) of a uint8 tensor is clamp(min=253))."""
    if value.__class__ is not int:
        return value
    if not dtypes.holds(npd, value, value):
        raise RuntimeError(f"clamp: value {value} cannot be converted to type {npd.name} without "
                           f"overflow (the tensor's dtype)")
    return value % (int(np.iinfo(npd).max) + 1) if value < 0 and npd.kind == "u" else value


# ---------------------------------------------------------------- copies

def zeros_like(x) -> TensorBase:
    """A constant (no-grad) zero tensor with x's shape, dtype and device."""
    return make(x._device.backend.xp.zeros_like(x._data), x._device)


class Clone(Op):
    """A copy in new memory; the gradient passes through unchanged."""

    @staticmethod
    def forward(ctx, x):
        return x._data.copy()

    @staticmethod
    def backward(ctx, g):
        return g


# ---------------------------------------------------------------- what the ops share

# Python numbers, and the NumPy scalars a GPU backend passes numbers as (Backend.scalar)
_PLAIN_TYPES = frozenset(SCALARS + (type(None),) + tuple(np.dtype(t).type for t in "?BbhilqefdHILQ"))


def _arr(x):
    """The array of a tensor operand; a number (or an absent bound, None) stays as it is."""
    return x if x.__class__ in _PLAIN_TYPES else x._data


def _unbroadcast(ctx, g, i):
    """The gradient for argument i, summed back to that argument's shape."""
    shape = ctx.input_shapes[i]
    return g if g._data.shape == shape else broadcast.sum_to(g, shape)

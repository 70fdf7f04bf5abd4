"""Fusing chains of elementwise ops into one kernel: an optimisation only a static graph allows.

Eagerly, `(a * b + c).relu()` is three ops: three dispatches through `Function.apply`, three
new arrays, and on a GPU three kernel launches that each read and write all of memory. Once
the whole program is known, the chain can run as one unit:

- on the CPU (NumPy), as one block of ufunc calls writing into buffers that are allocated once,
  when the trace is compiled, and reused on every call (`np.multiply(a, b, out=buf)`); an
  intermediate's buffer is recycled as soon as its last reader has run, so the chain above
  needs a single buffer;
- on a GPU (CuPy), as one `cupy.ElementwiseKernel` generated from the chain (built by the device's
  backend): one launch, and each element is read once and written once. In CI the stand-in
  device's CuPy runs the generated C; when the kernel cannot be built or compiled, a warning says
  why and the group falls back to the ufunc form, which CuPy runs too.

A group is a tree of fusible steps whose intermediate values nothing outside the group reads:
going backwards through the trace, a fusible step joins the group of its consumers when all of
them are in one group. The group's last step (the root) produces the only value that leaves it;
on the CPU the root may be a reduction (Sum, Mean), which then sums the chain's buffer in place
of the array the chain would have returned eagerly.
The root's buffer is reused between calls too when every consumer of it makes a new array
(a reduction, a matmul, another kernel) and it is not an output of the trace, so nothing
outside can keep a reference to memory that the next call overwrites.

The fused forms compute the same formulas as the ops' forwards with the same ufuncs, so on the
CPU they agree with the unfused replay bit for bit (except Pow with an exponent that NumPy's `**`
operator or Pow's own fast path special-cases, such as `x ** 0.5`, computed as a square root, or
`x ** 3`, as products, where `np.power` computes a power: a rounding apart). On a GPU the generated
kernel evaluates the same formulas with CUDA's math library, as CuPy's eager kernels do, and is
compiled without contracting a*b+c into a fused multiply-add (--fmad=false, in the CUDA backend),
so each product and sum rounds as it does eagerly.
"""
from __future__ import annotations

import math
import warnings
from collections import defaultdict
from typing import Callable, NamedTuple

import numpy as np

from ..ops import activation as act
from ..ops import conv, linalg
from ..ops import elementwise as ew
from ..ops import reduce as rd
from .ir import Step, Trace, Value


class Kernel(NamedTuple):
    """How one op computes into a buffer: `cpu` is a call on the array module `{xp}` writing into
    `{out}` and returning it; `c` the same as a C expression for a generated CUDA kernel ({T} is
    a cast to the element type; None: not in CUDA kernels). A `reduction` (Sum, Mean) can only
    end a group: {axes}, {keepdim} and {count} (the number of elements summed) fill its template."""

    cpu: str
    c: str | None
    reduction: bool = False


def _ufunc(name: str, arity: int) -> str:
    return "{xp}." + name + "(" + ", ".join(f"{{{i}}}" for i in range(arity)) + ", out={out})"


KERNELS: dict[type, Kernel] = {
    ew.Add: Kernel(_ufunc("add", 2), "{0} + {1}"),
    ew.Sub: Kernel(_ufunc("subtract", 2), "{0} - {1}"),
    ew.Mul: Kernel(_ufunc("multiply", 2), "{0} * {1}"),
    ew.Div: Kernel(_ufunc("divide", 2), "{0} / {1}"),
    ew.Pow: Kernel(_ufunc("power", 2), "pow({0}, {1})"),
    ew.Maximum: Kernel(_ufunc("maximum", 2), "({0} > {1} || isnan({0})) ? {0} : {1}"),  # NaN wins, as NumPy
    ew.Minimum: Kernel(_ufunc("minimum", 2), "({0} < {1} || isnan({0})) ? {0} : {1}"),
    ew.Neg: Kernel(_ufunc("negative", 1), "-{0}"),
    ew.Exp: Kernel(_ufunc("exp", 1), "exp({0})"),
    ew.Log: Kernel(_ufunc("log", 1), "log({0})"),
    ew.Log1p: Kernel(_ufunc("log1p", 1), "log1p({0})"),
    ew.Sqrt: Kernel(_ufunc("sqrt", 1), "sqrt({0})"),
    ew.Rsqrt: Kernel("{xp}.divide(1, {xp}.sqrt({0}), out={out})", "{T}1 / sqrt({0})"),
    ew.Sin: Kernel(_ufunc("sin", 1), "sin({0})"),
    ew.Cos: Kernel(_ufunc("cos", 1), "cos({0})"),
    ew.Tanh: Kernel(_ufunc("tanh", 1), "tanh({0})"),
    ew.Abs: Kernel(_ufunc("absolute", 1), "fabs({0})"),
    ew.Sigmoid: Kernel("_sigmoid({xp}, {0}, {out})", "{T}1 / ({T}1 + exp(-{0}))"),
    ew.Relu: Kernel("{xp}.maximum({0}, {zero}, out={out})", "({0} > 0 || isnan({0})) ? {0} : {T}0"),
    # what x.sum() and x.mean() run (np.sum is add.reduce; np.mean divides it by the count)
    rd.Sum: Kernel("{xp}.add.reduce({0}, {axes}, None, {out}, {keepdim})", None, True),
    rd.Mean: Kernel("{xp}.divide({xp}.add.reduce({0}, {axes}, None, {out}, {keepdim}), {count}, out={out})", None,
                    True),
}

# Consumers that always make a new array from their inputs (never a view of one): a group root
# read only by these may live in a buffer that the next call overwrites.
NEW_ARRAY_OPS = frozenset(KERNELS) | {
    rd.Sum, rd.Mean, rd.Prod, rd.AMax, rd.AMin, rd.Norm2, act.Linear, linalg.Matmul, act.Softmax,
    act.LogSoftmax, act.NllLoss, conv.Conv, conv.MaxPool, conv.AvgPool, ew.Cast, ew.Where}

_C_TYPES = {"float32": "float", "float64": "double"}
_NUMBERS = (int, float, np.number, np.bool_)  # Python numbers, and the NumPy scalars a GPU backend makes of them


def fusible(step: Step) -> bool:
    """A single-output elementwise op on one floating dtype, whose other arguments are numbers;
    or a Sum/Mean of a floating tensor on a NumPy backend (CuPy's ufuncs may lack .reduce)."""
    kernel = KERNELS.get(step.fn)
    if kernel is None or len(step.outputs) != 1:
        return False
    out = step.outputs[0]
    if out.dtype.kind != "f":
        return False
    if kernel.reduction:
        x = step.args[0]
        return x.dtype == out.dtype and out.device.backend.xp is np
    for a in step.args:
        if isinstance(a, Value):
            if a.dtype != out.dtype:
                return False
        elif not isinstance(a, _NUMBERS):
            return False
    return True


class Group:
    """Fusible steps run as one kernel: `steps` in trace order, the last one the root.

    buffers       (shape, dtype) of each preallocated buffer (the CPU plan)
    buffer_of     value id -> index into `buffers`, or None for a new array (the root, when
                  it may not be reused)
    inputs        the values read from outside the group, in first-use order
    """

    def __init__(self, steps: list):
        self.steps = steps
        self.buffers: list = []
        self.buffer_of: dict = {}
        self.inputs: list = []

    @property
    def root(self) -> Step:
        return self.steps[-1]

    def names(self) -> str:
        return ", ".join(s.fn.__name__ for s in self.steps)


def plan(trace: Trace) -> dict:
    """The fusion groups of `trace`: step -> its Group, for every fusible step."""
    users = trace.consumers()
    outputs = {v.id for v in trace.outputs}
    group_of: dict = {}
    for step in reversed(trace.steps):
        if not fusible(step):
            continue
        out = step.outputs[0]
        consumers = users.get(out.id, ())
        target = group_of.get(consumers[0]) if consumers else None
        if (out.id not in outputs and target is not None and not KERNELS[step.fn].reduction
                and all(group_of.get(c) is target for c in consumers)):
            target.steps.insert(0, step)
            group_of[step] = target
        else:
            group_of[step] = Group([step])
    for group in dict.fromkeys(group_of.values()):
        root = group.root.outputs[0]
        reusable = root.id not in outputs and all(c.fn in NEW_ARRAY_OPS for c in users.get(root.id, ()))
        _plan_buffers(group, reusable)
    return group_of


def _plan_buffers(group: Group, reuse_root: bool) -> None:
    """Give each value computed in the group a buffer, recycling a buffer of the same shape and
    dtype once the value in it has been read for the last time (so `out=` may be an input)."""
    last_read: dict = {}
    values: dict = {}
    inside = {s.outputs[0].id for s in group.steps}
    for k, s in enumerate(group.steps):
        for v in s.values():
            last_read[v.id] = k
            values[v.id] = v
            if v.id not in inside and v not in group.inputs:
                group.inputs.append(v)
    free: dict = defaultdict(list)
    for k, s in enumerate(group.steps):
        for vid in dict.fromkeys(v.id for v in s.values()):
            if vid in inside and last_read[vid] == k:
                free[(values[vid].shape, values[vid].dtype)].append(group.buffer_of[vid])
        out = s.outputs[0]
        if s is group.root and not reuse_root:
            group.buffer_of[out.id] = None
            continue
        key = (out.shape, out.dtype)
        if free[key]:
            group.buffer_of[out.id] = free[key].pop()
        else:
            group.buffer_of[out.id] = len(group.buffers)
            group.buffers.append(key)


def cpu_call(step: Step, xp: str, out: str, array: Callable[[Value], str],
             number: Callable[[float, Value], str]) -> str:
    """The source of `step` as a call writing into `out`: `array(v)` is the source of a value's
    array, `number(x, like)` that of a number with the dtype and device of value `like`."""
    kernel, result = KERNELS[step.fn], step.outputs[0]
    if kernel.reduction:
        x, axes, keepdim = step.args
        count = math.prod(x.shape if axes is None else (x.shape[a] for a in axes))
        return kernel.cpu.format(array(x), xp=xp, out=out, axes=repr(axes), keepdim=repr(keepdim),
                                 count=number(count, result))
    operands = [array(a) if isinstance(a, Value) else number(a, result) for a in step.args]
    return kernel.cpu.format(*operands, xp=xp, out=out, zero=number(0, result))


def cuda_source(group: Group) -> tuple[str, str, str] | None:
    """(in_params, out_params, operation) of a `cupy.ElementwiseKernel` computing the group, or
    None when the group cannot be written in C here (not float32/float64, a non-finite number)."""
    dtype = group.root.outputs[0].dtype
    ctype = _C_TYPES.get(dtype.name)
    if ctype is None or any(KERNELS[s.fn].c is None for s in group.steps):
        return None
    params = {v.id: f"in{i}" for i, v in enumerate(group.inputs)}
    lines = []
    for s in group.steps:
        operands = []
        for a in s.args:
            if isinstance(a, Value):
                operands.append(params.get(a.id, a.name))
            elif math.isfinite(a):
                operands.append(f"(({ctype}){float(a)!r})")
            else:
                return None
        expr = KERNELS[s.fn].c.format(*operands, T=f"({ctype})")
        lines.append(f"{ctype} {s.outputs[0].name} = {expr};")
    lines.append(f"out0 = {group.root.outputs[0].name};")
    in_params = ", ".join(f"{dtype.name} {params[v.id]}" for v in group.inputs)
    return in_params, f"{dtype.name} out0", "\n".join(lines)


def cuda_kernel(group: Group, name: str) -> Callable | None:
    """The compiled kernel of the group from its device's backend, or None (a backend without kernels,
    as NumPy's; `cuda_source` declines; or the kernel does not compile: a warning says why, and the
    group runs as ufuncs instead)."""
    source = cuda_source(group)
    if source is None:
        return None
    device = group.root.outputs[0].device
    backend, index = device.backend, device.index or 0
    try:
        kernel = backend.elementwise_kernel(*source, name, index)
        if kernel is not None:  # compile now, not at the first call
            kernel(*(backend.asarray(np.zeros(1, v.dtype), index=index) for v in group.inputs))
    except Exception as e:  # noqa: BLE001  (any CuPy or NVRTC failure)
        warnings.warn(f"jit: the fused CUDA kernel for {group.names()} did not compile ({e}); "
                      f"it runs as CuPy ufuncs instead", RuntimeWarning, stacklevel=2)
        return None
    return kernel

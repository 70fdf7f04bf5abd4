"""ONNX export: the traced forward graph written as an ONNX model (needs the optional `onnx` package).

A static graph can leave Python: `export` traces the model (`tinygrad_lab.jit.trace`, in eval()
mode and without gradients, as torch.onnx.export does), converts each step of the trace into
ONNX nodes, stores the captured tensors (parameters, buffers, constants) as initializers with
their names, and writes the model. Any ONNX runtime can then run it without tinygrad_lab:

    tinygrad_lab.onnx.export(model, x, "model.onnx")
    session = onnxruntime.InferenceSession("model.onnx")
    session.run(None, {"input": x.numpy()})

The model has the trace's static shapes, opset 17, and deterministic names: inputs `input`
(or `input_0`, `input_1`, ...), outputs `output` (or `output_0`, ...), intermediate values and
nodes named after the trace's values (`v3`, `v3/Gemm`). An op without a conversion here raises
`UnsupportedOp` naming it; a trace's limits (frozen Python branches) apply to the export too.
"""
from __future__ import annotations

import math
import os
from types import SimpleNamespace
from typing import Any, Callable, Sequence

import numpy as np

from ._fileio import write_atomic
from .autograd.grad_mode import no_grad
from .autograd.tensor_base import TensorBase
from .jit import Detach, trace
from .jit.ir import ArrayOf, Step, Trace, Value
from .nn.modules.module import Module
from .ops import activation as act
from .ops import broadcast
from .ops import conv, linalg
from .ops import elementwise as ew
from .ops import indexing as ix
from .ops import movement as mv
from .ops import recurrent as rnn
from .ops import reduce as rd

OPSET = 17
_INT64_MIN = np.iinfo(np.int64).min


class UnsupportedOp(RuntimeError):
    """The traced graph holds an op that has no ONNX conversion here."""


def _onnx():
    try:
        import onnx  # the ONNX package (absolute import: not this module)
    except ImportError:
        raise ImportError("tinygrad_lab.onnx.export needs the onnx package: pip install onnx "
                          "(onnxruntime runs the exported models)") from None
    return onnx


class _Builder:
    """Collects the nodes and initializers of one graph."""

    def __init__(self, onnx, tr: Trace, input_names: Sequence[str], output_names: Sequence[str]):
        self.onnx, self.helper, self.output_names = onnx, onnx.helper, list(output_names)
        self.nodes: list = []
        self.initializers: list = []
        self.names = {v.id: n for v, n in zip(tr.inputs, input_names)}
        # an output computed by a step takes the output's name; any other output (an input, a
        # parameter, a value returned twice) is an Identity node added at the end
        self.aliases = []
        for v, n in zip(tr.outputs, output_names):
            if v.kind == "computed" and v.id not in self.names:
                self.names[v.id] = n
            else:
                self.aliases.append((v, n))
        self.prefix = ""
        self._count = 0

    def name(self, v: Value) -> str:
        return self.names.get(v.id, v.name)

    def fresh(self, what: str) -> str:
        self._count += 1
        return f"{self.prefix}/{what}_{self._count}"

    def node(self, op: str, inputs: Sequence[str], outputs: Sequence[str] | None = None, **attrs) -> str:
        """Add an ONNX node; its first output's name is returned (a fresh name unless given)."""
        outputs = list(outputs) if outputs is not None else [self.fresh(op)]
        self.nodes.append(self.helper.make_node(op, list(inputs), outputs, name=f"{outputs[0]}/{op}", **attrs))
        return outputs[0]

    def const(self, array: Any, what: str = "const") -> str:
        name = self.fresh(what)
        self.initializers.append(self.onnx.numpy_helper.from_array(np.asarray(array), name))
        return name

    def operand(self, a: Any, like: Value) -> str:
        """A tensor operand: a value's name, or a number as a constant of `like`'s dtype."""
        return self.name(a) if isinstance(a, Value) else self.const(np.asarray(a, dtype=like.dtype))

    def int64s(self, values: Sequence[int], what: str = "shape") -> str:
        return self.const(np.asarray(list(values), dtype=np.int64), what)

    def info(self, v: Value, name: str):
        return self.helper.make_tensor_value_info(name, self.helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))


# ---------------------------------------------------------------- converters: step -> nodes

Converter = Callable[[_Builder, Step, list], None]  # (builder, step, output names)


def _first_value(step: Step) -> Value:
    return next(a for a in step.args if isinstance(a, Value))


def _elementwise(op: str) -> Converter:
    def convert(b: _Builder, step: Step, outs: list) -> None:
        like = _first_value(step)
        b.node(op, [b.operand(a, like) for a in step.args], outs)
    return convert


def _not_equal(b: _Builder, step: Step, outs: list) -> None:
    like = _first_value(step)
    b.node("Not", [b.node("Equal", [b.operand(a, like) for a in step.args])], outs)


def _chain(*ops: str) -> Converter:
    """Unary ops applied one after the other (Rsqrt = Sqrt then Reciprocal)."""
    def convert(b: _Builder, step: Step, outs: list) -> None:
        x = b.name(step.args[0])
        for op in ops[:-1]:
            x = b.node(op, [x])
        b.node(ops[-1], [x], outs)
    return convert


def _log1p(b: _Builder, step: Step, outs: list) -> None:
    x = step.args[0]
    b.node("Log", [b.node("Add", [b.name(x), b.operand(1, x)])], outs)


def _log_sigmoid(b: _Builder, step: Step, outs: list) -> None:  # log(sigmoid(x)) = -softplus(-x)
    b.node("Neg", [b.node("Softplus", [b.node("Neg", [b.name(step.args[0])])])], outs)


def _clamp(b: _Builder, step: Step, outs: list) -> None:
    x, lo, hi = step.args
    y = b.name(x)
    if lo is not None:
        y = b.node("Max", [y, b.operand(lo, x)], outs if hi is None else None)
    if hi is not None:
        b.node("Min", [y, b.operand(hi, x)], outs)


def _where(b: _Builder, step: Step, outs: list) -> None:
    cond, x, y = step.args
    like = step.outputs[0]
    b.node("Where", [b.name(cond), b.operand(x, like), b.operand(y, like)], outs)


def _cast(b: _Builder, step: Step, outs: list) -> None:
    b.node("Cast", [b.name(step.args[0])], outs, to=b.helper.np_dtype_to_tensor_dtype(np.dtype(step.args[1])))


def _identity(b: _Builder, step: Step, outs: list) -> None:
    b.node("Identity", [b.name(step.args[0])], outs)


def _linear(b: _Builder, step: Step, outs: list) -> None:
    x, w, bias = step.args
    b.node("Gemm", [b.name(x), b.name(w)] + ([b.name(bias)] if bias is not None else []), outs, transB=1)


def _matmul(b: _Builder, step: Step, outs: list) -> None:
    b.node("MatMul", [b.name(a) for a in step.args], outs)


def _sum(b: _Builder, step: Step, outs: list) -> None:
    x, axes, keepdim = step.args
    data = b.name(x)
    if x.dtype.kind in "biu":  # bool and integers sum as int64 (as PyTorch)
        data = b.node("Cast", [data], to=b.onnx.TensorProto.INT64)
    b.node("ReduceSum", [data] + ([b.int64s(axes, "axes")] if axes is not None else []), outs, keepdims=int(keepdim))


def _reduce(op: str) -> Converter:
    """Reductions that take their axes as an attribute at opset 17 (ReduceMean, ReduceMax, ...)."""
    def convert(b: _Builder, step: Step, outs: list) -> None:
        x, axes, keepdim = step.args
        attrs = {"axes": list(axes)} if axes is not None else {}
        b.node(op, [b.name(x)], outs, keepdims=int(keepdim), **attrs)
    return convert


def _arg(op: str) -> Converter:
    def convert(b: _Builder, step: Step, outs: list) -> None:
        x, dim, keepdim = step.args
        if dim is not None:
            b.node(op, [b.name(x)], outs, axis=dim, keepdims=int(keepdim))
            return
        flat = b.node("Reshape", [b.name(x), b.int64s([-1])])
        index = b.node(op, [flat], axis=0, keepdims=0)
        b.node("Reshape", [index, b.int64s(step.outputs[0].shape)], outs)
    return convert


def _extremum_dim(values: str, indices: str) -> Converter:
    def convert(b: _Builder, step: Step, outs: list) -> None:
        x, dim, keepdim = step.args
        b.node(values, [b.name(x)], outs[:1], axes=[dim], keepdims=int(keepdim))
        b.node(indices, [b.name(x)], outs[1:], axis=dim, keepdims=int(keepdim))
    return convert


def _softmax(op: str) -> Converter:
    def convert(b: _Builder, step: Step, outs: list) -> None:
        b.node(op, [b.name(step.args[0])], outs, axis=step.args[1])
    return convert


def _reshape(b: _Builder, step: Step, outs: list) -> None:
    b.node("Reshape", [b.name(step.args[0]), b.int64s(step.outputs[0].shape)], outs)


def _permute(b: _Builder, step: Step, outs: list) -> None:
    b.node("Transpose", [b.name(step.args[0])], outs, perm=list(step.args[1]))


def _expand(b: _Builder, step: Step, outs: list) -> None:
    b.node("Expand", [b.name(step.args[0]), b.int64s(step.args[1])], outs)


def _cat(b: _Builder, step: Step, outs: list) -> None:
    b.node("Concat", [b.name(t) for t in step.args[1:]], outs, axis=step.args[0])


def _split(b: _Builder, step: Step, outs: list) -> None:
    x, sizes, dim = step.args
    b.node("Split", [b.name(x), b.int64s(sizes, "split")], outs, axis=dim)


def _stack(b: _Builder, step: Step, outs: list) -> None:
    dim, tensors = step.args[0], step.args[1:]
    b.node("Concat", [b.node("Unsqueeze", [b.name(t), b.int64s([dim], "axes")]) for t in tensors], outs, axis=dim)


def _unbind(b: _Builder, step: Step, outs: list) -> None:
    x, dim = step.args
    pieces = [b.fresh("piece") for _ in outs]
    b.node("Split", [b.name(x), b.int64s([1] * len(outs), "split")], pieces, axis=dim)
    for piece, out in zip(pieces, outs):
        b.node("Squeeze", [piece, b.int64s([dim], "axes")], [out])


def _sum_to(b: _Builder, step: Step, outs: list) -> None:
    x, shape = step.args
    axes = broadcast.summed_axes(tuple(x.shape), tuple(shape))  # the axes SumTo itself sums
    summed = b.node("ReduceSum", [b.name(x), b.int64s(axes, "axes")], keepdims=1)
    b.node("Reshape", [summed, b.int64s(shape)], outs)


def _slice(b: _Builder, x: str, starts: list, ends: list, axes: list, steps: list, outs=None) -> str:
    return b.node("Slice", [x, b.int64s(starts, "starts"), b.int64s(ends, "ends"), b.int64s(axes, "axes"),
                            b.int64s(steps, "steps")], outs)


def _flip(b: _Builder, step: Step, outs: list) -> None:
    x, dims = step.args
    _slice(b, b.name(x), [-1] * len(dims), [_INT64_MIN] * len(dims), list(dims), [-1] * len(dims), outs)


def _pad(b: _Builder, step: Step, outs: list) -> None:
    x, widths, value = step.args
    pads = [lo for lo, _ in widths] + [hi for _, hi in widths]
    b.node("Pad", [b.name(x), b.int64s(pads, "pads"), b.operand(value, x)], outs, mode="constant")


def _basic_index(b: _Builder, step: Step, outs: list) -> None:
    """x[ints, slices, None, ...]: one Slice over the sliced dims, then a Reshape to the result's
    shape (which drops the int-indexed dims and adds the None ones)."""
    x, key = step.args[0], step.args[1]
    key = key if isinstance(key, tuple) else (key,)
    n_dims = sum(k is not None and k is not Ellipsis for k in key)
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * (len(x.shape) - n_dims) + key[at + 1:]
    starts, ends, axes, steps = [], [], [], []
    dim = 0
    for k in key:
        if k is None:
            continue
        size = x.shape[dim]
        if isinstance(k, int):
            k = slice(k % size, k % size + 1)
        start, stop, stride = k.indices(size)
        if (start, stop, stride) != (0, size, 1):
            starts.append(start)
            ends.append(_INT64_MIN if stride < 0 and stop < 0 else stop)
            axes.append(dim)
            steps.append(stride)
        dim += 1
    sliced = _slice(b, b.name(x), starts, ends, axes, steps) if axes else b.name(x)
    b.node("Reshape", [sliced, b.int64s(step.outputs[0].shape)], outs)


def _index(b: _Builder, step: Step, outs: list) -> None:
    """x[indices] along one dim (an embedding lookup): a Gather; other advanced keys are unsupported."""
    x, key = step.args[0], step.args[1]
    arrays = [i for i, k in enumerate(key) if not isinstance(k, (slice, type(None), type(Ellipsis), int))]
    full = all(k == slice(None) for i, k in enumerate(key) if i not in arrays)
    if len(arrays) != 1 or not full:
        raise _unsupported(step, "only x[indices] with one integer index tensor along one dim converts (Gather)")
    k = key[arrays[0]]
    if not isinstance(k, ArrayOf):  # a constant index array on x's device: read back explicitly (CuPy refuses np.asarray)
        k = x.device.backend.to_host(k)
    if (k.value.dtype if isinstance(k, ArrayOf) else k.dtype) == np.bool_:
        raise _unsupported(step, "boolean masks have no static output shape in ONNX")
    b.node("Gather", [b.name(x), b.name(k.value) if isinstance(k, ArrayOf) else b.const(k, "indices")], outs,
           axis=arrays[0])


def _gather(b: _Builder, step: Step, outs: list) -> None:
    x, dim, index = step.args
    b.node("GatherElements", [b.name(x), b.name(index)], outs, axis=dim)


def _conv(b: _Builder, step: Step, outs: list) -> None:
    x, w, bias, geo = step.args
    n = len(geo.x_shape) - 2  # spatial dims of the tensors (a 1-d convolution runs as 2-d with a height of 1)
    begin, end = zip(*geo.pads[-n:])
    attrs = {"kernel_shape": list(geo.kernel[-n:]), "strides": list(geo.stride[-n:]),
             "dilations": list(geo.dilation[-n:]), "pads": list(begin + end)}
    inputs = [b.name(x), b.name(w)] + ([b.name(bias)] if bias is not None else [])
    b.node("Conv", inputs, outs, group=geo.G, **attrs)


def _pool_attrs(step: Step, geo) -> tuple[dict, int]:
    """ONNX's pooling attributes for a geometry (ceil_mode where PyTorch's rule chose it), and the
    number of spatial dims. A 1-d pooling runs as 2-d with a height of 1, so with two spatial entries
    a rank-3 input is 1-d batched (N, C, L), unless its pooling is 2-d (C, H, W); with H = 1 and a
    1-row window the two readings compute the same."""
    rank = len(geo.x_shape)
    if len(geo.sizes) == 3:
        spatial = 3
    else:
        flat = geo.sizes[0] == geo.kernel[0] == 1 and geo.padding[0] == 0
        spatial = 2 if rank == 4 or (rank == 3 and not flat) else 1
    kernel, stride, pads, ceil = [], [], [], False
    for n, k, s, p, d, o in list(zip(geo.sizes, geo.kernel, geo.stride, geo.padding, geo.dilation, geo.out))[-spatial:]:
        span = n + 2 * p - d * (k - 1) - 1
        if o != span // s + 1:
            ceil = True
            if o != -(-span // s) + 1:
                raise _unsupported(step, "ONNX computes this ceil_mode output size differently")
        kernel.append(k)
        stride.append(s)
        pads.append(p)
    return {"kernel_shape": kernel, "strides": stride, "pads": pads * 2, "ceil_mode": int(ceil)}, spatial


def _pool(op: str) -> Converter:
    def convert(b: _Builder, step: Step, outs: list) -> None:
        x, geo = step.args[0], step.args[1]
        if op == "MaxPool" and step.args[2]:
            raise _unsupported(step, "return_indices=True: ONNX numbers the indices differently")
        attrs, spatial = _pool_attrs(step, geo)
        if op == "MaxPool":
            attrs["dilations"] = list(geo.dilation[-spatial:])
        elif not isinstance(geo.divisor, (int, float)) or geo.divisor != math.prod(geo.kernel):
            raise _unsupported(step, "only a divisor of the full window size converts (count_include_pad=True, "
                                     "no divisor_override, no clipped ceil_mode windows)")
        else:
            attrs["count_include_pad"] = 1
        data = b.name(x)
        batched = len(geo.x_shape) == spatial + 2
        if not batched:  # ONNX pools (N, C, ...) only
            data = b.node("Unsqueeze", [data, b.int64s([0], "axes")])
        pooled = b.node(op, [data], outs if batched else None, **attrs)
        if not batched:
            b.node("Squeeze", [pooled, b.int64s([0], "axes")], outs)
    return convert


def _recurrent_preactivation(b: _Builder, h: Value, w_hh: Value, b_hh: Value | None) -> str:
    """h W_hhᵀ + b_hh, the hidden state's share of a recurrent cell's pre-activations (a Gemm)."""
    return b.node("Gemm", [b.name(h), b.name(w_hh)] + ([b.name(b_hh)] if b_hh is not None else []), transB=1)


def _gates(b: _Builder, x: str, n: int, size: int) -> list:
    """x (N, n·size) split into its n gate blocks."""
    outs = [b.fresh("gate") for _ in range(n)]
    b.node("Split", [x, b.int64s([size] * n, "split")], outs, axis=1)
    return outs


def _rnn_cell(b: _Builder, step: Step, outs: list) -> None:
    x_proj, h, w_hh, b_hh, nonlinearity = step.args
    a = b.node("Add", [b.name(x_proj), _recurrent_preactivation(b, h, w_hh, b_hh)])
    b.node("Tanh" if nonlinearity == "tanh" else "Relu", [a], outs)


def _lstm_cell(b: _Builder, step: Step, outs: list) -> None:
    """The cell's formulas as nodes: gates i, f, g, o; c' = f c + i g; h' = o tanh(c')."""
    x_proj, h, c, w_hh, b_hh = step.args
    a = b.node("Add", [b.name(x_proj), _recurrent_preactivation(b, h, w_hh, b_hh)])
    i, f, g, o = _gates(b, a, 4, h.shape[1])
    i, f, g, o = b.node("Sigmoid", [i]), b.node("Sigmoid", [f]), b.node("Tanh", [g]), b.node("Sigmoid", [o])
    c_new = b.node("Add", [b.node("Mul", [f, b.name(c)]), b.node("Mul", [i, g])], outs[1:])
    b.node("Mul", [o, b.node("Tanh", [c_new])], outs[:1])


def _gru_cell(b: _Builder, step: Step, outs: list) -> None:
    """r = σ(x_r + h_r), z = σ(x_z + h_z), n = tanh(x_n + r h_n), h' = (1 - z) n + z h."""
    x_proj, h, w_hh, b_hh = step.args
    x_r, x_z, x_n = _gates(b, b.name(x_proj), 3, h.shape[1])
    h_r, h_z, h_n = _gates(b, _recurrent_preactivation(b, h, w_hh, b_hh), 3, h.shape[1])
    r = b.node("Sigmoid", [b.node("Add", [x_r, h_r])])
    z = b.node("Sigmoid", [b.node("Add", [x_z, h_z])])
    n = b.node("Tanh", [b.node("Add", [x_n, b.node("Mul", [r, h_n])])])
    keep = b.node("Mul", [b.node("Sub", [b.operand(1, h), z]), n])
    b.node("Add", [keep, b.node("Mul", [z, b.name(h)])], outs)


class _Named:
    """A value an unrolled layer's nodes make, standing in for a traced Value (a name, shape, dtype)."""

    def __init__(self, name: str, shape: tuple, dtype) -> None:
        self.id = self.name = name
        self.shape, self.dtype = tuple(shape), dtype


def _recurrent_layer(cell: Converter) -> Converter:
    """A whole-sequence layer (RNNLayer, LSTMLayer, GRULayer: one op in the trace) unrolled over
    time: per step, the cell's nodes on that step's slice of x_proj; the outputs concatenated."""
    def convert(b: _Builder, step: Step, outs: list) -> None:
        x_proj, h0, c0, w_hh, b_hh, reverse, nonlinearity = step.args
        state = [h0] if c0 is None else [h0, c0]
        hs = [None] * x_proj.shape[0]
        for t in (reversed(range(len(hs))) if reverse else range(len(hs))):
            x_t = _Named(b.node("Gather", [b.name(x_proj), b.const(np.asarray(t, dtype=np.int64), "t")], axis=0),
                         x_proj.shape[1:], x_proj.dtype)
            new = [_Named(b.fresh("state"), s.shape, s.dtype) for s in state]
            args = (x_t, *state, w_hh, b_hh) + ((nonlinearity,) if cell is _rnn_cell else ())
            cell(b, SimpleNamespace(args=args), [n.name for n in new])
            state = new
            hs[t] = b.node("Unsqueeze", [state[0].name, b.int64s([0], "axes")])
        b.node("Concat", hs, outs[:1], axis=0)
        for s, name in zip(state, outs[1:]):
            b.node("Identity", [s.name], [name])

    return convert


CONVERTERS: dict[type, Converter] = {
    ew.Add: _elementwise("Add"), ew.Sub: _elementwise("Sub"), ew.Mul: _elementwise("Mul"),
    ew.Div: _elementwise("Div"), ew.Pow: _elementwise("Pow"), ew.Maximum: _elementwise("Max"),
    ew.Minimum: _elementwise("Min"), ew.Eq: _elementwise("Equal"), ew.Ne: _not_equal, ew.Lt: _elementwise("Less"),
    ew.Le: _elementwise("LessOrEqual"), ew.Gt: _elementwise("Greater"), ew.Ge: _elementwise("GreaterOrEqual"),
    ew.LogicalAnd: _elementwise("And"), ew.LogicalOr: _elementwise("Or"), ew.LogicalXor: _elementwise("Xor"),
    ew.LogicalNot: _elementwise("Not"), ew.Neg: _elementwise("Neg"), ew.Exp: _elementwise("Exp"),
    ew.Log: _elementwise("Log"), ew.Log1p: _log1p, ew.Sqrt: _elementwise("Sqrt"), ew.Rsqrt: _chain("Sqrt", "Reciprocal"),
    ew.Sin: _elementwise("Sin"), ew.Cos: _elementwise("Cos"), ew.Tanh: _elementwise("Tanh"),
    ew.Abs: _elementwise("Abs"), ew.Sigmoid: _elementwise("Sigmoid"), ew.Relu: _elementwise("Relu"),
    ew.Sign: _elementwise("Sign"), ew.Floor: _elementwise("Floor"), ew.Ceil: _elementwise("Ceil"),
    act.Erf: _elementwise("Erf"), act.LogSigmoid: _log_sigmoid, ew.Where: _where, ew.Clamp: _clamp,
    ew.Cast: _cast, ew.Clone: _identity, mv.Contiguous: _identity, Detach: _identity,
    act.Linear: _linear, linalg.Matmul: _matmul, act.Softmax: _softmax("Softmax"),
    act.LogSoftmax: _softmax("LogSoftmax"),
    rd.Sum: _sum, rd.Mean: _reduce("ReduceMean"), rd.Prod: _reduce("ReduceProd"), rd.AMax: _reduce("ReduceMax"),
    rd.AMin: _reduce("ReduceMin"), rd.Norm2: _reduce("ReduceL2"), rd.ArgMax: _arg("ArgMax"),
    rd.ArgMin: _arg("ArgMin"), rd.MaxDim: _extremum_dim("ReduceMax", "ArgMax"),
    rd.MinDim: _extremum_dim("ReduceMin", "ArgMin"), rd.SumTo: _sum_to,
    mv.Reshape: _reshape, mv.View: _reshape, mv.Squeeze: _reshape, mv.Unsqueeze: _reshape, mv.Flatten: _reshape,
    mv.Permute: _permute, mv.Transpose: _permute, mv.Expand: _expand, mv.Cat: _cat, mv.Split: _split,
    mv.Stack: _stack, mv.Unbind: _unbind,
    mv.Flip: _flip, mv.Pad: _pad, ix.BasicIndex: _basic_index, ix.Index: _index, ix.Gather: _gather,
    conv.Conv: _conv, conv.MaxPool: _pool("MaxPool"), conv.AvgPool: _pool("AveragePool"),
    rnn.RNNCell: _rnn_cell, rnn.LSTMCell: _lstm_cell, rnn.GRUCell: _gru_cell,
    rnn.RNNLayer: _recurrent_layer(_rnn_cell), rnn.LSTMLayer: _recurrent_layer(_lstm_cell),
    rnn.GRULayer: _recurrent_layer(_gru_cell),
}


def _unsupported(step: Step, why: str = "") -> UnsupportedOp:
    what = "a user-defined autograd.Function" if not step.fn.array_forward else "a built-in op"
    where = f" in {step.scope_name}" if step.scope_name else ""
    return UnsupportedOp(f"ONNX export: op {step.fn.__name__} ({what}, step `{step!r}`{where}) has no ONNX conversion"
                         + (f": {why}" if why else f"; ops that convert: {', '.join(sorted(c.__name__ for c in CONVERTERS))}"))


# ---------------------------------------------------------------- export

def _names(given: Sequence[str] | None, n: int, stem: str) -> list:
    if given is not None:
        if len(given) != n:
            raise ValueError(f"{n} {stem} name(s) needed, got {len(given)}: {list(given)}")
        return list(given)
    return [stem] if n == 1 else [f"{stem}_{i}" for i in range(n)]


def to_model(tr: Trace, input_names: Sequence[str] | None = None, output_names: Sequence[str] | None = None,
             opset: int = OPSET):
    """The ONNX ModelProto of trace `tr` (checked with onnx.checker)."""
    onnx = _onnx()
    b = _Builder(onnx, tr, _names(input_names, len(tr.inputs), "input"), _names(output_names, len(tr.outputs), "output"))
    for v in tr.captured:
        b.initializers.append(onnx.numpy_helper.from_array(v.tensor._device.backend.to_host(v.tensor._data), v.name))
    for step in tr.steps:
        convert = CONVERTERS.get(step.fn)
        if convert is None:
            raise _unsupported(step)
        b.prefix = step.outputs[0].name
        convert(b, step, [b.name(v) for v in step.outputs])
    for v, name in b.aliases:
        b.node("Identity", [b.name(v)], [name])
    outputs = [b.info(v, name) for v, name in zip(tr.outputs, b.output_names)]
    graph = onnx.helper.make_graph(b.nodes, tr.name, [b.info(v, b.name(v)) for v in tr.inputs], outputs,
                                   b.initializers)
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)],
                                   producer_name="tinygrad_lab")
    onnx.checker.check_model(model)
    return model


def export(model_or_fn: Module | Callable, example_inputs: TensorBase | Sequence[TensorBase], path: str | os.PathLike,
           *, input_names: Sequence[str] | None = None, output_names: Sequence[str] | None = None,
           opset: int = OPSET):
    """Trace `model_or_fn` on `example_inputs` and write it to `path` as an ONNX model; returns the
    ModelProto. A Module is traced in eval() mode (each submodule's mode is restored after). The
    file is written atomically (a temporary file in the same folder, then renamed)."""
    _onnx()  # fail early, before tracing, when the package is missing
    modes = [(m, m.training) for m in model_or_fn.modules()] if isinstance(model_or_fn, Module) else []
    if modes:
        model_or_fn.eval()
    try:
        with no_grad():
            traced = trace(model_or_fn, example_inputs, fuse=False)
    finally:
        for m, training in modes:  # parents first: each module ends with its own mode
            m.train(training)
    model = to_model(traced.trace, input_names, output_names, opset)
    write_atomic(path, model.SerializeToString())
    return model

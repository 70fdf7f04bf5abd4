"""Jacobians, Hessians and their products with vectors, built on `grad` (torch.autograd.functional).

Everything here is a few backward passes:

- vjp: one backward pass seeded with v gives vᵀJ, a row combination of the Jacobian J (reverse mode);
- jvp: J v, from two backward passes (the "double-vjp trick"): for a dummy seed u, the first pass
  gives g(u) = Jᵀu, which is linear in u; differentiating g by u along v gives J v;
- jacobian: one vjp per output element (its rows), or one jvp per input element (its columns) with
  strategy="forward-mode";
- hessian: the Jacobian of the gradient; vhp and hvp: the gradient's vjp and jvp.

`func` takes the inputs (a tensor, or a tuple of tensors) and returns a tensor or a tuple of tensors;
results keep that structure. The inputs are used detached: func is differentiated at their values,
and nothing reaches their `.grad`. With create_graph=True the results are differentiable again.
"""
from __future__ import annotations

from ..ops import movement as mv
from .api import grad
from .grad_mode import enable_grad
from .tensor_base import TensorBase, make


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), vᵀJ): v has the output's shape (may be left out for a one-element output)."""
    ins, single_in, outs, single_out = _evaluate(func, inputs, create_graph)
    with enable_grad():
        result = _vjp(outs, ins, _vectors(v, outs, "v", "outputs"), create_graph, strict)
    return _finish(outs, single_out, create_graph), _finish(result, single_in, create_graph)


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): v has the inputs' shapes (may be left out for a one-element input)."""
    ins, _, outs, single_out = _evaluate(func, inputs, create_graph)
    with enable_grad():
        result = _jvp(outs, ins, _vectors(v, ins, "v", "inputs"), create_graph, strict)
    return _finish(outs, single_out, create_graph), _finish(result, single_out, create_graph)


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """d func(inputs) / d inputs: for output i and input j a tensor of shape outᵢ.shape + inputⱼ.shape
    (a tensor for one output and one input, else tuples: by input, by output, or [output][input]).
    strategy "reverse-mode" builds it row by row with vjps, "forward-mode" column by column with jvps;
    `vectorize` is accepted and changes nothing (PyTorch batches the rows with vmap)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(f'Expected strategy to be either "forward-mode" or "reverse-mode", got {strategy!r}')
    ins, single_in, outs, single_out = _evaluate(func, inputs, create_graph)
    with enable_grad():
        by_input = _columns if strategy == "forward-mode" else _rows
        blocks = [by_input(out, ins, create_graph, strict) for out in outs]
    blocks = [_finish(row, single_in, create_graph) for row in blocks]
    return blocks[0] if single_out else tuple(blocks)


def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The second derivatives of a one-element func: the Jacobian of its gradient, of shape
    inputᵢ.shape + inputⱼ.shape for inputs i and j (a tensor for one input, else a tuple of tuples)."""
    def gradient(*ins):
        return _value_and_gradient(func, ins, strict)[1]

    single_in = isinstance(inputs, TensorBase)
    return jacobian(gradient if not single_in else lambda x: gradient(x)[0], inputs, create_graph, strict,
                    vectorize, outer_jacobian_strategy)


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), vᵀH) for a one-element func: the vjp of its gradient."""
    ins, single_in = _as_inputs(inputs, "inputs", create_graph)
    with enable_grad():
        out, grads = _value_and_gradient(func, ins, strict)
        result = _vjp(grads, ins, _vectors(v, ins, "v", "inputs"), create_graph, strict)
    return _finish((out,), True, create_graph), _finish(result, single_in, create_graph)


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v) for a one-element func: the jvp of its gradient (equal to vhp where the
    second derivatives are continuous, since H is then symmetric)."""
    ins, single_in = _as_inputs(inputs, "inputs", create_graph)
    with enable_grad():
        out, grads = _value_and_gradient(func, ins, strict)
        result = _jvp(grads, ins, _vectors(v, ins, "v", "inputs"), create_graph, strict)
    return _finish((out,), True, create_graph), _finish(result, single_in, create_graph)


# ---------------------------------------------------------------- the products

def _vjp(outs: tuple, ins: tuple, vs: tuple, create_graph: bool, strict: bool) -> tuple:
    """vᵀJ for each input: one backward pass from the outputs, seeded with v (an output that does not
    require grad, a constant, contributes nothing)."""
    live = [(out, v) for out, v in zip(outs, vs) if out.requires_grad]
    found = grad([out for out, _ in live], ins, [v for _, v in live], retain_graph=True, create_graph=create_graph,
                 allow_unused=True) if live else (None,) * len(ins)
    return _filled(found, ins, strict)


def _jvp(outs: tuple, ins: tuple, vs: tuple, create_graph: bool, strict: bool) -> tuple:
    """J v for each output, by the double-vjp trick: g(u) = Jᵀu, then the vjp of g by u along v."""
    dummies = tuple(_zeros(out, requires_grad=True) for out in outs)
    g = _vjp(outs, ins, dummies, True, False)
    used = [(gi, vi) for gi, vi in zip(g, vs) if gi.requires_grad]
    if not used:
        return _filled((None,) * len(outs), outs, strict)
    found = grad([gi for gi, _ in used], dummies, [vi for _, vi in used], retain_graph=True,
                 create_graph=create_graph, allow_unused=True)
    return _filled(found, outs, strict)


def _rows(out: TensorBase, ins: tuple, create_graph: bool, strict: bool) -> tuple:
    """d out / d inputs, one vjp per element of out: row k is the gradient of out's element k."""
    rows = [[] for _ in ins]
    for k in range(out.numel()):
        seed = _zeros(out).view(-1)
        seed[k] = 1
        for j, g in enumerate(_vjp((out,), ins, (seed.view(out.shape),), create_graph, strict)):
            rows[j].append(g)
    return tuple(_assemble(r, out.shape, inp) for r, inp in zip(rows, ins))


def _columns(out: TensorBase, ins: tuple, create_graph: bool, strict: bool) -> tuple:
    """d out / d inputs, one jvp per element of each input: column k of input j is J along e_k."""
    blocks = []
    for j, inp in enumerate(ins):
        cols = []
        for k in range(inp.numel()):
            vs = tuple(_zeros(other) for other in ins)
            vs[j].view(-1)[k] = 1
            cols.append(_jvp((out,), ins, vs, create_graph, strict)[0])
        columns = mv.stack(cols, -1) if cols else _zeros(out).unsqueeze(-1)[..., :0]
        blocks.append(mv.reshape(columns, tuple(out.shape) + tuple(inp.shape)))
    return tuple(blocks)


def _assemble(rows: list, out_shape, inp: TensorBase) -> TensorBase:
    """The rows of one Jacobian block stacked to out_shape + inp.shape."""
    if not rows:
        return make(inp._device.backend.xp.zeros(tuple(out_shape) + tuple(inp.shape), inp._data.dtype), inp._device)
    return mv.reshape(mv.stack(rows), tuple(out_shape) + tuple(inp.shape))


def _value_and_gradient(func, ins: tuple, strict: bool) -> tuple:
    """func's one-element output and its gradient, recorded so that it can be differentiated again."""
    outs, _ = _as_tensors(func(*ins), "outputs of the user-provided function")
    if len(outs) != 1 or outs[0].numel() != 1:
        raise RuntimeError(f"The function given to hessian, vhp or hvp should return a single Tensor with a "
                           f"single element, got {len(outs)} output(s) of shape(s) {[list(o.shape) for o in outs]}")
    return outs[0], _filled(grad(outs, ins, create_graph=True, allow_unused=True), ins, strict)


# ---------------------------------------------------------------- arguments and results

def _evaluate(func, inputs, create_graph: bool) -> tuple:
    """func run on fresh inputs with grad mode on: (inputs, single input?, outputs, single output?)."""
    ins, single_in = _as_inputs(inputs, "inputs", create_graph)
    with enable_grad():
        outs, single_out = _as_tensors(func(*ins), "outputs of the user-provided function")
    return ins, single_in, outs, single_out


def _as_tensors(value, what: str) -> tuple:
    """(value as a tuple of tensors, whether it was a single tensor), or PyTorch's TypeError."""
    single = isinstance(value, TensorBase)
    items = (value,) if single else value
    if not isinstance(items, (tuple, list)) or not all(isinstance(t, TensorBase) for t in items):
        raise TypeError(f"The {what} must be either a Tensor or a tuple of Tensors, got {type(value).__name__}")
    return tuple(items), single


def _as_inputs(inputs, what: str, create_graph: bool) -> tuple:
    """The inputs as fresh leaves that require grad (views keeping their graph when create_graph)."""
    ins, single = _as_tensors(inputs, what)
    fresh = tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(True) for t in ins)
    return fresh, single


def _vectors(v, like: tuple, name: str, what: str) -> tuple:
    """v as one tensor per entry of `like`, checked; ones for a single one-element entry when v is None."""
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(f"The vector {name} can only be None if the {what} to the user-provided function "
                               f"is a single Tensor with a single element.")
        return (make(like[0]._device.backend.xp.ones(like[0]._data.shape, like[0]._data.dtype), like[0]._device),)
    vs, _ = _as_tensors(v, f"given {name}")
    if len(vs) != len(like) or any(tuple(a.shape) != tuple(b.shape) for a, b in zip(vs, like)):
        raise RuntimeError(f"{name} has shapes {[list(t.shape) for t in vs]}, but the {what} have shapes "
                           f"{[list(t.shape) for t in like]}: they must match")
    return tuple(t.detach() for t in vs)


def _filled(found: tuple, like: tuple, strict: bool) -> tuple:
    """Gradients with zeros where a tensor did not reach the result (an error in strict mode)."""
    out = []
    for i, (g, ref) in enumerate(zip(found, like)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                                   f"This is not allowed in strict mode.")
            g = _zeros(ref)
        out.append(g)
    return tuple(out)


def _zeros(like: TensorBase, requires_grad: bool = False) -> TensorBase:
    t = make(like._device.backend.xp.zeros(like._data.shape, like._data.dtype), like._device)
    t._requires_grad = requires_grad
    return t


def _finish(tensors: tuple, single: bool, create_graph: bool):
    """Results detached unless create_graph, as a tensor or a tuple like the argument they follow."""
    done = tuple(t if create_graph else t.detach() for t in tensors)
    return done[0] if single else done

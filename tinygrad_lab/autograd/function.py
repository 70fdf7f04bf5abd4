"""`Function`: the one mechanism by which every op runs and records the graph.

Built-in ops and user-defined Functions alike subclass `Function` with
`forward(ctx, *args)` and `backward(ctx, *grad_outputs)` staticmethods and run
through `Function.apply`, which

1. checks that all tensor arguments are on one device,
2. when a gradient is needed (grad mode on, an input requires grad), creates a
   graph node (the `ctx`) whose edges point at the inputs' nodes,
3. runs `forward` (built-in ops return backend arrays, user Functions return
   Tensors), wraps the outputs, and
4. publishes an OpEvent when someone subscribes (the instrumentation point).

`backward` is written with differentiable ops, so running it with grad mode on
(`create_graph=True`) records the graph of the gradient itself.
"""
from __future__ import annotations

import itertools
import threading
import time
import weakref

import numpy as np

from . import events
from .grad_mode import state as _grad_state
from .tensor_base import (_NP_SCALARS, TensorBase, _cls as _tensor_cls, _new, make, make_view, tensor_types,
                          version_counter)

_node_ids = itertools.count()


class _ScopeStack(threading.local):
    """The scopes ops run in, outermost first: nn.Module.__call__ pushes its module here, and every
    recorded node keeps a snapshot (`Node.scope`), so a graph drawn later knows which layer made it.
    A list per thread (modules called in two threads do not mix), used like a list."""

    def __init__(self):
        self.items: list = []

    def append(self, scope) -> None:
        self.items.append(scope)

    def pop(self):
        return self.items.pop()

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __iter__(self):
        return iter(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __setitem__(self, i, value) -> None:
        self.items[i] = value

    def __delitem__(self, i) -> None:
        del self.items[i]

    def __eq__(self, other) -> bool:
        return self.items == (other.items if isinstance(other, _ScopeStack) else other)

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self.items)


scope_stack = _ScopeStack()
_FREED = object()  # Node._saved after the graph was freed by backward


class _AllFalse:
    """needs_input_grad of a forward that records nothing."""

    def __getitem__(self, i):
        return False


class _SavedOutput:
    """An output saved for backward: its array and version counter, not the tensor
    (which refers to the node: holding it would make a cycle)."""

    __slots__ = ("data", "nr", "vc")

    def __init__(self, data, nr: int, vc: list):
        self.data, self.nr, self.vc = data, nr, vc


class NullContext:
    """The ctx handed to `forward` when no graph is recorded: saving is a no-op.
    One per device, shared, so the no-grad path allocates nothing."""

    needs_input_grad = _AllFalse()

    def __init__(self, device):
        self.device = device
        self.xp = device.backend.xp

    def save_for_backward(self, *tensors) -> None:
        pass

    def mark_non_differentiable(self, *outputs) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        pass


class NodeName(str):
    """A graph node's name: a string (`node.name`), and callable as PyTorch's `node.name()`."""

    __slots__ = ()

    def __call__(self) -> str:
        return str(self)


class Node:
    """A recorded op in the backward graph (PyTorch's `grad_fn`), also the `ctx`
    its Function's forward and backward receive.

    id               creation-order counter; every node's id is larger than its inputs'
    fn               the Function class
    edges            per forward argument: (node, output_nr) where its gradient goes, or None
    needs_input_grad per forward argument: whether a gradient is wanted
    input_shapes     per forward argument: its shape (None for non-tensors)
    next_functions   PyTorch's view of the edges: one per tensor argument, (None, 0) if it needs no gradient
    scope            the scope_stack when it was recorded (the nn.Module calls it ran in), outermost first
    """

    # defaults on the class: recording a node stores only what differs
    n_outputs = 1
    output_shapes = output_dtypes = None  # set for nodes with several outputs
    _to_save = ()
    _saved = ()
    _non_diff = ()
    _materialize = True
    _pre_hooks = None
    _retained = None
    scope = ()

    # ---- the ctx API of PyTorch's autograd.Function ----
    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or arrays) for backward; checked against in-place changes."""
        self._to_save = tensors

    def mark_non_differentiable(self, *outputs) -> None:
        self._non_diff = outputs

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self._materialize = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        saved = self._saved
        if saved is _FREED:
            raise RuntimeError(
                f"Trying to backward through the graph a second time (or directly access saved tensors after "
                f"they have already been freed) in {self.name}. Saved intermediate values of the graph are freed "
                f"when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
                f"through the graph a second time or if you need to access saved tensors after calling backward.")
        out = []
        for value, version in saved:
            if version is None or (value.__class__ is not _SavedOutput and (
                    value._vc[0] if value._vc is not None else 0) == version):
                out.append(value)  # a plain value, or an unmodified input (the common case)
            else:
                out.append(self._unpack(value, version))
        return tuple(out)

    def _unpack(self, value, version):
        """A saved output rebuilt as a tensor, or PyTorch's error for a modified tensor."""
        if value.__class__ is _SavedOutput:
            data, nr, vc = value.data, value.nr, value.vc
            current = vc[0]
        else:
            vc = value._vc
            current = vc[0] if vc is not None else 0
        if current != version:
            what = f"output {nr} of {self.name}" if value.__class__ is _SavedOutput \
                else f"a tensor of shape {list(value._data.shape)}"
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: {what} is at version {current}; expected version {version} instead. "
                f"Op: {self.name}. Hint: replace the in-place op (x.add_(), x += ..., x[...] = ...) "
                f"with its out-of-place form, or .clone() the tensor first.")
        if value.__class__ is not _SavedOutput:
            return value
        t = make(data, self.device)  # an output, rebuilt on demand: the node does not own its output tensor
        t._requires_grad, t._grad_fn, t._output_nr, t._vc = True, self, nr, vc
        return t

    # ---- graph inspection ----
    @property
    def next_functions(self) -> tuple:
        return tuple(e if e is not None else (None, 0)
                     for e, shape in zip(self.edges, self.input_shapes) if shape is not None)

    @property
    def name(self) -> "NodeName":
        return NodeName(self.fn.__name__ + "Backward")

    def __repr__(self) -> str:
        return f"<{self.name}>"

    def register_prehook(self, output_nr: int, hook) -> "RemovableHandle":
        """Call `hook(grad)` on the gradient of output `output_nr` before backward runs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return RemovableHandle(self._pre_hooks.setdefault(output_nr, {}), hook)

    def retain_output(self, output_nr: int, tensor) -> None:
        """Store the gradient of output `output_nr` in `tensor.grad` (retain_grad), after the hooks."""
        if self._retained is None:
            self._retained = {}
        self._retained[output_nr] = weakref.ref(tensor)


class AccumulateGrad:
    """The graph node of a leaf tensor that requires grad: it adds the incoming
    gradient into the leaf's `.grad`. The leaf owns its node; the node refers back
    to the leaf weakly, so no reference cycle forms."""

    __slots__ = ("id", "_variable", "__weakref__")
    fn = None
    edges = next_functions = ()
    n_outputs = 1
    name = NodeName("AccumulateGrad")

    def __init__(self, variable: TensorBase):
        self._variable = weakref.ref(variable)
        self.id = next(_node_ids)

    @property
    def variable(self):
        """The leaf tensor (None if it no longer exists)."""
        return self._variable()

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


def accumulator(t: TensorBase) -> AccumulateGrad:
    """The AccumulateGrad node of leaf `t` (created on first use)."""
    node = t._accum
    if node is None:
        node = t._accum = AccumulateGrad(t)
    return node


def edge(t: TensorBase):
    """Where the gradient of `t` goes: (node, output_nr), or None."""
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad:
        return (accumulator(t), 0)
    return None


class RemovableHandle:
    """Returned by register_hook: `remove()` takes the hook away again."""

    _ids = itertools.count()

    def __init__(self, hooks: dict, hook):
        self._hooks = hooks
        self._key = next(self._ids)
        hooks[self._key] = hook

    def remove(self) -> None:
        self._hooks.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _device_mismatch(fn: type, args: tuple) -> RuntimeError:
    """PyTorch's message, plus where each tensor argument is and which move fixes it."""
    devs, where = [], []
    for i, a in enumerate(args):
        if isinstance(a, TensorBase):
            if a._device not in devs:
                devs.append(a._device)
            where.append(f"argument {i} (shape {list(a._data.shape)}) is on {a._device}")
    target = next((d for d in devs if d.type != "cpu"), devs[0])  # usually the model's device
    names = " and ".join(str(d) for d in devs)
    return RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, {names}! "
        f"(in op {fn.__name__}: {'; '.join(where)}). Move them to one device first, "
        f"e.g. t = t.to('{target}').")


class Function:
    """Base class of every op. Subclass with staticmethods `forward(ctx, *args)`
    and `backward(ctx, *grad_outputs)`, then call `MyFunction.apply(*args)`."""

    differentiable = True  # False: outputs never require grad (comparisons, argmax, ...)
    is_view = False        # True: the output shares memory with the first argument
    array_forward = False  # True: forward computes on arrays and calls no ops (the built-in ops)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # The built-in ops (tinygrad_lab.ops) compute their forward on backend arrays, so grad
        # mode need not be switched off around it; a user Function's forward uses ops, and must.
        if "array_forward" not in cls.__dict__:
            cls.array_forward = cls.__module__.startswith("tinygrad_lab.ops.")

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("a Function subclass must implement forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("this Function does not implement backward(ctx, *grad_outputs)")

    @classmethod
    def apply(cls, *args):
        device = None
        need = False
        for a in args:
            if a.__class__ in tensor_types:  # isinstance(a, TensorBase): every subclass registers itself
                if device is None:
                    device = a._device
                elif a._device is not device:
                    raise _device_mismatch(cls, args)
                if a._requires_grad:
                    need = True
        if device is None:
            raise TypeError(f"{cls.__name__}.apply needs at least one Tensor argument")
        if events.subscribers and not events.state.muted:
            return _apply_observed(cls, args)
        if need and cls.differentiable and _grad_state.enabled:
            return _apply_recorded(cls, args, device)
        ctx = device._null_ctx or _new_null_ctx(device)
        # a call with a fixed number of arguments is faster than one with *args (no list, no tuple built)
        n = len(args)
        if n == 2:
            out = cls.forward(ctx, args[0], args[1])
        elif n == 1:
            out = cls.forward(ctx, args[0])
        elif n == 3:
            out = cls.forward(ctx, args[0], args[1], args[2])
        else:
            out = cls.forward(ctx, *args)
        kind = out.__class__
        if kind in _NP_SCALARS:  # a full reduction or a vector dot: NumPy gives a scalar
            out = np.array(out)
        elif kind not in _array_types or cls.is_view:  # several outputs, a view, a user Function's tensor
            return _wrap_plain(out, args, device, cls)
        t = _new(_tensor_cls[0])  # make(), inlined: the no-grad hot path
        t._data = out
        t._device = device
        return t


def _wrap_plain(out, args, device, fn):
    if type(out) is tuple:
        return tuple(_wrap_plain(o, args, device, fn) for o in out)
    if isinstance(out, TensorBase):  # a user Function's output (or a transfer to another device)
        return make(out._data, out._device)
    if fn.is_view:
        return make_view(out, device, args[0])
    return make(out, device)


_array_types: set = set()  # the backends' array classes: an op's output of one of these is wrapped inline


def _new_null_ctx(device) -> NullContext:
    """The first no-grad op on a device: its shared ctx, and its backend's array class noted."""
    ctx = device._null_ctx = NullContext(device)
    _array_types.add(ctx.xp.ndarray)
    return ctx


def _apply_recorded(cls, args, device):
    """The forward of an op whose output needs a gradient: record a graph node.
    (The hot path of training: one pass over the arguments, no generator expressions.)"""
    node = _new(Node)  # no __init__ call: the fields are set here, the only place nodes are made
    node.fn = cls
    node.device = device
    node.xp = device.backend.xp
    nexts, shapes, needs = [], [], []
    for a in args:
        if a.__class__ in tensor_types:
            e = edge(a)
            nexts.append(e)
            shapes.append(a._data.shape)
            needs.append(e is not None)
        else:
            nexts.append(None)
            shapes.append(None)
            needs.append(False)
    node.edges = tuple(nexts)
    node.input_shapes = tuple(shapes)
    node.needs_input_grad = tuple(needs)
    node.id = next(_node_ids)  # after the edges: ids grow along the graph
    scopes = scope_stack.items
    if scopes:
        node.scope = tuple(scopes)
    if cls.array_forward:
        out = cls.forward(node, *args)
    else:
        _grad_state.enabled = False  # a user forward built from ops must not record
        try:
            out = cls.forward(node, *args)
        finally:
            _grad_state.enabled = True
    if type(out) is not tuple and not node._non_diff:  # the common case: one differentiable output
        data, dev = (out._data, out._device) if isinstance(out, TensorBase) else (out, device)
        t = make_view(data, dev, args[0]) if cls.is_view else make(data, dev)
        if data.dtype.kind == "f":
            t._requires_grad = True
            t._grad_fn = node
        if node._to_save:
            _pack_saved(node, (out,), (t,))
        return t
    outs = out if type(out) is tuple else (out,)
    non_diff = node._non_diff
    wrapped = []
    for nr, o in enumerate(outs):
        data, dev = (o._data, o._device) if isinstance(o, TensorBase) else (o, device)
        t = make_view(data, dev, args[0]) if cls.is_view else make(data, dev)
        if data.dtype.kind == "f" and not any(data is (n._data if isinstance(n, TensorBase) else n) for n in non_diff):
            t._requires_grad, t._grad_fn, t._output_nr = True, node, nr
        wrapped.append(t)
    node.n_outputs = len(wrapped)
    node.output_shapes = tuple(t._data.shape for t in wrapped)
    node.output_dtypes = tuple(t._data.dtype for t in wrapped)
    if node._to_save:
        _pack_saved(node, outs, wrapped)
    return tuple(wrapped) if type(out) is tuple else wrapped[0]


def _pack_saved(node, outs, wrapped) -> None:
    """Store what forward saved, each with its version, so in-place changes are caught."""
    packed = []
    for s in node._to_save:
        if s.__class__ is _tensor_cls[0] or isinstance(s, TensorBase):
            for nr, t in enumerate(wrapped):
                if s._data is t._data:
                    break
            else:  # an input (or any other tensor)
                vc = s._vc
                packed.append((s, vc[0] if vc is not None else 0))
                continue
        else:
            for nr, o in enumerate(outs):
                if s is o:
                    t = wrapped[nr]
                    break
            else:  # a plain value (an array, a mask, a shape)
                packed.append((s, None))
                continue
        if t._grad_fn is None:  # a non-differentiable output: keep the tensor itself
            packed.append((t, 0))
        else:
            vc = version_counter(t)
            packed.append((_SavedOutput(t._data, nr, vc), vc[0]))
    node._saved = tuple(packed)
    node._to_save = ()


def _apply_observed(cls, args):
    """apply with an OpEvent published: the path taken only while someone subscribes.
    Ops run inside (by a user Function's forward, or by a subscriber) are not published."""
    events.state.muted = True
    try:
        t0 = time.perf_counter()
        out = cls.apply(*args)
        seconds = time.perf_counter() - t0
        outs = out if type(out) is tuple else (out,)
        events.publish(events.OpEvent(cls, args, outs, outs[0]._grad_fn, seconds))
    finally:
        events.state.muted = False
    return out

"""`Function`: the one mechanism by which every op runs and records the graph.

Built-in ops and user-defined Functions alike subclass `Function` with
`forward(ctx, *args)` and `backward(ctx, *grad_outputs)` staticmethods and run
through `Function.apply`, which

1. checks that all tensor arguments are on one device, and whether any of them
   requires grad,
2. when someone subscribes to the engine's events, times the op and publishes
   an OpEvent (the instrumentation point; `_apply_observed`),
3. makes the `ctx`: a graph node whose edges point at the inputs' nodes when a
   gradient is needed (`Node`), otherwise the device's shared no-op ctx,
4. runs `forward`: a built-in op (`ops.Op`) computes on backend arrays; a user
   Function's forward runs ops, with grad mode off so that they record nothing,
5. wraps the outputs as tensors; when a node was made, the outputs that can
   carry a gradient point back at it (`_wrap`).

`backward` is written with differentiable ops, so running it with grad mode on
(`create_graph=True`) records the graph of the gradient itself.
"""
from __future__ import annotations

import itertools
import threading
import weakref

from . import events
from .events import subscribers as _subscribers  # the list itself: one global load per op
from .grad_mode import state as _grad_state
from .tensor_base import TensorBase, make, make_view, tensor_types, version_counter

_node_ids = itertools.count()
_FREED = object()  # Node._saved after the graph was freed by backward


class Function:
    """Base class of every op. Subclass with staticmethods `forward(ctx, *args)`
    and `backward(ctx, *grad_outputs)`, then call `MyFunction.apply(*args)`.

    A user Function's forward receives tensors and returns tensors; it runs with grad
    mode off, and the gradients its backward returns are checked (count, type, shape).
    The built-in ops subclass `tinygrad_lab.ops.Op` instead, which sets `array_forward`.
    """

    differentiable = True  # False: outputs never require grad (comparisons, argmax, ...)
    is_view = False        # True: the output shares memory with the first argument
    array_forward = False  # True: forward computes on backend arrays and calls no ops, and backward's
    #                        gradients are right by construction (the built-in ops, ops.Op)

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("a Function subclass must implement forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("this Function does not implement backward(ctx, *grad_outputs)")

    def __call__(self, *args, **kwargs):
        """An instance is not the op: PyTorch's error, saying to call the class's apply."""
        name = type(self).__name__
        raise RuntimeError(f"Legacy autograd function with non-static forward method is deprecated. Please use "
                           f"new-style autograd function with static forward method: call {name}.apply(...) on "
                           f"the class, not {name}()(...) on an instance (forward and backward are staticmethods).")

    @classmethod
    def apply(cls, *args):
        """Run the op on `args` (tensors and plain values) and return its output tensor(s)."""
        # 1. one device for all tensor arguments; does any of them require grad?
        device, wanted = None, False
        for a in args:
            if a.__class__ in tensor_types:  # isinstance(a, TensorBase): every subclass registers itself
                if device is None:
                    device = a._device
                elif a._device is not device:
                    raise _device_mismatch(cls, args)
                if a._requires_grad:
                    wanted = True
        if device is None:
            raise TypeError(f"{cls.__name__}.apply needs at least one Tensor argument")
        # 2. someone watches: time the op and publish it (it runs again below, muted)
        if _subscribers and not events.state.muted:
            return _apply_observed(cls, args, device)
        # 3. the ctx: a graph node if a gradient will be wanted, else the shared no-op ctx
        if wanted and _grad_state.enabled and cls.differentiable:
            ctx = Node(cls, device, args)
        else:
            ctx = device._null_ctx or _new_null_ctx(device)
        # 4. forward
        out = cls.forward(ctx, *args) if cls.array_forward else _forward_unrecorded(cls, ctx, args)
        # 5. the outputs as tensors, linked to the node
        return _wrap(cls, out, ctx, args, device)


def _forward_unrecorded(cls, ctx, args):
    """A user Function's forward, built from ops: grad mode off, so that they record nothing."""
    prev, _grad_state.enabled = _grad_state.enabled, False
    try:
        return cls.forward(ctx, *args)
    finally:
        _grad_state.enabled = prev


def _wrap(cls, out, ctx, args, device):
    """forward's result (an array, a tensor, or a tuple of them) as new tensors. When ctx is a graph
    node, each floating-point output not marked non-differentiable gets it as grad_fn, and what
    forward saved is stored with the versions in-place changes are checked against."""
    if out.__class__ is tuple:
        return _wrap_several(cls, out, ctx, args, device)
    data = out
    if out.__class__ in tensor_types:  # a user Function's output (or a transfer's), taken out of its graph
        data, device = out._data, out._device
    t = make_view(data, device, args[0]) if cls.is_view else make(data, device)  # a view shares args[0]'s versions
    if ctx.__class__ is Node:
        if t._data.dtype.kind == "f" and not (ctx._non_diff and _marked(t, ctx._non_diff)):
            t._requires_grad, t._grad_fn = True, ctx
        if ctx._saved:
            ctx._pack_saved((out,), (t,))
    return t


def _wrap_several(cls, outs: tuple, ctx, args, device) -> tuple:
    wrapped = tuple([_wrap(cls, o, None, args, device) for o in outs])
    if ctx.__class__ is Node:
        ctx.n_outputs, ctx._prepares_grads = len(wrapped), True
        shapes, dtypes = [], []  # one loop, not a generator per field: max(x, dim) makes 23 Python calls, not 33
        for nr, t in enumerate(wrapped):
            data = t._data
            shapes.append(data.shape)
            dtypes.append(data.dtype)
            if data.dtype.kind == "f" and not _marked(t, ctx._non_diff):
                t._requires_grad, t._grad_fn, t._output_nr = True, ctx, nr
        ctx.output_shapes, ctx.output_dtypes = tuple(shapes), tuple(dtypes)
        if ctx._saved:
            ctx._pack_saved(outs, wrapped)
    return wrapped


def _marked(t: TensorBase, non_diff: tuple) -> bool:
    """Whether output t is one that forward marked non-differentiable (by tensor or by array)."""
    for n in non_diff:
        if t._data is (n._data if n.__class__ in tensor_types else n):
            return True
    return False


class Node:
    """A recorded op in the backward graph (PyTorch's `grad_fn`), also the `ctx`
    its Function's forward and backward receive."""

    # what most nodes keep as it is: read from the class until a node sets its own
    n_outputs = 1                           # how many outputs forward returned
    output_shapes = output_dtypes = None    # per output, set for nodes with several outputs
    _saved = ()                             # what forward saved, then packed with versions: (value, version) pairs
    _non_diff = ()                          # outputs marked non-differentiable
    _materialize = True                     # missing output gradients become zeros
    _pre_hooks = None                       # output_nr -> {key: hook}: register_hook on an output
    _retained = None                        # output_nr -> weakref of a tensor that retains its grad
    _prepares_grads = False                 # gradients arriving here go through the hooks, retain_grad and,
    #                                         for several outputs, zeros for missing ones (engine._run_prehooks);
    #                                         one test per backward step instead of three (-8 bytecodes a node)

    def __init__(self, fn: type, device, args: tuple):
        edges, shapes = [], []
        for a in args:
            if a.__class__ in tensor_types:  # isinstance(a, TensorBase)
                edges.append(edge(a))
                shapes.append(a._data.shape)
            else:
                edges.append(None)
                shapes.append(None)
        self.fn = fn                            # the Function class
        self.device = device
        self.xp = device.backend.xp             # the array module forward and backward compute with
        self.edges = tuple(edges)               # per forward argument: (node, output_nr) its gradient goes to, or None
        self.input_shapes = tuple(shapes)       # per forward argument: its shape (None for non-tensors)
        self.id = next(_node_ids)               # creation order: larger than every input node's id
        self.scope = scope_stack.items          # the nn.Modules running when it was recorded, outermost first

    # ---- the ctx API of PyTorch's autograd.Function ----
    @property
    def needs_input_grad(self) -> tuple:
        """Per forward argument: whether a gradient is wanted (it has somewhere to go)."""
        return tuple([e is not None for e in self.edges])

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or arrays) for backward; checked against in-place changes."""
        self._saved = tensors  # packed by apply once the outputs exist (_pack_saved)

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

    def _pack_saved(self, outs: tuple, wrapped: tuple) -> None:
        """Store what forward saved, each with its version now, so in-place changes are caught.
        One of forward's outputs (the object it returned: an array, or a user Function's tensor)
        is kept as its array and version counter (the tensor refers to this node).
        Written without zip or helper calls, as it runs for most recorded ops: packing Mul's two
        inputs 128 -> 85 bytecodes, about 1.2 -> 0.8 us."""
        packed = []
        for s in self._saved:
            nr = 0
            for o in outs:
                if s is o:
                    packed.append(_pack_output(wrapped[nr]))
                    break
                nr += 1
            else:  # an input (or any other tensor), or a plain value (an array, a mask, a shape)
                packed.append((s, s._vc[0] if s._vc is not None else 0) if s.__class__ in tensor_types else (s, None))
        self._saved = tuple(packed)

    def _unpack(self, value, version):
        """A saved output rebuilt as a tensor, or PyTorch's error for a modified tensor."""
        if value.__class__ is _SavedOutput:
            data, nr, vc = value.data, value.nr, value.vc
            current = vc[0]
        else:
            current = _version(value)
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
        t = make(data, self.device)  # rebuilt on demand: the node does not own its output
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
            self._pre_hooks, self._prepares_grads = {}, True
        return RemovableHandle(self._pre_hooks.setdefault(output_nr, {}), hook)

    def retain_output(self, output_nr: int, tensor) -> None:
        """Store the gradient of output `output_nr` in `tensor.grad` (retain_grad), after the hooks."""
        if self._retained is None:
            self._retained, self._prepares_grads = {}, True
        self._retained[output_nr] = weakref.ref(tensor)


def _version(t: TensorBase) -> int:
    return t._vc[0] if t._vc is not None else 0


def _pack_output(t: TensorBase) -> tuple:
    """A saved output: its array and version counter (a non-differentiable one: the tensor itself)."""
    if t._grad_fn is None:
        return (t, 0)
    vc = version_counter(t)
    return (_SavedOutput(t._data, t._output_nr, vc), vc[0])


class _SavedOutput:
    """An output saved for backward: its array and version counter, not the tensor
    (which refers to the node: holding it would make a cycle)."""

    __slots__ = ("data", "nr", "vc")

    def __init__(self, data, nr: int, vc: list):
        self.data, self.nr, self.vc = data, nr, vc


class NodeName(str):
    """A graph node's name: a string (`node.name`), and callable as PyTorch's `node.name()`."""

    __slots__ = ()

    def __call__(self) -> str:
        return str(self)


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
        return (t._accum or accumulator(t), 0)  # (made on first use: a call saved on every later edge)
    return None


def check_gradients(node, out: tuple) -> tuple:
    """The gradients a backward returned, checked: one per forward argument (extra trailing Nones are
    allowed, as in PyTorch), each None or a tensor of its input's shape; otherwise an error naming
    the function. Run for user Functions and learners' backwards (built-in ops' gradients are right
    by construction, and tested)."""
    n = len(node.edges)
    if len(out) != n:
        if not (len(out) > n and all(g is None for g in out[n:])):
            raise RuntimeError(f"function {node.name} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(out)})")
        out = out[:n]
    for i, (g, expected) in enumerate(zip(out, node.input_shapes)):
        if g is None or node.edges[i] is None:
            continue
        if not isinstance(g, TensorBase):
            raise TypeError(f"{node.name} returned a gradient of type {type(g).__name__} at index {i}; "
                            f"expected a Tensor or None")
        if g._data.shape != expected:
            raise RuntimeError(f"Function {node.name} returned an invalid gradient at index {i} - got shape "
                               f"{list(g._data.shape)} but expected shape compatible with {list(expected)}")
    return out


def check_result(out, shape: tuple, what: str) -> TensorBase:
    """A learner's piece's result (tinygrad_lab.seams): a tensor of `shape`, or an error saying what
    `what` returned instead."""
    if not isinstance(out, TensorBase) or out._data.shape != tuple(shape):
        got = list(out._data.shape) if isinstance(out, TensorBase) else type(out).__name__
        raise RuntimeError(f"{what} returned {got}: it must return a tensor of shape {list(shape)}")
    return out


# ---------------------------------------------------------------- what apply needs besides

class _AllFalse:
    """needs_input_grad of a forward that records nothing."""

    def __getitem__(self, i):
        return False


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


def _new_null_ctx(device) -> NullContext:
    """The first no-grad op on a device makes its shared ctx."""
    ctx = device._null_ctx = NullContext(device)
    return ctx


class _ScopeStack(threading.local):
    """The scopes ops run in, outermost first: nn.Module.__call__ pushes its module here, and every
    recorded node keeps them (`Node.scope`), so a graph drawn later knows which layer made it.
    Per thread (modules called in two threads do not mix), used like a list. It holds a tuple,
    replaced on every change, so that a node keeps the current one as it is, without a copy."""

    def __init__(self):
        self.items: tuple = ()

    def append(self, scope) -> None:
        self.items += (scope,)

    def pop(self):
        *rest, last = self.items
        self.items = tuple(rest)
        return last

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __iter__(self):
        return iter(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __setitem__(self, i, value) -> None:
        items = list(self.items)
        items[i] = value
        self.items = tuple(items)

    def __delitem__(self, i) -> None:
        items = list(self.items)
        del items[i]
        self.items = tuple(items)

    def __eq__(self, other) -> bool:
        return list(self.items) == (list(other.items) if isinstance(other, _ScopeStack) else other)

    __hash__ = None

    def __repr__(self) -> str:
        return repr(list(self.items))


scope_stack = _ScopeStack()


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


def _apply_observed(cls, args, device):
    """apply with an OpEvent published: the path taken only while someone subscribes.
    Ops run inside (by a user Function's forward, or by a subscriber) are not published.
    The op is timed by its device's stopwatch: on a GPU, the work (CUDA events), not the launch."""
    events.state.muted = True
    try:
        watch = device.backend.stopwatch(device.index or 0)
        out = cls.apply(*args)
        watch.stop()
        outs = out if type(out) is tuple else (out,)
        events.publish(events.OpEvent(cls, args, outs, outs[0]._grad_fn, watch))
    finally:
        events.state.muted = False
    return out

"""Function transforms, as torch.func: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap,
functional_call and stack_module_state.

A transform takes a function and returns a new one: grad(f) computes f's gradient. Here each is a thin
layer over the graph this library records as code runs (`autograd.grad`): the inputs become fresh
tensors that require grad, f runs, and a backward pass gives the answer. Transforms compose by nesting
(grad(grad(f)), jacfwd(jacrev(f)), vmap(grad(f))) because the inner one records the graph of its result,
which the outer one differentiates; only the outermost detaches what it returns (unless its own inputs
require grad: then its results stay in their graph, as any op's would). Arguments and results may be tensors or (nested) tuples, lists and dicts of them ("pytrees"):
grad of a function of a dict of parameters is a dict of gradients.

`vmap` maps f over a batch dimension with a Python loop, calling f once per sample and stacking the
results: the meaning of vectorising, and the same numbers, but not PyTorch's speed (PyTorch rewrites
each op to take the whole batch at once).
"""
from __future__ import annotations

import contextlib
import functools
import threading

from . import autograd, random
from .autograd.tensor_base import TensorBase
from .ops import movement as mv

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call",
           "stack_module_state"]


# ---------------------------------------------------------------- pytrees

def tree_leaves(tree) -> list:
    """The leaves of a tuple/list/dict tree, depth first (dicts in their order)."""
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in tree_leaves(item)]
    if isinstance(tree, dict):
        return [leaf for item in tree.values() for leaf in tree_leaves(item)]
    return [tree]


def tree_map(fn, tree):
    """tree with fn applied to every leaf."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(tree_map(fn, item) for item in tree)
    if isinstance(tree, dict):
        return {k: tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def _tracked(tree):
    """tree with each tensor replaced by one the graph starts from: a view of it when it already requires
    grad (an outer transform differentiates through it), else a detached copy that requires grad."""
    def track(t):
        if not isinstance(t, TensorBase):
            raise TypeError(f"a differentiated argument must hold Tensors, got {type(t).__name__}")
        return t.view_as(t) if t.requires_grad else t.detach().requires_grad_(True)
    return tree_map(track, tree)


_nesting = threading.local()  # how many transforms are running on this thread, around the current code


@contextlib.contextmanager
def _inside():
    _nesting.depth = _depth() + 1
    try:
        yield
    finally:
        _nesting.depth -= 1


def _depth() -> int:
    return getattr(_nesting, "depth", 0)


def _keeps_graph(inputs) -> bool:
    """Whether a transform's results stay in the graph: inside another transform (which differentiates
    them, maybe through a closure), or when its inputs require grad."""
    return _depth() > 0 or _needs_graph(inputs)


def _release(tree, keep: bool):
    """Results as they leave a transform: kept in the graph when an outer one needs them, else detached."""
    return tree if keep else tree_map(lambda t: t.detach() if isinstance(t, TensorBase) else t, tree)


def _needs_graph(tree) -> bool:
    return any(isinstance(t, TensorBase) and t.requires_grad for t in tree_leaves(tree))


def _picked(args: tuple, argnums) -> tuple:
    """(the arguments at argnums, whether argnums is one int), with PyTorch's errors."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums or any(not isinstance(n, int) or not -len(args) <= n < len(args) for n in nums):
        raise RuntimeError(f"Got argnums={argnums!r} for a function of {len(args)} positional arguments: each must "
                           f"be an int in [{-len(args)}, {len(args)})")
    return tuple(n % len(args) for n in nums), single


# ---------------------------------------------------------------- gradients

def grad_and_value(func, argnums=0, has_aux: bool = False):
    """A function returning (gradient, value) of func, whose output is a one-element tensor, with
    respect to the arguments at argnums (with has_aux, func returns (output, aux): ((gradient), (value, aux)))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums, single = _picked(args, argnums)
        keep = _keeps_graph([args[n] for n in nums])
        args = tuple(_tracked(a) if i in nums else a for i, a in enumerate(args))
        with autograd.enable_grad(), _inside():
            out, aux = _split_aux(func(*args, **kwargs), has_aux, "grad")
            if not isinstance(out, TensorBase) or out.numel() != 1:
                raise RuntimeError(f"grad: the function must return a tensor with a single element, got "
                                   f"{type(out).__name__}{' of shape ' + str(list(out.shape)) if isinstance(out, TensorBase) else ''}")
            grads = _gradients(out, [args[n] for n in nums], None)
        grads = _release(grads[0] if single else tuple(grads), keep)
        value = _release(out, keep)
        return (grads, (value, _release(aux, keep))) if has_aux else (grads, value)
    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """A function returning the gradient of func (a one-element output) at argnums (see grad_and_value)."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def _gradients(outs, wrt: list, seeds) -> list:
    """d outs / d each tree in wrt (seeded with `seeds`, or 1), as trees; zeros where unused."""
    leaves = tree_leaves(wrt)
    found = autograd.grad(outs, leaves, seeds, retain_graph=True, create_graph=True, allow_unused=True)
    found = iter([g if g is not None else leaf.detach() * 0 for g, leaf in zip(found, leaves)])
    return [tree_map(lambda _: next(found), tree) for tree in wrt]


def _split_aux(result, has_aux: bool, name: str):
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(f"{name}(f, has_aux=True): f must return a (output, aux) tuple, got {type(result).__name__}")
    return result


def vjp(func, *primals, has_aux: bool = False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives the vector-Jacobian product, one result per primal."""
    keep = _keeps_graph(primals)
    tracked = tuple(_tracked(p) for p in primals)
    with autograd.enable_grad(), _inside():
        out, aux = _split_aux(func(*tracked), has_aux, "vjp")

    def vjp_fn(cotangents):
        outs, seeds = tree_leaves(out), tree_leaves(cotangents)
        if len(outs) != len(seeds) or any(tuple(o.shape) != tuple(s.shape) for o, s in zip(outs, seeds)):
            raise RuntimeError(f"vjp_fn: the cotangents must have the outputs' structure and shapes "
                               f"{[list(o.shape) for o in outs]}, got {[list(s.shape) for s in seeds]}")
        with autograd.enable_grad():
            return _release(tuple(_gradients(outs, list(tracked), seeds)), keep or _needs_graph(cotangents))

    result = (_release(out, keep), vjp_fn)
    return result + (_release(aux, keep),) if has_aux else result


def jvp(func, primals, tangents, *, has_aux: bool = False):
    """(func(*primals), J·tangents), the Jacobian-vector product (forward mode, here by the double-vjp
    trick of autograd.functional.jvp)."""
    keep = _keeps_graph(primals) or _needs_graph(tangents)
    aux_box = []

    def plain(*args):
        out, aux = _split_aux(func(*args), has_aux, "jvp")
        aux_box.append(aux)
        return out
    with _inside():
        out, product = autograd.functional.jvp(plain, tuple(primals), tuple(tangents), create_graph=True)
    result = (_release(out, keep), _release(product, keep))
    return result + (_release(aux_box[0], keep),) if has_aux else result


# ---------------------------------------------------------------- Jacobians

def _jacobian_transform(func, argnums, has_aux: bool, strategy: str):
    @functools.wraps(func)
    def wrapper(*args):
        nums, single = _picked(args, argnums)
        keep = _keeps_graph([args[n] for n in nums])
        aux_box = []

        def of_picked(*picked):
            full = list(args)
            for n, value in zip(nums, picked):
                full[n] = value
            out, aux = _split_aux(func(*full), has_aux, "jacrev" if strategy == "reverse-mode" else "jacfwd")
            aux_box.append(aux)
            return out
        inputs = args[nums[0]] if single else tuple(args[n] for n in nums)
        with _inside():
            jac = autograd.functional.jacobian(of_picked, inputs, create_graph=True, strategy=strategy)
        jac = _release(jac, keep)
        return (jac, _release(aux_box[0], keep)) if has_aux else jac
    return wrapper


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None):
    """A function returning func's Jacobian at argnums, row by row (reverse mode: one vjp per output
    element); for output shape O and input shape I, a tensor of shape O + I."""
    return _jacobian_transform(func, argnums, has_aux, "reverse-mode")


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """A function returning func's Jacobian at argnums, column by column (forward mode: one jvp per
    input element)."""
    return _jacobian_transform(func, argnums, has_aux, "forward-mode")


def hessian(func, argnums=0):
    """A function returning the second derivatives of func (a one-element output): jacfwd(jacrev(func))."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------- vmap

def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """func mapped over a batch dimension: dim in_dims of each argument (None: the same for every sample;
    a tuple gives one entry per argument, a tree per argument's tree), the results stacked along out_dims.
    Computed with a loop over the samples. randomness: "error" refuses a func that draws random numbers,
    "different" gives each sample its own draws, "same" the same draws for every sample."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dims = _in_dims(in_dims, args)
        size = _batch_size(args, dims)
        state = random.get_rng_state()
        outs = []
        for b in range(size):
            if randomness == "same":
                random.set_rng_state(state)
            outs.append(func(*_sample(args, dims, b), **kwargs))
            if randomness == "error" and not bool((random.get_rng_state() == state).all()):
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                                   "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        return _stack(outs, out_dims)
    return wrapper


def _in_dims(in_dims, args: tuple) -> list:
    """One in_dims tree per argument."""
    if isinstance(in_dims, int) or in_dims is None:
        return [in_dims] * len(args)
    if not isinstance(in_dims, (tuple, list)) or len(in_dims) != len(args):
        raise ValueError(f"vmap: in_dims is not compatible with the structure of inputs: expected an int, None or "
                         f"one entry per argument ({len(args)}), got {in_dims!r}")
    return list(in_dims)


def _leaf_dims(tree, dim, name: str = "in_dims") -> list:
    """The dim of each leaf of tree: an int or None covers the whole tree, a tree of dims gives one each."""
    leaves = tree_leaves(tree)
    dims = [dim] * len(leaves) if dim is None or isinstance(dim, int) else tree_leaves(dim)
    if len(dims) != len(leaves):
        raise ValueError(f"vmap: {name} {dim!r} does not match the structure of "
                         f"{'its argument' if name == 'in_dims' else 'the outputs'}")
    return dims


def _pairs(args: tuple, dims: list) -> list:
    """(leaf, its in_dim) for every leaf of every argument."""
    return [pair for arg, dim in zip(args, dims) for pair in zip(tree_leaves(arg), _leaf_dims(arg, dim))]


def _batch_size(args: tuple, dims: list) -> int:
    sizes = set()
    for leaf, dim in _pairs(args, dims):
        if dim is None:
            continue
        if not isinstance(leaf, TensorBase):
            raise ValueError(f"vmap: an in_dim of {dim} was given for an input of type {type(leaf).__name__}: only "
                             f"Tensors are mapped (use None for it)")
        sizes.add(leaf.shape[dim])
    if len(sizes) != 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sorted(sizes)}" if sizes else "vmap: at least one input must be mapped (an in_dim not None)")
    return sizes.pop()


def _sample(args: tuple, dims: list, b: int) -> tuple:
    """The arguments of sample b: each mapped tensor indexed at b along its in_dim."""
    out = []
    for arg, dim in zip(args, dims):
        leaf_dims = iter(_leaf_dims(arg, dim))
        out.append(tree_map(lambda t: _at(t, next(leaf_dims), b), arg))
    return tuple(out)


def _at(t, dim, b: int):
    """Leaf t of sample b: t indexed at b along dim, or t itself where dim is None (not mapped)."""
    return t if dim is None else mv.select(t, dim, b)


def _stack(outs: list, out_dims):
    """The per-sample results stacked into one tree, each tensor along its out_dim."""
    first = outs[0]
    leaves = [tree_leaves(o) for o in outs]
    dims = _leaf_dims(first, out_dims, "out_dims")
    stacked = []
    for k, dim in enumerate(dims):
        column = [ls[k] for ls in leaves]
        if not all(isinstance(t, TensorBase) for t in column):
            raise ValueError(f"vmap: the function must return Tensors, got {type(column[0]).__name__}")
        stacked.append(mv.stack(column, dim))
    it = iter(stacked)
    return tree_map(lambda _: next(it), first)


# ---------------------------------------------------------------- modules as functions

def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """module(*args, **kwargs) with its parameters and buffers replaced, for this call only, by the tensors
    in the dict(s) (by dotted name, as in named_parameters()); the module is left as it was. With
    tie_weights, a parameter shared under several names is replaced under all of them."""
    dicts = parameter_and_buffer_dicts if isinstance(parameter_and_buffer_dicts, (tuple, list)) else (
        parameter_and_buffer_dicts,)
    given = {}
    for d in dicts:
        repeated = set(given) & set(d)
        if repeated:
            raise ValueError(f"functional_call: {sorted(repeated)} appeared in multiple dictionaries")
        given.update(d)
    if strict:
        expected = {n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()}
        if set(given) != expected:
            raise RuntimeError(f"functional_call (strict): missing {sorted(expected - set(given))}, unexpected "
                               f"{sorted(set(given) - expected)}")
    args = args if isinstance(args, tuple) else () if args is None else (args,)
    saved = [_swap(module, name, value) for name, value in given.items()]
    if tie_weights:  # a parameter registered under two names (tied weights) is replaced under both
        saved += _tied(module, {id(old): value for (_, _, old), value in zip(saved, given.values()) if old is not None})
    try:
        return module(*args, **(kwargs or {}))
    finally:
        for registry, name, old in reversed(saved):
            registry[name] = old


def _swap(module, dotted: str, value) -> tuple:
    """Put `value` in place of the parameter or buffer `dotted`; returns how to undo it."""
    path, _, name = dotted.rpartition(".")
    owner = module.get_submodule(path)
    for registry in (owner._parameters, owner._buffers):
        if name in registry:
            old, registry[name] = registry[name], value
            return registry, name, old
    raise AttributeError(f"functional_call: {type(module).__name__} has no parameter or buffer named {dotted!r}")


def _tied(module, replaced: dict) -> list:
    """Replace, everywhere in module, the parameters and buffers that are one of the replaced objects
    (by identity) and still there under another name; returns how to undo it."""
    undo = []
    for owner in module.modules():
        for registry in (owner._parameters, owner._buffers):
            for name, current in list(registry.items()):
                if id(current) in replaced:
                    undo.append((registry, name, current))
                    registry[name] = replaced[id(current)]
    return undo


def stack_module_state(models) -> tuple:
    """(parameters, buffers) of same-shaped models stacked along a new first dim: ensembles for vmap.
    The stacked parameters are new leaves that require grad."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    names = [n for n, _ in models[0].named_parameters()]
    params = {n: mv.stack([dict(m.named_parameters())[n].detach() for m in models]).requires_grad_(True)
              for n in names}
    buffers = {n: mv.stack([dict(m.named_buffers())[n] for m in models]) for n, _ in models[0].named_buffers()}
    return params, buffers

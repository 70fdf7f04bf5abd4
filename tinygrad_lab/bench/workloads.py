"""The workloads: what is timed, on which sizes, by which implementations, against which targets.

A workload builds a zero-argument *step* for one runtime from deterministic host data:
`explicit(rt, host, variant)` against `rt.xp` for the array runtimes (NumPy, CuPy: the floors)
and `autograd(rt, host, variant)` against `rt.lib` for the tensor runtimes (tinygrad_lab and
PyTorch run the very same PyTorch-shaped code). Each step returns its result, so that all
implementations can be cross-checked before anything is timed.

Steps are kept as lean as the libraries allow (C-level `functools.partial` and bound methods
where possible), so the harness adds the same small call cost to every library.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, ContextManager

import numpy as np

from .explicit import CNN, MLP, ExplicitNet, init_weights, module_net
from .runtimes import CUPY, FLOORS, NUMPY, TINYGRAD, TORCH, Runtime
from .timer import Step, fmt_time

Host = dict[str, np.ndarray]
Builder = Callable[[Runtime, Host, str], Step]


@dataclass(frozen=True)
class Impl:
    """One timed implementation: a record's `impl` name, the runtime it runs on, and a context
    entered around each of its samples (None: nothing)."""

    name: str
    runtime: str
    around: Callable[[], ContextManager[Any]] | None = None


def default_impls(device: str) -> list[Impl]:
    """The explicit floor of the device first, then tinygrad_lab and PyTorch."""
    floor = FLOORS.get(device)
    return [Impl(name, name) for name in ((floor,) if floor else ()) + (TINYGRAD, TORCH)]


@dataclass(frozen=True)
class Target:
    """A speed goal from the issue for one implementation on one device; reported, never enforced.

    `limit` is seconds, or with `ref` = (impl, device) a ratio to that implementation's median
    in the same run (a limit below 1 reads "at least 1/limit times faster than ref")."""

    impl: str
    device: str
    limit: float
    ref: tuple[str, str] | None = None
    min_size: int = 0
    max_size: int | None = None

    def applies(self, impl: str, device: str, size: int) -> bool:
        return (impl, device) == (self.impl, self.device) and self.min_size <= size <= (self.max_size or size)

    def goal(self) -> str:
        if self.ref is None:
            return f"≤{fmt_time(self.limit)}"
        ref_impl, ref_device = self.ref
        ref = ref_impl if ref_device == self.device else f"{ref_impl}/{ref_device}"
        return f"≤{self.limit:g}× {ref}" if self.limit >= 1 else f"≥{1 / self.limit:g}× faster than {ref}"

    def met(self, median_s: float, medians: dict[tuple[str, str], float]) -> bool | None:
        """Whether `median_s` meets the goal; None when the reference was not measured."""
        if self.ref is None:
            return median_s <= self.limit
        ref = medians.get(self.ref)
        return None if ref is None else median_s <= self.limit * ref


@dataclass(frozen=True)
class Workload:
    """What is timed (see the module docstring); `size` means `size_label`, `shape(size)` says it."""

    name: str
    title: str
    size_label: str
    shape: Callable[[int], str]
    sizes: tuple[int, ...]
    quick_sizes: tuple[int, ...]
    data: Callable[[int, np.dtype, np.random.Generator], Host]
    explicit: Builder
    autograd: Builder
    dtypes: tuple[str, ...] = ("float32",)
    variants: tuple[str, ...] = ("",)
    targets: tuple[Target, ...] = ()
    impls: Callable[[str], list[Impl]] = default_impls
    verify: Callable[[Runtime, Any, Host, str], str | None] | None = None  # extra check: an error or None
    rtol: dict[str, float] = field(default_factory=lambda: {"float32": 1e-4, "float64": 1e-10})

    def build(self, rt: Runtime, host: Host, variant: str) -> Step:
        """The step of this workload on runtime `rt`."""
        return (self.explicit if rt.kind == "array" else self.autograd)(rt, host, variant)

    def floor(self, device: str) -> str:
        """The name of the implementation that ratios on `device` are taken to."""
        return self.impls(device)[0].name


# --------------------------------------------------------------------------- shared data helpers


def normal(rng: np.random.Generator, shape: int | tuple[int, ...], dtype: np.dtype, scale: float = 1.0) -> np.ndarray:
    """Normal values of `dtype`, drawn in that dtype where NumPy can: a (81920, 8192) float32 matrix
    must not pass through a float64 temporary twice its size."""
    if dtype in (np.float32, np.float64):
        out = rng.standard_normal(shape, dtype=dtype)
    else:
        out = rng.standard_normal(shape).astype(dtype)
    if scale != 1.0:
        out *= scale
    return out


def vectors(names: str) -> Callable[[int, np.dtype, np.random.Generator], Host]:
    """Data: one standard-normal vector of `size` elements per letter of `names`."""
    return lambda size, dtype, rng: {k: normal(rng, size, dtype) for k in names}


def matrices(names: str) -> Callable[[int, np.dtype, np.random.Generator], Host]:
    """Data: one normal (size, size) matrix per letter of `names`, scaled so products stay of unit size."""
    return lambda n, dtype, rng: {k: normal(rng, (n, n), dtype, 1 / math.sqrt(n)) for k in names}


def put_all(rt: Runtime, host: Host, keys: str) -> list[Any]:
    """The host arrays named by the letters of `keys`, on `rt`'s device."""
    return [rt.put(host[k]) for k in keys]


def requiring_grad(rt: Runtime, host: Host, keys: str) -> list[Any]:
    """Leaf tensors that require grad (steps read `.grad` from them and reset it)."""
    return [rt.put(host[k]).requires_grad_() for k in keys]


def take_grads(leaves: list[Any]) -> list[Any]:
    """The leaves' gradients, each leaf reset to no gradient for the next step."""
    grads = [t.grad for t in leaves]
    for t in leaves:
        t.grad = None
    return grads


# --------------------------------------------------------------------------- least squares


def lsq_data(d: int, dtype: np.dtype, rng: np.random.Generator) -> Host:
    """A (10d, d) matrix scaled so A x stays of unit size, a target y and a start point x."""
    return {"A": normal(rng, (10 * d, d), dtype, 1 / math.sqrt(d)), "y": normal(rng, 10 * d, dtype),
            "x": normal(rng, d, dtype)}


def lsq_explicit(rt: Runtime, host: Host, variant: str) -> Step:
    """The hand-derived gradient -2 A^T (y - A x) (parenthesised so -2 scales a vector, not A)."""
    a, y, x = put_all(rt, host, "Ayx")
    return lambda: -2.0 * (a.T @ (y - a @ x))


def lsq_autograd(rt: Runtime, host: Host, variant: str) -> Step:
    """Forward and backward through autograd; x.grad is read and reset every step."""
    a, y = put_all(rt, host, "Ay")
    leaves = requiring_grad(rt, host, "x")
    x = leaves[0]

    def step() -> Any:
        ((y - a @ x) ** 2).sum().backward()
        return take_grads(leaves)[0]

    return step


# --------------------------------------------------------------------------- matmul


def matmul_step(rt: Runtime, host: Host, variant: str) -> Step:
    """a @ b: the same call for arrays and tensors."""
    return partial(operator.matmul, *put_all(rt, host, "ab"))


# --------------------------------------------------------------------------- elementwise chain and dispatch

CHAIN = "(a*b+c).relu().sum() fwd+bwd"


def chain_explicit(rt: Runtime, host: Host, variant: str) -> Step:
    """Forward and the hand-derived gradient of z = relu(a*b + c).sum()."""
    a, b, c = put_all(rt, host, "abc")
    xp = rt.xp

    def step() -> tuple[Any, ...]:
        h = a * b + c
        z = xp.maximum(h, 0).sum()
        mask = (h > 0).astype(h.dtype)
        return z, mask * b, mask * a, mask

    return step


def chain_autograd(rt: Runtime, host: Host, variant: str) -> Step:
    """The same through autograd: the fixed cost of recording a graph and walking it back."""
    leaves = requiring_grad(rt, host, "abc")
    a, b, c = leaves

    def step() -> tuple[Any, ...]:
        z = (a * b + c).relu().sum()
        z.backward()
        return (z.detach(), *take_grads(leaves))

    return step


# name -> (tensor step from a, b; array step from xp, a, b)
DISPATCH_OPS: dict[str, tuple[Callable[[Any, Any], Step], Callable[[Any, Any, Any], Step]]] = {
    "a + b": (lambda a, b: partial(operator.add, a, b), lambda xp, a, b: partial(operator.add, a, b)),
    "a * b": (lambda a, b: partial(operator.mul, a, b), lambda xp, a, b: partial(operator.mul, a, b)),
    "a.exp()": (lambda a, b: a.exp, lambda xp, a, b: partial(xp.exp, a)),
    "a.relu()": (lambda a, b: a.relu, lambda xp, a, b: partial(xp.maximum, a, 0)),
    "a.sum()": (lambda a, b: a.sum, lambda xp, a, b: a.sum),
    "a @ a": (lambda a, b: partial(operator.matmul, a, a), lambda xp, a, b: partial(operator.matmul, a, a)),
}


def dispatch_explicit(rt: Runtime, host: Host, variant: str) -> Step:
    """The variant's op on arrays (the events workload also times the whole chain)."""
    if variant == CHAIN:
        return chain_explicit(rt, host, variant)
    return DISPATCH_OPS[variant][1](rt.xp, *put_all(rt, host, "ab"))


def dispatch_autograd(rt: Runtime, host: Host, variant: str) -> Step:
    """The variant's op on tensors that need no grad (or the whole chain, for events)."""
    if variant == CHAIN:
        return chain_autograd(rt, host, variant)
    return DISPATCH_OPS[variant][0](*put_all(rt, host, "ab"))


# --------------------------------------------------------------------------- training steps

LR, MOMENTUM, CLASSES = 0.01, 0.9, 10


def training_data(input_shape: tuple[int, ...], spec: tuple) -> Callable[[int, np.dtype, np.random.Generator], Host]:
    """Data: a batch of `size` inputs of `input_shape`, labels, and the network's initial weights."""

    def data(batch: int, dtype: np.dtype, rng: np.random.Generator) -> Host:
        host = {"x": normal(rng, (batch, *input_shape), dtype),
                "y": rng.integers(0, CLASSES, size=batch)}
        host.update({f"w{i}": w for i, w in enumerate(init_weights(spec, rng, dtype))})
        return host

    return data


def weights_of(host: Host) -> list[np.ndarray]:
    """The initial weights made by `training_data`, in parameter order."""
    return [host[f"w{i}"] for i in range(sum(k.startswith("w") for k in host))]


def training_explicit(spec: tuple) -> Builder:
    """The same SGD step, forward and backward written by hand (`explicit.ExplicitNet`)."""

    def build(rt: Runtime, host: Host, variant: str) -> Step:
        net = ExplicitNet(rt.xp, spec, [rt.put(w, copy=True) for w in weights_of(host)])
        x, y = put_all(rt, host, "xy")

        def step() -> tuple[Any, ...]:
            loss, grads = net.sgd_step(x, y, LR, MOMENTUM)
            return (loss, *grads)

        return step

    return build


def training_autograd(spec: tuple) -> Builder:
    """One SGD step (momentum 0.9) with cross-entropy: `zero_grad, forward, backward, step`."""

    def build(rt: Runtime, host: Host, variant: str) -> Step:
        lib = rt.lib
        model = module_net(lib.nn, spec)
        model.load_state_dict(dict(zip(model.state_dict(), (lib.from_numpy(w.copy()) for w in weights_of(host)))))
        model.to(rt.device)
        params = list(model.parameters())
        opt = lib.optim.SGD(params, lr=LR, momentum=MOMENTUM)
        x, y = put_all(rt, host, "xy")
        cross_entropy = lib.nn.functional.cross_entropy

        def step() -> tuple[Any, ...]:
            opt.zero_grad()
            loss = cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return (loss.detach(), *(p.grad for p in params))

        return step

    return build


# --------------------------------------------------------------------------- NumPy conversion

FROM_NUMPY, TO_NUMPY = "from_numpy", "to numpy"


def interop_step(rt: Runtime, host: Host, variant: str) -> Step:
    """Host array -> runtime (`from_numpy`, and `.to(device)` off the CPU), or back (`.numpy()`).
    On the CPU both are views for every library; the NumPy floor is `np.asarray`, a no-op."""
    if variant == FROM_NUMPY:
        return partial(rt.upload, host["a"])
    return partial(rt.download, rt.put(host["a"]))


def interop_verify(rt: Runtime, out: Any, host: Host, variant: str) -> str | None:
    """On the CPU a conversion must share memory with the host array: a copy is a failure."""
    if rt.device != "cpu":
        return None
    arr = out if isinstance(out, np.ndarray) else rt.download(out)
    return None if np.shares_memory(arr, host["a"]) else f"{variant} copied the data; it must be a view on the CPU"


# --------------------------------------------------------------------------- instrumentation point


def _noop(event: Any) -> None:
    """The subscriber timed by the `events` workload: does nothing, so what is timed is publishing."""


def subscribed_noop() -> ContextManager[Any]:
    """A subscription of the no-op callback; leaving the `with` block unsubscribes."""
    from tinygrad_lab.autograd.events import subscribe

    return subscribe(_noop)


def events_impls(device: str) -> list[Impl]:
    """tinygrad_lab alone (the floor) and with one no-op subscriber to its event stream."""
    return [Impl(TINYGRAD, TINYGRAD), Impl(TINYGRAD + "+subscriber", TINYGRAD, subscribed_noop)]


# --------------------------------------------------------------------------- the registry


def _elements(n: int) -> str:
    return f"({n},)"


def _square(n: int) -> str:
    return f"{n}x{n}"


WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload(
        "lsq", "gradient of ||y - A x||^2, A of shape (10d, d)", "d", lambda d: f"{10 * d}x{d}",
        sizes=(64, 256, 1024, 2048), quick_sizes=(64, 1024), data=lsq_data,
        explicit=lsq_explicit, autograd=lsq_autograd, dtypes=("float32", "float64"),
        targets=(Target(TINYGRAD, "cpu", 1.05, ref=(NUMPY, "cpu"), min_size=1024),
                 Target(TINYGRAD, "cpu", 40e-6, max_size=64),
                 Target(TINYGRAD, "cuda", 1.1, ref=(CUPY, "cuda"), min_size=1024),
                 Target(TINYGRAD, "cuda", 0.1, ref=(TINYGRAD, "cpu"), min_size=4096, max_size=4096),
                 Target(TINYGRAD, "cuda", 1.2, ref=(TORCH, "cuda"), min_size=1024))),
    Workload(
        "matmul", "a @ b, square matrices, forward", "n", _square,
        sizes=(64, 256, 1024), quick_sizes=(64, 256), data=matrices("ab"),
        explicit=matmul_step, autograd=matmul_step),
    Workload(
        "elementwise", "z = (a*b + c).relu().sum(), forward and backward", "elements", _elements,
        sizes=(4, 4096, 1 << 20), quick_sizes=(4, 65536), data=vectors("abc"),
        explicit=chain_explicit, autograd=chain_autograd,
        targets=(Target(TINYGRAD, "cpu", 20e-6, max_size=4),)),
    Workload(
        "dispatch", "one op on a tiny tensor, forward only: the fixed cost of an op", "elements", _elements,
        sizes=(4,), quick_sizes=(4,), data=vectors("ab"), variants=tuple(DISPATCH_OPS),
        explicit=dispatch_explicit, autograd=dispatch_autograd,
        targets=(Target(TINYGRAD, "cpu", 2e-6, max_size=4),)),
    Workload(
        "mlp", "SGD step (momentum) of an MLP 64-128-10 with cross-entropy", "batch", lambda n: f"{n}x64",
        sizes=(64,), quick_sizes=(64,), data=training_data((64,), MLP),
        explicit=training_explicit(MLP), autograd=training_autograd(MLP),
        targets=(Target(TINYGRAD, "cpu", 0.20e-3, min_size=64, max_size=64),)),
    Workload(
        "cnn", "SGD step of a CNN on 8x8 images: 2x (conv3x3 + relu + maxpool) + linear", "batch",
        lambda n: f"{n}x1x8x8", sizes=(64,), quick_sizes=(64,), data=training_data((1, 8, 8), CNN),
        explicit=training_explicit(CNN), autograd=training_autograd(CNN),
        targets=(Target(TINYGRAD, "cpu", 1.5, ref=(TORCH, "cpu"), min_size=64, max_size=64),)),
    Workload(
        "interop", "NumPy conversion: from_numpy(arr) and t.numpy() (transfers off the CPU)", "n", _square,
        sizes=(1000,), quick_sizes=(1000,), data=matrices("a"), variants=(FROM_NUMPY, TO_NUMPY),
        explicit=interop_step, autograd=interop_step, verify=interop_verify,
        targets=(Target(TINYGRAD, "cpu", 1e-6),)),
    Workload(
        "events", "cost of the instrumentation point: ops with no subscriber vs one no-op subscriber",
        "elements", _elements, sizes=(4,), quick_sizes=(4,), data=vectors("abc"),
        variants=(*DISPATCH_OPS, CHAIN), explicit=dispatch_explicit, autograd=dispatch_autograd,
        impls=events_impls),
)}

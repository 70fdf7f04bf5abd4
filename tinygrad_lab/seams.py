"""Seams: for the length of a `with` block, a learner's function replaces one piece of the engine,
and the real engine runs it.

    from tinygrad_lab import seams

    def my_accumulate(total, grad):              # two gradients for one output: add them
        return total + grad

    with seams.replace("accumulate", my_accumulate):
        loss.backward()                          # the engine adds gradients with my_accumulate
    seams.reference("accumulate")                # the engine's own, one call away
    seams.names()                                # every seam there is
    seams.replaced()                             # the replacements in force in this thread

The seams (`seams.get(name).doc` says more):

    "Mul.backward" ...   an op's backward, any built-in op (`seams.replace(Mul, fn)` works too):
                         backward(ctx, *grad_outputs) -> one gradient (or None) per forward argument
    "unbroadcast"        sum_to(grad, shape) -> grad summed down to `shape`
    "backward_order"     order(roots) -> every node reachable from the root nodes, each before its inputs
    "accumulate"         accumulate(total, grad) -> the two gradients for one output, combined
    "SGD.step" ...       an optimizer's step, any optimizer (`seams.replace(SGD, fn)` works too):
                         step(optimizer, closure=None)
    "batch"              fetch_batch(dataset, indices, collate_fn) -> the DataLoader's batch
    "im2col"             im2col(x, geo) -> the columns conv multiplies by its weight

`tinygrad_lab.graph.compare.compare(loss, seam, fn)` runs the reference and a learner's piece side
by side on one graph and names the first node where their gradients differ, with the numbers.

What a learner's piece returns is checked as it runs (a backward's gradients as a user Function's,
unbroadcast's and accumulate's shapes, ...), so a mistake is named where it happens, not met later
as a NumPy error. While any replacement is in force, backward passes run the engine's step by step
loop (`autograd.engine.backward_steps`, the one the stepper drives), not its fast driver.

How it works: a seam is an attribute, a class's method or a module's function, that the engine
calls as usual. While a replacement is in force in some thread, that attribute is a small
dispatcher that calls the replacement of the calling thread, or the reference in a thread that
has none (replacements are per thread, like grad mode). When the last replacement ends the
reference is put back, so a seam nobody replaces costs nothing: the engine calls the reference
directly. Replacements nest: the innermost is in force. Inside a replacement the seam is the
engine's own again, so a learner's function may call the engine's version by its usual name
(`broadcast.sum_to` inside a learner's unbroadcast) without recursing into itself.
"""
from __future__ import annotations

import difflib
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

_MISSING = object()


class Seam:
    """One replaceable piece: the attribute `attr` of `owner` (a class or a module).

    name     how it is named in `replace`
    doc      what the piece computes and the signature a replacement must have
    adapt    wraps a replacement before it runs (e.g. checks of what a learner's backward returns)
    """

    def __init__(self, name: str, owner: Any, attr: str, doc: str, adapt: Callable | None = None):
        self.name, self.owner, self.attr, self.doc, self.adapt = name, owner, attr, doc, adapt
        self.live = 0           # replacements in force, in all threads together
        self._stored = None     # the attribute as the owner held it, while the dispatcher stands in
        self._reference = None  # the reference, as called, while the dispatcher stands in

    @property
    def reference(self) -> Callable:
        """The engine's own version of the piece."""
        return self._reference if self.live else getattr(self.owner, self.attr)

    def _install(self) -> None:
        """Put the dispatcher in the owner's place (the first replacement anywhere)."""
        self._stored = vars(self.owner).get(self.attr, _MISSING)
        self._reference = getattr(self.owner, self.attr)
        dispatcher = _dispatcher(self.name, self._reference)
        setattr(self.owner, self.attr, staticmethod(dispatcher) if isinstance(self._stored, staticmethod)
                else dispatcher)

    def _uninstall(self) -> None:
        """Give the owner its own attribute back (the last replacement ended)."""
        if self._stored is _MISSING:
            delattr(self.owner, self.attr)  # it was inherited
        else:
            setattr(self.owner, self.attr, self._stored)
        self._stored = self._reference = None

    def __repr__(self) -> str:
        return f"<Seam {self.name!r}: {getattr(self.owner, '__name__', self.owner)}.{self.attr}>"


_seams: dict[str, Seam] = {}
live = 0  # replacements in force, all seams and threads together (the engine's fast driver checks it)
_by_owner: dict[Any, str] = {}  # a class -> the name of its seam (Mul -> "Mul.backward")
_lock = threading.Lock()        # installing and removing dispatchers


class _Replaced(threading.local):
    def __init__(self):
        self.stacks: dict[str, list] = {}  # seam name -> this thread's replacements, innermost last
        self.running: set = set()          # the seams whose replacement is running in this thread


_replaced = _Replaced()


def _dispatcher(name: str, reference: Callable) -> Callable:
    def dispatch(*args, **kwargs):
        stack = _replaced.stacks.get(name)
        if not stack or name in _replaced.running:  # inside a replacement, the seam is the engine's own
            return reference(*args, **kwargs)
        _replaced.running.add(name)
        try:
            return stack[-1](*args, **kwargs)
        finally:
            _replaced.running.discard(name)

    dispatch.__name__ = getattr(reference, "__name__", name)
    dispatch.__doc__ = getattr(reference, "__doc__", None)
    dispatch.__wrapped__ = reference
    return dispatch


def register(name: str, owner: Any, attr: str, doc: str, adapt: Callable | None = None) -> Seam:
    """Make `owner.attr` replaceable under `name`. The first registration of a name wins (a learner's
    class copied into a notebook does not take a built-in op's seam); it is returned."""
    seam = _seams.get(name)
    if seam is None:
        seam = _seams[name] = Seam(name, owner, attr, doc, adapt)
        if isinstance(owner, type):
            _by_owner.setdefault(owner, name)
    return seam


def get(target: str | type) -> Seam:
    """The seam named `target`, or the seam of class `target` (an op's backward, an optimizer's step)."""
    name = _by_owner.get(target) if isinstance(target, type) else target
    seam = _seams.get(name) if name is not None else None
    if seam is None:
        what = target.__name__ if isinstance(target, type) else repr(target)
        close = difflib.get_close_matches(str(name or what), list(_seams), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else "; seams.names() lists them"
        raise KeyError(f"no seam {what}{hint}")
    return seam


def names() -> list[str]:
    """The names of every seam, sorted."""
    return sorted(_seams)


def reference(target: str | type) -> Callable:
    """The engine's own version of a seam's piece, e.g. to run beside a learner's."""
    return get(target).reference


def current(target: str | type) -> Callable:
    """What runs for this seam in this thread now: the innermost replacement, or the reference."""
    seam = get(target)
    stack = _replaced.stacks.get(seam.name)
    return stack[-1] if stack else seam.reference


def replaced() -> dict[str, Callable]:
    """The seams replaced in this thread now: name -> the innermost replacement, as it was given to
    `replace` (e.g. for a stepper made inside a `with` block to keep running the learner's pieces)."""
    return {name: getattr(stack[-1], "__wrapped__", stack[-1]) if _seams[name].adapt is not None else stack[-1]
            for name, stack in _replaced.stacks.items() if stack}


def in_force(*targets: str | type) -> bool:
    """Whether any of these seams is replaced now, in any thread."""
    return any(get(t).live for t in targets)


def checked(check: Callable) -> Callable:
    """An `adapt` for register: the learner's function, then `check(result, *args)`, which returns the
    result (maybe normalized) or raises an error saying what is wrong with it."""
    def adapt(fn):
        def run(*args, **kwargs):
            return check(fn(*args, **kwargs), *args)

        run.__wrapped__ = fn
        return run

    return adapt


@contextmanager
def replace(target: str | type, fn: Callable) -> Iterator[Seam]:
    """Within the `with` block, in this thread, the engine runs `fn` for seam `target`."""
    seam = get(target)
    if not callable(fn):
        raise TypeError(f"seams.replace({seam.name!r}, ...) needs a function, got {type(fn).__name__}")
    global live
    run = seam.adapt(fn) if seam.adapt is not None else fn
    with _lock:
        if seam.live == 0:
            seam._install()
        seam.live += 1
        live += 1
    stack = _replaced.stacks.setdefault(seam.name, [])
    stack.append(run)
    try:
        yield seam
    finally:
        stack.pop()
        with _lock:
            seam.live -= 1
            live -= 1
            if seam.live == 0:
                seam._uninstall()

"""L-BFGS: a quasi-Newton method that builds its step from the last few gradient differences.

Unlike the other optimizers, one `step(closure)` runs up to `max_iter` iterations and calls the
closure (which must zero the gradients, compute the loss, call backward and return the loss)
as often as it needs:

    opt = optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
    def closure():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        return loss
    opt.step(closure)

The algorithm and its defaults are PyTorch's (itself after Mark Schmidt's minFunc), step for step.
Deviation: the scalars of the method (directional derivatives, step lengths, the history's
1/(yᵀs)) are Python floats, so with float32 parameters they are computed in float64 where
PyTorch uses float32 tensors; the results agree to float32 precision.
"""
from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import no_grad
from ..ops import movement as mv
from ._per_parameter import check
from .optimizer import Optimizer, lr_of


def _dot(a, b) -> float:
    return (a @ b).item()


def _max_abs(t) -> float:
    return t.abs().max().item()


class LBFGS(Optimizer):
    r"""L-BFGS (Nocedal, 1980; Liu & Nocedal, 1989).

    Each iteration, with gradient g (all parameters flattened into one vector):

        d = -H·g          H approximates the inverse Hessian from the last history_size pairs
                          s = θ_{k+1} - θ_k, y = g_{k+1} - g_k (the two-loop recursion); -g at first
        θ = θ + t·d       t = lr, or found by a strong-Wolfe line search (line_search_fn="strong_wolfe")

    It stops when |g| ≤ tolerance_grad everywhere, when the step or the change of the loss falls
    below tolerance_change, or after max_iter iterations / max_eval closure calls (default
    max_iter·5/4). Only one parameter group is supported (as in PyTorch).
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        check(0.0 <= lr, "learning rate", lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                                  "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                                  "history_size": history_size, "line_search_fn": line_search_fn})
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    @property
    def _params(self) -> list:
        return self.param_groups[0]["params"]

    # ------------------------------------------------------------ the parameters as one vector
    def _flat_grad(self):
        """Every parameter's gradient, flattened and joined (zeros for a parameter without one): a copy."""
        return mv.cat([(p.grad if p.grad is not None else p.new_zeros(p.shape)).reshape(-1) for p in self._params])

    def _add_grad(self, step: float, direction) -> None:
        """θ = θ + step·direction, each parameter taking its slice of the flat direction."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset:offset + n].view_as(p), alpha=step)
            offset += n

    def _directional_evaluate(self, closure, start: list, step: float, direction):
        """The loss and flat gradient at θ + step·direction, then θ back to `start`."""
        self._add_grad(step, direction)
        loss = float(self._evaluate(closure))
        flat_grad = self._flat_grad()
        for p, value in zip(self._params, start):
            p.copy_(value)
        return loss, flat_grad

    # ------------------------------------------------------------ one step(closure)
    def step(self, closure):
        """Run up to max_iter L-BFGS iterations; returns the loss the closure gave first."""
        if not callable(closure):
            raise TypeError("LBFGS.step needs a closure: a function that zeroes the gradients, computes the loss, "
                            "calls backward() and returns the loss")
        group = self.param_groups[0]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = self._evaluate(closure)
        state["func_evals"] += 1
        with no_grad():
            flat_grad = self._flat_grad()
            if _max_abs(flat_grad) > group["tolerance_grad"]:
                self._iterate(closure, group, state, float(orig_loss), flat_grad)
        return orig_loss

    def _iterate(self, closure, group: dict, state: dict, loss: float, flat_grad) -> None:
        evals, tolerance_change = 1, group["tolerance_change"]
        for n_iter in range(1, group["max_iter"] + 1):
            state["n_iter"] += 1
            d = self._direction(state, flat_grad, group["history_size"])
            state["prev_flat_grad"], state["prev_loss"] = flat_grad, loss
            prev_loss = loss
            t = lr_of(group)
            if state["n_iter"] == 1:  # the very first step is scaled by the gradient's size
                t = min(1.0, 1.0 / flat_grad.abs().sum().item()) * lr_of(group)
            state["d"], state["t"] = d, t
            gtd = _dot(flat_grad, d)  # the directional derivative along d
            if gtd > -tolerance_change:
                break
            loss, flat_grad, t, ls_evals, converged = self._line_step(closure, group, loss, flat_grad, d, t, gtd,
                                                                      n_iter)
            state["t"] = t
            evals += ls_evals
            state["func_evals"] += ls_evals
            if (n_iter == group["max_iter"] or evals >= group["max_eval"] or converged
                    or _max_abs(d * t) <= tolerance_change or abs(loss - prev_loss) < tolerance_change):
                break

    def _direction(self, state: dict, flat_grad, history_size: int):
        """The search direction -H·g (two-loop recursion), after adding the last (s, y) pair to the history."""
        if state["n_iter"] == 1:
            state.update(old_dirs=[], old_stps=[], ro=[], H_diag=1.0)
            return -flat_grad
        old_dirs, old_stps, ro = state["old_dirs"], state["old_stps"], state["ro"]
        y = flat_grad - state["prev_flat_grad"]
        s = state["d"] * state["t"]
        ys = _dot(y, s)
        if ys > 1e-10:  # keep the pair only where the curvature is positive
            if len(old_dirs) == history_size:
                old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
            old_dirs.append(y), old_stps.append(s), ro.append(1.0 / ys)
            state["H_diag"] = ys / _dot(y, y)
        al = state.setdefault("al", [None] * history_size)
        q = -flat_grad
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = _dot(old_stps[i], q) * float(ro[i])
            q.add_(old_dirs[i], alpha=-al[i])
        r = q * float(state["H_diag"])
        for i in range(len(old_dirs)):
            be_i = _dot(old_dirs[i], r) * float(ro[i])
            r.add_(old_stps[i], alpha=al[i] - be_i)
        return r

    def _line_step(self, closure, group: dict, loss: float, flat_grad, d, t: float, gtd: float, n_iter: int):
        """Move along d: by t, or by the step a strong-Wolfe line search finds. Returns the new loss,
        flat gradient, step, closure calls made and whether the gradient is now small enough."""
        search = group["line_search_fn"]
        if search is not None:
            if search != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            start = [p.detach().clone() for p in self._params]
            loss, flat_grad, t, ls_evals = _strong_wolfe(
                lambda step: self._directional_evaluate(closure, start, step, d), t, d, loss, flat_grad, gtd)
            self._add_grad(t, d)
            return loss, flat_grad, t, ls_evals, _max_abs(flat_grad) <= group["tolerance_grad"]
        self._add_grad(t, d)
        if n_iter == group["max_iter"]:  # the last iteration does not re-evaluate
            return loss, flat_grad, t, 0, False
        loss = float(self._evaluate(closure))
        flat_grad = self._flat_grad()
        return loss, flat_grad, t, 1, _max_abs(flat_grad) <= group["tolerance_grad"]


# ---------------------------------------------------------------- the strong-Wolfe line search

def _cubic_interpolate(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float, bounds=None) -> float:
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, kept within
    bounds (default: between x1 and x2); the bounds' midpoint when the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    x1, f1, g1, x2, f2, g2 = (np.float64(v) for v in (x1, f1, g1, x2, f2, g2))  # IEEE: inf and nan, no exceptions
    with np.errstate(all="ignore"):
        d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
        d2_square = d1 * d1 - g1 * g2
        if not d2_square >= 0:  # (nan too)
            return (lo + hi) / 2.0
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return float(min(max(min_pos, lo), hi))


def _strong_wolfe(evaluate, t: float, d, f: float, g, gtd: float, c1: float = 1e-4, c2: float = 0.9,
                  tolerance_change: float = 1e-9, max_ls: int = 25):
    """A step t along d that satisfies the strong Wolfe conditions (enough decrease: f(t) ≤ f + c1·t·gtd;
    a flat enough slope: |g(t)·d| ≤ c2·|gtd|). First widen t until a bracket holds such a point,
    then shrink the bracket by cubic interpolation. evaluate(t) gives (loss, flat gradient)."""
    f_new, g_new = evaluate(t)
    point = [t, f_new, g_new, _dot(g_new, d)]  # [step, loss, gradient, slope along d]
    bracket, done, evals = _bracket(evaluate, [0, f, g, gtd], point, f, gtd, d, c1, c2, max_ls)
    low = 0 if bracket[0][1] <= bracket[-1][1] else 1
    evals += 1
    if not done:
        low, evals = _zoom(evaluate, bracket, low, evals, f, gtd, d, c1, c2, tolerance_change, max_ls)
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


def _bracket(evaluate, prev: list, point: list, f: float, gtd: float, d, c1: float, c2: float, max_ls: int):
    """Grow the step until [prev, point] brackets an acceptable step (or point itself is one: done).
    Returns the bracket, whether it is done, and the number of extra evaluations."""
    start = prev
    for ls_iter in range(max_ls):
        t, f_new, _, gtd_new = point
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= prev[1]):  # too far: the minimum is behind
            return [prev, point], False, ls_iter
        if abs(gtd_new) <= -c2 * gtd:                                      # acceptable as it is
            return [point], True, ls_iter
        if gtd_new >= 0:                                                   # the slope turned: passed a minimum
            return [prev, point], False, ls_iter
        bounds = (t + 0.01 * (t - prev[0]), t * 10)
        t = _cubic_interpolate(prev[0], prev[1], prev[3], t, f_new, gtd_new, bounds)
        prev = point
        f_new, g_new = evaluate(t)
        point = [t, f_new, g_new, _dot(g_new, d)]
    return [start, point], True, max_ls  # out of evaluations: the better of no step and the last one


def _zoom(evaluate, bracket: list, low: int, evals: int, f: float, gtd: float, d, c1: float, c2: float,
          tolerance_change: float, max_ls: int):
    """Shrink the bracket [low point, high point] until its low end satisfies the strong Wolfe
    conditions (in place). Returns the low end's position and the evaluation count."""
    high, insufficient, d_norm = 1 - low, False, _max_abs(d)
    while evals - 1 < max_ls:
        (a, fa, _, ga), (b, fb, _, gb) = bracket
        if abs(b - a) * d_norm < tolerance_change:
            break
        t, insufficient = _away_from_the_ends(_cubic_interpolate(a, fa, ga, b, fb, gb), a, b, insufficient)
        f_new, g_new = evaluate(t)
        evals += 1
        point = [t, f_new, g_new, _dot(g_new, d)]
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:  # not low enough: the new high end
            bracket[high] = point
            low = 0 if bracket[0][1] <= bracket[1][1] else 1
            high = 1 - low
            continue
        if abs(point[3]) <= -c2 * gtd:
            bracket[low] = point
            break
        if point[3] * (bracket[high][0] - bracket[low][0]) >= 0:  # the old low end becomes the high end
            bracket[high] = bracket[low]
        bracket[low] = point
    return low, evals


def _away_from_the_ends(t: float, a: float, b: float, insufficient: bool):
    """Keep a trial step out of the outer tenths of the bracket when it got stuck near an end
    (twice in a row, or on the end itself). Returns the step and whether progress was insufficient."""
    lo, hi = min(a, b), max(a, b)
    margin = 0.1 * (hi - lo)
    if min(hi - t, t - lo) >= margin:
        return t, False
    if insufficient or t >= hi or t <= lo:
        return (hi - margin if abs(t - hi) < abs(t - lo) else lo + margin), False
    return t, True

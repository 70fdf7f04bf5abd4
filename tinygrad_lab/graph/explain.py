"""Chain-rule explanations of backward steps, in words, symbols and the actual numbers.

A table keyed by Function class name gives each op's forward in symbols and, per
forward argument, either its local derivative (elementwise ops: the gradient sent
is g times it) or the gradient it sends (ops that move or combine elements).
Unknown ops, user Functions included, get a generic explanation. Numbers are
shown for tensors of at most 16 elements.
"""
from __future__ import annotations

from typing import NamedTuple

from .._format import PREFIX, format_tensor
from ..autograd.function import _FREED, AccumulateGrad
from ..autograd.tensor_base import TensorBase
from .nodes import arg_name, saved_names

SMALL = 16  # tensors up to this many elements are shown in full


class Rule(NamedTuple):
    words: str    # what the op does and how its gradient flows
    expr: str     # the forward, in symbols
    local: dict   # argument -> ∂expr/∂argument (the gradient sent is g times it)
    vjp: dict     # argument -> the gradient sent, for ops that are not elementwise


def _ew(words: str, expr: str, **local: str) -> Rule:
    return Rule(words, expr, local, {})


def _moves(words: str, expr: str, **vjp: str) -> Rule:
    return Rule(words, expr, {}, vjp)


_RESHAPE = _moves("reshape: the same numbers in a new shape, so the gradient is reshaped back",
                  "reshape(x)", x="g reshaped back to x's shape")
_PERMUTE = _moves("permute: the same numbers with dims reordered, so the gradient is permuted back",
                  "permute(x)", x="g permuted back")
_ZERO = _ew("piecewise constant: its derivative is 0 almost everywhere, so no gradient flows", "round(x)", x="0")
_EXTREMUM = _moves("max/min: only the winning element(s) affect the result",
                   "max x", x="g at the position(s) of the extremum (shared on ties), 0 elsewhere")

RULES: dict = {
    "Add": _ew("add: the gradient passes through unchanged to both inputs", "a + b", a="1", b="1"),
    "Sub": _ew("subtract: a gets the gradient, b gets it negated", "a − b", a="1", b="−1"),
    "Mul": _ew("multiply: each input's gradient is the incoming gradient times the other input",
               "a·b", a="b", b="a"),
    "Div": _ew("divide: a's gradient is scaled by 1/b; b's by −a/b²", "a / b", a="1/b", b="−a/b²"),
    "Pow": _ew("power: the power rule for the base, a^b·ln a for the exponent", "a^b",
               a="b·a^(b−1)", b="a^b·ln a"),
    "Maximum": _ew("maximum: the gradient goes to the larger input, split evenly on ties", "max(a, b)",
                   a="1 where a > b (½ on ties), else 0", b="1 where b > a (½ on ties), else 0"),
    "Minimum": _ew("minimum: the gradient goes to the smaller input, split evenly on ties", "min(a, b)",
                   a="1 where a < b (½ on ties), else 0", b="1 where b < a (½ on ties), else 0"),
    "Neg": _ew("negate: the gradient is negated", "−x", x="−1"),
    "Exp": _ew("exponential: its own derivative, so backward reuses the saved output", "eˣ", x="eˣ"),
    "Log": _ew("natural logarithm: the gradient is divided by x", "ln x", x="1/x"),
    "Log1p": _ew("log(1 + x): the gradient is divided by 1 + x", "ln(1 + x)", x="1/(1 + x)"),
    "Sqrt": _ew("square root: backward reuses the saved output", "√x", x="1/(2√x)"),
    "Rsqrt": _ew("reciprocal square root", "1/√x", x="−1/(2x√x)"),
    "Sin": _ew("sine: its derivative is the cosine", "sin x", x="cos x"),
    "Cos": _ew("cosine: its derivative is minus the sine", "cos x", x="−sin x"),
    "Tanh": _ew("tanh: backward reuses the saved output", "tanh x", x="1 − tanh²x"),
    "Sigmoid": _ew("sigmoid: backward reuses the saved output", "σ(x)", x="σ(x)·(1 − σ(x))"),
    "Abs": _ew("absolute value: the gradient keeps or flips its sign with x", "|x|", x="sign(x)"),
    "Relu": _ew("ReLU: the gradient passes where the output is positive and is blocked elsewhere",
                "max(x, 0)", x="1 where x > 0, else 0"),
    "Erf": _ew("error function", "erf x", x="(2/√π)·e^(−x²)"),
    "Elu": _ew("ELU: identity for x > 0, a scaled exponential below", "elu(x)", x="1 where x > 0, else α·eˣ"),
    "LogSigmoid": _ew("log-sigmoid", "ln σ(x)", x="1 − σ(x)"),
    "BinaryCrossEntropy": _ew("binary cross-entropy of probabilities x against targets t",
                              "−(t·ln x + (1 − t)·ln(1 − x))", x="(x − t) / (x·(1 − x))"),
    "Clamp": _ew("clamp: the gradient passes where x is inside [lo, hi]; outside, it goes to the bound",
                 "clamp(x, lo, hi)", x="1 where lo ≤ x ≤ hi, else 0", lo="1 where x < lo", hi="1 where x > hi"),
    "Where": _ew("where: each position's gradient goes to the input that was picked there",
                 "where(cond, a, b)", a="1 where cond, else 0", b="1 where not cond, else 0"),
    "Sign": _ZERO, "Floor": _ZERO, "Ceil": _ZERO, "Trunc": _ZERO, "Round": _ZERO,
    "Clone": _ew("copy: the gradient passes through unchanged", "x", x="1"),
    "Contiguous": _ew("contiguous copy: the gradient passes through unchanged", "x", x="1"),
    "Cast": _moves("dtype conversion: the gradient is converted back", "x as dtype", x="g cast to x's dtype"),
    "ToDevice": _moves("device transfer: the gradient travels back", "x on device", x="g moved to x's device"),
    "Sum": _moves("sum: every element counts once, so each gets the incoming gradient", "Σ x",
                  x="g broadcast back to x's shape"),
    "Mean": _moves("mean: every element counts 1/n", "Σ x / n", x="g / n broadcast back to x's shape"),
    "SumTo": _moves("sum over broadcast dims: the gradient is broadcast back", "sum_to(x)",
                    x="g broadcast back to x's shape"),
    "Prod": _moves("product: each element's gradient is the product of the others", "Π x", x="g · (Π x) / x"),
    "AMax": _EXTREMUM, "AMin": _EXTREMUM, "MaxDim": _EXTREMUM, "MinDim": _EXTREMUM,
    "Norm2": _moves("euclidean norm: the gradient points along x", "‖x‖", x="g · x / ‖x‖"),
    "Matmul": _moves("matrix product: each side's gradient is g times the other side, transposed",
                     "a @ b", a="g @ bᵀ", b="aᵀ @ g"),
    "Linear": _moves("linear layer: matrix products for x and w, a sum over the batch for b",
                     "x @ wᵀ + b", x="g @ w", w="gᵀ @ x", b="g summed over the batch"),
    "Reshape": _RESHAPE, "View": _RESHAPE, "Squeeze": _RESHAPE, "Unsqueeze": _RESHAPE, "Flatten": _RESHAPE,
    "Permute": _PERMUTE, "Transpose": _PERMUTE,
    "Expand": _moves("broadcast to a bigger shape: copies share one element, so their gradients add up",
                     "expand(x)", x="g summed over the expanded dims"),
    "Cat": _moves("concatenate: each input gets its own slice of the gradient", "cat(tensors)",
                  tensors="its slice of g"),
    "Split": _moves("split: the pieces' gradients are concatenated back", "split(x)",
                    x="the pieces' gradients concatenated (zeros for unused pieces)"),
    "Index": _moves("indexing: the picked elements get the gradient, the rest 0", "x[key]",
                    x="zeros of x's shape with g added at the indexed positions"),
    "Gather": _moves("gather: the gradient is scattered back to where each element came from",
                     "gather(x, dim, index)", x="zeros of x's shape with g added back at index"),
    "IndexPut": _moves("indexed write: overwritten positions get no gradient from the result",
                       "x[key] = value", x="g with the written positions zeroed", value="g at the written positions"),
    "Pad": _moves("pad: the padding is cut off the gradient", "pad(x)", x="g without the padding"),
    "Flip": _moves("flip: the gradient is flipped back", "flip(x)", x="g flipped back"),
    "Softmax": _moves("softmax: every output depends on every input", "s = softmax(x)",
                      x="s ⊙ (g − Σ(g ⊙ s))"),
    "LogSoftmax": _moves("log-softmax: every output depends on every input", "x − log Σ eˣ",
                         x="g − softmax(x) · Σ g"),
    "NllLoss": _moves("negative log-likelihood: only each row's target class counts", "−x[target] (mean)",
                      x="−g (÷ N for the mean) at each target class, 0 elsewhere"),
    "Conv": _moves("convolution: a matrix product over sliding windows", "conv(x, w) + b",
                   x="transposed convolution of g with w", w="correlation of x with g",
                   b="g summed over batch and positions"),
    "MaxPool": _moves("max pooling: each window's maximum gets the gradient", "max over each window",
                      x="g routed to each window's maximum"),
    "AvgPool": _moves("average pooling: each window shares its gradient evenly", "mean over each window",
                      x="g / window size, spread over each window"),
}
RULES["BasicIndex"] = RULES["Index"]


class Explanation(NamedTuple):
    """A backward step explained: `str()` gives the whole text."""

    op: str          # the Function's class name, or "AccumulateGrad"
    words: str       # what the op does and how its gradient flows
    formulas: tuple  # one chain-rule line per input that gets a gradient
    numbers: tuple   # "name = values" lines (values for tensors of <= 16 elements)

    def __str__(self) -> str:
        lines = [f"{self.op}: {self.words}"]
        if self.op != "AccumulateGrad":
            lines.append("chain rule: grad input = g · ∂out/∂input (g: the gradient of the output)")
        lines += ["  " + f for f in self.formulas]
        if self.numbers:
            lines += ["numbers:"] + ["  " + n for n in self.numbers]
        return "\n".join(lines)


def explain(step) -> Explanation:
    """Explain one `autograd.BackwardStep`: the op's local derivative, in words and symbols,
    and the incoming gradient, what the op saved and the gradients it sent."""
    node = step.node
    g = next((x for x in step.grad_outputs if x is not None), None)
    numbers = [f"g = {_values(g)}"] if g is not None else []
    if type(node) is AccumulateGrad:
        numbers.append(f"leaf.grad = {_values(step.grad_inputs[0])}")
        return Explanation("AccumulateGrad", "a leaf: the gradient arriving here is added into its .grad",
                           ("accumulate: leaf.grad ← leaf.grad + g",), tuple(numbers))
    name = node.fn.__name__
    rule = RULES.get(name) or Rule(f"no explanation on file; {name}.backward maps g to each input's gradient",
                                   f"{name}(…)", {}, {})
    if node._saved is not _FREED:  # what backward used: the local derivative's ingredients
        for what, value in zip(saved_names(node), node.saved_tensors):
            if hasattr(value, "shape"):  # a tensor or an array (a mask), not a plain value
                numbers.append(f"{what} = {_values(value, node.device)} (saved)")
    formulas = []
    for i, (e, gi) in enumerate(zip(node.edges, step.grad_inputs)):
        if e is None:
            continue
        arg = arg_name(node.fn, i)
        formulas.append(_formula(name, rule, arg, i, node.input_shapes[i] if g is not None and rule.local
                                 and g._data.shape != node.input_shapes[i] else None))
        numbers.append(f"grad {arg} = {_values(gi)}")
    return Explanation(name, rule.words, tuple(formulas), tuple(numbers))


def _formula(name: str, rule: Rule, arg: str, i: int, broadcast_to: tuple | None) -> str:
    op, key = name.lower(), arg.split("[")[0]
    if key in rule.local:
        d = rule.local[key]
        sent = "g" if d == "1" else "−g" if d == "−1" else f"g·({d})" if " " in d else f"g·{d}"
        line = f"{op}: ∂({rule.expr})/∂{arg} = {d}  ⇒  grad {arg} = {sent}"
        if broadcast_to is not None:
            line += f", summed over the broadcast dims to shape {list(broadcast_to)}"
        return line
    if key in rule.vjp:
        return f"{op}: grad {arg} = {rule.vjp[key]}"
    return f"{op}: grad {arg} = {name}.backward(g)[{i}]"


def _values(t, device=None) -> str:
    """A tensor's numbers when it is small, else its shape; a raw array lives on `device`."""
    if t is None:
        return "None"
    arr = t._device.backend.to_host(t._data) if isinstance(t, TensorBase) else device.backend.to_host(t)
    if arr.size > SMALL:
        return f"<{arr.size} values, shape {list(arr.shape)}>"
    text = format_tensor(arr)  # as the tensor's repr prints them, without "tensor(...)" around
    return " ".join(text[len(PREFIX):-1].split())

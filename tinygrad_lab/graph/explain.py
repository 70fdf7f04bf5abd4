"""Chain-rule explanations of backward steps: in words, in formulas, and with every number.

A table keyed by Function class name gives each op's forward in symbols and, per
forward argument, either its local derivative (elementwise ops: the gradient sent
is g times it, summed back over broadcast dims) or the gradient it sends (ops that
move, combine or reduce elements). Formulas are written in Python's notation with
only glyphs every default font has.

Every symbol a formula uses is listed with its number, so the learner can check
the chain rule by hand: the incoming gradient `g`, the op's arguments (what it
saved, Python numbers included, or the forward value the graph knows), its saved
output `out`, shapes (`x.shape`) and what the forward kept on its node (the `dim`
of a softmax, the `alpha` of an ELU), then each gradient the step computed.
Values are read when the step is explained, from the engine's own node, so
what is shown is what backward used. Unknown ops, user Functions included, get a
generic explanation with what they saved.
"""
from __future__ import annotations

import math
import re
from typing import NamedTuple

import numpy as np

from .._format import PREFIX, format_tensor
from ..autograd.function import _FREED, AccumulateGrad, _SavedOutput
from ..autograd.tensor_base import TensorBase
from .nodes import _forward_arg_names, arg_name, saved_names

SMALL = 16   # tensors up to this many elements are shown in full
PREVIEW = 4  # values shown of a bigger one, with its shape and range


class Rule(NamedTuple):
    words: str    # what the op does and how its gradient flows
    expr: str     # the forward, in symbols
    local: dict   # argument -> its local derivative d(expr)/d(argument): the gradient sent is g times it
    vjp: dict     # argument -> the gradient sent, for ops that are not elementwise
    ctx: dict     # symbol -> the attribute (path) of the node where forward kept it
    saved: tuple  # names of the plain arrays the forward saved (masks), in order


def _ew(words: str, expr: str, ctx: dict | None = None, saved: tuple = (), **local: str) -> Rule:
    return Rule(words, expr, local, {}, ctx or {}, saved)


def _moves(words: str, expr: str, ctx: dict | None = None, saved: tuple = (), **vjp: str) -> Rule:
    return Rule(words, expr, {}, vjp, ctx or {}, saved)


_RESHAPE = _moves("reshape: the same numbers in a new shape, so the gradient is reshaped back",
                  "reshape(x)", x="g reshaped to x.shape")
_PERMUTE = _moves("permute: the same numbers with the dims reordered, so the gradient is permuted back",
                  "x.permute(dims)", {"dims": "dims"}, x="g permuted back by the inverse of dims")
_ZERO = _ew("piecewise constant: its derivative is 0 almost everywhere, so no gradient flows", "round(x)", x="0")
_EXTREMUM = _moves("max/min over dims: only the winning element(s) count, tied ones share the gradient",
                   "x.amax()", saved=("ties",), x="g * ties / ties.sum(), expanded back to x.shape")
_EXTREMUM_DIM = _moves("max/min along a dim: the gradient goes to the element at the returned index",
                       "x.max(dim)", {"dim": "dim"}, saved=("indices",),
                       x="g placed at indices along dim, 0 elsewhere, in x.shape")

RULES: dict = {
    "Add": _ew("add: the gradient passes through unchanged to both inputs", "a + b", a="1", b="1"),
    "Sub": _ew("subtract: a gets the gradient, b gets it negated", "a - b", a="1", b="-1"),
    "Mul": _ew("multiply: each input's gradient is the incoming gradient times the other input",
               "a * b", a="b", b="a"),
    "Div": _ew("divide: a's gradient is scaled by 1/b, b's by -a/b**2", "a / b", a="1 / b", b="-a / b**2"),
    "Pow": _ew("power: the power rule for the base, out * log(a) for the exponent", "a ** b",
               a="b * a**(b - 1)", b="out * log(a)"),
    "Maximum": _ew("maximum: the gradient goes to the larger input, split evenly on ties", "maximum(a, b)",
                   saved=("share",), a="share", b="1 - share"),
    "Minimum": _ew("minimum: the gradient goes to the smaller input, split evenly on ties", "minimum(a, b)",
                   saved=("share",), a="share", b="1 - share"),
    "Neg": _ew("negate: the gradient is negated", "-x", x="-1"),
    "Exp": _ew("exponential: its own derivative, so backward reuses the saved output", "exp(x)", x="out"),
    "Log": _ew("natural logarithm: the gradient is divided by x", "log(x)", x="1 / x"),
    "Log1p": _ew("log(1 + x): the gradient is divided by 1 + x", "log(1 + x)", x="1 / (1 + x)"),
    "Sqrt": _ew("square root: backward reuses the saved output", "sqrt(x)", x="1 / (2 * out)"),
    "Rsqrt": _ew("reciprocal square root: backward reuses the saved output", "1 / sqrt(x)", x="-0.5 * out**3"),
    "Sin": _ew("sine: its derivative is the cosine", "sin(x)", x="cos(x)"),
    "Cos": _ew("cosine: its derivative is minus the sine", "cos(x)", x="-sin(x)"),
    "Tanh": _ew("tanh: backward reuses the saved output", "tanh(x)", x="1 - out**2"),
    "Sigmoid": _ew("sigmoid: backward reuses the saved output", "sigmoid(x)", x="out * (1 - out)"),
    "Abs": _ew("absolute value: the gradient keeps or flips its sign with x", "abs(x)", x="sign(x)"),
    "Relu": _ew("ReLU: the gradient passes where the output is positive and is blocked elsewhere",
                "relu(x)", x="1 where out > 0, else 0"),
    "Erf": _ew("error function", "erf(x)", x="2 / sqrt(pi) * exp(-x**2)"),
    "Elu": _ew("ELU: identity for x > 0, a scaled exponential below", "elu(x, alpha)", {"alpha": "alpha"},
               x="1 where x > 0, else alpha * exp(x)"),
    "LogSigmoid": _ew("log-sigmoid", "log(sigmoid(x))", x="sigmoid(-x)"),
    "BinaryCrossEntropy": _ew("binary cross-entropy of probabilities x against targets t",
                              "-(t * log(x) + (1 - t) * log(1 - x))", x="(x - t) / (x * (1 - x))",
                              t="log(1 - x) - log(x)"),
    "Clamp": _ew("clamp: the gradient passes where x is inside [lo, hi]; outside, it goes to the bound",
                 "clamp(x, lo, hi)", x="1 where lo <= x <= hi, else 0", lo="1 where x < lo, else 0",
                 hi="1 where x > hi, else 0"),
    "Where": _ew("where: each position's gradient goes to the input that was picked there",
                 "where(cond, a, b)", saved=("cond",), a="1 where cond, else 0", b="1 where not cond, else 0"),
    "Sign": _ZERO, "Floor": _ZERO, "Ceil": _ZERO, "Trunc": _ZERO, "Round": _ZERO,
    "Clone": _ew("copy: the gradient passes through unchanged", "x.clone()", x="1"),
    "Contiguous": _ew("contiguous copy: the gradient passes through unchanged", "x.contiguous()", x="1"),
    "Cast": _moves("dtype conversion: the gradient is converted back", "x.to(dtype)", {"x.dtype": "in_dtype"},
                   x="g converted to x.dtype"),
    "ToDevice": _moves("device transfer: the gradient travels back", "x.to(device)", {"x.device": "src"},
                       x="g moved to x.device"),
    "Sum": _moves("sum: every element counts once, so each gets the incoming gradient", "x.sum(dims)",
                  x="g expanded from g.shape back to x.shape"),
    "Mean": _moves("mean: every element counts 1/n", "x.sum(dims) / n", {"n": "count"},
                   x="g / n, expanded from g.shape back to x.shape"),
    "SumTo": _moves("sum over broadcast dims: the gradient is broadcast back", "sum_to(x)",
                    x="g expanded from g.shape back to x.shape"),
    "Prod": _moves("product: each element's gradient is the product of the others", "x.prod(dims)",
                   x="g * out / x, expanded back to x.shape"),
    "AMax": _EXTREMUM, "AMin": _EXTREMUM, "MaxDim": _EXTREMUM_DIM, "MinDim": _EXTREMUM_DIM,
    "Norm2": _moves("euclidean norm: the gradient points along x", "x.norm()",
                    x="g / out * x, expanded back to x.shape"),
    "Matmul": _moves("matrix product: each side's gradient is g times the other side, transposed",
                     "a @ b", a="g @ b.T", b="a.T @ g"),
    "Linear": _moves("linear layer: matrix products for x and w, a sum over the batch for b",
                     "x @ w.T + b", x="g @ w", w="g.T @ x", b="g.sum(0), over the batch"),
    "Reshape": _RESHAPE, "View": _RESHAPE, "Squeeze": _RESHAPE, "Unsqueeze": _RESHAPE, "Flatten": _RESHAPE,
    "Permute": _PERMUTE, "Transpose": _PERMUTE,
    "Expand": _moves("broadcast to a bigger shape: copies share one element, so their gradients add up",
                     "x.expand(shape)", x="g summed from g.shape down to x.shape"),
    "Cat": _moves("concatenate: each input gets its own slice of the gradient", "cat(tensors, dim)",
                  {"dim": "dim", "sizes": "sizes"}, tensors="g split along dim into pieces of sizes"),
    "Split": _moves("split: the pieces' gradients are joined back", "x.split(sizes, dim)", {"dim": "dim"},
                    x="the pieces of g joined along dim (zeros for unused pieces)"),
    "Index": _moves("indexing: the picked elements get the gradient, the rest 0", "x[key]", {"key": "key"},
                    x="zeros(x.shape) with g added at key"),
    "Gather": _moves("gather: the gradient is scattered back to where each element came from",
                     "x.gather(dim, index)", {"dim": "dim"}, x="zeros(x.shape) with g added back at index along dim"),
    "IndexPut": _moves("indexed write: overwritten positions get no gradient from the result",
                       "x[key] = value", {"key": "key"}, x="g with g[key] set to 0",
                       value="g[key], summed down to value.shape"),
    "Pad": _moves("pad: the padding is cut off the gradient", "pad(x, widths)", {"widths": "widths"},
                  x="g without the padding widths"),
    "Flip": _moves("flip: the gradient is flipped back", "x.flip(dims)", {"dims": "dims"}, x="g flipped along dims"),
    "Softmax": _moves("softmax: every output depends on every input", "out = softmax(x, dim)", {"dim": "dim"},
                      x="out * (g - (g * out).sum(dim))"),
    "LogSoftmax": _moves("log-softmax: every output depends on every input", "out = log_softmax(x, dim)",
                         {"dim": "dim"}, x="g - exp(out) * g.sum(dim)"),
    "NllLoss": _moves("negative log-likelihood: only each row's target class counts", "-x[rows, target] (mean)",
                      {"target": "t", "N": "total"}, x="g * (-1 / N at each row's target class, 0 elsewhere)"),
    "Conv": _moves("convolution: a matrix product over sliding windows", "conv(x, w) + b",
                   x="conv_transpose(g, w)", w="correlate(x, g)", b="g summed over the batch and positions"),
    "MaxPool": _moves("max pooling: each window's maximum gets the gradient", "max over each window",
                      {"argmax": "gidx"}, x="zeros(x.shape) with g added at argmax (each window's maximum)"),
    "AvgPool": _moves("average pooling: each window shares its gradient evenly", "mean over each window",
                      {"divisor": "geo.divisor"}, x="g / divisor, spread over each window"),
}
RULES["BasicIndex"] = RULES["Index"]

# Words in formulas that are not numbers to list: functions, words, the constant pi
VOCABULARY = frozenset("""where else not or and so at along over by to from into of in the each back down up with
    expanded summed split joined placed added set without spread reshaped permuted flipped converted moved
    inverse padding pieces unused zeros sum exp log sqrt sin cos sign sigmoid erf pi conv_transpose correlate
    batch positions elsewhere row s class window maximum its for""".split())
_SYMBOL = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.shape|\.dtype|\.device|\.grad)?)")
_PLAIN = (int, float, bool)


class Number(NamedTuple):
    """One number of an explanation.

    name   the symbol the formulas use ("g", "a", "out", "x.shape", "grad a")
    text   its value, as the tensor repr prints it (big tensors: shape, first values, range)
    role   "grad" (gradients in and out), "saved" (kept by forward), "number" (a Python number
           argument), "value" (an argument's forward value, from the graph), "shape", "ctx"
           (kept on the node by forward), "missing" (not available)
    label  the learner's name for it ("w"), or ""
    """

    name: str
    text: str
    role: str
    label: str = ""

    def __str__(self) -> str:
        notes = {"saved": "saved", "number": "a Python number", "value": "its forward value",
                 "ctx": "kept by forward", "missing": "not available"}
        who = "" if self.label in ("", self.name) else f"to {self.label}" if self.role == "grad" else self.label
        note = ", ".join(x for x in (who, notes.get(self.role, "")) if x)
        return f"{self.name} = {self.text}" + (f"  ({note})" if note else "")


class Explanation(NamedTuple):
    """A backward step explained: `str()` gives the whole text.

    formulas  one chain-rule line per input that gets a gradient
    numbers   every number the formulas use, then each gradient computed (see Number)
    checks    for scalars: each formula with its numbers put in, and the engine's result
    """

    op: str
    words: str
    formulas: tuple
    numbers: tuple
    checks: tuple = ()

    def __str__(self) -> str:
        lines = [f"{self.op}: {self.words}"]
        if self.op != "AccumulateGrad":
            lines.append("chain rule: grad input = g * (d out / d input), g = the gradient arriving at the output")
        lines += ["  " + f for f in self.formulas]
        if self.numbers:
            lines += ["numbers:"] + ["  " + str(n) for n in self.numbers]
        if self.checks:
            lines += ["by hand:"] + ["  " + c for c in self.checks]
        return "\n".join(lines)


def formula_symbols(formula: str) -> set:
    """The symbols a formula line uses, each of which its explanation lists with a number: identifiers
    (x.shape counts as one) that are not vocabulary, leaving out the op's name, the forward inside
    a local derivative's ∂(...)/∂a and the gradient being defined."""
    body = formula.split(": ", 1)[-1]
    body = re.sub(r"∂\(.*?\)/∂[\w\[\]]+ = ", "", body)
    body = re.sub(r"grad [\w\[\]]+ = ", "", body)
    body = re.sub(r"\b\w+\.backward\(", "(", body)
    return _symbols(body)


def _symbols(text: str) -> set:
    return {s for s in _SYMBOL.findall(text) if s not in VOCABULARY}


def explain(step, graph=None) -> Explanation:
    """Explain one `autograd.BackwardStep`: the op's local derivative in words and symbols, and every
    number it used. `graph` (the stepper's) gives the learner's names and the arguments' forward values."""
    node = step.node
    g_numbers = _incoming(step)
    if type(node) is AccumulateGrad:
        who = _leaf_name(graph, node) or "leaf"
        return Explanation("AccumulateGrad", f"a leaf: the gradient arriving here is added into {who}.grad",
                           (f"accumulate: {who}.grad += g",),
                           tuple(g_numbers) + (Number(f"{who}.grad", _text(step.grad_inputs[0]), "grad"),))
    name = node.fn.__name__
    rule = RULES.get(name) or Rule(f"no explanation on file; {name}.backward maps g to each input's gradient",
                                   f"{name}(...)", {}, {}, {}, ())
    args = _Arguments(node, rule, graph)
    formulas, sent = [], []
    g = next((x for x in step.grad_outputs if x is not None), None)
    for i, (e, gi) in enumerate(zip(node.edges, step.grad_inputs)):
        if e is None:
            continue
        arg = arg_name(node.fn, i)
        formulas.append(_formula(name, rule, arg, i, node.input_shapes[i] if g is not None and rule.local
                                 and g._data.shape != node.input_shapes[i] else None))
        sent.append(Number(f"grad {arg}", _text(gi), "grad", args.label(i)))
    used = set().union(*map(formula_symbols, formulas)) if formulas else set()
    symbols = (used | args.known()) - {"g"}  # both operands of a binary op, even where one is not needed
    order = sorted(symbols, key=lambda s: (0, args.position(s)) if args.position(s) is not None
                   else (1, *_first_use(s, formulas)))
    numbers = list(g_numbers) + [args.number(symbol, g) for symbol in order]
    explanation = Explanation(name, rule.words, tuple(formulas), tuple(numbers + sent))
    return explanation._replace(checks=_checks(explanation, step, g))


# ---------------------------------------------------------------- the numbers

def _incoming(step) -> list:
    """g, the gradient arriving at the output; for several outputs, one per output: (g0, g1, ...)."""
    grads = step.grad_outputs
    text = _text(grads[0]) if len(grads) == 1 else "(" + ", ".join(_text(x) for x in grads) + ")"
    return [Number("g", text, "grad")]


def _leaf_name(graph, node) -> str:
    gnode = graph.node_of(node) if graph is not None else None
    return gnode.name if gnode is not None and gnode.name else ""


class _Arguments:
    """What a node's backward could use, by symbol: saved tensors (arguments by their forward name, the
    output as `out`, masks by the rule's names), Python numbers, shapes, node attributes, and the
    forward values the graph knows."""

    def __init__(self, node, rule: Rule, graph):
        self.node, self.rule = node, rule
        self.names = _forward_arg_names(node.fn)
        self.saved: dict = {}  # symbol -> (value, role)
        if node._saved is not _FREED:
            self._name_saved(node)
        gnode = graph.node_of(node) if graph is not None else None
        self.inputs: dict = {}  # forward position -> graph node
        if gnode is not None:
            self.inputs = {pos: graph.nodes[src] for pos, (src, _) in zip(gnode.positions, gnode.inputs)}

    def _name_saved(self, node) -> None:
        plain = iter(self.rule.saved)
        numbers = iter(i for i, shape in enumerate(node.input_shapes) if shape is None)
        for (packed, _), generic, value in zip(node._saved, saved_names(node), node.saved_tensors):
            if packed.__class__ is _SavedOutput:
                self.saved["out" if packed.nr == 0 else f"out[{packed.nr}]"] = (value, "saved")
            elif generic not in ("array", "input"):
                self.saved.setdefault(generic, (value, "saved"))
            elif isinstance(value, _PLAIN):
                i = next(numbers, None)
                if i is not None:
                    self.saved.setdefault(arg_name(node.fn, i), (value, "number"))
            else:
                self.saved.setdefault(next(plain, f"array{len(self.saved)}"), (value, "saved"))

    def position(self, arg: str) -> int | None:
        key = arg.split("[")[0]
        for i, name in enumerate(self.names):
            if name.lstrip("*") == key:
                return i + int(arg.split("[")[1][:-1]) if "[" in arg else i
        return None

    def label(self, i: int) -> str:
        src = self.inputs.get(i)
        return src.name if src is not None and src.name else ""

    def number(self, symbol: str, g) -> Number:
        base, _, attr = symbol.partition(".")
        if symbol in self.rule.ctx:
            value = _attr(self.node, self.rule.ctx[symbol])
            return Number(symbol, _text(value), "ctx") if value is not _MISSING else Number(symbol, "?", "missing")
        if attr == "shape":
            shape = g._data.shape if base == "g" else self._shape(base)
            return Number(symbol, str(list(shape)), "shape") if shape is not None else Number(symbol, "?", "missing")
        if symbol in self.saved:
            value, role = self.saved[symbol]
            i = self.position(symbol)
            return Number(symbol, _text(value), role, self.label(i) if i is not None else "")
        i = self.position(symbol)
        src = self.inputs.get(i) if i is not None else None
        if src is not None and src.value is not None:
            return Number(symbol, _summary_text(src.value), "value", self.label(i))
        return Number(symbol, "?", "missing", self.label(i) if i is not None else "")

    def _shape(self, arg: str):
        i = self.position(arg)
        return self.node.input_shapes[i] if i is not None and i < len(self.node.input_shapes) else None

    def known(self) -> set:
        """The arguments whose value the step knows (saved, Python numbers, forward values in the graph)."""
        out = set()
        for i in range(len(self.node.input_shapes)):
            arg = arg_name(self.node.fn, i)
            src = self.inputs.get(i)
            if arg in self.saved or (src is not None and src.value is not None):
                out.add(arg)
        return out


_MISSING = object()


def _attr(obj, path: str):
    for part in path.split("."):
        obj = getattr(obj, part, _MISSING)
        if obj is _MISSING:
            return _MISSING
    return obj


def _first_use(symbol: str, formulas: list) -> tuple:
    for k, f in enumerate(formulas):
        pos = f.find(symbol)
        if pos >= 0:
            return (k, pos)
    return (len(formulas), 0)


def _text(value) -> str:
    """A tensor, array or plain value as the tensor repr prints it; big ones by shape, first values and range."""
    if value is None:
        return "None"
    if isinstance(value, TensorBase):
        arr = value._device.backend.to_host(value._data)
    elif hasattr(value, "shape") and hasattr(value, "dtype"):
        arr = np.asarray(value.get() if hasattr(value, "get") else value)  # NumPy, or a CuPy array
    else:
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    if arr.size > SMALL:
        flat = arr.reshape(-1)
        first = ", ".join(f"{v:.4g}" for v in flat[:PREVIEW].tolist())
        lo, hi = (flat.min(), flat.max()) if arr.dtype.kind in "biuf" else ("?", "?")
        return f"shape {list(arr.shape)}: [{first}, ...], min {lo:.4g}, max {hi:.4g}"
    text = format_tensor(arr)  # as the tensor's repr prints them, without "tensor(...)" around
    return " ".join(text[len(PREFIX):-1].split())


def _summary_text(s) -> str:
    """A graph node's value summary (what capture/record kept), in the same style."""
    if s.numel <= len(s.preview) and s.numel <= SMALL:
        arr = np.array(s.preview, dtype=s.dtype if s.dtype in ("float32", "float64", "float16") else None)
        return _text(arr.reshape(s.shape))
    first = ", ".join(f"{v:.4g}" for v in s.preview[:PREVIEW])
    return f"shape {list(s.shape)}: [{first}, ...], min {s.min:.4g}, max {s.max:.4g}"


# ---------------------------------------------------------------- the formulas

def _formula(name: str, rule: Rule, arg: str, i: int, broadcast_to: tuple | None) -> str:
    op, key = name.lower(), arg.split("[")[0]
    if key in rule.local:
        d = rule.local[key]
        sent = "g" if d == "1" else "-g" if d == "-1" else f"g * ({d})" if " " in d else f"g * {d}"
        line = f"{op}: ∂({rule.expr})/∂{arg} = {d}, so grad {arg} = {sent}"
        if broadcast_to is not None:
            line += f", summed from g.shape down to {arg}.shape"
        return line
    if key in rule.vjp:
        return f"{op}: grad {arg} = {rule.vjp[key]}"
    return f"{op}: grad {arg} = {name}.backward(g)[{i}]"


def _checks(expl: Explanation, step, g) -> tuple:
    """Each elementwise formula with its numbers put in, when they are all single numbers, and the
    engine's result: e.g. "grad a = g * b = -0.8461 * 2 = -1.692"."""
    values = {n.name: n.text for n in expl.numbers}
    out = []
    for line in expl.formulas:
        if ", so grad " not in line:
            continue
        sent = line.split(", so ", 1)[1].split(", summed")[0]   # "grad a = g * b"
        lhs, expr = sent.split(" = ", 1)
        symbols = _symbols(expr)
        if expr in ("g", "-g") or not symbols or any(not _scalar(values.get(s)) for s in symbols) or not _scalar(values.get(lhs)):
            continue
        filled = _SYMBOL.sub(lambda m: _paren(values[m.group(1)]) if m.group(1) in symbols else m.group(1), expr)
        out.append(f"{sent} = {filled} = {values[lhs]}")
    return tuple(out)


def _scalar(text: str | None) -> bool:
    if text is None:
        return False
    try:
        return math.isfinite(float(text.rstrip(".")))
    except ValueError:
        return False


def _paren(text: str) -> str:
    return f"({text})" if text.startswith("-") else text

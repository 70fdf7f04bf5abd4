"""`tinygrad_lab.nn.functional`: PyTorch's `torch.nn.functional` names, signatures and numbers.

Almost everything here is a composition of the ordinary differentiable ops
(`layer_norm` is a mean, a variance and an rsqrt, `cross_entropy` is
`nll_loss(log_softmax(x))`), so the gradients come from the ops' own backwards
and the graph a student inspects shows the pieces. Where one
op is clearly better, for accuracy or speed, the function calls a Function from
`tinygrad_lab/ops/activation.py` instead (Linear, Softmax, LogSoftmax, NllLoss, Erf,
Elu, LogSigmoid, BinaryCrossEntropy); their docstrings say why.

Deliberate differences from PyTorch:
- dropout draws its mask from tinygrad_lab's generator (NumPy's PCG64 on the CPU), so
  for a given seed the dropped elements differ from PyTorch's; the statistics agree.
- `layer_norm` also accepts an int normalized_shape (PyTorch's functional form wants a
  list; its module accepts an int).
- `embedding(..., scale_grad_by_freq=True)` and `sparse=True` are not supported (dense gradients only);
  nor in `embedding_bag`, whose `include_last_offset=True` wants the last offset to be the number of
  indices (PyTorch's CSR convention, which it does not check).
- `interpolate` has the modes nearest, nearest-exact, (bi)linear and area, for 3-d and 4-d input.
- attention (`scaled_dot_product_attention`, `nn.MultiheadAttention`) gives a query that may attend
  to nothing zeros, as PyTorch's scaled_dot_product_attention does (its MultiheadAttention gives nan
  there when it returns the weights).
- `rrelu(training=True)` and `gumbel_softmax` draw from tinygrad_lab's generator too: other numbers than
  PyTorch's for a seed, the same distributions.
- `hardtanh_` refuses min_val > max_val, as `hardtanh` does (PyTorch's hardtanh_ does not check).
"""
from __future__ import annotations

import math

import numpy as np

from .. import creation, dtypes
from .. import random as _random
from .._warn import warn
from ..autograd.grad_mode import no_grad
from ..autograd.grad_mode import state as _grad_state
from ..autograd.tensor_base import TensorBase, make
from ..ops import activation as act
from ..ops import elementwise as ew
from ..ops import indexing as ix
from ..ops import inplace as ip
from ..ops import linalg as la
from ..ops import movement as mv
from ..ops import normalization as norm
from ..ops import reduce as rd
from ..ops import scatter as sct
from ..ops import statistics as stats
from ..ops.activation import logsigmoid
from ..ops.broadcast import broadcast_to
from ..ops.elementwise import sigmoid, tanh
from ..ops.movement import pad
from ..ops.op import tensor_args
from ..ops.shapes import broadcast_shape

__all__ = [
    "linear", "bilinear", "relu", "leaky_relu", "elu", "gelu", "silu", "tanh", "sigmoid", "logsigmoid", "softplus",
    "hardtanh", "relu6", "hardsigmoid", "hardswish", "selu", "celu", "mish", "prelu", "glu", "softsign", "tanhshrink",
    "softshrink", "hardshrink", "threshold", "rrelu",
    "relu_", "elu_", "celu_", "selu_", "leaky_relu_", "hardtanh_", "threshold_", "rrelu_", "gumbel_softmax",
    "softmax", "softmin", "log_softmax", "dropout", "pad", "one_hot", "embedding", "layer_norm", "batch_norm",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "triplet_margin_loss", "soft_margin_loss", "multi_margin_loss",
    "multilabel_soft_margin_loss", "poisson_nll_loss", "gaussian_nll_loss", "ctc_loss",
    "triplet_margin_with_distance_loss", "multilabel_margin_loss", "upsample_nearest", "upsample_bilinear",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
    "pairwise_distance", "cosine_similarity",
    "normalize", "conv1d", "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "conv_transpose1d", "conv_transpose2d", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "lp_pool1d", "lp_pool2d", "unfold", "fold",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_unpool1d", "max_unpool2d", "pdist",
    "conv3d", "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_max_pool3d", "lp_pool3d",
    "max_pool3d_with_indices", "max_unpool3d",
    "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "group_norm", "instance_norm", "rms_norm", "local_response_norm",
    "interpolate", "upsample", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
    "affine_grid", "grid_sample",
    "embedding_bag",
    "scaled_dot_product_attention",
]


def _shape(x) -> list:
    return list(x._data.shape)


# ---------------------------------------------------------------- linear layers

@tensor_args("input", "weight", "bias")
def linear(input, weight, bias=None):
    """input @ weight.T + bias: weight is (out_features, in_features), input (*, in_features).
    A (N, in) input is one op (LinearBackward), the hot path of every MLP; an input with more
    leading dims is flattened to (N, in) around it (a sequence model's (L, N, in) is one matrix
    product: measured 4x faster than NumPy's batched matmul of (35, 20, 200) by (200, 800));
    other shapes are composed from matmul, transpose and add."""
    shape = input._data.shape
    if len(shape) > 2 and weight._data.ndim == 2 and shape[-1] == weight._data.shape[1]:
        out = act.linear(mv.reshape(input, (math.prod(shape[:-1]), shape[-1])), weight, bias)
        return mv.reshape(out, shape[:-1] + (weight._data.shape[0],))
    return act.linear(input, weight, bias)


@tensor_args("input1", "input2", "weight", "bias")
def bilinear(input1, input2, weight, bias=None):
    """y = x1ᵀ A x2 + b for each output feature: weight is (out, in1, in2), inputs (*, in1) and (*, in2)."""
    if weight._data.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got {weight._data.ndim} dimensions "
                           f"(weight of shape {_shape(weight)})")
    n_out, in1, in2 = weight._data.shape
    s1, s2 = input1._data.shape, input2._data.shape
    if len(s1) != len(s2):
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {len(s1)} and {len(s2)}")
    for i in range(len(s1) - 1):
        if s1[i] != s2[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {s1[i]} and {s2[i]}")
    if s1[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {s1[-1]} but expected {in1}")
    if s2[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {s2[-1]} but expected {in2}")
    if bias is not None and _shape(bias) != [n_out]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias._data.shape[-1] if bias._data.ndim else 1} "
                           f"but expected {n_out}")
    lead = s1[:-1]
    m = math.prod(lead)
    # (m, 1, 1, in1) @ (out, in1, in2) -> (m, out, 1, in2); @ (m, 1, in2, 1) -> (m, out, 1, 1)
    left = la.matmul(mv.reshape(input1, (m, 1, 1, in1)), weight)
    out = mv.reshape(la.matmul(left, mv.reshape(input2, (m, 1, in2, 1))), lead + (n_out,))
    return out if bias is None else ew.add(out, bias)


# ---------------------------------------------------------------- activations

def _maybe_inplace(input, inplace: bool, name: str, fn, *args):
    return ip.inplace(input, name + "_", fn, *args) if inplace else fn(input, *args)


@tensor_args("input")
def relu(input, inplace: bool = False):
    """max(x, 0); the gradient is 0 at x == 0 (as PyTorch)."""
    return _maybe_inplace(input, inplace, "relu", ew.relu)


def _leaky(x, slope):
    return ew.where(ew.gt(x, 0), x, ew.mul(x, slope))


@tensor_args("input")
def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """x for x > 0, negative_slope * x otherwise (gradient negative_slope at 0, as PyTorch)."""
    return _maybe_inplace(input, inplace, "leaky_relu", _leaky, negative_slope)


@tensor_args("input")
def elu(input, alpha: float = 1.0, inplace: bool = False):
    """x for x > 0, alpha * (exp(x) - 1) otherwise (one op; expm1 keeps small x accurate)."""
    return _maybe_inplace(input, inplace, "elu", act.elu, alpha)


_SQRT1_2 = math.sqrt(0.5)
_GELU_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5  # sqrt(2 / pi), spelled as PyTorch's kernel
_GELU_KAPPA = 0.044715


@tensor_args("input")
def gelu(input, approximate: str = "none"):
    """x * Phi(x): exact with erf ('none'), or PyTorch's tanh approximation ('tanh').
    Composed from ops, so its gradient (and the gradient's gradient) is automatic."""
    if approximate == "none":
        return ew.mul(ew.mul(input, 0.5), ew.add(act.erf(ew.mul(input, _SQRT1_2)), 1.0))
    if approximate == "tanh":
        cube = ew.mul(ew.mul(input, input), input)
        inner = ew.mul(ew.add(input, ew.mul(cube, _GELU_KAPPA)), _GELU_BETA)
        return ew.mul(ew.mul(input, 0.5), ew.add(ew.tanh(inner), 1.0))
    raise RuntimeError("approximate argument must be either none or tanh.")


def _silu(x):
    return ew.mul(x, ew.sigmoid(x))


@tensor_args("input")
def silu(input, inplace: bool = False):
    """x * sigmoid(x) (also called swish)."""
    return _maybe_inplace(input, inplace, "silu", _silu)


@tensor_args("input")
def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold (as PyTorch).
    Computed as -logsigmoid(-beta * x) / beta, which never overflows (float16 too: exp(11) does)."""
    bx = ew.mul(input, beta)
    soft = ew.div(ew.neg(act.logsigmoid(ew.neg(bx))), beta)
    return ew.where(ew.gt(bx, threshold), input, soft)


@tensor_args("input")
def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """x clipped to [min_val, max_val]. The gradient is 0 at the bounds themselves (as PyTorch;
    clamp passes it there), so this is two wheres rather than a clamp."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _maybe_inplace(input, inplace, "hardtanh", _hardtanh, min_val, max_val)


def _hardtanh(x, lo, hi):
    if x._data.dtype.kind == "u" and min(lo, hi) < 0:  # -1 would wrap around to 255
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if x._data.dtype.kind in "iu":  # integer tensors stay integer (as PyTorch)
        lo, hi = int(lo), int(hi)
    return ew.where(ew.le(x, lo), lo, ew.where(ew.ge(x, hi), hi, x))


@tensor_args("input")
def relu6(input, inplace: bool = False):
    """min(max(x, 0), 6): hardtanh(x, 0, 6)."""
    return _maybe_inplace(input, inplace, "relu6", _hardtanh, 0.0, 6.0)


def _hardsigmoid(x):
    return ew.where(ew.le(x, -3.0), 0.0, ew.where(ew.ge(x, 3.0), 1.0, ew.add(ew.div(x, 6.0), 0.5)))


@tensor_args("input")
def hardsigmoid(input, inplace: bool = False):
    """relu6(x + 3) / 6: 0 below -3, 1 above 3, the line x/6 + 1/2 between (gradient 0 at ±3)."""
    return _maybe_inplace(input, inplace, "hardsigmoid", _hardsigmoid)


def _hardswish(x):
    middle = ew.div(ew.mul(x, ew.add(x, 3.0)), 6.0)
    return ew.where(ew.le(x, -3.0), 0.0, ew.where(ew.ge(x, 3.0), x, middle))


@tensor_args("input")
def hardswish(input, inplace: bool = False):
    """x * relu6(x + 3) / 6 (MobileNetV3): 0 up to -3, x from 3 on, x(x + 3)/6 between."""
    return _maybe_inplace(input, inplace, "hardswish", _hardswish)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _selu(x):
    return ew.mul(act.elu(x, _SELU_ALPHA), _SELU_SCALE)


@tensor_args("input")
def selu(input, inplace: bool = False):
    """scale * elu(x, alpha) with the self-normalising constants alpha ≈ 1.6733, scale ≈ 1.0507."""
    return _maybe_inplace(input, inplace, "selu", _selu)


def _celu(x, alpha):
    return ew.mul(act.elu(ew.div(x, alpha), 1.0), alpha)


@tensor_args("input")
def celu(input, alpha: float = 1.0, inplace: bool = False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)): alpha * elu(x / alpha)."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _maybe_inplace(input, inplace, "celu", _celu, float(alpha))


def _mish(x):
    return ew.mul(x, ew.tanh(softplus(x)))


@tensor_args("input")
def mish(input, inplace: bool = False):
    """x * tanh(softplus(x))."""
    return _maybe_inplace(input, inplace, "mish", _mish)


@tensor_args("input", "weight")
def prelu(input, weight):
    """x where x > 0, weight * x elsewhere; weight holds one slope, or one per channel (dim 1)."""
    n = weight._data.size
    channels = input._data.shape[1] if input._data.ndim >= 2 else 1
    if weight._data.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight._data.ndim}")
    if n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                           f"and channel size = {channels}.")
    if n != 1:
        weight = mv.reshape(weight, (n,) + (1,) * (input._data.ndim - 2))
    elif input._data.ndim == 0:  # the output has input's shape, (), not the weight's (1,)
        weight = mv.reshape(weight, ())
    return ew.where(ew.gt(input, 0), input, ew.mul(weight, input))


@tensor_args("input")
def glu(input, dim: int = -1):
    """a * sigmoid(b), where a and b are the two halves of x along dim (a gated linear unit)."""
    if input._data.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = rd.normalize_dim(dim, input._data.ndim, "glu")
    size = input._data.shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    a, b = mv.chunk(input, 2, d)
    return ew.mul(a, ew.sigmoid(b))


@tensor_args("input")
def softsign(input):
    """x / (1 + |x|)."""
    return ew.div(input, ew.add(ew.abs(input), 1.0))


@tensor_args("input")
def tanhshrink(input):
    """x - tanh(x)."""
    return ew.sub(input, ew.tanh(input))


def _check_lambd(input, lambd: float, name: str) -> None:
    if lambd < 0:
        raise RuntimeError(f"{name}: lambda must be greater or equal to 0, but found to be {lambd} "
                           f"(input of shape {_shape(input)})")


@tensor_args("input")
def softshrink(input, lambd: float = 0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between (gradient 0 at ±lambd; NaN stays NaN)."""
    _check_lambd(input, lambd, "softshrink")
    return ew.where(ew.le(ew.abs(input), lambd), 0.0, ew.sub(input, ew.mul(ew.sign(input), lambd)))


@tensor_args("input")
def hardshrink(input, lambd: float = 0.5):
    """x where |x| > lambd, 0 elsewhere (NaN stays NaN)."""
    return ew.where(ew.le(ew.abs(input), lambd), 0.0, input)


def _threshold(x, threshold, value):
    if x._data.dtype.kind in "iu":
        value = int(value)
    return ew.where(ew.gt(x, threshold), x, value)


@tensor_args("input")
def threshold(input, threshold: float, value: float, inplace: bool = False):
    """x where x > threshold, value elsewhere."""
    return _maybe_inplace(input, inplace, "threshold", _threshold, threshold, value)


@tensor_args("input")
def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, inplace: bool = False):
    """Randomized leaky ReLU: x for x > 0, a * x otherwise. Training draws each element's slope a from
    U(lower, upper) (the device's seeded generator, so not PyTorch's numbers for a seed); eval uses the
    mean slope (lower + upper) / 2, i.e. leaky_relu."""
    if lower > upper:
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound (rrelu got lower={lower}, "
                           f"upper={upper})")
    slope = (lower + upper) / 2
    if training:
        dev, dt = input._device, input._data.dtype
        slope = make((lower + (upper - lower) * _random.generator(dev).random(input._data.shape)).astype(dt), dev)
    return _maybe_inplace(input, inplace, "rrelu", _leaky, slope)


# The in-place functional forms: the out-of-place function with inplace=True (ops/inplace.py's one mechanism:
# the tensor's memory is overwritten and its version bumped; a leaf that requires grad is refused).

def relu_(input):
    """relu, in place on input."""
    return relu(input, inplace=True)


def elu_(input, alpha: float = 1.0):
    """elu, in place on input."""
    return elu(input, alpha, inplace=True)


def celu_(input, alpha: float = 1.0):
    """celu, in place on input."""
    return celu(input, alpha, inplace=True)


def selu_(input):
    """selu, in place on input."""
    return selu(input, inplace=True)


def leaky_relu_(input, negative_slope: float = 0.01):
    """leaky_relu, in place on input."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    """hardtanh, in place on input. Deviation: min_val > max_val is refused here too (PyTorch's hardtanh
    refuses it, its hardtanh_ does not)."""
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input, threshold: float, value: float):
    """threshold, in place on input (the argument `threshold` hides the function of that name here)."""
    return _maybe_inplace(input, True, "threshold", _threshold, threshold, value)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):
    """rrelu, in place on input."""
    return rrelu(input, lower, upper, training, inplace=True)


def _softmax_dim(name: str, ndim: int) -> int:
    """The dim PyTorch picks when none is given, with its warning (at the caller's line: softmax's
    _stacklevel, PyTorch's way of finding it, is accepted and not needed)."""
    warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
         f"as an argument.")
    return 0 if ndim in (0, 1, 3) else 1


def _with_dtype(input, dtype):
    if dtype is None:
        return input
    return ew.cast(input, dtypes.as_dtype(dtype).np)


@tensor_args("input")
def softmax(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):
    """exp(x) / sum(exp(x)) along dim, with the max subtracted first (one op: SoftmaxBackward)."""
    if dim is None:
        dim = _softmax_dim("softmax", input._data.ndim)
    return act.softmax(_with_dtype(input, dtype), dim)


@tensor_args("input")
def softmin(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):
    """softmax(-x) along dim."""
    if dim is None:
        dim = _softmax_dim("softmin", input._data.ndim)
    return act.softmax(ew.neg(_with_dtype(input, dtype)), dim)


@tensor_args("input")
def log_softmax(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):
    """log(softmax(x)) along dim, as x - max - log(sum(exp(x - max))) (one op: LogSoftmaxBackward)."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input._data.ndim)
    return act.log_softmax(_with_dtype(input, dtype), dim)


@tensor_args("logits")
def gumbel_softmax(logits, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1):
    """A differentiable sample from the categorical distribution softmax(logits): softmax((logits + g) / tau)
    along dim, g Gumbel noise from the device's seeded generator (so not PyTorch's numbers for a seed).
    hard=True gives the one-hot of each sample's argmax, with the soft sample's gradient (straight-through).
    eps is accepted and unused (PyTorch deprecated it, with a warning we repeat)."""
    if eps != 1e-10:
        warn("`eps` parameter is deprecated and has no effect.")
    dev, dt = logits._device, logits._data.dtype
    xp = dev.backend.xp
    exponential = -xp.log1p(-_random.generator(dev).random(logits._data.shape))  # E ~ Exp(1), >= 0
    exponential = xp.maximum(exponential, np.finfo(np.float64).tiny)  # log(0) would make an infinite sample
    gumbels = make((-xp.log(exponential)).astype(dt), dev)
    soft = act.softmax(ew.div(ew.add(logits, gumbels), tau), dim)
    if not hard:
        return soft
    index = rd.argmax(soft, dim, keepdim=True)
    one_hot = sct.scatter(creation.zeros_like(soft), dim, index, value=1.0)
    return ew.add(ew.sub(one_hot, soft.detach()), soft)


# ---------------------------------------------------------------- dropout

@tensor_args("input")
def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each element with probability p and scale the rest by 1/(1-p), so the expected value is
    unchanged. The mask comes from the device's seeded generator (`tinygrad_lab.manual_seed`).
    With training=False or p=0 the input itself is returned."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    mask = _drop_mask(input, p, input._data.shape)
    if inplace:
        return ip.inplace(input, "dropout_", ew.mul, mask)
    return ew.mul(input, mask)


# ---------------------------------------------------------------- lookup

@tensor_args("tensor")
def one_hot(tensor, num_classes: int = -1):
    """(*, num_classes) int64 tensor with a 1 at each index (num_classes=-1: max + 1)."""
    if tensor._data.dtype != np.int64:
        raise RuntimeError(f"one_hot is only applicable to index tensor of type LongTensor. (It got "
                           f"{tensor._data.dtype}; a LongTensor is int64.)")
    d = tensor._data
    if num_classes == -1:
        if d.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(d.max()) + 1
    if d.size:
        if int(d.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(d.max()) >= num_classes:
            raise RuntimeError(f"Class values must be smaller than num_classes. (one_hot got {int(d.max())} "
                               f"with num_classes={num_classes}.)")
    classes = creation.arange(num_classes, device=tensor._device)
    return ew.cast(ew.eq(mv.unsqueeze(tensor, -1), classes), np.int64)


@tensor_args("input", "weight")
def embedding(input, weight, padding_idx: int | None = None, max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False):
    """weight[input]: rows of `weight` (num_embeddings, dim) picked by integer indices; the gradient
    adds into the picked rows. The row padding_idx gets no gradient; max_norm renormalises the
    picked rows of weight in place first (as PyTorch)."""
    if input._data.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {act.type_name(input)} tensor instead (while checking arguments "
                           f"for embedding)")
    if weight._data.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse gradients are not supported by "
                                  "tinygrad_lab (gradients are dense)")
    n = weight._data.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= n:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx += n
    idx = input._data
    if input._device is not weight._device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{weight._device} and {input._device}! (embedding: the indices must be on the weight's "
                           f"device)")
    if idx.size:  # read at once on the CPU, at the next sync on a GPU (no stall per lookup)
        dev = input._device
        dev.backend.raise_if((idx.min() < 0) | (idx.max() >= n), lambda: IndexError(
            f"index out of range in self: embedding indices from {int(idx.min())} to {int(idx.max())} "
            f"into a weight of {n} rows"), dev.index or 0)
    if max_norm is not None:
        _embedding_renorm_(weight, idx, float(max_norm), float(norm_type))
    out = ix.getitem(weight, (idx,), _converted=False)  # the rows: a new tensor, a 0-d index's too (as PyTorch)
    if padding_idx is not None and out._requires_grad:
        # same values, but the rows picked by padding_idx take their value from a detached copy: no gradient
        keep = ew.ne(mv.unsqueeze(input, -1), padding_idx)
        out = ew.where(keep, out, out.detach())
    return out


def _embedding_renorm_(weight, idx, max_norm: float, norm_type: float) -> None:
    """Scale the rows of weight used by idx whose norm exceeds max_norm (in place, no gradient)."""
    xp = weight._device.backend.xp
    rows = xp.unique(idx.ravel())
    with no_grad():
        w = weight._data
        norms = xp.linalg.norm(w[rows], ord=norm_type, axis=1)
        big = norms > max_norm
        if bool(big.any()):
            rows = rows[big]
            w[rows] *= (max_norm / (norms[big] + 1e-7))[:, None].astype(w.dtype)
            weight._bump_version()


# ---------------------------------------------------------------- normalization

@tensor_args("input", "weight", "bias")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dims
    (biased variance, as PyTorch)."""
    ns = (int(normalized_shape),) if isinstance(normalized_shape, int) else tuple(int(s) for s in normalized_shape)
    k = len(ns)
    shape = input._data.shape
    if k == 0 or len(shape) < k or tuple(shape[len(shape) - k:]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in ns)}], but got input of size{list(shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t._data.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{_shape(t)} and normalized_shape = {list(ns)}")
    axes = tuple(range(len(shape) - k, len(shape)))
    out, _, _ = norm.normalize_over(input, axes, eps)
    if weight is not None:
        out = ew.mul(out, weight)
    if bias is not None:
        out = ew.add(out, bias)
    return out


@tensor_args("input")
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5):
    """Normalize each channel (dim 1) of (N, C, *) input. training=True uses the batch's mean and
    biased variance, and updates running_mean / running_var in place (no gradient) with
    momentum: running = (1 - momentum) * running + momentum * batch_stat, where the running
    variance takes the unbiased batch variance (as PyTorch). training=False uses the running stats."""
    shape = input._data.shape
    if len(shape) < 2:
        raise ValueError(f"batch_norm: expected 2D or higher input (N, C, *), got {len(shape)}D input of shape "
                         f"{list(shape)}")
    c = shape[1]
    per_channel = input._data.size // c if c else 0
    if training and per_channel == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.size()}")
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t._data.size}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be defined in evaluation mode")
    if not training:
        return _with_running_stats(input, running_mean, running_var, weight, bias, eps)
    axes = (0,) + tuple(range(2, len(shape)))
    out, mean, sq_sum = norm.BatchNorm.apply(input, weight, bias, axes, eps)  # one op (ops/normalization.py)
    with no_grad():  # the running statistics, as PyTorch: the variance unbiased
        if running_mean is not None:
            _update_running(running_mean, mean, momentum)
        if running_var is not None:
            _update_running(running_var, ew.div(sq_sum, per_channel - 1), momentum)
    return out


def _with_running_stats(input, running_mean, running_var, weight, bias, eps: float):
    """(x - running_mean) / sqrt(running_var + eps) * weight + bias, per channel: batch and instance norm
    in eval mode."""
    ndim = input._data.ndim
    out = ew.mul(ew.sub(input, norm.per_channel(running_mean, ndim)),
                 ew.rsqrt(ew.add(norm.per_channel(running_var, ndim), eps)))
    return norm.affine(out, weight, bias, ndim)


def _update_running(running, batch, momentum: float) -> None:
    """running = (1 - momentum) * running + momentum * batch, in place: one version bump, as PyTorch."""
    running.copy_(ew.add(ew.mul(running, 1.0 - momentum), ew.mul(batch, momentum)))


# ---------------------------------------------------------------- losses

_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce) -> str:
    """PyTorch's mapping of the deprecated size_average/reduce flags onto `reduction`."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.")
    return ret


def _reduction(reduction: str, size_average=None, reduce=None) -> str:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return rd.mean(loss)
    if reduction == "sum":
        return rd.sum(loss)
    return loss


def _warn_size(input, target) -> None:
    if input._data.shape != target._data.shape:
        warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
             f"This will likely lead to incorrect results due to broadcasting. Please ensure they have "
             f"the same size.")


def _pointwise_loss(loss, input, weight, reduction: str, weighted_mean: str):
    """Apply an elementwise weight (same size as input) and the reduction; weighted_mean is
    'sum_weight' (divide by the weights' sum, as mse/l1) or 'numel' (as huber)."""
    if weight is None:
        return _reduce(loss, reduction)
    if weight._data.shape != input._data.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = ew.mul(loss, weight)
    if reduction == "mean" and weighted_mean == "sum_weight":
        return ew.div(rd.sum(loss), rd.sum(weight))
    return _reduce(loss, reduction)


@tensor_args("input", "target")
def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """(input - target)**2, reduced ('mean' with a weight divides by the weights' sum, as PyTorch)."""
    _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    return _pointwise_loss(ew.pow(ew.sub(input, target), 2), input, weight, reduction, "sum_weight")


@tensor_args("input", "target")
def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """|input - target|, reduced (gradient 0 where they are equal, as PyTorch)."""
    _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    return _pointwise_loss(ew.abs(ew.sub(input, target)), input, weight, reduction, "sum_weight")


@tensor_args("input", "target")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
    """0.5 * z**2 / beta where z = |input - target| < beta, else z - 0.5 * beta (beta=0: l1_loss)."""
    _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return _reduce(ew.abs(ew.sub(input, target)), reduction)
    return _reduce(act.smooth_l1(input, target, beta, False, "smooth_l1"), reduction)


@tensor_args("input", "target")
def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """0.5 * z**2 where z = |input - target| < delta, else delta * (z - 0.5 * delta)."""
    _warn_size(input, target)
    reduction = _reduction(reduction)
    if delta <= 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta, got {delta}.")
    loss = ew.cast(act.smooth_l1(input, target, delta, True, "huber"), input._data.dtype)  # input's dtype, as PyTorch
    return _pointwise_loss(loss, input, weight, reduction, "numel")


def _check_target_dtype(target):
    dt = target._data.dtype
    if dt == np.uint8:
        return ew.cast(target, np.int64)
    if dt != np.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {act.type_name(target)}")
    return target


@tensor_args("input", "target", "weight")
def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean"):
    """The negative log likelihood -input[n, target[n]] (input holds log-probabilities, classes in
    dim 1: (N, C), (N, C, d1, ...) or unbatched (C,)), times weight[target[n]], skipping targets
    equal to ignore_index; 'mean' divides by the summed weights of the counted targets. One op
    (NllLossBackward); the class weights get no gradient (as PyTorch)."""
    reduction = _reduction(reduction, size_average, reduce)
    return _nll_loss(input, _check_target_dtype(target), weight, ignore_index, reduction)


def _nll_loss(input, target, weight, ignore_index: int, reduction: str):
    """nll_loss once its reduction is known and its target is int64 (cross_entropy comes here directly)."""
    shape, tshape = input._data.shape, target._data.shape
    if len(shape) < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {len(shape)})")
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f'"nll_loss" not implemented for \'{act.type_name(input)}\'')
    if len(shape) == 1:
        if len(tshape) > 1 or target._data.size != 1:
            raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported (input of shape "
                               f"{list(shape)}, target of shape {list(tshape)})")
    else:
        if not tshape or shape[0] != tshape[0]:
            raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size "
                             f"({tshape[0] if tshape else 1}).")
        if len(shape) == 2 and len(tshape) != 1:
            raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported (input of shape "
                               f"{list(shape)}, target of shape {list(tshape)})")
        if len(shape) > 2 and tshape[1:] != shape[2:]:
            raise RuntimeError(f"Expected target size {[shape[0]] + list(shape[2:])}, got {list(tshape)}")
    n_classes = shape[0] if len(shape) == 1 else shape[1]
    if weight is not None:
        if weight._data.size != n_classes:
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes "
                               f"but got weight tensor of shape: {_shape(weight)}")
        if weight._data.dtype != input._data.dtype:
            raise RuntimeError(f"expected scalar type {act.type_name(input)} but found {act.type_name(weight)}")
        if weight._requires_grad and _grad_state.enabled:
            raise RuntimeError("The function 'nll_loss_forward' is not differentiable with respect to argument "
                               "'weight'. This input cannot have requires_grad True.")
        if weight._data.ndim != 1:
            weight = mv.reshape(weight, (n_classes,))
    if len(shape) == 1:  # unbatched: one sample
        out = act.NllLoss.apply(mv.unsqueeze(input, 0), mv.reshape(target, (1,)), weight, ignore_index, reduction)
        return mv.reshape(out, ()) if reduction == "none" else out
    return act.NllLoss.apply(input, target, weight, ignore_index, reduction)


@tensor_args("input", "target", "weight")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0):
    """nll_loss(log_softmax(input, class dim), target): class indices (int64) for input (N, C),
    (N, C, d1, ...) or (C,); or class probabilities (a float target of input's shape). label_smoothing
    mixes in the uniform distribution: (1 - ls) * loss + ls * (the mean of -log p over classes)."""
    reduction = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input._data.ndim == 0:
        raise RuntimeError("cross_entropy: expected input with a class dimension, (C,), (N, C) or (N, C, d1, ...), "
                           "got a 0-d tensor")
    class_dim = 0 if input._data.ndim == 1 else 1
    if target._data.shape == input._data.shape:
        return _cross_entropy_probs(input, target, weight, ignore_index, reduction, label_smoothing, class_dim)
    target = _check_target_dtype(target)
    logp = act.log_softmax(input, class_dim)
    nll = _nll_loss(logp, target, weight, ignore_index, reduction)
    if label_smoothing == 0.0:
        return nll
    return _label_smoothing(logp, target, nll, weight, ignore_index, reduction, label_smoothing, class_dim)


def _class_shape(ndim: int, class_dim: int, n_classes: int) -> tuple:
    return tuple(n_classes if i == class_dim else 1 for i in range(ndim))


def _label_smoothing(logp, target, nll, weight, ignore_index, reduction, ls, class_dim):
    """PyTorch's label smoothing for class-index targets (ATen's cross_entropy_loss_label_smoothing)."""
    n_classes = logp._data.shape[class_dim]
    if weight is not None:
        smooth = ew.neg(rd.sum(ew.mul(logp, mv.reshape(weight, _class_shape(logp._data.ndim, class_dim, n_classes))),
                               class_dim))
    else:
        smooth = ew.neg(rd.sum(logp, class_dim))
    ignored = ew.eq(target, ignore_index)
    smooth = ew.where(ignored, 0.0, smooth)
    if reduction == "mean":
        valid = target._data != ignore_index
        if weight is not None:
            denom = make(weight._data[target._data[valid]].sum(), weight._device)
        else:
            denom = int(valid.sum())
        ret = ew.div(rd.sum(smooth), denom)
    elif reduction == "sum":
        ret = rd.sum(smooth)
    else:
        ret = smooth
    return ew.add(ew.mul(nll, 1.0 - ls), ew.mul(ret, ls / n_classes))


def _cross_entropy_probs(input, target, weight, ignore_index, reduction, ls, class_dim):
    """Cross entropy against class probabilities: -sum_c target_c * log_softmax(input)_c (* weight_c)."""
    if target._data.dtype.kind != "f":
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{act.type_name(target)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    n_classes = input._data.shape[class_dim]
    if weight is not None and weight._data.size != n_classes:
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes "
                           f"but got weight tensor of shape: {_shape(weight)}")
    logp = act.log_softmax(input, class_dim)
    if ls > 0.0:
        target = ew.add(ew.mul(target, 1.0 - ls), ls / n_classes)
    prod = ew.mul(logp, target)
    if weight is not None:
        prod = ew.mul(prod, mv.reshape(weight, _class_shape(input._data.ndim, class_dim, n_classes)))
    if reduction == "none":
        return ew.neg(rd.sum(prod, class_dim))
    total = ew.neg(rd.sum(prod))
    if reduction == "sum":
        return total
    count = input._data.size // n_classes if n_classes else 0
    return ew.div(total, count) if count else ew.mul(total, float("nan"))


@tensor_args("input", "target", "weight")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
    """-(t * log(x) + (1 - t) * log(1 - x)) for probabilities x in [0, 1], each log clamped to >= -100
    (as PyTorch, so x = 0 or 1 gives finite values); weight scales each element."""
    reduction = _reduction(reduction, size_average, reduce)
    if target._data.shape != input._data.shape:
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if target._data.dtype != input._data.dtype:
        raise RuntimeError(f"Found dtype {act.type_name(target)} but expected {act.type_name(input)}")
    d, t, dev = input._data, target._data, input._device
    for x, name in ((d, "input"), (t, "target")):  # read at once on the CPU, at the next sync on a GPU
        dev.backend.raise_if(~((x >= 0) & (x <= 1)).all(),
                             lambda name=name: RuntimeError(f"all elements of {name} should be between 0 and 1"),
                             dev.index or 0)
    loss = act.BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = ew.mul(loss, weight)
    return _reduce(loss, reduction)


@tensor_args("input", "target", "weight")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(x), t) computed from the logits x without overflow:
    (1 - t) * x - (1 + (pos_weight - 1) * t) * logsigmoid(x), times weight (as PyTorch)."""
    reduction = _reduction(reduction, size_average, reduce)
    if target._data.shape != input._data.shape:
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    log_sig = act.logsigmoid(input)
    if pos_weight is not None:
        log_sig = ew.mul(log_sig, ew.add(ew.mul(ew.sub(pos_weight, 1.0), target), 1.0))
    loss = ew.sub(ew.mul(ew.sub(1.0, target), input), log_sig)
    if weight is not None:
        loss = ew.mul(loss, weight)
    return _reduce(loss, reduction)


def _xlogy_self(t):
    """t * log(t), with 0 where t == 0 (and no nan in either direction there)."""
    safe = ew.where(ew.eq(t, 0), 1.0, t)
    return ew.mul(t, ew.log(safe))


@tensor_args("input", "target")
def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
    """Pointwise KL divergence target * (log(target) - input), where input holds log-probabilities
    (target too, with log_target=True). 'batchmean' divides the sum by the batch size, which is
    the KL divergence; 'mean' divides by every element (and warns, as PyTorch)."""
    if reduction == "batchmean" and size_average is None and reduce is None:
        batch = input._data.shape[0] if input._data.ndim else 1
        return ew.div(rd.sum(_kl_pointwise(input, target, log_target)), batch)
    reduction = _reduction(reduction, size_average, reduce)
    if reduction == "mean":
        warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
             "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
             "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
    return _reduce(_kl_pointwise(input, target, log_target), reduction)


def _kl_pointwise(input, target, log_target: bool):
    if log_target:
        return ew.mul(ew.exp(target), ew.sub(target, input))
    return ew.sub(_xlogy_self(target), ew.mul(target, input))


@tensor_args("x1", "x2")
def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """The p-norm of x1 - x2 + eps over the last dim (eps keeps the gradient finite at x1 == x2)."""
    diff = ew.add(ew.sub(x1, x2), eps)
    if diff._data.ndim == 0:
        raise RuntimeError("pairwise_distance: expected inputs with at least one dimension, got 0-d tensors")
    return stats.distance(diff, p, keepdim)


@tensor_args("input")
def pdist(input, p: float = 2.0):
    """The p-norm distance between every pair of rows i < j of an (N, M) input, as a flat (N(N-1)/2,)
    tensor in row-major order of the pairs (the upper triangle of the distance matrix). Two equal rows
    have distance 0 and gradient 0 (as PyTorch)."""
    if input._data.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input._data.ndim}D (input of shape "
                           f"{_shape(input)})")
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"pdist only supports floating-point dtypes (got {input.dtype})")
    if p < 0:
        raise RuntimeError(f"pdist only supports non-negative p values (got p={p})")
    dev = input._device
    rows, cols = dev.backend.xp.triu_indices(input._data.shape[0], 1)
    diff = ew.sub(sct.index_select(input, 0, make(rows, dev)), sct.index_select(input, 0, make(cols, dev)))
    return stats.distance(diff, p)


def _raise_value_only(t, low: float):
    """t with its values below `low` raised to `low`, but the gradient of t itself everywhere
    (what PyTorch gets from an in-place clamp under no_grad)."""
    fixed = t.detach()
    return ew.add(t, ew.sub(ew.clamp(fixed, min=low), fixed))


@tensor_args("x1", "x2")
def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """x1 · x2 / (max(||x1||, eps) · max(||x2||, eps)) along dim. x1 and x2 are broadcast against each
    other first, so each norm is taken over the broadcast vectors; the norms' gradients flow as if they
    were not raised to eps (as PyTorch's), and an all-zero vector's norm has gradient 0."""
    if x1._data.dtype.kind not in "fc" and x2._data.dtype.kind not in "fc":
        common = x1 if dtypes.promote_types(x1.dtype, x2.dtype) == x1.dtype else x2
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {act.type_name(common)} "
                           f"(cosine_similarity of {_shape(x1)} and {_shape(x2)})")
    shape = broadcast_shape((x1._data.shape, x2._data.shape), "cosine_similarity")
    x1, x2 = broadcast_to(x1, shape), broadcast_to(x2, shape)
    n1 = _raise_value_only(rd.norm(x1, 2, dim, keepdim=True), eps)
    n2 = _raise_value_only(rd.norm(x2, 2, dim, keepdim=True), eps)
    return rd.sum(ew.mul(ew.div(x1, n1), ew.div(x2, n2)), dim)


@tensor_args("input")
def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """x / max(||x||_p, eps) along dim."""
    if out is not None:
        raise NotImplementedError("normalize(out=...) is not supported by tinygrad_lab")
    return ew.div(input, ew.clamp(rd.norm(input, p, dim, keepdim=True), min=eps))


_COSINE_EPS = 1e-12  # added to the squared norms, so a zero vector has cosine 0 with anything (as PyTorch)


@tensor_args("input1", "input2", "target")
def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, size_average=None, reduce=None,
                          reduction: str = "mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1
    (rows of (N, D) inputs with a (N,) target, or (D,) inputs with a 0-d target)."""
    reduction = _reduction(reduction, size_average, reduce)
    nd, td = input1._data.ndim, target._data.ndim
    if nd != td + 1 or td > 1:
        raise RuntimeError(f"{td}D target tensor expects {td + 1}D input tensors, but found inputs with sizes "
                           f"{_shape(input1)} and {_shape(input2)}.")
    dot = rd.sum(ew.mul(input1, input2), -1)
    sq1 = ew.add(rd.sum(ew.mul(input1, input1), -1), _COSINE_EPS)
    sq2 = ew.add(rd.sum(ew.mul(input2, input2), -1), _COSINE_EPS)
    cos = ew.div(dot, ew.sqrt(ew.mul(sq1, sq2)))
    pos = ew.where(ew.eq(target, 1), ew.sub(1.0, cos), 0.0)
    neg = ew.where(ew.eq(target, -1), ew.clamp(ew.sub(cos, margin), min=0.0), 0.0)
    return _reduce(ew.add(pos, neg), reduction)


@tensor_args("input1", "input2", "target")
def margin_ranking_loss(input1, input2, target, margin: float = 0.0, size_average=None, reduce=None,
                        reduction: str = "mean"):
    """max(0, -target * (x1 - x2) + margin): target 1 wants x1 ranked above x2, -1 below."""
    reduction = _reduction(reduction, size_average, reduce)
    dims = {input1._data.ndim, input2._data.ndim, target._data.ndim}
    if len(dims) != 1:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {_shape(input1)}, input2: {_shape(input2)}, target: {_shape(target)} ")
    loss = ew.clamp(ew.add(ew.mul(ew.neg(target), ew.sub(input1, input2)), margin), min=0.0)
    return _reduce(loss, reduction)


@tensor_args("input", "target")
def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """x where target is 1, max(0, margin - x) where it is -1 (other targets get both terms, as PyTorch)."""
    reduction = _reduction(reduction, size_average, reduce)
    below = ew.where(ew.ne(target, 1), ew.clamp(ew.sub(margin, input), min=0.0), 0.0)
    itself = ew.where(ew.ne(target, -1), input, 0.0)
    return _reduce(ew.add(below, itself), reduction)


@tensor_args("anchor", "positive", "negative")
def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average=None, reduce=None, reduction: str = "mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with d = pairwise_distance; swap uses the smaller of
    d(a, n) and d(p, n) (the 'distance swap' of Balntas et al.)."""
    return _triplet(lambda x, y: pairwise_distance(x, y, p, eps), anchor, positive, negative, margin, swap,
                    _reduction(reduction, size_average, reduce))


@tensor_args("anchor", "positive", "negative")
def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean"):
    """triplet_margin_loss with any distance: distance_function(x, y) gives one non-negative distance per
    sample (pairwise_distance when None), e.g. lambda x, y: 1 - F.cosine_similarity(x, y)."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} "
                         f"instead")
    distance = pairwise_distance if distance_function is None else distance_function
    return _triplet(distance, anchor, positive, negative, margin, swap, _reduction(reduction))


def _triplet(distance, anchor, positive, negative, margin: float, swap: bool, reduction: str):
    """max(d(a, p) - d(a, n) + margin, 0), reduced; swap takes the smaller of d(a, n) and d(p, n)."""
    dims = [t._data.ndim for t in (anchor, positive, negative)]
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D "
                           f"inputs")
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = ew.minimum(d_neg, distance(positive, negative))
    return _reduce(ew.clamp(ew.add(ew.sub(d_pos, d_neg), margin), min=0.0), reduction)


@tensor_args("input", "target")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """log(1 + exp(-target * x)), computed as softplus so it never overflows. Deviation: PyTorch
    computes log1p(exp(.)) directly, which is inf (with a nan gradient) once -target * x > ~89
    in float32; here it is the exact value."""
    reduction = _reduction(reduction, size_average, reduce)
    loss = ew.cast(ew.neg(act.logsigmoid(ew.mul(target, input))), input._data.dtype)  # input's dtype, as PyTorch
    return _reduce(loss, reduction)


@tensor_args("input", "target", "weight")
def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,
                      reduction: str = "mean"):
    """Multi-class hinge loss: for each sample, sum over classes i != y of
    weight[y] * max(0, margin - x[y] + x[i])**p, divided by the number of classes."""
    reduction = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x, y = _class_scores(input, target, "multi_margin_loss")
    n_classes = x._data.shape[1]
    z = ew.add(ew.sub(margin, ix.gather(x, 1, mv.unsqueeze(y, 1))), x)
    z = ew.where(ew.gt(z, 0), z, 0.0)  # no gradient where the margin is met exactly (as PyTorch)
    if p == 2:
        z = ew.mul(z, z)
    if weight is not None:
        if weight._data.ndim != 1 or weight._data.size != n_classes:
            raise RuntimeError(f"inconsistent weight size, expected {n_classes} but got {_shape(weight)}")
        z = ew.mul(z, mv.unsqueeze(ix.getitem(weight, y), 1))
    own = ew.eq(mv.unsqueeze(y, 1), creation.arange(n_classes, device=x._device))
    loss = ew.div(rd.sum(ew.where(own, 0.0, z), 1), n_classes)
    return _reduce(loss if input._data.ndim == 2 else mv.reshape(loss, ()), reduction)


def _class_scores(input, target, op: str):
    """(N, C) scores and (N,) int64 targets from (N, C) + (N,) or unbatched (C,) + 0-d/(1,) input."""
    if input._data.ndim not in (1, 2) or input._data.size == 0:
        raise RuntimeError(f"{op}: Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{_shape(input)}")
    if target._data.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {act.type_name(target)}")
    x = input if input._data.ndim == 2 else mv.unsqueeze(input, 0)
    n, n_classes = x._data.shape
    if target._data.size != n or target._data.ndim > 1:
        raise RuntimeError(f"inconsistent target size, expected {n} but got {_shape(target)}")
    y = mv.reshape(target, (n,))
    if n and (int(y._data.min()) < 0 or int(y._data.max()) >= n_classes):
        raise RuntimeError(f"target out of range (targets must lie in [0, {n_classes}))")
    return x, y


@tensor_args("input", "target", "weight")
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean"):
    """Per sample, the mean over classes of the binary cross-entropy of sigmoid(x) against
    target (0 or 1 for each class), optionally weighted per class."""
    reduction = _reduction(reduction, size_average, reduce)
    loss = ew.neg(ew.add(ew.mul(target, act.logsigmoid(input)),
                         ew.mul(ew.sub(1.0, target), act.logsigmoid(ew.neg(input)))))
    if weight is not None:
        loss = ew.mul(loss, weight)
    class_dim = input._data.ndim - 1
    return _reduce(ew.div(rd.sum(loss, class_dim), input._data.shape[class_dim]), reduction)


@tensor_args("input", "target")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """Per sample of input (C,) or (N, C) (a 0-d input: one class): the sum over its target classes j and the other classes i of
    max(0, 1 - (x[j] - x[i])), divided by C. target (int64, input's shape) lists the target classes
    first and ends the list at its first -1."""
    reduction = _reduction(reduction, size_average, reduce)
    nd = input._data.ndim
    if nd > 2 or target._data.shape != input._data.shape:
        raise RuntimeError(f"multilabel_margin_loss: expected input of shape (C,) or (N, C) and a target of the same "
                           f"shape, got input {list(input._data.shape)} and target {list(target._data.shape)}")
    if target._data.dtype != np.int64:
        raise RuntimeError(f"multilabel_margin_loss: expected target dtype to be Long, got {act.type_name(target)}")
    x = mv.reshape(input, (-1, input._data.shape[-1]) if nd else (1, 1))  # a 0-d input is one class
    t = target._data.reshape(x._data.shape)
    xp, dev, n_classes = input._device.backend.xp, input._device, x._data.shape[1]
    listed = xp.cumprod(t != -1, axis=1).astype(bool)  # the targets before the first -1
    if bool(((t < -1) | (t >= n_classes))[listed].any()):
        raise IndexError(f"multilabel_margin_loss: a target class is out of range [0, {n_classes}) (target of "
                         f"shape {list(target._data.shape)})")
    picked = xp.where(listed, t, 0)
    is_target = ((picked[:, :, None] == xp.arange(n_classes)) & listed[:, :, None]).any(axis=1)
    keep = make((listed[:, :, None] & ~is_target[:, None, :]).astype(x._data.dtype), dev)  # (N, j, i)
    x_target = ix.gather(x, 1, make(picked, dev))  # (N, j)
    hinge = ew.relu(ew.add(ew.sub(mv.unsqueeze(x, 1), mv.unsqueeze(x_target, 2)), 1.0))
    loss = ew.div(rd.sum(ew.mul(hinge, keep), (1, 2)), n_classes)
    return _reduce(loss if nd == 2 else mv.reshape(loss, ()), reduction)


@tensor_args("input", "target")
def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean"):
    """Negative log likelihood of target ~ Poisson(rate): exp(x) - target * x when x is the log rate
    (log_input), else x - target * log(x + eps). full adds Stirling's term for log(target!),
    target * log(target) - target + log(2π target) / 2, where target > 1."""
    reduction = _reduction(reduction, size_average, reduce)
    if log_input:
        loss = ew.sub(ew.exp(input), ew.mul(target, input))
    else:
        loss = ew.sub(input, ew.mul(target, ew.log(ew.add(input, eps))))
    if full:
        t = ew.where(ew.gt(target, 1), target, 1.0)  # Stirling's term is 0 at 1, so no log of 0 anywhere
        stirling = ew.add(ew.sub(ew.mul(t, ew.log(t)), t), ew.mul(ew.log(ew.mul(t, 2 * math.pi)), 0.5))
        loss = ew.add(loss, ew.where(ew.gt(target, 1), stirling, 0.0))
    return _reduce(loss, reduction)


@tensor_args("input", "target")
def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
    """Negative log likelihood of target ~ Normal(input, var): (log(var) + (input - target)² / var) / 2
    (+ log(2π) / 2 with full). var has input's shape, or input's shape without its last dim, or input's
    shape with one dim of size 1 (one variance shared along that dim: per row, per channel, ...). Values
    of var below eps are raised to eps; the gradient flows as if they were not (as PyTorch's in-place
    clamp under no_grad)."""
    if not isinstance(var, TensorBase):
        var = creation.full_like(input, float(var))
    vs, xs = tuple(var._data.shape), tuple(input._data.shape)
    if vs != xs:
        if xs[:-1] == vs:
            var = mv.unsqueeze(var, -1)
        elif not (len(vs) == len(xs) and [v for v, x in zip(vs, xs) if v != x] == [1]):
            raise ValueError(f"var is of incorrect size: {list(vs)} for input of size {list(xs)} (var has "
                             f"input's size, or input's without its last dim, or a 1 in place of one of its sizes)")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not valid")
    if bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = _raise_value_only(var, eps)
    loss = ew.mul(ew.add(ew.log(var), ew.div(ew.pow(ew.sub(input, target), 2), var)), 0.5)
    if full:
        loss = ew.add(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, reduction)


# CTC (connectionist temporal classification): one op (its alpha/beta recursions) with its own checks, ops/ctc.py
from ..ops.ctc import ctc_loss  # noqa: E402


# ---------------------------------------------------------------- convolution and pooling (ops/conv.py)

from ..ops.conv import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,  # noqa: E402
                        adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d, avg_pool1d, avg_pool2d,
                        avg_pool3d, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,
                        fold, max_pool1d, max_pool2d, max_pool3d, unfold)
from ..ops.sampling import affine_grid, grid_sample  # noqa: E402


def lp_pool1d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """The p-norm of each window of (N, C, L) or (C, L), p = norm_type: (sum of x**p)**(1/p) (as
    torch.nn.functional.lp_pool1d, x**p is not made absolute: with odd p a negative sum gives nan)."""
    k = kernel_size[0] if isinstance(kernel_size, (tuple, list)) else kernel_size
    return _lp_pool(avg_pool1d, input, norm_type, kernel_size, stride, ceil_mode, k)


def lp_pool2d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """The p-norm of each window of (N, C, H, W) or (C, H, W), p = norm_type: (sum of x**p)**(1/p)."""
    kh, kw = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size, kernel_size)
    return _lp_pool(avg_pool2d, input, norm_type, kernel_size, stride, ceil_mode, kh * kw)


def lp_pool3d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """The p-norm of each window of (N, C, D, H, W) or (C, D, H, W), p = norm_type: (sum of x**p)**(1/p)."""
    kd, kh, kw = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * 3
    return _lp_pool(avg_pool3d, input, norm_type, kernel_size, stride, ceil_mode, kd * kh * kw)


def _lp_pool(avg_pool, input, p: float, kernel_size, stride, ceil_mode: bool, window: int):
    """(window * mean of x**p over each window)**(1/p). sign(m) * relu(|m|) is m itself, but its gradient
    is 0 where m is 0, so an all-zero window gets gradient 0, not the root's infinite slope (as PyTorch)."""
    mean = avg_pool(ew.pow(input, p), kernel_size, stride if stride is not None else kernel_size, 0, ceil_mode)
    total = ew.mul(ew.mul(ew.sign(mean), ew.relu(ew.abs(mean))), window)
    return ew.pow(total, 1.0 / p)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """max_pool1d that always returns (output, indices); return_indices is accepted and ignored (as PyTorch)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """max_pool2d that always returns (output, indices); return_indices is accepted and ignored (as PyTorch)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """max_pool3d that always returns (output, indices); return_indices is accepted and ignored (as PyTorch)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


@tensor_args("input", "indices")
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: each value of (N, C, L) or (C, L) goes to the position its index
    names (as max_pool1d(return_indices=True) gives them), zeros elsewhere. The gradient reads back at the indices."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


@tensor_args("input", "indices")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d for (N, C, H, W) or (C, H, W): each value goes to the flat position
    h * W_out + w its index names, zeros elsewhere. The gradient reads back at the indices."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


@tensor_args("input", "indices")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d for (N, C, D, H, W) or (C, D, H, W): each value goes to the flat
    position d * H_out * W_out + h * W_out + w its index names, zeros elsewhere. The gradient reads back there."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


def _max_unpool(op: str, spatial: int, input, indices, kernel_size, stride, padding, output_size):
    """Scatter each (sample, channel) plane's values into a zero plane of the output size: the scatter
    op's backward is the gather at the same indices that max_unpool's gradient is."""
    kernel = _sizes(kernel_size, spatial)
    stride = kernel if stride is None else _sizes(stride, spatial)
    padding = _sizes(padding, spatial)
    shape = input._data.shape
    if len(shape) not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{op}: expected a {spatial + 1}d or {spatial + 2}d input (an optional batch dim, channels "
                           f"and {spatial} spatial dim{'s' * (spatial > 1)}), but got a tensor of shape {list(shape)}")
    if indices._data.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {act.type_name(indices)}")
    if indices._data.shape != shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(shape)}) but "
                           f"got indices tensor with shape: {list(indices._data.shape)}")
    outs = _unpool_size(shape[-spatial:], kernel, stride, padding, output_size)
    lead, plane = shape[:-spatial], math.prod(outs)
    flat_index = mv.reshape(indices, lead + (-1,))
    _check_unpool_index(flat_index, plane, outs)
    zeros = creation.zeros(lead + (plane,), dtype=input.dtype, device=input._device)
    out = sct.scatter(zeros, -1, flat_index, mv.reshape(input, lead + (-1,)))
    return mv.reshape(out, lead + outs)


def _sizes(value, n: int) -> tuple:
    """An int, or a sequence of n ints, as a tuple of n ints."""
    return tuple(int(v) for v in value) if isinstance(value, (tuple, list)) else (int(value),) * n


def _unpool_size(ins: tuple, kernel: tuple, stride: tuple, padding: tuple, output_size) -> tuple:
    """The spatial output size: the one max pooling would have come from, (n - 1) * stride - 2 * padding + kernel,
    or output_size (spatial sizes, or the whole shape), which must lie strictly within one stride of it."""
    default = tuple((n - 1) * s - 2 * p + k for n, k, s, p in zip(ins, kernel, stride, padding))
    if output_size is None:
        return default
    sizes = tuple(int(v) for v in output_size)
    if len(sizes) == len(ins) + 2:
        sizes = sizes[2:]
    if len(sizes) != len(ins):
        raise ValueError(f"output_size should be a sequence containing {len(ins)} or {len(ins) + 2} elements, but it "
                         f"has a length of '{len(sizes)}'")
    for d, (want, base, s) in enumerate(zip(sizes, default, stride)):
        if not base - s < want < base + s:
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be between {base - s} and '
                             f"{base + s})")
    return sizes


def _check_unpool_index(flat_index, plane: int, outs: tuple) -> None:
    """PyTorch's error for an index outside the output plane (read on the host at the next sync on a GPU)."""
    idx, dev = flat_index._data, flat_index._device
    if not idx.size:
        return

    def error():
        bad = idx[(idx < 0) | (idx >= plane)]
        return RuntimeError(f"Found an invalid max index: {int(bad.ravel()[0])} (output volumes are of size "
                            f"{'x'.join(str(n) for n in outs)})")
    dev.backend.raise_if((idx.min() < 0) | (idx.max() >= plane), error, dev.index or 0)


# ---------------------------------------------------------------- channel dropout and alpha dropout

def _drop_mask(input, p: float, mask_shape: tuple):
    """A mask of mask_shape (broadcast against input): 1 / (1 - p) where kept, 0 where dropped (each
    dropped with probability p), in input's dtype, from the device's seeded generator."""
    dev = input._device
    dt = input._data.dtype
    if p == 1.0:
        return make(dev.backend.xp.zeros(mask_shape, dtype=dt), dev)
    # float32 draws: half the memory and time of float64 on a GPU; the mask is cast once, scaled in place
    mask = (_random.generator(dev).random(mask_shape, dtype=np.float32) >= p).astype(dt)
    mask *= 1.0 / (1.0 - p)
    return make(mask, dev)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout(input, p: float, training: bool, inplace: bool, batched: bool):
    """Zero whole channels: one draw per (sample, channel), the mask broadcast over the other dims."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    shape = input._data.shape
    lead = 2 if batched else 1
    mask = _drop_mask(input, p, shape[:lead] + (1,) * (len(shape) - lead))
    return ip.inplace(input, "dropout_", ew.mul, mask) if inplace else ew.mul(input, mask)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each channel of (N, C, L) or (C, L) with probability p (the whole length at once) and scale
    the rest by 1/(1-p): dropout for 1-d feature maps, whose neighbours are strongly correlated."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           f"dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           f"channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, batched=input.dim() == 3)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each channel of (N, C, H, W) or (C, H, W) with probability p. As PyTorch, a 3-d input is
    taken as (N, C, L) (with its warning), other ranks as (N, C, ...) with a warning too."""
    nd = input.dim()
    if nd == 3:
        warn("dropout2d: a 3-D input is taken as (N, C, L) and whole channels of length L are dropped, as "
             "PyTorch does today (it plans to read it as an unbatched (C, H, W)); dropout1d does this unwarned")
    elif nd != 4:
        warn(f"dropout2d: a {nd}-D input is deprecated (PyTorch plans to refuse it); dropout2d drops channels "
             f"of inputs with 2 spatial dims, (N, C, H, W) or (C, H, W): use dropout for other shapes")
    return _feature_dropout(input, p, training, inplace, batched=nd >= 2)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each channel of (N, C, D, H, W) or (C, D, H, W) with probability p."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"dropout3d: Expected 4D or 5D input, but received a {input.dim()}D input")
    return _feature_dropout(input, p, training, inplace, batched=input.dim() == 5)


_ALPHA_PRIME = _SELU_ALPHA * _SELU_SCALE  # SELU's negative saturation value is -alpha'


def _alpha_dropout(input, p: float, training: bool, inplace: bool, mask_shape):
    """Alpha dropout (Klambauer et al. 2017, for SELU networks): dropped values become SELU's
    saturation -alpha', then an affine map a * x + b restores zero mean and unit variance:
    a = ((1 - p)(1 + p alpha'^2))^-1/2, b = a alpha' p (so kept: a x + b, dropped: a alpha' (p - 1))."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return ew.mul(input, 0.0)
    a = 1.0 / math.sqrt((_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
    keep = ew.cast(ew.ne(_drop_mask(input, p, mask_shape), 0), input._data.dtype)
    shift = ew.add(ew.mul(ew.sub(keep, 1.0), _ALPHA_PRIME * a), _ALPHA_PRIME * a * p)
    fn = lambda x: ew.add(ew.mul(x, ew.mul(keep, a)), shift)  # noqa: E731
    return ip.inplace(input, "alpha_dropout_", fn) if inplace else fn(input)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Alpha dropout of each element (note PyTorch's default training=False here)."""
    return _alpha_dropout(input, p, training, inplace, input._data.shape)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Alpha dropout of whole channels of (N, C, ...) input."""
    shape = input._data.shape
    return _alpha_dropout(input, p, training, inplace, shape[:2] + (1,) * (len(shape) - 2))


# ---------------------------------------------------------------- group, instance and RMS normalization

def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Normalise each group of C / num_groups channels of every sample of (N, C, *) input over the
    group's channels and positions (biased variance), then scale and shift per channel."""
    shape = input._data.shape
    if len(shape) < 2 or shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(shape)} and num_groups={num_groups}")
    grouped = mv.reshape(input, (shape[0], num_groups, math.prod(shape[1:]) // num_groups))  # (no -1: N may be 0)
    out, _, _ = norm.normalize_over(grouped, (2,), eps)
    return norm.affine(mv.reshape(out, shape), weight, bias, len(shape))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5):
    """Normalise each channel of each sample of (N, C, *) input over its positions. With
    use_input_stats=False the running statistics are used instead; with them given and
    use_input_stats, they are updated (no gradient) with the batch's mean of the instances' means
    and unbiased variances, as PyTorch."""
    shape = input._data.shape
    if len(shape) < 3:
        raise ValueError(f"instance_norm: expected an input of at least 3 dims (N, C, *), got {list(shape)}")
    axes = tuple(range(2, len(shape)))
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
        return _with_running_stats(input, running_mean, running_var, weight, bias, eps)
    out, mean, var = norm.normalize_over(input, axes, eps)
    if running_mean is not None or running_var is not None:
        n = math.prod(shape[2:])
        with no_grad():
            if running_mean is not None:
                batch = rd.mean(mv.reshape(mean.detach(), shape[:2]), 0)
                _update_running(running_mean, batch, momentum)
            if running_var is not None:
                batch = rd.mean(ew.mul(mv.reshape(var.detach(), shape[:2]), n / max(n - 1, 1)), 0)
                _update_running(running_var, batch, momentum)
    return norm.affine(out, weight, bias, len(shape))


def rms_norm(input, normalized_shape, weight=None, eps: float | None = None):
    """x / sqrt(mean(x²) + eps) * weight over the last len(normalized_shape) dims (no centring);
    eps=None means the machine epsilon of input's dtype, as PyTorch."""
    ns = (int(normalized_shape),) if isinstance(normalized_shape, int) else tuple(int(s) for s in normalized_shape)
    shape = input._data.shape
    if not ns or tuple(shape[len(shape) - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in ns)}], but got input of size{list(shape)}")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    axes = tuple(range(len(shape) - len(ns), len(shape)))
    out = ew.mul(input, ew.rsqrt(ew.add(rd.mean(ew.mul(input, input), axes, keepdim=True), eps)))
    return out if weight is None else ew.mul(out, weight)


@tensor_args("input")
def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
    """x / (k + alpha * mean of x² over `size` neighbouring channels) ** beta, for (N, C, *) input: the
    window of channel c runs from c - size // 2 to c + (size - 1) // 2, channels outside it counting as 0
    (AlexNet's normalisation across channels). The window sum is `size` shifted slices of the padded x²."""
    nd = input._data.ndim
    if nd < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {nd} dimensions)")
    if size <= 0:
        raise RuntimeError(f"local_response_norm: size should be greater than zero, but got {size}")
    if input._data.size == 0:
        return input
    channels = input._data.shape[1]
    squares = pad(ew.mul(input, input), (0, 0) * (nd - 2) + (size // 2, (size - 1) // 2))
    window = mv.narrow(squares, 1, 0, channels)
    for start in range(1, size):
        window = ew.add(window, mv.narrow(squares, 1, start, channels))
    scale = ew.pow(ew.add(ew.mul(ew.div(window, size), alpha), k), beta)
    return ew.div(input, scale)


# ---------------------------------------------------------------- resampling: interpolate, pixel shuffle

_INTERPOLATE_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area", "lanczos")
_LINEAR_MODES = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}  # the interpolating modes: spatial dims
_ANTIALIAS_RADIUS = {"bilinear": 1, "bicubic": 2, "lanczos": 3}  # antialias=True: how far each filter reaches


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False):
    """Resize (N, C, L), (N, C, H, W) or (N, C, D, H, W) input to `size`, or by `scale_factor` (output
    size floor(in * s)), as torch.nn.functional.interpolate: 'nearest' (source index floor(out * scale)),
    'nearest-exact' (floor((out + 0.5) * scale)), 'linear'/'bilinear'/'trilinear' and 'bicubic' (align_corners
    both ways) and 'area' (adaptive average pooling). `scale` is in / out, or 1 / scale_factor when that
    was given and recompute_scale_factor is not set (as PyTorch). One dim at a time, composed of indexing,
    so gradients are automatic. antialias=True (bilinear, bicubic, lanczos; 4D input) filters as it
    shrinks: `_antialiased`. Deviation: only 'nearest' modes take integer tensors (PyTorch also resizes
    uint8 images, with fixed-point weights): convert to float first."""
    spatial = input.dim() - 2
    if mode not in _INTERPOLATE_MODES:
        raise NotImplementedError(f"interpolate: mode '{mode}' is not implemented in tinygrad_lab (available: "
                                  f"{', '.join(_INTERPOLATE_MODES)})")
    if antialias and (mode not in _ANTIALIAS_RADIUS or spatial != 2):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if mode == "lanczos" and not antialias:
        raise ValueError("Lanczos mode requires antialias=True")
    if spatial not in (1, 2, 3):
        raise NotImplementedError(f"interpolate: {input.dim()}D input is not implemented in tinygrad_lab (3D "
                                  f"(N, C, L), 4D (N, C, H, W) and 5D (N, C, D, H, W) are)")
    if mode in _LINEAR_MODES and _LINEAR_MODES[mode] != spatial:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_LINEAR_MODES[mode] + 2}D input")
    if align_corners is not None and mode not in _LINEAR_MODES and mode != "lanczos":
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if mode == "lanczos" and align_corners:
        raise ValueError("Lanczos mode does not support align_corners=True")
    if not mode.startswith("nearest") and input._data.dtype.kind != "f":
        raise NotImplementedError(f"interpolate: mode '{mode}' on a {act.type_name(input)} tensor is not "
                                  f"implemented in tinygrad_lab (only the nearest modes take integers): convert "
                                  f"it to float first, input.float()")
    outs, scales = _resize_sizes(input._data.shape[2:], size, scale_factor, recompute_scale_factor)
    if antialias:
        return _antialiased(input, outs, scales, mode, bool(align_corners))
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[spatial - 1](input, outs)
    x = input
    for d, (n_in, n_out, scale) in enumerate(zip(input._data.shape[2:], outs, scales)):
        dim = 2 + d
        if mode.startswith("nearest"):
            x = _take(x, dim, _nearest_index(n_in, n_out, scale, mode == "nearest-exact"))
        elif mode == "bicubic":
            x = _cubic_along(x, dim, n_in, n_out, scale, bool(align_corners))
        else:
            x = _lerp_along(x, dim, n_in, n_out, scale, bool(align_corners))
    return x


def _resize_sizes(ins: tuple, size, scale_factor, recompute: bool | None) -> tuple:
    """The output sizes, and per dim the scale (or None: in / out) the source positions use."""
    k = len(ins)
    if (size is None) == (scale_factor is None):
        raise ValueError("either size or scale_factor should be defined" if size is None else
                         "only one of size or scale_factor should be defined")
    if size is not None:
        outs = tuple(int(s) for s in size) if isinstance(size, (tuple, list)) else (int(size),) * k
        if len(outs) != k:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(ins)} and output size of {list(outs)}. Please provide "
                             f"input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             f"format.")
        return outs, (None,) * k
    factors = tuple(float(f) for f in scale_factor) if isinstance(scale_factor, (tuple, list)) else \
        (float(scale_factor),) * k
    if len(factors) != k:
        raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                         f"with spatial dimensions of {list(ins)} and scale_factor of shape {list(factors)}.")
    outs = tuple(int(math.floor(n * f)) for n, f in zip(ins, factors))
    return outs, (None,) * k if recompute else tuple(1.0 / f for f in factors)


def _scale(n_in: int, n_out: int, scale) -> float:
    return n_in / n_out if scale is None else scale


def _nearest_index(n_in: int, n_out: int, scale, exact: bool) -> np.ndarray:
    """Source index of each output position, computed in float32 as PyTorch's kernel does."""
    s = np.float32(_scale(n_in, n_out, scale))
    pos = np.arange(n_out, dtype=np.float32) + (np.float32(0.5) if exact else np.float32(0))
    return np.minimum(np.floor(pos * s).astype(np.int64), n_in - 1)


def _source_positions(n_in: int, n_out: int, scale, align_corners: bool, dt, clamp: bool) -> np.ndarray:
    """Where each output sits in the input, in the input's precision as PyTorch's kernels compute it:
    out * (n_in - 1) / (n_out - 1) with align_corners, else (out + 0.5) * scale - 0.5 (clamped at 0 for
    the linear modes, not for bicubic)."""
    if align_corners:
        return np.arange(n_out, dtype=dt) * dt.type((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    src = (np.arange(n_out, dtype=dt) + dt.type(0.5)) * dt.type(_scale(n_in, n_out, scale)) - dt.type(0.5)
    return np.maximum(src, dt.type(0)) if clamp else src


def _lerp_along(x, dim: int, n_in: int, n_out: int, scale, align_corners: bool):
    """Linear interpolation along dim: (1 - t) * x[i0] + t * x[i1] at the source position of each output."""
    dt = x._data.dtype
    src = _source_positions(n_in, n_out, scale, align_corners, dt, clamp=True)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    t = src - i0.astype(dt)
    return ew.add(ew.mul(_take(x, dim, i0), _weights(x, dim, dt.type(1) - t)),
                  ew.mul(_take(x, dim, i1), _weights(x, dim, t)))


def _cubic_along(x, dim: int, n_in: int, n_out: int, scale, align_corners: bool):
    """Cubic convolution along dim (Keys' kernel with a = -0.75, PyTorch's bicubic): each output is the
    weighted sum of the four inputs around its source position, i0 - 1 .. i0 + 2, indices clamped to
    the edges. With t = position - i0 the weights are far(t + 1), near(t), near(1 - t), far(2 - t)."""
    dt = x._data.dtype
    src = _source_positions(n_in, n_out, scale, align_corners, dt, clamp=False)
    i0 = np.floor(src).astype(np.int64)
    t = src - i0.astype(dt)
    a = dt.type(-0.75)
    out = None
    for k, w in enumerate((_keys_far(t + 1, a), _keys_near(t, a), _keys_near(1 - t, a), _keys_far(2 - t, a))):
        term = ew.mul(_take(x, dim, np.clip(i0 - 1 + k, 0, n_in - 1)), _weights(x, dim, w))
        out = term if out is None else ew.add(out, term)
    return out


def _weights(x, dim: int, w: np.ndarray):
    """Per-output weights along dim, shaped to broadcast over the dims after it, on x's device."""
    shape = (-1,) + (1,) * (x._data.ndim - 1 - dim)
    return make(x._device.backend.xp.asarray(w.reshape(shape)), x._device)


def _antialiased(x, outs: tuple, scales: tuple, mode: str, align_corners: bool):
    """interpolate's antialias=True: a separable filter, one matrix product per spatial dim (the weights
    `_filter_weights`), width then height."""
    for dim in (3, 2):
        n_in, n_out = x._data.shape[dim], outs[dim - 2]
        if align_corners:
            scale = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            scale = _scale(n_in, n_out, scales[dim - 2])
        w = _filter_weights(n_in, n_out, scale, mode).astype(x._data.dtype)
        w = make(x._device.backend.xp.asarray(w if dim == 2 else w.T.copy()), x._device)
        # (n_out, n_in) @ (..., n_in, W) for the height; (..., n_in) @ (n_in, n_out) for the width
        x = la.matmul(w, x) if dim == 2 else la.matmul(x, w)
    return x


def _filter_weights(n_in: int, n_out: int, scale: float, mode: str) -> np.ndarray:
    """The (n_out, n_in) weights of an antialiased resize along one dim (as PIL resamples images, and
    PyTorch's antialias=True): output i is centred at c = scale * (i + 1/2) in the input. Shrinking
    (scale > 1), the filter is stretched by the scale, so that every input pixel counts: input j gets
    filter((j + 1/2 - c) / scale) within radius * scale of c. Each row is normalised to sum to 1."""
    radius = _ANTIALIAS_RADIUS[mode]
    stretch = max(scale, 1.0)
    centres = scale * (np.arange(n_out) + 0.5)
    first = np.maximum((centres - radius * stretch + 0.5).astype(np.int64), 0)  # the window, truncated as C casts
    stop = np.minimum((centres + radius * stretch + 0.5).astype(np.int64), n_in)
    j = np.arange(n_in)
    w = _FILTERS[mode]((j + 0.5 - centres[:, None]) / stretch)
    w[(j < first[:, None]) | (j >= stop[:, None])] = 0.0
    total = w.sum(axis=1, keepdims=True)
    return np.divide(w, total, out=np.zeros_like(w), where=total != 0)


def _keys_near(s, a):
    """Keys' cubic convolution kernel at distance s, |s| <= 1 (its parameter a: -0.75 for PyTorch's bicubic,
    -0.5 for the antialiased one, as PIL's)."""
    return ((a + 2) * s - (a + 3)) * s * s + 1


def _keys_far(s, a):
    """Keys' kernel at distance s, 1 < |s| < 2."""
    return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a


def _keys_cubic(s: np.ndarray, a: float = -0.5) -> np.ndarray:
    """Keys' kernel at any distance (0 from 2 on)."""
    s = np.abs(s)
    return np.where(s < 1, _keys_near(s, a), np.where(s < 2, _keys_far(s, a), 0.0))


_FILTERS = {
    "bilinear": lambda s: np.maximum(0.0, 1.0 - np.abs(s)),                       # the triangle
    "bicubic": _keys_cubic,
    "lanczos": lambda s: np.where(np.abs(s) < 3, np.sinc(s) * np.sinc(s / 3), 0.0),  # sinc windowed by sinc, a = 3
}


def _take(x, dim: int, index: np.ndarray):
    """x indexed along dim by an integer array (gradients add up where an index repeats)."""
    key = (slice(None),) * dim + (creation.tensor(index, device=x._device),)
    return ix.getitem(x, key)


def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None):
    """interpolate (PyTorch's deprecated name, with its warning)."""
    warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def _always_indices(pool):
    """`pool` (an adaptive max pooling) returning (output, indices) whatever return_indices says, as PyTorch's
    *_with_indices names."""
    def with_indices(input, output_size, return_indices: bool = False):
        return pool(input, output_size, return_indices=True)
    with_indices.__name__ = with_indices.__qualname__ = pool.__name__ + "_with_indices"
    return with_indices


adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices = (
    _always_indices(pool) for pool in (adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d))


def upsample_nearest(input, size=None, scale_factor=None):
    """interpolate(mode='nearest'): PyTorch's deprecated name, with its warning."""
    warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """interpolate(mode='bilinear', align_corners=True): PyTorch's deprecated name, with its warning."""
    warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, "bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor: int):
    """(*, C·r², H, W) -> (*, C, H·r, W·r): each group of r² channels becomes an r x r block of pixels
    (sub-pixel convolution's rearrangement; a reshape, a permute and a reshape)."""
    r = int(upscale_factor)
    shape = input._data.shape
    if len(shape) < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{len(shape)} dimension(s)")
    if r <= 0 or shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={shape[-3]} is not divisible by {r * r}")
    if r == 1:  # nothing moves: a copy, as PyTorch's (the reshapes below would give a view of input)
        return ew.Clone.apply(input)
    lead, (c, h, w) = shape[:-3], shape[-3:]
    k = len(lead)
    x = mv.reshape(input, lead + (c // (r * r), r, r, h, w))
    x = mv.permute(x, *range(k), k, k + 3, k + 1, k + 4, k + 2)
    return mv.reshape(x, lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor: int):
    """(*, C, H·r, W·r) -> (*, C·r², H, W): the inverse of pixel_shuffle."""
    r = int(downscale_factor)
    shape = input._data.shape
    if len(shape) < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{len(shape)} dimension(s)")
    if r <= 0 or shape[-2] % r or shape[-1] % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but got "
                           f"input of size {list(shape)} and downscale_factor={r}")
    if r == 1:  # as pixel_shuffle
        return ew.Clone.apply(input)
    lead, (c, h, w) = shape[:-3], shape[-3:]
    k = len(lead)
    x = mv.reshape(input, lead + (c, h // r, r, w // r, r))
    x = mv.permute(x, *range(k), k, k + 2, k + 4, k + 1, k + 3)
    return mv.reshape(x, lead + (c * r * r, h // r, w // r))


@tensor_args("input")
def channel_shuffle(input, groups: int):
    """Interleave the channels of (N, C, *) input across `groups` groups (ShuffleNet): seen as (N, groups,
    C / groups, *), the two channel dims are swapped, so channel g * (C / groups) + i moves to i * groups + g."""
    shape = input._data.shape
    if len(shape) <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    channels = shape[1]
    if channels % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {channels} channels and {groups} "
                           f"groups.")
    split = mv.reshape(input, (shape[0], groups, channels // groups) + shape[2:])
    return mv.reshape(mv.transpose(split, 1, 2), shape)


# ---------------------------------------------------------------- attention

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False):
    """softmax(Q Kᵀ · scale + mask) V for query (..., L, E), key (..., S, E), value (..., S, Ev):
    scale defaults to 1/sqrt(E); attn_mask broadcasts to (..., L, S): bool (True: may attend) or float
    (added to the scores); is_causal lets position i attend to positions <= i only; dropout_p drops
    attention weights (always, as PyTorch's functional form). A query that may attend to nothing gets
    zeros (as PyTorch). enable_gqa: key and value may have fewer heads (dim -3) than query, each
    shared by a group of query heads. Composed of ops, so the graph shows every step."""
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    key, value = _grouped_heads(query, key, value, enable_gqa)
    if key._data.shape[-1] != query._data.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query and key must have the same embedding size, got "
                           f"query {_shape(query)} and key {_shape(key)}")
    if is_causal:
        L, S = query._data.shape[-2], key._data.shape[-2]
        attn_mask = make(query._device.backend.xp.tril(query._device.backend.xp.ones((L, S), dtype=bool)),
                         query._device)
    if attn_mask is not None and attn_mask._data.dtype == np.bool_:
        attn_mask = _additive_mask(ew.logical_not(attn_mask), query._data.dtype)
    out, _ = _attention(query, key, value, attn_mask, dropout_p, True, scale)
    return out


def _grouped_heads(query, key, value, enable_gqa: bool) -> tuple:
    """key and value with each head repeated for its group of query heads (grouped-query attention)."""
    hq, hk = (query._data.shape[-3], key._data.shape[-3]) if query._data.ndim >= 3 else (1, 1)
    if not enable_gqa or hq == hk:
        return key, value
    if hq % hk:
        raise RuntimeError(f"scaled_dot_product_attention: the number of query heads ({hq}) must be a multiple of "
                           f"the number of key/value heads ({hk}) with enable_gqa=True")

    def repeat(t):
        s = t._data.shape
        wide = mv.unsqueeze(t, -3).expand(*s[:-2], hq // hk, *s[-2:])
        return mv.reshape(wide, s[:-3] + (hq,) + s[-2:])
    return repeat(key), repeat(value)


def _additive_mask(blocked, dtype):
    """A bool mask (True: blocked) as a float one: -inf where blocked, 0 elsewhere."""
    zeros = creation.zeros(blocked._data.shape, dtype=dtype, device=blocked._device)
    return ew.where(blocked, float("-inf"), zeros)


def _attention(q, k, v, mask, dropout_p: float, training: bool, scale: float | None):
    """The attention every form here runs: weights = softmax(q kᵀ · scale + mask) (rows with no
    position left: 0), dropout on the weights, out = weights v. Returns (out, weights)."""
    if scale is None:
        scale = 1.0 / math.sqrt(q._data.shape[-1])
    scores = ew.mul(la.matmul(q, mv.transpose(k, -2, -1)), scale)
    if mask is None:
        weights = act.softmax(scores, -1)
    else:
        scores = ew.add(scores, mask)
        dead = rd.all(ew.eq(scores, float("-inf")), -1, keepdim=True)  # nothing to attend to
        if bool(dead._data.any()):
            weights = ew.where(dead, 0.0, act.softmax(ew.where(dead, 0.0, scores), -1))
        else:
            weights = act.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training)
    return la.matmul(weights, v), weights


# ---------------------------------------------------------------- bags of embeddings

def embedding_bag(input, weight, offsets=None, max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False, padding_idx: int | None = None):
    """The sum, mean or max of each bag of embedding rows, without building the (bag, word, dim)
    tensor PyTorch's docs describe first: input is (B, n) (each row a bag) or 1-d with `offsets`,
    the start of each bag (include_last_offset: one more, the end of the last). per_sample_weights
    (mode 'sum' only) scale each row; entries equal to padding_idx are left out (of the mean's count
    too); an empty bag gives zeros. Composed of indexing ops: the rows are gathered, then added into
    their bag (IndexAddInto), or maxed per bag (the gradient goes to each bag's argmax)."""
    idx, bag_of, n_bags = _bags(input, offsets, include_last_offset)
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    if per_sample_weights is not None and per_sample_weights._data.shape != input._data.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({_shape(per_sample_weights)}) is not None, then it "
                         f"must have the same shape as the input ({_shape(input)})")
    keep = np.ones(idx.shape, dtype=bool) if padding_idx is None else idx != _padding_index(padding_idx, weight)
    rows = embedding(creation.tensor(idx[keep], device=weight._device), weight, None, max_norm, norm_type,
                     scale_grad_by_freq, sparse)
    if per_sample_weights is not None:
        psw = ix.getitem(mv.reshape(per_sample_weights, (-1,)), creation.tensor(np.flatnonzero(keep),
                                                                                 device=weight._device))
        rows = ew.mul(rows, mv.unsqueeze(psw, 1))
    bag_of = bag_of[keep]
    if mode == "max":
        return _bag_max(rows, bag_of, n_bags)
    total = ix.IndexAddInto.apply(rows, (n_bags, weight._data.shape[1]), weight._device.backend.xp.asarray(bag_of),
                                  False)
    if mode == "sum":
        return total
    counts = np.maximum(np.bincount(bag_of, minlength=n_bags), 1).astype(weight._data.dtype)
    return ew.div(total, creation.tensor(counts.reshape(-1, 1), device=weight._device))


def _padding_index(padding_idx: int, weight) -> int:
    n = weight._data.shape[0]
    if not -n <= padding_idx < n:
        raise AssertionError("padding_idx must be within num_embeddings")
    return padding_idx + n if padding_idx < 0 else padding_idx


def _bags(input, offsets, include_last_offset: bool) -> tuple:
    """The indices (1-d, host), the bag of each, and the number of bags, checked as PyTorch does."""
    if input._data.dtype not in (np.int64, np.int32):
        raise ValueError(f"embedding_bag: expected input to be an integer tensor (Long or Int), got {input.dtype}")
    idx = np.asarray(input._device.backend.to_host(input._data)).astype(np.int64)
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets).__name__}")
        return idx.reshape(-1), np.repeat(np.arange(idx.shape[0]), idx.shape[1]), idx.shape[0]
    if idx.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}")
    if offsets is None or offsets.dim() != 1:
        raise ValueError(f"offsets has to be a 1D Tensor but got {None if offsets is None else offsets.dim()}")
    starts = np.asarray(offsets._device.backend.to_host(offsets._data)).astype(np.int64)
    if starts.size and starts[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {starts[0]}")
    if starts.size and (starts[-1] > idx.size or np.any(np.diff(starts) < 0)):
        raise RuntimeError(f"offsets must be non-decreasing and at most the input's length {idx.size}, got "
                           f"{starts.tolist()}")
    if include_last_offset:
        if starts.size == 0 or starts[-1] != idx.size:
            raise RuntimeError(f"embedding_bag: with include_last_offset=True the last offset is the end of the last "
                               f"bag, the number of indices ({idx.size}), but offsets are {starts.tolist()}")
        starts = starts[:-1]
    ends = np.append(starts[1:], idx.size)
    return idx, np.repeat(np.arange(starts.size), ends - starts), starts.size


def _bag_max(rows, bag_of: np.ndarray, n_bags: int):
    """Each bag's elementwise max of its rows (zeros for an empty bag): the rows are laid out as
    (bags, longest bag, dim), padded with -inf, and maxed over the middle dim."""
    counts = np.bincount(bag_of, minlength=n_bags)
    width = max(int(counts.max(initial=0)), 1)
    slot = np.arange(bag_of.size) - np.repeat(np.cumsum(counts) - counts, counts)  # place within its bag
    table = np.full((n_bags, width), bag_of.size, dtype=np.int64)  # bag_of.size: the -inf row
    table[bag_of, slot] = np.arange(bag_of.size)
    dim = rows._data.shape[1]
    padded = mv.cat([rows, creation.full((1, dim), float("-inf"), dtype=rows.dtype, device=rows._device)], 0)
    best = rd.max(ix.getitem(padded, creation.tensor(table, device=rows._device)), 1).values
    empty = creation.tensor((counts == 0).reshape(-1, 1), device=rows._device)
    return ew.where(empty, 0.0, best)

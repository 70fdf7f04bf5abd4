"""tinygrad_lab: a define-by-run autograd engine with PyTorch's API, built to be read.

    import tinygrad_lab as tl
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad  # tensor([2., 4., 6.])
"""
from . import autograd, dtypes, ops
from .tensor import Tensor  # first: the tensor() factory below must replace the submodule attribute
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.tensor_base import Size
from .backends import Device as device
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, normal,
                       ones, ones_like, rand, randint, randn, randperm, tensor, zeros, zeros_like)
from .dtypes import DType as dtype
from .dtypes import get_default_dtype, set_default_dtype
from .ops.elementwise import (abs, add, allclose, ceil, clamp, cos, div, eq, equal, exp, floor, ge, gt, isclose, le,
                              log, log1p, logical_and, logical_not, logical_or, lt, maximum, minimum, mul, ne, neg,
                              pow, relu, remainder, round, rsqrt, sigmoid, sign, sin, sqrt, sub, tanh, trunc)
from .ops.indexing import gather
from .ops.conv import (avg_pool1d, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,
                       max_pool1d, max_pool2d, max_pool3d)  # torch.conv2d etc. (torch has no top-level avg_pool2d/3d)
from .ops.linalg import matmul
from .ops.movement import (broadcast_to, cat, chunk, flatten, flip, meshgrid, permute, reshape, split, squeeze,
                           stack, t, transpose, unsqueeze)
from .ops.reduce import (all, amax, amin, any, argmax, argmin, logsumexp, max, mean, min, prod, std, sum,
                         var)
from .random import Generator, initial_seed, manual_seed, seed
# ---- the ops of a first deep-learning course (the ops branch): math, scans, sorting, indexing, products, linalg
from .creation import (bernoulli, get_default_device, logspace, multinomial, rand_like, randint_like, randn_like,
                       set_default_device, tril_indices, triu_indices)
from .creation import (asarray, bartlett_window, blackman_window, frombuffer, hamming_window, hann_window,
                       kaiser_window)
from .ops.activation import erf
from .ops.decompositions import det, logdet, matrix_power, slogdet
from .ops.decompositions import inv as inverse, pinv as pinverse
from .ops.factorizations import cholesky_inverse, cholesky_solve, dist, lu_unpack, matrix_exp, norm, qr, svd
from .ops.diagonal import diag, diag_embed, diagflat, diagonal, diagonal_scatter, trace, tril, triu
from .ops.linalg import (addbmm, addmm, addmv, addr, baddbmm, bmm, chain_matmul, dot, einsum, ger, inner, mm,
                         outer, tensordot, vdot)
from .ops.linalg import matvec as mv
from .ops.movement import (atleast_1d, atleast_2d, atleast_3d, column_stack, dstack, hstack, movedim, narrow, ravel,
                           roll, select, tile, unbind, unflatten, vstack)
from .ops.pointwise import (acos, acosh, addcdiv, addcmul, asin, asinh, atan, atan2, atanh, clamp_max, clamp_min,
                            copysign, cosh, deg2rad, exp2, expm1, float_power, fmod, frac, hypot, isfinite, isinf,
                            isnan, isneginf, isposinf, lerp, log2, log10, logaddexp, logaddexp2, nan_to_num,
                            rad2deg, reciprocal, signbit, sinh, square, tan)
from .ops.pointwise import (bitwise_left_shift, bitwise_right_shift, fmax, fmin, gcd, heaviside, lcm,
                            nextafter)
from .ops.elementwise import bitwise_and, bitwise_not, bitwise_or, bitwise_xor, logical_xor
from .random import get_rng_state, set_rng_state
from ._format import set_printoptions
from .ops.scan import cummax, cummin, cumprod, cumsum, logcumsumexp
from .ops.scatter import (argwhere, count_nonzero, index_add, index_copy, index_fill, index_put, index_select,
                          masked_fill, masked_scatter, masked_select, nonzero, repeat_interleave, scatter, scatter_add,
                          scatter_reduce, take, take_along_dim, where)
from .ops.sorting import (argsort, bincount, histc, kthvalue, median, mode, msort, nanmedian, sort, topk, unique,
                          unique_consecutive)
from .ops.rearrange import (block_diag, broadcast_shapes, broadcast_tensors, cartesian_prod, combinations, dsplit,
                            fliplr, flipud, hsplit, kron, rot90, row_stack, tensor_split, unravel_index, vander,
                            vsplit)
from .ops.sorting import bucketize, isin, searchsorted
from .ops.ctc import ctc_loss_enum as ctc_loss  # torch.ctc_loss: the reduction as ATen's int
from .ops.special import digamma, erfc, erfinv, lgamma, logit, mvlgamma, polygamma, sinc, xlogy
from .ops.statistics import (aminmax, cdist, corrcoef, cov, cumulative_trapezoid, diff, histogram, nanmean,
                             nanquantile, nansum, quantile, std_mean, trapezoid, var_mean)
# PyTorch's other top-level names: aliases, legacy linalg, frexp/ldexp, Bessel and incomplete gamma functions,
# one-slice scatters, index_reduce, renorm, gradient, poisson, and the complex-number API answered for real tensors
from .ops.activation import log_softmax, softmax
from .ops.decompositions import renorm
from .ops.factorizations import cholesky, triangular_solve
from .ops.factorizations import legacy_lu as lu, legacy_lu_solve as lu_solve
from .ops.movement import narrow_copy
from .ops.pointwise import (conj, frexp, imag, is_complex, is_conj, is_neg, is_nonzero, isreal, ldexp, real,
                            resolve_conj, resolve_neg)
from .ops.scatter import index_reduce, select_scatter, slice_scatter
from .ops.special import i0, igamma, igammac
from .ops.statistics import gradient, trapz
from .creation import poisson, standard_gamma as _standard_gamma
from .threads import (are_deterministic_algorithms_enabled, get_num_interop_threads, get_num_threads,  # noqa: F401
                      is_deterministic_algorithms_warn_only_enabled, set_num_interop_threads, set_num_threads,
                      use_deterministic_algorithms)
from . import linalg, special  # noqa: E402  (torch.linalg, torch.special)
from . import signal  # noqa: E402  (torch.signal.windows)
# ----
from .serialization import load, save
from . import cuda
from . import accelerator
from .backends import cudnn as _cudnn, mps as _mps  # noqa: F401  (tinygrad_lab.backends.cudnn / .mps, as torch.backends)
from . import datasets, nn, optim, utils  # noqa: E402  (after the core: they build on it)
from . import distributions  # noqa: E402  (built on nn.functional)
from . import graph, jit  # noqa: E402  (read the engine and nn)
from .jit import compile  # noqa: E402, A004  (torch.compile: the model itself, see jit.compile)
from . import amp, profiler  # noqa: E402
from .amp import autocast, is_autocast_enabled  # noqa: E402
cuda.amp = amp.DeviceAmp("cuda")  # torch.cuda.amp's names (cuda.py cannot import amp: amp asks cuda about CUDA)
from . import func, testing  # noqa: E402  (function transforms over autograd and nn modules; assert_close)
from .func import vmap  # noqa: E402  (torch.vmap)
from . import multiprocessing  # noqa: E402  (tensors cross processes through shared memory, as in PyTorch)
from . import distributed  # noqa: E402  (MPI is loaded only by init_process_group)

__version__ = "0.1.0"

# dtypes under PyTorch's names (tinygrad_lab.float32, tinygrad_lab.long, ...)
bool = dtypes.bool_
uint8 = dtypes.uint8
int8 = dtypes.int8
int16 = short = dtypes.int16
int32 = int = dtypes.int32
int64 = long = dtypes.int64
float16 = half = dtypes.float16
float32 = float = dtypes.float32
float64 = double = dtypes.float64
finfo, iinfo, can_cast = dtypes.finfo, dtypes.iinfo, dtypes.can_cast
promote_types, result_type = dtypes.promote_types_of, dtypes.result_type_of

concat = concatenate = cat
clip = clamp
divide = div
multiply = mul
subtract = sub

# ---- the ops branch: PyTorch's other names, and out= on the functions programs call with it
from .ops.out import accepts_out as _accepts_out  # noqa: E402

arcsin, arccos, arctan, arcsinh, arccosh, arctanh, arctan2 = asin, acos, atan, asinh, acosh, atanh, atan2
moveaxis, swapdims, swapaxes = movedim, transpose, transpose
sgn, fix, negative, true_divide, clamp_max, clamp_min = sign, trunc, neg, div, clamp_max, clamp_min
absolute, greater, greater_equal, less, less_equal, not_equal = abs, gt, ge, lt, le, ne
pdist = nn.functional.pdist
cross = linalg.cross


def positive(input: Tensor) -> Tensor:  # noqa: A002 (PyTorch's parameter name)
    return input


def floor_divide(a, b):
    """a // b rounded down (integers stay integers), as torch.floor_divide."""
    return div(a, b, rounding_mode="floor")


def rsub(a, b, alpha=1):
    """b - alpha * a, as torch.rsub."""
    return sub(b, a, alpha=alpha)


def clone(input: Tensor) -> Tensor:  # noqa: A002
    return input.clone()


def zero_(input: Tensor) -> Tensor:  # noqa: A002
    """input filled with zeros in place (the same tensor back), as torch.zero_ and Tensor.zero_."""
    return input.zero_()


def numel(input: Tensor) -> int:  # noqa: A002
    return input.numel()


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_storage(obj) -> bool:
    return False  # tensors own their arrays: there are no storage objects


def detach(input: Tensor) -> Tensor:  # noqa: A002
    return input.detach()


def typename(obj) -> str:
    """A tensor's type name ('tinygrad_lab.FloatTensor'), or any other object's qualified class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    kind = type(obj)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def scalar_tensor(s, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding number s, in the default float dtype unless `dtype`, as torch.scalar_tensor."""
    return tensor(s * 1.0, dtype=dtype, device=device, requires_grad=requires_grad)  # (float is tinygrad_lab.float here)


def dropout(input: Tensor, p: float = 0.5, train: bool = True) -> Tensor:  # noqa: A002
    """torch.dropout: nn.functional.dropout with `train` for training."""
    return nn.functional.dropout(input, p, training=train)


for _name in ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "matmul", "mm", "bmm", "mv",
              "dot", "pow", "exp", "log", "sqrt", "rsqrt", "abs", "neg", "sin", "cos", "tan", "tanh", "sigmoid", "clamp",
              "clip", "maximum", "minimum", "remainder", "fmod", "atan2", "square", "cat", "concat", "stack",
              "cumsum", "cumprod", "addmm", "baddbmm", "where", "floor_divide", "erf", "lerp", "addcmul", "addcdiv"):
    globals()[_name] = _accepts_out(globals()[_name])
del _name


def is_floating_point(input: Tensor) -> bool:  # noqa: A002 (PyTorch's parameter name)
    return input.is_floating_point()


# last: the deprecated torch.range shadows Python's range builtin in this module from here on
from .creation import inclusive_range as range  # noqa: E402,A004

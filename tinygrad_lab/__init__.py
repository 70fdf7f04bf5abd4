"""tinygrad_lab: a define-by-run autograd engine with PyTorch's API, built to be read.

    import tinygrad_lab as tl
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad  # tensor([2., 4., 6.])
"""
from . import autograd, dtypes, ops
from .tensor import Tensor  # first: the tensor() factory below must replace the submodule attribute
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.tensor_base import Size
from .backends import Device as device
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, normal,
                       ones, ones_like, rand, randint, randn, randperm, tensor, zeros, zeros_like)
from .dtypes import DType as dtype
from .dtypes import get_default_dtype, set_default_dtype
from .ops.elementwise import (abs, add, allclose, ceil, clamp, cos, div, eq, equal, exp, floor, ge, gt, isclose, le,
                              log, log1p, logical_and, logical_not, logical_or, lt, maximum, minimum, mul, ne, neg,
                              pow, relu, remainder, round, rsqrt, sigmoid, sign, sin, sqrt, sub, tanh, trunc, where)
from .ops.indexing import gather
from .ops.linalg import matmul
from .ops.movement import (broadcast_to, cat, chunk, flatten, flip, permute, reshape, split, squeeze, stack, t,
                           transpose, unsqueeze)
from .ops.reduce import (all, amax, amin, any, argmax, argmin, logsumexp, max, mean, min, norm, prod, std, sum,
                         var)
from .random import initial_seed, manual_seed, seed
from .serialization import load, save
from . import cuda
from . import accelerator
from .backends import cudnn as _cudnn, mps as _mps  # noqa: F401  (tinygrad_lab.backends.cudnn / .mps, as torch.backends)
from . import datasets, nn, optim, utils  # noqa: E402  (after the core: they build on it)
from . import distributions  # noqa: E402  (built on nn.functional)
from . import graph, jit  # noqa: E402  (read the engine and nn)
from . import multiprocessing  # noqa: E402  (tensors cross processes through shared memory, as in PyTorch)
from . import distributed  # noqa: E402  (MPI is loaded only by init_process_group)

__version__ = "0.1.0"

# dtypes under PyTorch's names (tinygrad_lab.float32, tinygrad_lab.long, ...)
bool = dtypes.bool_
uint8 = dtypes.uint8
int32 = int = dtypes.int32
int64 = long = dtypes.int64
float16 = half = dtypes.float16
float32 = float = dtypes.float32
float64 = double = dtypes.float64

concat = concatenate = cat
clip = clamp
divide = div
multiply = mul
subtract = sub


def is_floating_point(input: Tensor) -> bool:  # noqa: A002 (PyTorch's parameter name)
    return input.is_floating_point()

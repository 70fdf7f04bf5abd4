"""tinygrad_lab.special: PyTorch's torch.special, the special functions under their SciPy-style names.
The ops live in ops/special.py, ops/activation.py and ops/elementwise.py."""
from __future__ import annotations

import math

from .ops import elementwise as _ew
from .ops.activation import erf, log_softmax, softmax  # noqa: F401
from .ops.elementwise import exp, log1p, round, sigmoid as expit  # noqa: F401
from .ops.pointwise import exp2, expm1  # noqa: F401
from .ops.reduce import logsumexp  # noqa: F401
from .ops.special import digamma, entr, erfc, erfinv, log_ndtr, logit, ndtri, polygamma, sinc, xlog1py, xlogy  # noqa: F401
from .ops.special import mvlgamma as multigammaln  # noqa: F401
from .ops.special import lgamma as gammaln  # noqa: F401
from .ops.special import i0, i0e, i1, i1e  # noqa: F401
from .ops.special import igamma as gammainc, igammac as gammaincc  # noqa: F401

psi = digamma

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr",
           "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy"]


def ndtr(x):
    """The standard normal CDF: (1 + erf(x / sqrt 2)) / 2, as torch.special.ndtr (so 0 below about -8.3, where
    PyTorch's is 0 too; exp(log_ndtr(x)) is accurate there)."""
    return _ew.mul(_ew.add(erf(_ew.mul(x, 1 / math.sqrt(2.0))), 1.0), 0.5)

"""tinygrad_lab.special: PyTorch's torch.special, the special functions under their SciPy-style names.
The ops live in ops/special.py, ops/activation.py and ops/elementwise.py."""
from __future__ import annotations

import math

from .ops import elementwise as _ew
from .ops.activation import erf, log_softmax, softmax  # noqa: F401
from .ops.elementwise import exp, log1p, round, sigmoid as expit  # noqa: F401
from .ops.pointwise import exp2, expm1  # noqa: F401
from .ops.reduce import logsumexp  # noqa: F401
from .ops.special import digamma, erfc, erfinv, logit, mvlgamma as multigammaln, polygamma, sinc, xlog1py, xlogy  # noqa: F401
from .ops.special import lgamma as gammaln  # noqa: F401
from .ops.special import i0, i0e, i1, i1e  # noqa: F401
from .ops.special import igamma as gammainc, igammac as gammaincc  # noqa: F401

psi = digamma

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr",
           "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy"]


def ndtr(x):
    """The standard normal CDF: (1 + erf(x / sqrt 2)) / 2, as torch.special.ndtr."""
    return _ew.mul(_ew.add(erf(_ew.mul(x, 1 / math.sqrt(2.0))), 1.0), 0.5)


def ndtri(p):
    """The standard normal quantile (the inverse of ndtr): sqrt 2 * erfinv(2p - 1), as torch.special.ndtri."""
    return _ew.mul(erfinv(_ew.sub(_ew.mul(p, 2.0), 1.0)), math.sqrt(2.0))


def log_ndtr(x):
    """log of the standard normal CDF, as torch.special.log_ndtr: log(erfc(-x / sqrt 2) / 2), accurate far
    into the left tail where ndtr underflows."""
    return _ew.log(_ew.mul(erfc(_ew.mul(x, -1 / math.sqrt(2.0))), 0.5))


def entr(x):
    """-x log x elementwise (0 at 0, -inf below 0), as torch.special.entr."""
    negative = _ew.lt(x, 0)
    return _ew.where(negative, float("-inf"), _ew.neg(xlogy(x, _ew.where(negative, 1.0, x))))

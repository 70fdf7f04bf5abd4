"""Ready-made parametrizations, as torch.nn.utils.parametrizations: weight_norm and spectral_norm, each a
small module registered with `parametrize.register_parametrization`."""
from __future__ import annotations

from ... import creation
from ...autograd.grad_mode import no_grad
from ...ops import elementwise as ew
from ...ops import linalg as la
from ...ops import movement as mv
from ...ops import reduce as rd
from ..functional import normalize
from ..modules.module import Module
from . import parametrize

__all__ = ["spectral_norm", "weight_norm"]


def _norm_except(v, dim: int | None):
    """The 2-norm of v over every dim but `dim` (kept, as size-1 dims elsewhere); dim None: of all of v."""
    if dim is None:
        return rd.norm(v)
    return rd.norm(v, 2, tuple(d for d in range(v.dim()) if d != dim % v.dim()), keepdim=True)


class _WeightNorm(Module):
    """w = g · v / ‖v‖ (Salimans & Kingma, 2016): a direction v and a length g, trained apart."""

    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim  # PyTorch's: dim=None is the whole tensor, written -1 there

    def forward(self, weight_g, weight_v):
        return ew.mul(weight_v, ew.div(weight_g, _norm_except(weight_v, self._dim(weight_v))))

    def right_inverse(self, weight):
        return _norm_except(weight, self._dim(weight)), weight

    def _dim(self, v):
        return None if self.dim == -1 and v.dim() > 1 else self.dim


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """module.<name> reparametrized as g · v / ‖v‖ (norms over every dim but `dim`): original0 is g,
    original1 is v."""
    return parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    """W / σ(W), σ the largest singular value, estimated by power iteration (Miyato et al., 2018): u and v
    are buffers that converge to the top singular vectors, one more iteration per forward in training."""

    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        self.dim = dim % weight.dim() if weight.dim() else 0
        self.n_power_iterations, self.eps = n_power_iterations, eps
        if weight.dim() > 1:
            matrix = self._matrix(weight)
            h, w = matrix.shape
            self.register_buffer("_u", self._unit(creation.randn(h, dtype=weight.dtype, device=weight.device)))
            self.register_buffer("_v", self._unit(creation.randn(w, dtype=weight.dtype, device=weight.device)))
            self._power_iterate(matrix, 15)

    def _matrix(self, weight):
        """The weight as a matrix: dim first, the other dims flattened."""
        return mv.flatten(mv.movedim(weight, self.dim, 0), 1) if weight.dim() > 1 else weight

    def _unit(self, x):
        return normalize(x, dim=0, eps=self.eps)

    def _power_iterate(self, matrix, iterations: int) -> None:
        with no_grad():
            for _ in range(iterations):
                self._u.copy_(self._unit(la.matvec(matrix, self._v)))
                self._v.copy_(self._unit(la.matvec(mv.t(matrix), self._u)))

    def forward(self, weight):
        if weight.dim() == 1:
            return self._unit(weight)
        matrix = self._matrix(weight)
        if self.training:
            self._power_iterate(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # the estimates as constants: σ's gradient flows through W only
        sigma = la.dot(u, la.matvec(matrix, v))
        return ew.div(weight, sigma)

    def right_inverse(self, value):
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """module.<name> divided by its largest singular value (so the layer is 1-Lipschitz); dim defaults to
    1 for transposed convolutions (their output channels), else 0."""
    weight = getattr(module, name)
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    return parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))

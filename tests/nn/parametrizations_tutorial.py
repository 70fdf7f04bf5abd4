"""PyTorch's Parametrizations tutorial (its steps condensed; our own words), run as `python THIS torch` or
`python THIS tinygrad_lab`: tests/nn/test_parametrize.py checks that both print the same."""
import sys

import numpy as np

if sys.argv[1] == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.utils.parametrize as parametrize
else:
    import tinygrad_lab as torch
    nn = torch.nn
    parametrize = torch.nn.utils.parametrize


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)


class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)


class Noop(nn.Module):
    def forward(self, X):
        return X

    def right_inverse(self, A):
        return A + 1


torch.manual_seed(0)
# a symmetric weight: registered, read, printed, saved
layer = nn.Linear(3, 3)
layer.weight.data = torch.tensor(np.arange(9.0).reshape(3, 3), dtype=torch.float32)
parametrize.register_parametrization(layer, "weight", Symmetric())
A = layer.weight
print(torch.allclose(A, A.T), A.tolist())
print(layer)
print(sorted(n for n, _ in layer.named_parameters()), sorted(layer.state_dict().keys()))

# two parametrizations in a row: the exponential of a skew-symmetric matrix is orthogonal
layer_orth = nn.Linear(3, 3)
parametrize.register_parametrization(layer_orth, "weight", Skew())
parametrize.register_parametrization(layer_orth, "weight", MatrixExponential())
X = layer_orth.weight
print("orthogonal:", torch.dist(X.T @ X, torch.eye(3)).item() < 1e-5)
print(parametrize.is_parametrized(layer_orth), parametrize.is_parametrized(layer_orth, "bias"))

# right_inverse: at registration and on assignment
l2 = nn.Linear(2, 2)
l2.weight.data = torch.ones(2, 2)
parametrize.register_parametrization(l2, "weight", Noop())
print("right_inverse at registration:", l2.parametrizations.weight.original.tolist())
l2.weight = torch.zeros(2, 2)
print("after assignment:", l2.parametrizations.weight.original.tolist(), l2.weight.tolist())
with parametrize.cached():
    print("cached same object:", l2.weight is l2.weight)

# gradients reach the original; removing keeps the current value
(layer.weight.sum() * 2).backward()
print("grad of original:", layer.parametrizations.weight.original.grad.tolist())
parametrize.remove_parametrizations(layer, "weight")
print(type(layer).__name__, layer.weight.tolist(), isinstance(layer.weight, nn.Parameter))
parametrize.remove_parametrizations(l2, "weight", leave_parametrized=False)
print(l2.weight.tolist())

# the ready-made ones
wn = nn.Linear(3, 2)
wn.weight.data = torch.tensor(np.arange(6.0).reshape(2, 3), dtype=torch.float32)
torch.nn.utils.parametrizations.weight_norm(wn)
print("weight_norm:", np.round(wn.parametrizations.weight.original0.detach().numpy(), 4).tolist(),
      np.round(wn.weight.detach().numpy(), 4).tolist())
sn = nn.Linear(4, 3)
sn.weight.data = torch.tensor(np.arange(12.0).reshape(3, 4) - 5, dtype=torch.float32)
torch.nn.utils.parametrizations.spectral_norm(sn)
for _ in range(20):
    w = sn.weight
print("spectral norm:", round(float(torch.linalg.matrix_norm(w.detach(), 2)), 4))

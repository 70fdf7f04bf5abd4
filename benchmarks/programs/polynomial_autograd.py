"""'Learning PyTorch with examples', PyTorch: Tensors and autograd: fit y = sin(x) on 2,000 points of
[-pi, pi] with a third-order polynomial a + b x + c x**2 + d x**3, the gradients from autograd and
the update written by hand under no_grad.

As the tutorial, with one change: the four coefficients start from fixed values (drawn once by
NumPy) rather than `torch.randn`, so tinygrad_lab and PyTorch start from the same point.
"""
import math

STEPS = 20
SAME_START = True
FULL_STEPS = 2000
START = (-0.4101, 0.9218, 0.2063, -0.5336)  # a, b, c, d


def run(torch, steps: int = STEPS) -> float:
    dtype = torch.float
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)
    a, b, c, d = (torch.tensor(v, dtype=dtype, requires_grad=True) for v in START)
    learning_rate = 1e-6
    for _ in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return loss.item()

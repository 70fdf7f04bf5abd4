"""'Learning PyTorch with examples', PyTorch: Custom nn Modules: the polynomial as a Module subclass
with four scalar Parameters, a forward that computes a + b x + c x^2 + d x^3, a `string()` that
formats the fitted polynomial with `.item()`, and SGD (lr 1e-6) on MSELoss(reduction='sum').

As the tutorial, with one change: the four Parameters start from fixed values (not torch.randn),
so tinygrad_lab and PyTorch start equal.
"""
from .examples_nn import powers

STEPS = 20
FULL_STEPS = 2000
SAME_START = True
START = (0.3, -0.2, 0.1, 0.05)


def _polynomial3(torch):
    class Polynomial3(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c, self.d = (torch.nn.Parameter(torch.tensor(v)) for v in START)

        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            return f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3"

    return Polynomial3()


def run(torch, steps: int = STEPS) -> float:
    x, y, _ = powers(torch)
    model = _polynomial3(torch)
    criterion = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    for _ in range(steps):
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert model.string().startswith("y = ")
    return loss.item()

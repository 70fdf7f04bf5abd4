"""'Learning PyTorch with examples', PyTorch: Control Flow + Weight Sharing: a model whose forward
picks at random (Python's `random`) whether to add a 4th and 5th order term, reusing the same
Parameter `e` for both, trained by SGD with momentum (lr 1e-8, momentum 0.9).

As the tutorial, with two changes: the five Parameters start from fixed values and Python's
`random` is seeded, so tinygrad_lab and PyTorch take the same path from the same start.
"""
import random

from .examples_nn import powers

STEPS = 20
FULL_STEPS = 2000
SAME_START = True
START = (0.3, -0.2, 0.1, 0.05, 0.01)


def _dynamic_net(torch):
    class DynamicNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c, self.d, self.e = (torch.nn.Parameter(torch.tensor(v)) for v in START)

        def forward(self, x):
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, random.randint(4, 6)):  # 0, 1 or 2 extra terms, sharing `e`
                y = y + self.e * x ** exp
            return y

    return DynamicNet()


def run(torch, steps: int = STEPS) -> float:
    random.seed(0)
    x, y, _ = powers(torch)
    model = _dynamic_net(torch)
    criterion = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    for _ in range(steps):
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()

"""'Learning PyTorch with examples', PyTorch: nn: the third-order polynomial fit of sin(x) written
with nn.Sequential(Linear(3, 1), Flatten(0, 1)) on the powers (x, x^2, x^3), MSELoss(reduction
='sum'), and the update by hand over model.parameters() under no_grad.

The weights come from NumPy (`_common.same_start`), so tinygrad_lab and PyTorch start equal.
"""
import math

from ._common import same_start

STEPS = 20
FULL_STEPS = 2000
SAME_START = True


def powers(torch):
    """x in [-pi, pi] (2,000 points), sin(x), and the features (x, x^2, x^3) as a (2000, 3) tensor."""
    x = torch.linspace(-math.pi, math.pi, 2000)
    p = torch.tensor([1, 2, 3])
    return x, torch.sin(x), x.unsqueeze(-1).pow(p)


def run(torch, steps: int = STEPS) -> float:
    _, y, xx = powers(torch)
    model = same_start(torch, torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1)))
    loss_fn = torch.nn.MSELoss(reduction="sum")
    learning_rate = 1e-6
    for _ in range(steps):
        loss = loss_fn(model(xx), y)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
    return loss.item()

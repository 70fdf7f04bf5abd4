"""'Learning PyTorch with examples', PyTorch: optim: the same polynomial model as examples_nn, now
updated by torch.optim.RMSprop (lr 1e-3) instead of by hand.

The weights come from NumPy (`_common.same_start`), so tinygrad_lab and PyTorch start equal.
"""
from ._common import same_start
from .examples_nn import powers

STEPS = 20
FULL_STEPS = 2000
SAME_START = True


def run(torch, steps: int = STEPS) -> float:
    _, y, xx = powers(torch)
    model = same_start(torch, torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1)))
    loss_fn = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    for _ in range(steps):
        loss = loss_fn(model(xx), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()

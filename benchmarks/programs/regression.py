"""pytorch/examples regression: fit a random degree-4 polynomial f(x) = w . (x, x^2, x^3, x^4) + b
with a single nn.Linear(4, 1) on the powers of x, F.smooth_l1_loss, and a hand-written gradient
step (p.add_(-lr * p.grad)) after zeroing the gradients with fc.zero_grad().

As the example, with two changes: the target polynomial and each batch's x are drawn by NumPy
(not torch.randn), and the model's weights come from NumPy (`_common.same_start`), so
tinygrad_lab and PyTorch start equal. Runs `steps` batches (the example runs until the loss is
below 1e-3) and returns the last loss.
"""
import numpy as np

from ._common import same_start

STEPS = 20
FULL_STEPS = 500
SAME_START = True
POLY_DEGREE, BATCH = 4, 32


def make_features(torch, x):
    """Columns x, x^2, x^3, x^4 of a (batch,) tensor."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def run(torch, steps: int = STEPS) -> float:
    rng = np.random.default_rng(3)
    w_target = torch.tensor(rng.standard_normal((POLY_DEGREE, 1)).astype(np.float32) * 5)
    b_target = torch.tensor(rng.standard_normal(1).astype(np.float32) * 5)
    fc = same_start(torch, torch.nn.Linear(w_target.size(0), 1))
    for _ in range(steps):
        x = make_features(torch, torch.tensor(rng.standard_normal(BATCH).astype(np.float32)))
        y = x.mm(w_target) + b_target.item()
        fc.zero_grad()
        output = torch.nn.functional.smooth_l1_loss(fc(x), y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
    return loss

"""pytorch/examples time_sequence_prediction: sine waves with random phases, learnt by a model of
two stacked LSTMCells (51 hidden units) and a Linear head that reads one value per time step and,
after the input, keeps predicting `future` steps from its own output; float64, MSELoss, and
optim.LBFGS (lr 0.8) with a closure; a test prediction under no_grad after each step.

As the example, with smaller sizes (8 waves of 16 steps in place of 100 of 1,000; 5 evaluations
per LBFGS step, not 20) and the data and weights drawn by NumPy (`_common.same_start`) so tinygrad_lab and PyTorch start equal.
Returns the last training loss.
"""
import numpy as np

from ._common import same_start

STEPS = 2
FULL_STEPS = 15
SAME_START = True
RTOL = 1e-6
MAX_ITER = 5  # the example keeps LBFGS's default, 20 evaluations a step
N_WAVES, LENGTH, PERIOD, HIDDEN = 8, 16, 20, 51


def waves() -> np.ndarray:
    rng = np.random.default_rng(4)
    x = np.arange(LENGTH)[None, :] + rng.integers(-4 * PERIOD, 4 * PERIOD, size=(N_WAVES, 1))
    return np.sin(x / PERIOD).astype(np.float64)


def _sequence(torch):
    nn = torch.nn

    class Sequence(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm1 = nn.LSTMCell(1, HIDDEN)
            self.lstm2 = nn.LSTMCell(HIDDEN, HIDDEN)
            self.linear = nn.Linear(HIDDEN, 1)

        def forward(self, inputs, future=0):
            outputs = []
            n = inputs.size(0)
            h_t, c_t, h_t2, c_t2 = (torch.zeros(n, HIDDEN, dtype=torch.double) for _ in range(4))
            for input_t in inputs.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for _ in range(future):  # predicting the future from its own output
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            return torch.cat(outputs, dim=1)

    return Sequence()


def run(torch, steps: int = STEPS) -> float:
    data = torch.from_numpy(waves())
    inputs, target = data[3:, :-1], data[3:, 1:]
    test_input, test_target = data[:3, :-1], data[:3, 1:]
    seq = same_start(torch, _sequence(torch).double())
    criterion = torch.nn.MSELoss()
    optimizer = torch.optim.LBFGS(seq.parameters(), lr=0.8, max_iter=MAX_ITER)
    last = [float("nan")]
    for _ in range(steps):
        def closure():
            optimizer.zero_grad()
            loss = criterion(seq(inputs), target)
            last[0] = loss.item()
            loss.backward()
            return loss
        optimizer.step(closure)
        with torch.no_grad():
            future = 10
            pred = seq(test_input, future=future)
            test_loss = criterion(pred[:, :-future], test_target)
            assert pred.shape == (3, LENGTH - 1 + future) and test_loss.item() >= 0
    return last[0]

"""'What is torch.nn really?' (nn_tutorial): logistic regression on flattened 28x28 images written
from scratch (Xavier-scaled weights, a hand-written log_softmax, negative log-likelihood and
update), then refactored step by step: F.cross_entropy, an nn.Module with Parameters, nn.Linear,
optim.SGD, TensorDataset and DataLoader; then a CNN (three stride-2 Conv2d layers, ReLU,
avg_pool2d, a view) trained through the same `fit` with SGD with momentum.

In place of MNIST, 10-class blobs drawn by NumPy (`_common.blobs`); the weights come from NumPy
(`_common.same_start`) and the training DataLoader does not shuffle, so tinygrad_lab and PyTorch
start equal and see the same batches. Returns the CNN's last validation loss.
"""
import math

import numpy as np

from ._common import blobs, same_start

STEPS = 3
FULL_STEPS = 20
SAME_START = True
BS, N_TRAIN, N_VALID, LR = 16, 64, 32, 0.1


def scratch_logistic(torch, x_train, y_train) -> float:
    """The tutorial's first model, no torch.nn: one pass of hand-written SGD; the last loss."""
    rng = np.random.default_rng(0)
    weights = torch.tensor(rng.standard_normal((784, 10)).astype(np.float32) / math.sqrt(784))
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def nll(inputs, target):
        return -inputs[range(target.shape[0]), target].mean()

    for i in range((N_TRAIN - 1) // BS + 1):
        xb, yb = x_train[i * BS:i * BS + BS], y_train[i * BS:i * BS + BS]
        loss = nll(log_softmax(xb @ weights + bias), yb)
        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * LR
            bias -= bias.grad * LR
            weights.grad.zero_()
            bias.grad.zero_()
    return loss.item()


def _models(torch):
    nn, F = torch.nn, torch.nn.functional

    class MnistLogistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(784, 10)

        def forward(self, xb):
            return self.lin(xb)

    class MnistCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb):
            xb = xb.view(-1, 1, 28, 28)
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.relu(self.conv3(xb))
            xb = F.avg_pool2d(xb, 4)
            return xb.view(-1, xb.size(1))

    return MnistLogistic, MnistCNN


def loss_batch(model, loss_func, xb, yb, opt=None):
    loss = loss_func(model(xb), yb)
    if opt is not None:
        loss.backward()
        opt.step()
        opt.zero_grad()
    return loss.item(), len(xb)


def fit(torch, epochs, model, loss_func, opt, train_dl, valid_dl) -> float:
    """Train for epochs; the validation loss after the last one."""
    for _ in range(epochs):
        model.train()
        for xb, yb in train_dl:
            loss_batch(model, loss_func, xb, yb, opt)
        model.eval()
        with torch.no_grad():
            losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
        val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
    return float(val_loss)


def run(torch, steps: int = STEPS) -> float:
    """`steps` epochs of the logistic model, then of the CNN; the CNN's validation loss."""
    F, optim = torch.nn.functional, torch.optim
    TensorDataset, DataLoader = torch.utils.data.TensorDataset, torch.utils.data.DataLoader
    x, y = blobs(N_TRAIN + N_VALID, (784,), 10, seed=2, noise=0.5)
    x_train, y_train, x_valid, y_valid = map(torch.tensor, (x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:], y[N_TRAIN:]))
    assert math.isfinite(scratch_logistic(torch, x_train, y_train))
    train_dl = DataLoader(TensorDataset(x_train, y_train), batch_size=BS)
    valid_dl = DataLoader(TensorDataset(x_valid, y_valid), batch_size=BS * 2)
    logistic, cnn = _models(torch)
    model = same_start(torch, logistic())
    fit(torch, steps, model, F.cross_entropy, optim.SGD(model.parameters(), lr=LR), train_dl, valid_dl)
    model = same_start(torch, cnn())
    opt = optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    return fit(torch, steps, model, F.cross_entropy, opt, train_dl, valid_dl)

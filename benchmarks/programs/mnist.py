"""pytorch/examples mnist: a CNN (two 3x3 Conv2d, max_pool2d, Dropout 0.25 and 0.5, two Linear
layers, log_softmax) trained with nll_loss and optim.Adadelta (lr 1.0), the learning rate decayed
by StepLR (gamma 0.7) after each epoch; the device picked by torch.accelerator (the CPU here);
model.train() for training and an evaluation pass under model.eval() and no_grad.

In place of MNIST, 32 images of 28x28 10-class blobs (`_common.blobs`) in batches of 8, seeded
with torch.manual_seed; dropout draws differ between libraries, so the losses are compared by
scale only. Returns the mean training loss over the last epoch.
"""
import numpy as np

from ._common import blobs

STEPS = 8
FULL_STEPS = 40
BATCH, N_BATCHES = 8, 4


def _net(torch):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = torch.flatten(self.dropout1(x), 1)
            x = self.dropout2(F.relu(self.fc1(x)))
            return F.log_softmax(self.fc2(x), dim=1)

    return Net()


def train(torch, model, device, loader, optimizer, max_batches: int) -> list:
    """One epoch (at most max_batches batches) in training mode; the losses."""
    model.train()
    losses = []
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = torch.nn.functional.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if len(losses) == max_batches:
            break
    return losses


def test(torch, model, device, loader) -> str:
    """An evaluation pass in eval mode under no_grad: the mean loss and the accuracy, as text."""
    model.eval()
    test_loss, correct, n = 0.0, 0, 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += torch.nn.functional.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
            n += len(data)
    return f"Test set: Average loss: {test_loss / n:.4f}, Accuracy: {correct}/{n}"


def train_and_test(torch, net, steps: int, seed: int) -> float:
    """`steps` mini-batches, cycling over the training set (one epoch = N_BATCHES batches), a test
    pass and a StepLR step after each epoch; the mean training loss over the last epoch."""
    use_accel = torch.accelerator.is_available()
    device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
    torch.manual_seed(1)
    x, y = blobs(BATCH * N_BATCHES, (1, 28, 28), 10, seed=seed, noise=0.5)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)),
                                         batch_size=BATCH)
    model = net(torch).to(device)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    losses = []
    while len(losses) < steps:
        losses += train(torch, model, device, loader, optimizer, steps - len(losses))
        assert test(torch, model, device, loader).startswith("Test set")
        scheduler.step()
    return float(np.mean(losses[-N_BATCHES:]))


def run(torch, steps: int = STEPS) -> float:
    return train_and_test(torch, _net, steps, seed=5)

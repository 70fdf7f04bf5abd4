"""The 60-minute blitz, "Training a classifier": a small CNN (two 5x5 convolutions with max-pooling,
three linear layers) trained on 32x32 colour images in 10 classes with CrossEntropyLoss and SGD
with momentum (lr 0.001, momentum 0.9), batches of 4, the running loss printed as it goes.

In place of CIFAR-10, 16 images of 10-class blobs drawn by NumPy (`_common.blobs`); the weights come from
NumPy too (`_common.same_start`), so tinygrad_lab and PyTorch start equal. The learning rate is 0.01,
ten times the tutorial's, so that the loss visibly falls within the test's few steps.
"""
from ._common import blobs, same_start

STEPS = 12
FULL_STEPS = 200
SAME_START = True
BATCH = 4
N_BATCHES = 4  # a training set of 16 images


def _net(torch):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    return Net()


def run(torch, steps: int = STEPS) -> float:
    """Train for `steps` mini-batches, cycling over a training set of N_BATCHES batches; the
    mean loss over the last N_BATCHES batches."""
    images, labels = blobs(BATCH * N_BATCHES, (3, 32, 32), 10, seed=1, noise=0.5)
    net = same_start(torch, _net(torch))
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    losses = []
    for i in range(steps):
        batch = slice(i % N_BATCHES * BATCH, (i % N_BATCHES + 1) * BATCH)
        inputs, targets = torch.from_numpy(images[batch]), torch.from_numpy(labels[batch])
        optimizer.zero_grad()
        loss = criterion(net(inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return sum(losses[-N_BATCHES:]) / len(losses[-N_BATCHES:])

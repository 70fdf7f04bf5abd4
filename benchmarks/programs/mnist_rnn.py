"""pytorch/examples mnist_rnn: each 28x28 image read row by row by an nn.LSTM (batch_first, 64
hidden units); its last output through BatchNorm1d, Dropout, Linear, ReLU, Dropout and Linear to
log_softmax; nll_loss, optim.Adadelta and StepLR (gamma 0.7) after each epoch, a test pass after
each epoch (the train/test loop is the mnist program's).

In place of MNIST, 32 images of 10-class blobs (`_common.blobs`) in batches of 8, seeded with
torch.manual_seed, Adadelta's lr 1.0 (the example's 0.1 learns too slowly for a few steps);
dropout draws differ between libraries, so the losses are compared by scale only. Returns the
mean training loss over the last epoch.
"""
from .mnist import train_and_test

STEPS = 8
FULL_STEPS = 40


def _net(torch):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(input_size=28, hidden_size=64, batch_first=True)
            self.batchnorm = nn.BatchNorm1d(64)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(64, 32)
            self.fc2 = nn.Linear(32, 10)

        def forward(self, x):
            x = x.reshape(-1, 28, 28)  # (batch, rows as time steps, 28 pixels per row)
            output, _ = self.rnn(x)
            x = self.batchnorm(output[:, -1, :])
            x = self.dropout1(x)
            x = self.dropout2(F.relu(self.fc1(x)))
            return F.log_softmax(self.fc2(x), dim=1)

    return Net()


def run(torch, steps: int = STEPS) -> float:
    return train_and_test(torch, _net, steps, seed=6)

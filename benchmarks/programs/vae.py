"""pytorch/examples vae: a variational autoencoder on flattened 28x28 images (784 -> 400 -> a
20-dimensional mean and log-variance; a sample by the reparameterization trick with randn_like;
20 -> 400 -> 784 through a sigmoid), the loss binary cross-entropy (summed) plus the KL
divergence from the unit Gaussian, optim.Adam (lr 1e-3).

In place of MNIST, 32 images in [0, 1] (the sigmoid of 10-class blobs, `_common.blobs`) in
batches of 8, seeded with torch.manual_seed; the reparameterization draws differ between
libraries, so the losses are compared by scale only. Returns the mean loss per image over the
last epoch.
"""
import numpy as np

from ._common import blobs

STEPS = 8
FULL_STEPS = 80
BATCH, N_BATCHES = 8, 4


def _vae(torch):
    nn, F = torch.nn, torch.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 400)
            self.fc21 = nn.Linear(400, 20)
            self.fc22 = nn.Linear(400, 20)
            self.fc3 = nn.Linear(20, 400)
            self.fc4 = nn.Linear(400, 784)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar):
            std = torch.exp(0.5 * logvar)
            return mu + torch.randn_like(std) * std

        def decode(self, z):
            return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

        def forward(self, x):
            mu, logvar = self.encode(x.view(-1, 784))
            return self.decode(self.reparameterize(mu, logvar)), mu, logvar

    return VAE()


def loss_function(torch, recon_x, x, mu, logvar):
    bce = torch.nn.functional.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def run(torch, steps: int = STEPS) -> float:
    torch.manual_seed(1)
    x, _ = blobs(BATCH * N_BATCHES, (1, 28, 28), 10, seed=7, noise=0.3)
    images = torch.sigmoid(torch.tensor(x))
    model = _vae(torch)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    losses = []
    for i in range(steps):
        data = images[i % N_BATCHES * BATCH:(i % N_BATCHES + 1) * BATCH]
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(torch, recon_batch, data, mu, logvar)
        loss.backward()
        optimizer.step()
        losses.append(loss.item() / len(data))
    model.eval()
    with torch.no_grad():
        sample = model.decode(torch.randn(4, 20))
    assert tuple(sample.shape) == (4, 784)
    return float(np.mean(losses[-N_BATCHES:]))

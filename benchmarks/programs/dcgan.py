"""pytorch/examples dcgan: a generator of ConvTranspose2d, BatchNorm2d, ReLU and Tanh layers and a
discriminator of Conv2d, BatchNorm2d, LeakyReLU(0.2) and Sigmoid layers, both initialised by a
`weights_init` applied with Module.apply (normal(0, 0.02) for convolutions, normal(1, 0.02) for
BatchNorm's weight), trained against each other with BCELoss and Adam (lr 2e-4, betas (0.5,
0.999)): D on a real batch (label 1) and a detached fake batch (label 0), then G to make D say 1.

In place of a 64x64 image folder, 16x16 one-channel images (the tanh of blobs, `_common.blobs`),
sizes scaled down to match (nz 16, ngf = ndf = 8), seeded with torch.manual_seed; the noise
differs between libraries, so the losses are compared by scale only. Returns errD + errG of
the last step.
"""
from ._common import blobs

STEPS = 4
FULL_STEPS = 40
NZ, NGF, NDF, BATCH, N_BATCHES = 16, 8, 8, 8, 4


def weights_init(torch, m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        torch.nn.init.normal_(m.weight, 1.0, 0.02)
        torch.nn.init.zeros_(m.bias)


def _models(torch):
    nn = torch.nn
    generator = nn.Sequential(
        nn.ConvTranspose2d(NZ, NGF * 4, 4, 1, 0, bias=False),  # 4x4
        nn.BatchNorm2d(NGF * 4), nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False),  # 8x8
        nn.BatchNorm2d(NGF * 2), nn.ReLU(True),
        nn.ConvTranspose2d(NGF * 2, 1, 4, 2, 1, bias=False),  # 16x16
        nn.Tanh())
    discriminator = nn.Sequential(
        nn.Conv2d(1, NDF, 4, 2, 1, bias=False),  # 8x8
        nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False),  # 4x4
        nn.BatchNorm2d(NDF * 2), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(NDF * 2, 1, 4, 1, 0, bias=False),  # 1x1
        nn.Sigmoid())
    for net in (generator, discriminator):
        net.apply(lambda m: weights_init(torch, m))
    return generator, discriminator


def run(torch, steps: int = STEPS) -> float:
    torch.manual_seed(999)
    x, _ = blobs(BATCH * N_BATCHES, (1, 16, 16), 4, seed=8, noise=0.3)
    images = torch.tanh(torch.tensor(x))
    netG, netD = _models(torch)
    criterion = torch.nn.BCELoss()
    fixed_noise = torch.randn(4, NZ, 1, 1)
    real_label, fake_label = 1.0, 0.0
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for i in range(steps):
        real = images[i % N_BATCHES * BATCH:(i % N_BATCHES + 1) * BATCH]
        # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        label = torch.full((BATCH,), real_label, dtype=real.dtype)
        errD_real = criterion(netD(real).view(-1), label)
        errD_real.backward()
        fake = netG(torch.randn(BATCH, NZ, 1, 1))
        label.fill_(fake_label)
        errD_fake = criterion(netD(fake.detach()).view(-1), label)
        errD_fake.backward()
        optimizerD.step()
        # (2) update G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        errG = criterion(netD(fake).view(-1), label)
        errG.backward()
        optimizerG.step()
    with torch.no_grad():
        assert tuple(netG(fixed_noise).shape) == (4, 1, 16, 16)
    return (errD_real + errD_fake).item() + errG.item()

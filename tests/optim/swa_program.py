"""Stochastic weight averaging and an EMA with swa_utils, run as `python THIS torch` or `python THIS tinygrad_lab`:
tests/optim/test_swa_utils.py checks that both print the same."""
import sys

import numpy as np

if sys.argv[1] == "torch":
    import torch
    from torch.optim import swa_utils
else:
    import tinygrad_lab as torch
    swa_utils = torch.optim.swa_utils

nn = torch.nn
model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1)).double()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) * (i + 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
swa_model = swa_utils.AveragedModel(model)
ema_model = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9))
sched = swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=3, anneal_strategy="cos")
data = [torch.tensor(np.sin(np.arange(24.0) + k).reshape(8, 3)) for k in range(4)]
lrs = []
for epoch in range(6):
    for x in data:
        opt.zero_grad()
        (model(x) ** 2).mean().backward()
        opt.step()
    swa_model.update_parameters(model)
    ema_model.update_parameters(model)
    sched.step()
    lrs.append(round(sched.get_last_lr()[0], 10))
print("lrs", lrs)
print("n_averaged", int(swa_model.n_averaged))
print("swa", [np.round(p.detach().numpy(), 8).tolist() for p in swa_model.parameters()][-2:])
print("ema", [np.round(p.detach().numpy(), 8).tolist() for p in ema_model.parameters()][-2:])
swa_utils.update_bn(data, swa_model)
bn = swa_model.module[1]
print("bn", np.round(bn.running_mean.numpy(), 8).tolist(), np.round(bn.running_var.numpy(), 8).tolist(), bn.momentum)
lin = swa_utils.SWALR(torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0), swa_lr=0.1, anneal_epochs=4, anneal_strategy="linear")
seq = []
for _ in range(6):
    lin.optimizer.step(); lin.step(); seq.append(round(lin.get_last_lr()[0], 10))
print("linear", seq)

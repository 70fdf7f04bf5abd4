"""copy.deepcopy of tensors, Parameters, modules and optimizers, as PyTorch: independent copies, shared
parameters stay shared, an optimizer copied with its model points at the copied parameters, and
computed (non-leaf) tensors refuse."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn


def test_leaf_tensor_copy_is_independent(device):
    x = tl.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    (x * x).sum().backward()
    x.note = {"source": "user"}                     # an attribute the user set travels too
    y = copy.deepcopy(x)
    assert type(y) is tl.Tensor and y is not x and y.is_leaf and y.requires_grad
    assert y.device == x.device and y.dtype == x.dtype and y.note == {"source": "user"} and y.note is not x.note
    np.testing.assert_array_equal(y.detach().cpu().numpy(), x.detach().cpu().numpy())
    assert y.grad is not x.grad and y.grad.tolist() == x.grad.tolist()
    with tl.no_grad():
        y.add_(1.0)
        y.grad.zero_()
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]] and x.grad.tolist() == [[2.0, 4.0], [6.0, 8.0]]
    (y * 3).sum().backward()                        # the copy is a fresh leaf with its own accumulator
    assert y.grad.tolist() == [[3.0, 3.0], [3.0, 3.0]] and x.grad.tolist() == [[2.0, 4.0], [6.0, 8.0]]


def test_non_leaf_refuses_like_torch(torch):
    for lib in (tl, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user \\(graph leaves\\) "
                                               "support the deepcopy protocol"):
            copy.deepcopy(x * 2)
    assert copy.deepcopy((tl.ones(2, requires_grad=True) * 2).detach()).tolist() == [2.0, 2.0]


def test_views_are_copied_as_independent_tensors():
    # deviation (documented): PyTorch keeps two tensors that share memory sharing it in the copy;
    # here each is copied on its own (as tinygrad_lab.save stores them), one object stays one object
    base = tl.arange(6.0).reshape(2, 3)
    view = base.t()
    b2, v2 = copy.deepcopy([base, view])
    assert v2.shape == (3, 2) and v2._base is None and v2.tolist() == view.tolist()
    v2[0, 0] = 100.0
    assert b2[0, 0].item() == 0.0 and base[0, 0].item() == 0.0
    same = copy.deepcopy([base, base])
    assert same[0] is same[1]


def test_parameter_copies_stay_parameters_pickling_stays_refused():
    p = nn.Parameter(tl.ones(3))
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q is not p
    frozen = copy.deepcopy(nn.Parameter(tl.ones(1), requires_grad=False))
    assert not frozen.requires_grad
    with pytest.raises(TypeError, match="not pickle"):
        pickle.dumps(p)


class TiedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(3, 4, bias=False)
        self.body = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.ReLU())
        self.out = nn.Linear(4, 3, bias=False)
        self.out.weight = nn.Parameter(self.embed.weight.detach().t().contiguous())
        self.head = self.out                       # one module under two names
        self.calls = 0
        self.register_forward_hook(lambda module, args, output: setattr(module, "calls", module.calls + 1))

    def forward(self, x):
        return self.head(self.body(self.embed(x)))


def test_module_copy_matches_and_is_independent():
    net = TiedNet()
    net.shared = nn.Parameter(tl.ones(2))
    net.extra = net.shared
    x = tl.randn(5, 3)
    net(x).sum().backward()                          # grads, and BatchNorm running stats, are state too
    twin = copy.deepcopy(net)
    assert twin.head is twin.out and twin.out is not net.out and twin.extra is twin.shared
    assert len(list(twin.parameters())) == len(list(net.parameters()))
    for (name, p), (_, q) in zip(net.named_parameters(), twin.named_parameters()):
        assert q is not p and type(q) is nn.Parameter, name
        np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
        assert (q.grad is None) == (p.grad is None), name
        if p.grad is not None:
            assert q.grad is not p.grad
            np.testing.assert_array_equal(q.grad.numpy(), p.grad.numpy())
    np.testing.assert_array_equal(twin.body[1].running_mean.numpy(), net.body[1].running_mean.numpy())
    net.eval()
    twin.eval()
    np.testing.assert_array_equal(twin(x).detach().numpy(), net(x).detach().numpy())
    assert twin.calls == 2 and net.calls == 2        # the hook was copied and counts on its own module
    with tl.no_grad():
        twin.embed.weight.mul_(0.0)
    assert net.embed.weight.abs().sum().item() > 0


def test_optimizer_copied_with_its_model_drives_the_copies():
    model = nn.Linear(3, 2)
    opt = tl.optim.Adam(model.parameters(), lr=0.1)
    x, y = tl.randn(8, 3), tl.randn(8, 2)

    def train(m, o, steps):
        for _ in range(steps):
            o.zero_grad()
            ((m(x) - y) ** 2).mean().backward()
            o.step()

    train(model, opt, 3)
    model2, opt2 = copy.deepcopy((model, opt))
    assert opt2.param_groups[0]["params"][0] is model2.weight
    assert set(map(id, opt2.state)) == {id(model2.weight), id(model2.bias)}
    assert opt2.state[model2.weight]["exp_avg"] is not opt.state[model.weight]["exp_avg"]
    before = model.weight.detach().numpy().copy()
    train(model2, opt2, 4)                           # the copy trains on...
    np.testing.assert_array_equal(model.weight.detach().numpy(), before)   # ...without touching the original
    train(model, opt, 4)
    np.testing.assert_array_equal(model.weight.detach().numpy(), model2.weight.detach().numpy())  # same path


def test_best_model_and_target_network_idioms(torch):
    # best-model snapshots and DQN target networks: deepcopy, then load_state_dict into the copy
    ours, theirs = nn.Linear(4, 2), torch.nn.Linear(4, 2)
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    best, tbest = copy.deepcopy(ours), copy.deepcopy(theirs)
    with tl.no_grad():
        ours.weight.add_(1.0)
    best.load_state_dict(ours.state_dict())
    assert best.weight.tolist() == ours.weight.tolist() and best.weight is not ours.weight
    x = np.ones((1, 4), np.float32)
    np.testing.assert_allclose(copy.deepcopy(best)(tl.tensor(x)).detach().numpy(),
                               ours(tl.tensor(x)).detach().numpy())
    assert tbest is not theirs

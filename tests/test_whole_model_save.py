"""Saving whole modules and optimizers, as PyTorch 2.6+: save(model) works; load is weights-only by
default and builds only allow-listed classes (add_safe_globals / safe_globals), with PyTorch's kind
of error (a pickle.UnpicklingError naming the class and how to allow it); weights_only=False allows
the model classes; and the loaded objects work: same outputs, shared modules still shared, an
optimizer saved with its model points at the loaded parameters and continues the same run."""
from __future__ import annotations

import io
import pickle
from collections import OrderedDict, defaultdict

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn, serialization
from tinygrad_lab.nn import functional as F
from tinygrad_lab.serialization import WeightsOnlyLoadError


class MyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.Tanh())
        self.head = nn.Linear(8, 2)
        self.alias = self.head                     # one module under two names
        self.scale = nn.Parameter(tl.tensor([2.0]))
        self.register_buffer("steps", tl.tensor(0))
        self.register_buffer("scratch", tl.zeros(2), persistent=False)
        self.config = {"sizes": (3, 8, 2), "tags": {"demo", "small"}, "lr": 0.1}

    def forward(self, x):
        return self.alias(self.body(x)) * self.scale


class WithFunction(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.act = F.relu                          # a function, saved by name

    def forward(self, x):
        return self.act(self.fc(x))


class Config:
    def __init__(self, width):
        self.width = width


def _roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    tl.save(obj, buf)
    buf.seek(0)
    return tl.load(buf, **load_kwargs)


MODEL_CLASSES = [MyNet, nn.Sequential, nn.Linear, nn.BatchNorm1d, nn.Tanh]


def test_whole_model_round_trip():
    tl.manual_seed(0)
    model = MyNet()
    x = tl.randn(6, 3)
    model(x).sum().backward()                      # BatchNorm's running stats move; grads exist (not saved)
    model.eval()
    with serialization.safe_globals(MODEL_CLASSES):
        loaded = _roundtrip(model)
    assert type(loaded) is MyNet and loaded is not model
    assert loaded.alias is loaded.head and not loaded.training and not loaded.body[1].training
    assert [n for n, _ in loaded.named_parameters()] == [n for n, _ in model.named_parameters()]
    for (name, p), q in zip(model.named_parameters(), loaded.parameters()):
        assert type(q) is nn.Parameter and q.requires_grad and q.grad is None, name
        np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
    assert list(loaded.state_dict()) == list(model.state_dict())      # "scratch" is still non-persistent
    assert loaded.config == {"sizes": (3, 8, 2), "tags": {"demo", "small"}, "lr": 0.1}
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
    loaded.train()
    loss = loaded(x).pow(2).mean()
    loss.backward()                                # the loaded model trains
    assert loaded.head.weight.grad is not None


def test_model_and_optimizer_saved_together_continue_the_same_run():
    def make():
        tl.manual_seed(1)
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        return model, tl.optim.Adam(model.parameters(), lr=0.05)

    x, y = tl.randn(16, 3), tl.randn(16, 1)

    def train(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()

    straight, straight_opt = make()
    train(straight, straight_opt, 10)
    model, opt = make()
    train(model, opt, 5)
    ckpt = _roundtrip({"model": model, "optimizer": opt, "epoch": 5}, weights_only=False)
    model2, opt2 = ckpt["model"], ckpt["optimizer"]
    assert opt2.param_groups[0]["params"][0] is model2[0].weight     # the loaded optimizer drives the loaded model
    assert set(map(id, opt2.state)) == {id(p) for p in model2.parameters()}
    assert type(opt2.state) is defaultdict
    train(model2, opt2, 5)
    for p, q in zip(model2.parameters(), straight.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_default_load_refuses_classes_that_are_not_allowed(torch, tmp_path):
    path = tmp_path / "net.tl"
    tl.save(MyNet(), path)
    with pytest.raises(WeightsOnlyLoadError) as info:
        tl.load(path)
    message = str(info.value)
    assert "net.tl" in message and "add_safe_globals" in message and "safe_globals" in message
    assert isinstance(info.value, pickle.UnpicklingError)            # what torch.load raises here
    assert serialization.get_unsafe_globals_in_checkpoint(path) == [
        f"{MyNet.__module__}.MyNet", "tinygrad_lab.nn.modules.activation.Tanh",
        "tinygrad_lab.nn.modules.batchnorm.BatchNorm1d", "tinygrad_lab.nn.modules.container.Sequential",
        "tinygrad_lab.nn.modules.linear.Linear"]
    # PyTorch 2.6+ refuses its own whole models the same way, with the same exception family
    torch.save(torch.nn.Linear(2, 2), tmp_path / "linear.pt")
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        torch.load(tmp_path / "linear.pt")


def test_add_safe_globals_safe_globals_get_and_clear(tmp_path):
    path = tmp_path / "net.tl"
    tl.save(MyNet(), path)
    assert serialization.get_safe_globals() == []
    with serialization.safe_globals(MODEL_CLASSES):
        assert serialization.get_safe_globals() == MODEL_CLASSES
        assert type(tl.load(path)) is MyNet
    assert serialization.get_safe_globals() == []
    with pytest.raises(WeightsOnlyLoadError):
        tl.load(path)                               # allowed inside the block only
    serialization.add_safe_globals(MODEL_CLASSES)
    try:
        assert type(tl.load(path)) is MyNet
    finally:
        serialization.clear_safe_globals()
    with pytest.raises(TypeError, match="add_safe_globals expects"):
        serialization.add_safe_globals([3])


def test_an_alias_allows_a_class_saved_under_another_name():
    import zipfile
    buf = io.BytesIO()
    tl.save(Config(3), buf)
    with zipfile.ZipFile(buf) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members["manifest.json"] = members["manifest.json"].replace(b'"name":"Config"', b'"name":"OldConfig"')
    renamed = io.BytesIO()
    with zipfile.ZipFile(renamed, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    renamed.seek(0)
    with serialization.safe_globals([(Config, f"{Config.__module__}.OldConfig")]):
        loaded = tl.load(renamed)
    assert type(loaded) is Config and loaded.width == 3


def test_weights_only_false_allows_model_classes_but_not_other_objects():
    loaded = _roundtrip(MyNet(), weights_only=False)
    assert type(loaded) is MyNet
    with pytest.raises(WeightsOnlyLoadError, match="Config"):
        _roundtrip({"net": MyNet(), "config": Config(4)}, weights_only=False)
    with serialization.safe_globals([Config]):
        assert _roundtrip(Config(4), weights_only=False).width == 4


def test_functions_are_saved_by_name_and_must_be_allowed():
    model = WithFunction()
    with pytest.raises(WeightsOnlyLoadError, match="tinygrad_lab.nn.functional.relu"):
        _roundtrip(model, weights_only=False)
    with serialization.safe_globals([F.relu]):
        loaded = _roundtrip(model, weights_only=False)
    assert loaded.act is F.relu
    x = tl.randn(3, 2)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())


def test_a_scheduler_and_its_optimizer():
    opt = tl.optim.SGD([nn.Parameter(tl.ones(2))], lr=0.1, momentum=0.9)
    sched = tl.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.step()
        sched.step()
    loaded = _roundtrip(sched, weights_only=False)
    assert loaded.optimizer.param_groups[0]["lr"] == 0.05 and loaded.last_epoch == 3
    loaded.optimizer.step()
    loaded.step()
    sched.optimizer.step()
    sched.step()
    assert loaded.get_last_lr() == sched.get_last_lr()


class Node(nn.Module):
    def __init__(self, parent=None):
        super().__init__()
        self.fc = nn.Linear(1, 1)
        object.__setattr__(self, "parent", parent)   # not a child module: a back reference


def test_cycles_through_objects_and_containers_of_new_kinds():
    root = Node()
    child = Node(root)
    root.child = child
    loaded = _roundtrip(root, weights_only=False)
    assert loaded.child.parent is loaded
    p = nn.Parameter(tl.ones(2))
    data = {"by_param": {p: "w"}, "tags": frozenset({"a", "b"}), "counts": defaultdict(int, {"x": 2}),
            "order": OrderedDict(b=1, a=2), "param": p}
    out = _roundtrip(data)                          # no class named: loads with the defaults
    assert out["by_param"] == {out["param"]: "w"} and type(out["param"]) is nn.Parameter
    assert out["tags"] == frozenset({"a", "b"}) and out["counts"]["missing"] == 0 and out["counts"]["x"] == 2


def test_files_stay_deterministic_and_plain_checkpoints_stay_version_1(tmp_path):
    model = MyNet()
    a, b = io.BytesIO(), io.BytesIO()
    tl.save(model, a)
    tl.save(model, b)
    assert a.getvalue() == b.getvalue()
    import json
    import zipfile
    for obj, version in ((model.state_dict(), 1), (model, 2)):
        buf = io.BytesIO()
        tl.save(obj, buf)
        with zipfile.ZipFile(buf) as zf:
            assert json.loads(zf.read("manifest.json"))["version"] == version

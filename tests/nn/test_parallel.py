"""nn.DataParallel against the unwrapped module: the same outputs and the same gradients on the
module's own parameters, on the CPU (where it just runs the module, as PyTorch does) and split
over the stand-in backend's two devices (standin:0 and standin:1)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn

DEVICES = ["standin:0", "standin:1"]


def _model(device="cpu"):
    tl.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3)).to(device)


def _grads(model):
    return [p.grad.cpu().numpy().copy() for p in model.parameters()]


def _run(model, x):
    model.zero_grad()
    out = model(x)
    (out * tl.arange(3.0, device=out.device)).sum().backward()
    return out.cpu().detach().numpy(), _grads(model)


def test_without_devices_it_runs_the_module_itself():
    model = _model()
    dp = nn.DataParallel(model)
    assert dp.device_ids == [] and dp.module is model  # no GPU here
    x = tl.randn(6, 5)
    out_dp, g_dp = _run(dp, x)
    out, g = _run(model, x)
    np.testing.assert_array_equal(out_dp, out)
    for a, b in zip(g_dp, g):
        np.testing.assert_array_equal(a, b)
    assert list(dp.state_dict()) == ["module." + k for k in model.state_dict()]


@pytest.mark.parametrize("rows", [7, 2, 1])
def test_on_two_devices_outputs_and_gradients_match_the_unwrapped_module(rows):
    model = _model("standin:0")
    x = tl.randn(rows, 5, device="standin:0")
    out, g = _run(model, x)
    dp = nn.DataParallel(model, device_ids=DEVICES)
    out_dp, g_dp = _run(dp, x)
    np.testing.assert_allclose(out_dp, out, rtol=1e-6, atol=1e-6)
    for a, b in zip(g_dp, g):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert all(p.grad.device == tl.device("standin:0") and p.is_leaf for p in model.parameters())


def test_each_replica_gets_its_slice_on_its_device_in_its_own_thread():
    model = _model("standin:0")
    seen = []
    model.register_forward_hook(lambda m, args, out: seen.append(
        (str(args[0].device), args[0].shape[0], threading.get_ident())))
    dp = nn.DataParallel(model, device_ids=DEVICES)
    dp(tl.randn(7, 5, device="standin:0"))
    assert sorted(s[:2] for s in seen) == [("standin:0", 4), ("standin:1", 3)]
    assert len({s[2] for s in seen}) == 2


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 2), nn.Linear(4, 1)

    def forward(self, batch, scale=1.0):
        return {"a": self.a(batch["x"]) * scale, "b": (self.b(batch["x"]), batch["tag"])}


def test_dicts_tuples_and_keyword_arguments_are_split_and_gathered():
    model = TwoHeads().to("standin:0")
    x = tl.randn(5, 4, device="standin:0")
    expected = model({"x": x, "tag": "t"}, scale=2.0)
    got = nn.DataParallel(model, device_ids=DEVICES)({"x": x, "tag": "t"}, scale=2.0)
    np.testing.assert_allclose(got["a"].cpu().detach().numpy(), expected["a"].cpu().detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(got["b"][0].cpu().detach().numpy(), expected["b"][0].cpu().detach().numpy(),
                               rtol=1e-6)
    assert got["b"][1] == "t"


def test_grad_mode_reaches_the_replicas_and_errors_come_back():
    model = _model("standin:0")
    dp = nn.DataParallel(model, device_ids=DEVICES)
    with tl.no_grad():
        assert not dp(tl.randn(4, 5, device="standin:0")).requires_grad
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes|shape"):
        dp(tl.randn(4, 6, device="standin:0"))


def test_parameters_must_be_on_the_first_device():
    dp = nn.DataParallel(_model("cpu"), device_ids=DEVICES)
    with pytest.raises(RuntimeError, match=r"parameters and buffers on device standin:0 \(device_ids\[0\]\) "
                                           r"but found one of them on device: cpu"):
        dp(tl.randn(4, 5, device="standin:0"))


def test_a_lazy_module_must_be_initialised_before_it_is_replicated():
    lazy = nn.Sequential(nn.LazyLinear(3)).to("standin:0")
    dp = nn.DataParallel(lazy, device_ids=DEVICES)
    with pytest.raises(RuntimeError, match=r"uninitialized parameters can't be replicated .*sample batch"):
        dp(tl.randn(4, 5, device="standin:0"))
    lazy(tl.randn(2, 5, device="standin:0"))  # initialised by one call: now it replicates
    assert dp(tl.randn(4, 5, device="standin:0")).shape == (4, 3)


def test_importable_as_in_pytorch():
    from tinygrad_lab.nn.parallel import DataParallel, gather, parallel_apply, replicate, scatter  # noqa: F401
    assert tl.nn.DataParallel is DataParallel

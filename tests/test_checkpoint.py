"""utils.checkpoint: the same gradients as without it (dropout included: its masks are drawn again from
the same random state), nothing inside the checkpointed function kept between forward and backward,
and PyTorch's gradients from PyTorch's weights."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab.utils.checkpoint import checkpoint, checkpoint_sequential


def _net(lib, dropout: float = 0.0):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Dropout(dropout), lib.nn.Linear(8, 8),
                             lib.nn.ReLU(), lib.nn.Linear(8, 2)).double()


def _grads(lib, net, forward):
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=lib.float64, requires_grad=True)
    lib.manual_seed(1)
    (forward(net, x) ** 2).sum().backward()
    return [p.grad.numpy().copy() for p in net.parameters()] + [x.grad.numpy().copy()]


def _middle(net):
    return lambda h: net[3](net[2](net[1](h)))


FORWARDS = {
    "checkpoint": lambda net, x: net[5](net[4](checkpoint(_middle(net), net[0](x), use_reentrant=True))),
    "checkpoint_sequential": lambda net, x: checkpoint_sequential(net, 3, x, use_reentrant=False),
}


@pytest.mark.parametrize("dropout", [0.0, 0.5])
@pytest.mark.parametrize("name", list(FORWARDS))
def test_gradients_equal_those_without_checkpointing(name, dropout):
    plain = _grads(tl, _net(tl, dropout), lambda net, x: net(x))
    for got, want in zip(_grads(tl, _net(tl, dropout), FORWARDS[name]), plain):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def _graph(t) -> list:
    """The names of the nodes a backward from t would run (each holds what its op saved)."""
    seen, stack = [], [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in seen:
            seen.append(node)
            stack += [n for n, _ in node.next_functions]
    return sorted(n.name() for n in seen)


def test_nothing_inside_is_kept_until_backward():
    def block(h):
        return (h * 2).tanh().sum(1)

    x = tl.randn(3, 4, requires_grad=True)
    assert _graph(block(x)) == ["AccumulateGrad", "MulBackward", "SumBackward", "TanhBackward"]
    out = checkpoint(block, x, use_reentrant=True)
    assert _graph(out) == ["AccumulateGrad", "CheckpointBackward"]  # tanh's output is not held
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (1 - np.tanh(2 * x.detach().numpy()) ** 2), rtol=1e-6)


def test_an_input_changed_in_place_before_backward_is_caught():
    x = tl.randn(3, requires_grad=True)
    h = x * 1
    out = checkpoint(lambda t: t.exp(), h, use_reentrant=True)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_inputs_that_do_not_require_grad_are_warned_about():
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        checkpoint(lambda t: t * 2, tl.ones(2), use_reentrant=True)


def test_matches_pytorch_from_the_same_weights(torch):
    import torch.utils.checkpoint as torch_checkpoint
    theirs = _net(torch)
    ours = _net(tl)
    ours.load_state_dict({k: tl.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    want = _grads(torch, theirs, lambda net, x: net[5](net[4](torch_checkpoint.checkpoint(
        _middle(net), net[0](x), use_reentrant=True))))
    for got, w in zip(_grads(tl, ours, FORWARDS["checkpoint"]), want):
        np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-14)

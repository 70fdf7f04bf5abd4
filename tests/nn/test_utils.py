"""tinygrad_lab.nn.utils against torch.nn.utils: gradient clipping, parameters as one vector,
padding and packing sequences (values, layouts, permutations, gradients), and RNN/LSTM/GRU on a
PackedSequence (outputs, final states and gradients from the same weights)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn
from tinygrad_lab.nn.utils import rnn as rnn_utils

RTOL = 1e-10


def _params(lib, grads: list, dtype="float64"):
    """Parameters with the given gradients (None: no gradient)."""
    out = []
    for i, g in enumerate(grads):
        p = lib.nn.Parameter(lib.tensor(np.full(np.shape(g) if g is not None else (2,), float(i)),
                                        dtype=getattr(lib, dtype)))
        if g is not None:
            p.grad = lib.tensor(np.asarray(g, dtype=np.float64), dtype=getattr(lib, dtype))
        out.append(p)
    return out


_rng = np.random.default_rng(7)
GRADS = [_rng.standard_normal((3, 4)) * 3, None, _rng.standard_normal(5), _rng.standard_normal((2, 2, 2)) * 0.1]


# ---------------------------------------------------------------- clipping

@pytest.mark.parametrize("max_norm", [0.5, 1e6])
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, 0])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clip_grad_norm_matches_torch(torch, max_norm, norm_type, dtype):
    ours, theirs = _params(tl, GRADS, dtype), _params(torch, GRADS, dtype)
    total = nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    rtol = RTOL if dtype == "float64" else 1e-6
    assert total.dtype == getattr(tl, dtype) and total.shape == ()
    np.testing.assert_allclose(total.item(), expected.item(), rtol=rtol)
    for p, q in zip(ours, theirs):
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=rtol)


def test_clip_grad_norm_forms_and_errors(torch):
    p = nn.Parameter(tl.tensor([3.0, 4.0]))
    p.grad = tl.tensor([3.0, 4.0])
    g = p.grad
    assert nn.utils.clip_grad_norm_(p, 1.0).item() == 5.0                 # a single tensor
    assert p.grad is g                                                    # in place
    np.testing.assert_allclose(g.numpy(), [0.6, 0.8], rtol=1e-6)
    assert nn.utils.clip_grad_norm_(iter([p]), 10.0, foreach=True).item() == pytest.approx(1.0, rel=1e-6)
    assert nn.utils.clip_grad_norm_([nn.Parameter(tl.ones(2))], 1.0).item() == 0.0   # no gradients at all
    q = nn.Parameter(tl.ones(2))
    q.grad = tl.tensor([1.0, float("inf")])
    for lib, param in ((nn, q), (torch.nn, torch.nn.Parameter(torch.ones(2)))):
        if lib is torch.nn:
            param.grad = torch.tensor([1.0, float("inf")])
        with pytest.raises(RuntimeError, match=r"The total norm of order 2.0 for gradients from `parameters` is "
                                               r"non-finite, so it cannot be clipped"):
            lib.utils.clip_grad_norm_([param], 1.0, error_if_nonfinite=True)
    assert math.isinf(nn.utils.clip_grad_norm_([q], 1.0).item())  # without the flag: scaled by the inf norm
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        nn.utils.clip_grad_norm([p], 1.0)


def test_get_total_norm_and_clip_grads_with_norm_match_torch(torch):
    ours, theirs = _params(tl, GRADS), _params(torch, GRADS)
    total = nn.utils.get_total_norm([p.grad for p in ours if p.grad is not None], 3.0)
    expected = torch.nn.utils.get_total_norm([p.grad for p in theirs if p.grad is not None], 3.0)
    np.testing.assert_allclose(total.item(), expected.item(), rtol=RTOL)
    nn.utils.clip_grads_with_norm_(ours, 0.1, total)
    torch.nn.utils.clip_grads_with_norm_(theirs, 0.1, expected)
    for p, q in zip(ours, theirs):
        if p.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=RTOL)


@pytest.mark.parametrize("clip_value", [0.5, 2])
def test_clip_grad_value_matches_torch(torch, clip_value):
    ours, theirs = _params(tl, GRADS), _params(torch, GRADS)
    assert nn.utils.clip_grad_value_(ours, clip_value) is None
    torch.nn.utils.clip_grad_value_(theirs, clip_value)
    for p, q in zip(ours, theirs):
        if p.grad is not None:
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
            assert np.abs(p.grad.numpy()).max() <= clip_value


# ---------------------------------------------------------------- parameters as a vector

def test_parameters_to_vector_and_back(torch):
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
    model.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in tmodel.state_dict().items()})
    vec = nn.utils.parameters_to_vector(model.parameters())
    np.testing.assert_array_equal(vec.detach().numpy(),
                                  torch.nn.utils.parameters_to_vector(tmodel.parameters()).detach().numpy())
    assert vec.shape == (11,) and vec.requires_grad
    (vec * tl.arange(11.0)).sum().backward()                  # differentiable: each weight gets its slot's factor
    np.testing.assert_array_equal(model[0].weight.grad.numpy().ravel(), np.arange(6.0))
    new = tl.arange(11.0)
    nn.utils.vector_to_parameters(new, model.parameters())
    np.testing.assert_array_equal(model[1].bias.detach().numpy(), [10.0])
    np.testing.assert_array_equal(model[0].weight.detach().numpy(), np.arange(6.0).reshape(2, 3))
    new[0] = 100.0                                             # the parameters share vec's memory (as PyTorch)
    assert model[0].weight[0, 0].item() == 100.0
    assert isinstance(model[0].weight, nn.Parameter) and model[0].weight.requires_grad
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], model.parameters())
    with pytest.raises(RuntimeError, match="1-D vector of 11 elements"):
        nn.utils.vector_to_parameters(tl.zeros(4), model.parameters())


# ---------------------------------------------------------------- padding and packing

def _seqs(lib, lengths, trailing=(2,), seed=0):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal((n,) + trailing), requires_grad=True) for n in lengths]


def _same(ours, theirs):
    np.testing.assert_array_equal(np.asarray(ours.detach().numpy()), theirs.detach().numpy())


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(torch, batch_first, padding_side):
    ours, theirs = _seqs(tl, [3, 5, 1, 5]), _seqs(torch, [3, 5, 1, 5])
    out = rnn_utils.pad_sequence(ours, batch_first, -1.0, padding_side)
    expected = torch.nn.utils.rnn.pad_sequence(theirs, batch_first, -1.0, padding_side)
    _same(out, expected)
    weights = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    (out * tl.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours, theirs):
        _same(a.grad, b.grad)


@pytest.mark.parametrize("enforce_sorted, lengths", [(True, [5, 4, 2, 2, 1]), (False, [2, 5, 1, 4, 2])])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_unpack_match_torch(torch, enforce_sorted, lengths, batch_first):
    rng = np.random.default_rng(3)
    shape = (len(lengths), 6, 3) if batch_first else (6, len(lengths), 3)
    x = rng.standard_normal(shape)
    ours_x, theirs_x = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = rnn_utils.pack_padded_sequence(ours_x, lengths, batch_first, enforce_sorted)
    theirs = torch.nn.utils.rnn.pack_padded_sequence(theirs_x, torch.tensor(lengths), batch_first, enforce_sorted)
    _same(ours.data, theirs.data)
    _same(ours.batch_sizes, theirs.batch_sizes)
    assert ours.batch_sizes.dtype == tl.int64 and ours.batch_sizes.device == tl.device("cpu")
    for a, b in ((ours.sorted_indices, theirs.sorted_indices), (ours.unsorted_indices, theirs.unsorted_indices)):
        assert (a is None) == (b is None) and (a is None or a.tolist() == b.tolist())
    padded, lens = rnn_utils.pad_packed_sequence(ours, batch_first, padding_value=7.0, total_length=8)
    tpadded, tlens = torch.nn.utils.rnn.pad_packed_sequence(theirs, batch_first, padding_value=7.0, total_length=8)
    _same(padded, tpadded)
    assert lens.tolist() == tlens.tolist() == lengths
    weights = np.random.default_rng(4).standard_normal(tuple(tpadded.shape))
    (padded * tl.tensor(weights)).sum().backward()
    (tpadded * torch.tensor(weights)).sum().backward()
    _same(ours_x.grad, theirs_x.grad)   # the gradient reaches only the real steps of the padded input
    data, batch_sizes, sorted_indices, unsorted_indices = ours  # a named tuple, as PyTorch's
    assert data is ours.data


def test_pack_sequence_unpack_and_unpad(torch):
    ours, theirs = _seqs(tl, [2, 4, 3]), _seqs(torch, [2, 4, 3])
    packed = rnn_utils.pack_sequence(ours, enforce_sorted=False)
    tpacked = torch.nn.utils.rnn.pack_sequence(theirs, enforce_sorted=False)
    _same(packed.data, tpacked.data)
    for a, b in zip(rnn_utils.unpack_sequence(packed), torch.nn.utils.rnn.unpack_sequence(tpacked)):
        _same(a, b)
    padded = rnn_utils.pad_sequence(ours, batch_first=True)
    for a, b in zip(rnn_utils.unpad_sequence(padded, tl.tensor([2, 4, 3]), batch_first=True), ours):
        _same(a, b)
    assert packed.to(tl.float32).data.dtype == tl.float32 and packed.double() is packed


def test_packing_errors(torch):
    x = tl.zeros(4, 3, 2)
    for lib, t in ((rnn_utils, x), (torch.nn.utils.rnn, torch.zeros(4, 3, 2))):
        with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order"):
            lib.pack_padded_sequence(t, [1, 3, 2])
        with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
            lib.pack_padded_sequence(t, [3, 2, 0])
        packed = lib.pack_padded_sequence(t, [3, 2, 1])
        with pytest.raises(ValueError, match="Expected total_length to be at least the length of the longest "
                                             "sequence in input, but got total_length=2 and max sequence length "
                                             "being 3"):
            lib.pad_packed_sequence(packed, total_length=2)
    with pytest.raises(RuntimeError, match="Expected `len\\(lengths\\)` to be equal to batch_size"):
        rnn_utils.pack_padded_sequence(x, [3, 2])
    with pytest.raises(RuntimeError, match="every sequence must have shape"):
        rnn_utils.pad_sequence([tl.zeros(3, 2), tl.zeros(2, 3)])


# ---------------------------------------------------------------- recurrent layers on packed batches

def _rnn_pair(torch, name, **kwargs):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(3, 4, **kwargs).double()
    ours = getattr(nn, name)(3, 4, **kwargs).double()
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("layout", ["sorted", "unsorted+bidirectional", "two layers+batch_first+hx"])
def test_recurrent_layers_accept_packed_sequences_like_torch(torch, name, layout):
    kwargs = {"bidirectional": "bidirectional" in layout}
    if "two layers" in layout:
        kwargs.update(num_layers=2, batch_first=True)
    ours, theirs = _rnn_pair(torch, name, **kwargs)
    lengths = [5, 4, 4, 2] if layout == "sorted" else [2, 5, 1, 4]
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 5, 3) if kwargs.get("batch_first") else (5, 4, 3))
    ox, tx = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    sorted_ = layout == "sorted"
    op = rnn_utils.pack_padded_sequence(ox, lengths, kwargs.get("batch_first", False), sorted_)
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, kwargs.get("batch_first", False), sorted_)
    args_o, args_t = [op], [tp]
    if "hx" in layout:
        d = 2 * (2 if kwargs["bidirectional"] else 1)
        h0 = rng.standard_normal((d, 4, 4))
        hx_o, hx_t = tl.tensor(h0, requires_grad=True), torch.tensor(h0, requires_grad=True)
        args_o.append((hx_o, hx_o * 0.5) if name == "LSTM" else hx_o)
        args_t.append((hx_t, hx_t * 0.5) if name == "LSTM" else hx_t)
    (out, state), (tout, tstate) = ours(*args_o), theirs(*args_t)
    assert isinstance(out, rnn_utils.PackedSequence)
    np.testing.assert_allclose(out.data.detach().numpy(), tout.data.detach().numpy(), rtol=RTOL, atol=1e-12)
    assert out.batch_sizes.tolist() == tout.batch_sizes.tolist()
    states = state if name == "LSTM" else (state,)
    tstates = tstate if name == "LSTM" else (tstate,)
    for s, t in zip(states, tstates):
        np.testing.assert_allclose(s.detach().numpy(), t.detach().numpy(), rtol=RTOL, atol=1e-12)
    upstream = rng.standard_normal(tuple(tout.data.shape))
    loss = (out.data * tl.tensor(upstream)).sum() + sum(s.sum() for s in states)
    tloss = (tout.data * torch.tensor(upstream)).sum() + sum(t.sum() for t in tstates)
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(ox.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    for (k, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=k)
    if "hx" in layout:
        np.testing.assert_allclose(hx_o.grad.numpy(), hx_t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_packed_input_errors():
    lstm = nn.LSTM(3, 4)
    packed = rnn_utils.pack_sequence([tl.zeros(2, 5), tl.zeros(1, 5)])
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 5"):
        lstm(packed)
    with pytest.raises(ValueError, match="does not match weight dtype"):
        lstm(rnn_utils.pack_sequence([tl.zeros(2, 3, dtype=tl.float64)]))

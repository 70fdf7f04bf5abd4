"""nn.Module core, containers and nn.init, compared with PyTorch's behaviour."""
from collections import OrderedDict

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn


def _tree(lib):
    """The same small module tree in either library (lib = tinygrad_lab or torch)."""
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.ones(2, 3))
            self.register_buffer("running", lib.zeros(3))
            self.register_buffer("scratch", lib.zeros(1), persistent=False)

        def forward(self, x):
            return x @ self.w

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Block()
            self.seq = lib.nn.Sequential(Block(), Block())
            self.lst = lib.nn.ModuleList([Block()])
            self.dct = lib.nn.ModuleDict({"k": Block()})
            self.shared = self.a  # the same module twice: listed once
            self.bias = lib.nn.Parameter(lib.zeros(3))

    return Net()


def test_traversal_names_and_order_match_pytorch(torch):
    ours, theirs = _tree(tl), _tree(torch)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict()) == list(theirs.state_dict())  # non-persistent buffers left out
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))


def test_repr_matches_pytorch(torch):
    assert repr(_tree(tl)) == repr(_tree(torch))


def test_attribute_registration_rules():
    m = nn.Module()
    m.p = nn.Parameter(tl.zeros(2))
    assert "p" in m._parameters and "p" not in m.__dict__
    m.p = None
    assert m.p is None
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'p'"):
        m.p = tl.zeros(2)
    m.child = nn.Module()
    m.child = nn.Sequential()  # replacing a module with a module is fine
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'missing'"):
        m.missing
    del m.child
    assert "child" not in dict(m.named_children())

    class NoInit(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(tl.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        NoInit()


def test_parameter_shares_memory_and_requires_grad():
    t = tl.zeros(3)
    p = nn.Parameter(t)
    assert p.requires_grad and p.is_leaf and isinstance(p, tl.Tensor)
    p.data.add_(1)
    np.testing.assert_array_equal(t.numpy(), [1, 1, 1])
    assert repr(p).startswith("Parameter containing:\ntensor(")
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(tl.zeros(2, dtype=tl.long))
    y = (p * 2 + tl.ones(3)).sum()  # Tensor and Parameter mix on the fast path
    y.backward()
    np.testing.assert_array_equal(p.grad.numpy(), [2, 2, 2])


def test_load_state_dict_errors_name_keys_and_shapes(torch):
    ours = _tree(tl)
    sd = ours.state_dict()
    sd.pop("bias")
    sd["extra"] = tl.zeros(1)
    sd["a.w"] = tl.zeros(3, 3)
    with pytest.raises(RuntimeError) as err:
        ours.load_state_dict(sd)
    msg = str(err.value)
    assert 'Missing key(s) in state_dict: "bias"' in msg
    assert 'Unexpected key(s) in state_dict: "extra"' in msg
    assert "size mismatch for a.w: copying a param with shape Size([3, 3])" in msg and "Size([2, 3])" in msg
    # PyTorch raises the same kinds of error for the same dict
    tsd = {k: torch.zeros(tuple(v.shape)) for k, v in sd.items()}
    with pytest.raises(RuntimeError, match="Missing key"):
        _tree(torch).load_state_dict(tsd)


@pytest.mark.parametrize("bad", [[1, 2], (("w", 1),), "weights", None, 3])
def test_load_state_dict_wants_a_dict(torch, bad):
    # issue 16: a list used to be reported as "Missing key(s)"
    with pytest.raises(TypeError) as ours:
        _tree(tl).load_state_dict(bad)
    with pytest.raises(TypeError) as theirs:
        _tree(torch).load_state_dict(bad)
    assert str(ours.value) == str(theirs.value)  # Expected state_dict to be dict-like, got <class 'list'>.


def test_load_state_dict_copies_in_place_and_non_strict_reports(torch):
    ours = _tree(tl)
    w = ours.a.w
    new = {k: tl.full(tuple(v.shape), 7.0) for k, v in ours.state_dict().items()}
    del new["bias"]
    result = ours.load_state_dict(new, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == []
    assert ours.a.w is w and w.detach().numpy().tolist() == [[7.0] * 3] * 2  # same Parameter, new values
    assert ours.a.running.numpy().tolist() == [7.0] * 3


def test_state_dict_round_trip_between_libraries(torch):
    ours, theirs = _tree(tl), _tree(torch)
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(-1, 1)
    ours.load_state_dict({k: tl.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.arange(4.0, dtype=np.float32).reshape(2, 2)
    # float32 products from two BLAS libraries may differ in the last bit: compare to float32 precision
    np.testing.assert_allclose(ours.a(tl.tensor(x)).detach().numpy(), theirs.a(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6)


def test_apply_visits_modules_like_pytorch(torch):
    def order(net):
        seen = []
        net.apply(lambda m: seen.append(type(m).__name__))
        return seen

    assert order(_tree(tl)) == order(_tree(torch))


def test_train_eval_zero_grad_apply_requires_grad():
    net = _tree(tl)
    assert net.training and all(m.training for m in net.modules())
    net.eval()
    assert not any(m.training for m in net.modules())
    net.train()
    out = net.a(tl.ones(4, 2)).sum()
    out.backward()
    assert net.a.w.grad is not None
    net.zero_grad(set_to_none=False)
    assert net.a.w.grad.numpy().tolist() == [[0.0] * 3] * 2
    net.zero_grad()
    assert net.a.w.grad is None
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_to_double_keeps_parameter_objects_and_converts_buffers():
    net = _tree(tl)
    params = list(net.parameters())
    net.a(tl.ones(1, 2)).sum().backward()
    net.double()
    assert list(net.parameters()) == params  # the same objects: optimizers holding them keep working
    assert all(p.dtype == tl.float64 for p in net.parameters())
    assert net.a.w.grad.dtype == tl.float64 and net.a.running.dtype == tl.float64
    with pytest.raises(TypeError, match="floating point"):
        net.to(tl.long)


def test_forward_hooks_and_call_stack():
    from tinygrad_lab.nn.modules.module import call_stack
    net = _tree(tl)
    calls = []
    h1 = net.a.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    h2 = net.a.register_forward_hook(lambda m, args, out: calls.append([type(s).__name__ for s in call_stack]) or out + 1)
    x = tl.ones(1, 2)
    np.testing.assert_array_equal(net.a(x).detach().numpy(), [[5.0, 5.0, 5.0]])  # (1*2)@ones(2,3) + 1
    assert calls == [[]]  # hooks run after forward returned: the stack is empty again
    h1.remove()
    h2.remove()
    np.testing.assert_array_equal(net.a(x).detach().numpy(), [[2.0, 2.0, 2.0]])

    class Probe(nn.Module):
        def forward(self, x):
            calls.append([type(s).__name__ for s in call_stack])
            return x

    nn.Sequential(nn.Sequential(Probe()))(x)
    assert calls[-1] == ["Sequential", "Sequential", "Probe"]


def test_sequential_indexing_slicing_append_and_ordered_dict():
    a, b, c = nn.Module(), nn.Module(), nn.Module()
    s = nn.Sequential(a, b)
    assert s[0] is a and s[-1] is b and len(s) == 2
    s.append(c)
    assert list(s) == [a, b, c] and isinstance(s[1:], nn.Sequential) and list(s[1:]) == [b, c]
    with pytest.raises(IndexError, match="out of range"):
        s[5]
    named = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
    assert [n for n, _ in named.named_children()] == ["first", "second"]
    lin = nn.Sequential()
    assert lin(tl.ones(2)).numpy().tolist() == [1.0, 1.0]  # an empty Sequential is the identity


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Module()])
    ml.append(nn.Module())
    ml += [nn.Module()]
    ml.insert(0, nn.Sequential())
    assert len(ml) == 4 and isinstance(ml[0], nn.Sequential)
    md = nn.ModuleDict({"x": nn.Module()})
    md["y"] = nn.Sequential()
    assert list(md) == ["x", "y"] and "y" in md and isinstance(md.pop("y"), nn.Sequential)


def test_init_bounds_and_statistics_follow_pytorch_formulas():
    tl.manual_seed(0)
    w = tl.empty(256, 128)
    nn.init.kaiming_uniform_(w, a=5 ** 0.5)  # nn.Linear's default: bound = 1/sqrt(fan_in)
    assert float(w.abs().max()) <= 1 / 128 ** 0.5 and float(w.abs().max()) > 0.95 / 128 ** 0.5
    nn.init.xavier_uniform_(w)
    bound = (6 / (128 + 256)) ** 0.5
    assert float(w.abs().max()) <= bound
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(float(w.std()) - (2 / 128) ** 0.5) < 0.01
    nn.init.zeros_(w)
    assert float(w.abs().sum()) == 0.0
    assert nn.init.calculate_gain("tanh") == 5 / 3
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(tl.empty(3))


def test_init_gains_match_pytorch(torch):
    for name in ("linear", "sigmoid", "tanh", "relu", "selu"):
        assert nn.init.calculate_gain(name) == pytest.approx(torch.nn.init.calculate_gain(name))
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(torch.nn.init.calculate_gain("leaky_relu", 0.2))
    for shape in [(4, 3), (8, 3, 3, 3)]:
        assert nn.init._calculate_fan_in_and_fan_out(tl.empty(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


# ---------------------------------------------------------------- full backward hooks

def _backward_hook_trace(lib):
    """What a module's full backward hooks and pre-hooks see, as PyTorch: a model of two layers whose first
    input needs no gradient (its hook then runs with grad_input None), whose second's does; a hook that scales
    grad_input; a module with two tensor inputs; hooks removed again."""
    lib.manual_seed(0)
    first, second = lib.nn.Linear(3, 2).double(), lib.nn.Linear(2, 2).double()
    with lib.no_grad():
        for layer in (first, second):
            layer.weight.copy_(lib.arange(1.0, layer.weight.numel() + 1, dtype=lib.float64).reshape(layer.weight.shape))
            layer.bias.zero_()
    seen = []

    def show(grads):
        return [None if g is None else g.tolist() for g in grads]

    handles = [layer.register_full_backward_hook(
        lambda m, gi, go, name=name: seen.append((name, show(gi), show(go)))) for name, layer in
        (("first", first), ("second", second))]
    handles.append(second.register_full_backward_pre_hook(lambda m, go: seen.append(("pre", show(go)))))
    x = lib.tensor([[1.0, -1.0, 2.0]], dtype=lib.float64)
    (second(first(x)) * lib.tensor([[1.0, 3.0]], dtype=lib.float64)).sum().backward()
    scale = second.register_full_backward_hook(lambda m, gi, go: (gi[0] * 10,))
    h = first(x).detach().requires_grad_()
    second(h).sum().backward()
    scale.remove()
    for handle in handles:
        handle.remove()
    second(h).sum().backward()  # no hook runs

    class Pair(lib.nn.Module):
        def forward(self, a, b):
            return a * b

    pair, a, b = Pair(), lib.tensor([2.0], requires_grad=True), lib.tensor([3.0])
    pair.register_full_backward_hook(lambda m, gi, go: seen.append(("pair", show(gi), show(go))))
    pair(a, b).sum().backward()
    return seen, h.grad.tolist(), first.weight.grad.tolist()


def test_full_backward_hooks_see_what_pytorchs_see(torch):
    with pytest.warns(UserWarning, match="no inputs require gradients"):  # the first layer's, as PyTorch's
        ours = _backward_hook_trace(tl)
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        theirs = _backward_hook_trace(torch)
    assert ours == theirs


def _lookups(lib):
    m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
    out = [type(m.get_submodule("1")).__name__, tuple(m.get_parameter("0.weight").shape),
           tuple(m.get_buffer("1.running_mean").shape), m.get_submodule("") is m]
    for call in (lambda: m.get_submodule("2"), lambda: m.get_parameter("1.running_mean"),
                 lambda: m.get_buffer("0.weight"), lambda: m.get_parameter("0.nope"), lambda: m.get_submodule("0.weight")):
        try:
            call()
            out.append("found")
        except AttributeError as e:
            out.append(str(e))
    m.set_submodule("1", lib.nn.ReLU())
    return out + [type(m[1]).__name__]


def test_get_submodule_parameter_buffer_and_set_submodule_as_pytorch(torch):
    assert _lookups(tl) == _lookups(torch)


def _printed_modules(nn):
    return [nn.Linear(3, 4, bias=False), nn.Conv2d(3, 8, (3, 5), stride=2, padding=1, dilation=2, bias=False,
                                                   padding_mode="reflect"),
            nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1), nn.MaxPool2d(3, 2, 1, ceil_mode=True),
            nn.BatchNorm2d(8, momentum=None, affine=False), nn.LayerNorm((2, 3), elementwise_affine=False),
            nn.Embedding(10, 3, padding_idx=0), nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True,
                                                        dropout=0.1),
            nn.GELU(approximate="tanh"), nn.Unflatten(1, (2, 2)), nn.MultiheadAttention(4, 2),
            nn.TransformerEncoderLayer(4, 2, 8), nn.ReflectionPad2d((1, 2, 0, 1)), nn.EmbeddingBag(10, 3, mode="mean"),
            nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1))),
            nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.Linear(1, 1)),
                           nn.Sequential(nn.Linear(1, 1))])]


@pytest.mark.parametrize("k", range(16))
def test_printed_module_as_pytorch(k, torch):
    """print(model) as PyTorch prints it, a ModuleList's runs of equal layers folded ('(0-1): 2 x Linear(...)')."""
    assert repr(_printed_modules(tl.nn)[k]) == repr(_printed_modules(torch.nn)[k])

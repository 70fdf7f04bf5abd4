"""ParameterList and ParameterDict against PyTorch's: registration (parameters(), state_dict keys),
list/dict behaviour, conversion of plain tensors, reprs, and training through them."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn


def _holder(lib):
    class Holder(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.plist = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(3)), lib.zeros(2, 2)])
            self.pdict = lib.nn.ParameterDict({"a": lib.nn.Parameter(lib.ones(2)), "b": lib.zeros(1)})
            self.plist.append(lib.full((2,), 3.0))
            self.pdict["c"] = lib.nn.Parameter(lib.ones(4))

        def forward(self, x):
            return (x * self.plist[0]).sum() + self.plist[2].sum() * self.pdict["c"].sum()

    return Holder()


def test_parameters_are_registered_like_torch(torch):
    ours, theirs = _holder(tl), _holder(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["plist.0", "plist.1", "plist.2", "pdict.a",
                                                                   "pdict.b", "pdict.c"]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert all(isinstance(p, nn.Parameter) for p in ours.plist) and ours.plist[1].requires_grad
    assert len(ours.plist) == 3 and len(ours.pdict) == 3
    ours(tl.ones(3)).backward()
    assert ours.plist[0].grad.tolist() == [1.0, 1.0, 1.0] and ours.pdict["c"].grad.tolist() == [6.0] * 4
    opt = tl.optim.SGD(ours.parameters(), lr=0.1)
    opt.step()
    np.testing.assert_allclose(ours.plist[0].detach().numpy(), [0.9, 0.9, 0.9], rtol=1e-6)
    loaded = _holder(tl)
    loaded.load_state_dict(ours.state_dict())
    np.testing.assert_array_equal(loaded.plist[0].detach().numpy(), ours.plist[0].detach().numpy())


def test_reprs(torch):
    ours, theirs = _holder(tl), _holder(torch)
    assert repr(ours.plist) == repr(theirs.plist).replace("torch.", "tinygrad_lab.")
    assert repr(ours.pdict) == ("ParameterDict(\n    (a): Parameter containing: [tinygrad_lab.float32 of size 2]\n"
                                "    (b): Parameter containing: [tinygrad_lab.float32 of size 1]\n"
                                "    (c): Parameter containing: [tinygrad_lab.float32 of size 4]\n)")
    assert repr(nn.ParameterList()) == "ParameterList()" and repr(nn.ParameterDict()) == "ParameterDict()"
    assert repr(nn.ParameterList([1, "x"])) == repr(torch.nn.ParameterList([1, "x"]))


def test_parameter_list_behaves_like_a_list():
    a, b, c = (nn.Parameter(tl.full((1,), float(i))) for i in range(3))
    plist = nn.ParameterList([a])
    plist += [b]
    plist.extend((c,))
    assert list(plist) == [a, b, c] and plist[-1] is c
    assert list(plist[1:]) == [b, c] and isinstance(plist[1:], nn.ParameterList)
    plist[0] = tl.zeros(2)
    assert isinstance(plist[0], nn.Parameter) and plist[0].shape == (2,)
    with pytest.raises(IndexError, match="out of range"):
        plist[3]
    with pytest.raises(TypeError, match="iterable"):
        plist.extend(tl.ones(2))
    with pytest.raises(RuntimeError, match="should not be called"):
        plist(1)
    with pytest.raises(RuntimeError, match="floating point"):
        nn.ParameterList([tl.tensor([1, 2])])   # as Parameter(int tensor)


def test_parameter_dict_behaves_like_a_dict():
    pdict = nn.ParameterDict([("w", tl.ones(2)), ("v", nn.Parameter(tl.zeros(1)))])
    assert pdict.keys() == ["w", "v"] and "w" in pdict and "x" not in pdict
    pdict.update({"x": tl.ones(3)})
    pdict.update(nn.ParameterDict({"y": tl.ones(1)}))
    assert list(pdict) == ["w", "v", "x", "y"] and list(reversed(pdict)) == ["y", "x", "v", "w"]
    assert pdict.pop("v").tolist() == [0.0] and "v" not in pdict and len(pdict) == 3
    assert pdict.get("nope") is None and pdict.setdefault("z", tl.ones(1)).tolist() == [1.0]
    key, value = pdict.popitem()
    assert key == "z" and value.tolist() == [1.0]
    copy = pdict.copy()
    assert copy.keys() == pdict.keys() and copy["w"] is pdict["w"]
    del pdict["w"]
    assert [k for k, _ in pdict.items()] == ["x", "y"] and len(pdict.values()) == 2
    with pytest.raises(KeyError):
        pdict["w"]
    with pytest.raises(ValueError, match="element #0 should be a pair"):
        pdict.update([("a", tl.ones(1), 3)])
    with pytest.raises(TypeError, match="iterable of key/value pairs"):
        pdict.update(3)
    pdict.clear()
    assert len(pdict) == 0 and list(pdict.parameters()) == []
    np.testing.assert_array_equal(copy["x"].detach().numpy(), [1.0, 1.0, 1.0])

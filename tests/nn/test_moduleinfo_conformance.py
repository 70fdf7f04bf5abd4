"""Conformance of nn modules against PyTorch's own module tests.

PyTorch tests its modules on the samples of its ModuleInfo database
(`torch.testing._internal.common_modules.module_db`): constructor arguments and forward inputs per module,
in training and in eval mode. Here every module tinygrad_lab provides (`tinygrad_lab.nn.<same name>`) is
built from the same arguments, given the PyTorch module's parameters and buffers (`load_state_dict`), and
run on the same inputs in float64: the outputs must match (dtype, shape, values), and so must the gradients
of a random weighting of the outputs, for every input and every parameter. `KNOWN_GAPS` lists where we
still differ, as strict expected failures. Without PyTorch (or its test helper `expecttest`) the module is
skipped. `test_coverage` prints how many of module_db's modules we provide.
"""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl

torch = pytest.importorskip("torch", exc_type=ImportError)
_cm = pytest.importorskip("torch.testing._internal.common_modules", exc_type=ImportError)

from ..ops.test_opinfo_conformance import RANDOM, Unsupported, assert_same, convert, flatten  # noqa: E402

MODES = ("train", "eval")

# Modules whose output is random in training mode (their gradients follow the draw): compared in eval only.
RANDOM_IN_TRAINING = {"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "RReLU"}

KNOWN_GAPS: dict = {}  # module name (or name-mode) -> why we differ; none at present


def _ours(info):
    return getattr(tl.nn, info.module_cls.__name__, None)


def _infos():
    return [info for info in _cm.module_db if _ours(info) is not None]


def convert_constructor(obj):
    """A constructor argument for our module: PyTorch's functions (an activation) by name, a PyTorch
    encoder layer (TransformerEncoder's) rebuilt from its settings, anything else as `convert` does."""
    if isinstance(obj, torch.nn.TransformerEncoderLayer):
        attn = obj.self_attn
        activation = obj.activation
        return tl.nn.TransformerEncoderLayer(
            attn.embed_dim, attn.num_heads, obj.linear1.out_features, obj.dropout.p,
            activation=convert_constructor(activation), layer_norm_eps=obj.norm1.eps, batch_first=attn.batch_first,
            norm_first=obj.norm_first, bias=obj.linear1.bias is not None)
    if callable(obj) and not isinstance(obj, (torch.nn.Module, type)) and hasattr(tl.nn.functional, obj.__name__):
        return getattr(tl.nn.functional, obj.__name__)
    if isinstance(obj, (list, tuple)):
        return type(obj)(convert_constructor(o) for o in obj)
    if isinstance(obj, dict):
        return {k: convert_constructor(v) for k, v in obj.items()}
    return convert(obj, [])


def _build(info, sample, mode: str, forward_args, forward_kwargs):
    """(PyTorch's module, ours with its parameters and buffers), both in `mode`."""
    torch.manual_seed(0)
    theirs = info.module_cls(*sample.constructor_input.args, **sample.constructor_input.kwargs).double()
    args = convert_constructor(tuple(sample.constructor_input.args))
    kwargs = convert_constructor(dict(sample.constructor_input.kwargs))
    ours = _ours(info)(*args, **kwargs).double()
    theirs.train(mode == "train")
    ours.train(mode == "train")
    if info.is_lazy:  # parameters take their shapes from the first input
        with torch.no_grad():
            theirs(*sample.forward_input.args, **sample.forward_input.kwargs)
        with tl.no_grad():
            ours(*forward_args, **forward_kwargs)
    ours.load_state_dict({k: tl.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    return theirs, ours


def _run_sample(info, sample, mode: str, rng) -> str:
    pairs = []
    try:
        args = convert(tuple(sample.forward_input.args), pairs)
        kwargs = convert(dict(sample.forward_input.kwargs), pairs)
        theirs, ours = _build(info, sample, mode, args, kwargs)
    except Unsupported as e:
        return f"unsupported: {e}"
    wants = flatten(theirs(*sample.forward_input.args, **sample.forward_input.kwargs))
    gots = flatten(ours(*args, **kwargs))
    assert len(gots) == len(wants), f"{len(gots)} outputs, PyTorch gives {len(wants)}"
    for i, (g, w) in enumerate(zip(gots, wants)):
        assert_same(g, w, "float64", f"output {i}")
    pairs += [(p, dict(ours.named_parameters())[name]) for name, p in theirs.named_parameters()]
    _compare_gradients(wants, gots, pairs, rng)
    return "ran"


def _compare_gradients(wants: list, gots: list, pairs: list, rng) -> None:
    """Gradients of sum(weight * output) for every input and parameter (PyTorch's, ours) in pairs."""
    kept = [(w, g) for w, g in zip(wants, gots) if isinstance(w, torch.Tensor) and w.requires_grad]
    if not kept or not pairs:
        return
    weights = [rng.standard_normal(tuple(w.shape)) for w, _ in kept]
    loss_t = sum((w * torch.tensor(a, dtype=w.dtype)).sum() for (w, _), a in zip(kept, weights))
    loss_o = sum((g * tl.tensor(a, dtype=g.dtype)).sum() for (_, g), a in zip(kept, weights))
    grads_t = torch.autograd.grad(loss_t, [t for t, _ in pairs], allow_unused=True)
    grads_o = tl.autograd.grad(loss_o, [o for _, o in pairs], allow_unused=True)
    for i, (g, w, (t, o)) in enumerate(zip(grads_o, grads_t, pairs)):
        w = torch.zeros_like(t) if w is None else w
        g = tl.zeros_like(o) if g is None else g
        assert_same(g, w, "float64", f"gradient of input or parameter {i} (shape {list(t.shape)})")


def _cases():
    cases = []
    for info in _infos():
        name = info.module_cls.__name__
        for mode in MODES:
            if mode == "train" and name in RANDOM_IN_TRAINING:
                continue
            gap = KNOWN_GAPS.get(name) or KNOWN_GAPS.get(f"{name}-{mode}")
            marks = [pytest.mark.xfail(reason=gap, strict=True)] if gap else []
            cases.append(pytest.param(info, mode, id=f"{name}-{mode}", marks=marks))
    return cases


@pytest.mark.parametrize("info, mode", _cases())
def test_module_matches_pytorch_on_its_samples(info, mode):
    rng = np.random.default_rng(0)
    samples = info.module_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=True,
                                      training=mode == "train")
    outcomes = []
    for k, sample in enumerate(samples):
        try:
            outcomes.append(_run_sample(info, sample, mode, rng))
        except AssertionError as e:
            raise AssertionError(f"sample {k} ({sample.desc or 'default'}): {e}") from None
        except Exception as e:  # noqa: BLE001 - an error where PyTorch has an answer is a mismatch
            raise AssertionError(f"sample {k} ({sample.desc or 'default'}): {type(e).__name__}: {e}") from e
    assert "ran" in outcomes or not samples, f"no sample ran: {sorted(set(outcomes))}"


def test_coverage(capsys):
    names = sorted({info.module_cls.__name__ for info in _cm.module_db})
    ours = sorted({info.module_cls.__name__ for info in _infos()})
    with capsys.disabled():
        print(f"\nModuleInfo conformance: tinygrad_lab provides {len(ours)} of module_db's {len(names)} modules "
              f"({100 * len(ours) // len(names)}%); missing: {', '.join(sorted(set(names) - set(ours)))}")
    assert len(ours) >= 100

"""The bad-input corpus (tests/misuses.py): each misuse raises (or warns) in its family with a message
naming what was wrong, and PyTorch, when installed, raises in the same family (or differs as the entry says)."""
from __future__ import annotations

import re
import warnings

import pytest

import tinygrad_lab as tl

from .misuses import CORPUS, SAME, Differs

NAMES = sorted(CORPUS)


def _is_warning(exc) -> bool:
    return isinstance(exc, type) and issubclass(exc, Warning)


def outcome(program, m) -> tuple[type | None, str]:
    """What program(m) did: the type of what it raised (or of its first warning) and the message;
    (None, '') when it ran without either."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            program(m)
        except Exception as e:  # noqa: BLE001 (what was raised is the result)
            return type(e), str(e)
    kept = [w for w in caught if not issubclass(w.category, (DeprecationWarning, RuntimeWarning))]
    return (kept[0].category, "\n".join(str(w.message) for w in kept)) if kept else (None, "")


def test_the_corpus_is_large_and_covers_every_category():
    assert len(CORPUS) >= 200
    families = {c.exc for c in CORPUS.values() if isinstance(c.exc, type)}
    assert {TypeError, RuntimeError, ValueError, IndexError, UserWarning} <= families


@pytest.mark.parametrize("name", NAMES)
def test_ours(name):
    case = CORPUS[name]
    raised, message = outcome(case.program, tl)
    assert raised is not None, f"{name}: ran without an error or a warning"
    assert issubclass(raised, case.exc), f"{name}: {raised.__name__} ({message}), expected {case.exc}"
    for pattern in case.says:
        assert re.search(pattern, message), f"{name}: {pattern!r} not in {message!r}"
    assert "_data" not in message and "ndarray' object" not in message  # no engine internals


@pytest.mark.parametrize("name", NAMES)
def test_pytorch_agrees(name):
    torch = pytest.importorskip("torch")
    case = CORPUS[name]
    if isinstance(case.torch, Differs):
        raised, message = outcome(case.program, torch)
        assert raised is case.torch.raises or (raised and case.torch.raises and issubclass(raised, case.torch.raises)), \
            f"{name}: PyTorch now gives {raised} ({message}); the entry says {case.torch}"
        return
    program = case.program if case.torch is SAME else case.torch
    raised, message = outcome(program, torch)
    assert raised is not None, f"{name}: PyTorch runs it"
    assert issubclass(raised, case.exc), f"{name}: PyTorch raises {raised.__name__} ({message}), we {case.exc}"

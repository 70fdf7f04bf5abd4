"""Tests for tinygrad_lab.save / tinygrad_lab.load (tinygrad_lab/serialization.py).

Round trips are bit for bit; every damaged or foreign file must raise
SerializationError (or FileNotFoundError for a missing one) naming the file, and
loading must never run code.
"""
from __future__ import annotations

import io
import json
import math
import os
import pathlib
import pickle
import struct
import time
import zipfile
from collections import OrderedDict, defaultdict, namedtuple

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import backends, serialization
from tinygrad_lab.serialization import SerializationError, WeightsOnlyLoadError

from .standin import StandInBackend

DTYPE_NAMES = ("bool", "uint8", "int32", "int64", "float16", "float32", "float64")
FLOAT_NAMES = ("float16", "float32", "float64")


def roundtrip(obj, tmp_path, **load_kwargs):
    path = tmp_path / "obj.tl"
    tl.save(obj, path)
    return tl.load(path, **load_kwargs)


def special_values(name: str) -> np.ndarray:
    """Edge values of a dtype, including NaNs with payloads and -0.0 for floats."""
    npd = np.dtype(name if name != "bool" else np.bool_)
    if name == "bool":
        return np.array([True, False, True])
    if npd.kind in "iu":
        info = np.iinfo(npd)
        return np.array([info.min, info.max, 0, 1, info.max - 1], dtype=npd)
    info = np.finfo(npd)
    vals = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.max, info.min, info.tiny, info.smallest_subnormal,
                     1 / 3], dtype=npd)
    # a NaN with a non-default payload and the sign bit set: must come back bit for bit
    as_int = vals.view(f"u{npd.itemsize}")
    as_int[4] |= as_int.dtype.type(1)
    as_int[4] |= as_int.dtype.type(1) << as_int.dtype.type(8 * npd.itemsize - 1)
    return vals


def assert_same_bits(loaded, original) -> None:
    assert isinstance(loaded, tl.Tensor)
    assert loaded.dtype is original.dtype
    assert tuple(loaded.shape) == tuple(original.shape)
    assert loaded.device == original.device
    a = loaded._device.backend.to_host(loaded._data)
    b = original._device.backend.to_host(original._data)
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


# ============================================================================ round trips

@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (10,), (2, 5)])
def test_every_dtype_round_trips_bit_for_bit(tmp_path, name, shape):
    vals = special_values(name)
    n = math.prod(shape)
    data = np.resize(vals, n).reshape(shape) if n else np.zeros(shape, dtype=vals.dtype)
    t = tl.from_numpy(data.copy())
    out = roundtrip(t, tmp_path)
    assert_same_bits(out, t)
    assert out.is_leaf and not out.requires_grad and out.grad is None


def test_special_float_bits_are_kept(tmp_path):
    t = tl.from_numpy(special_values("float32"))
    out = roundtrip({"x": t}, tmp_path)["x"]
    assert out.numpy().view(np.uint32)[4] == t.numpy().view(np.uint32)[4]  # the NaN payload itself
    assert math.copysign(1.0, out.numpy()[1]) == -1.0  # -0.0


def test_device_fixture_round_trip(tmp_path, device):
    t = tl.randn(3, 4, device=device, requires_grad=True)
    out = roundtrip({"w": t}, tmp_path)["w"]
    assert out.device == t.device
    assert_same_bits(out, t)


@pytest.mark.parametrize("make_view", [
    lambda x: x.t(),
    lambda x: x[:, ::2],
    lambda x: x[::-1],
    lambda x: x[1:, 1:].transpose(0, 1),
    lambda x: x[0].expand(3, 6),          # zero strides
    lambda x: x.flip(1),
])
def test_non_contiguous_tensors(tmp_path, make_view):
    base = tl.arange(18, dtype=tl.float64).reshape(3, 6)
    v = make_view(base)
    out = roundtrip(v, tmp_path)
    np.testing.assert_array_equal(out.numpy(), v.numpy())
    assert out.is_contiguous()
    assert_same_bits(out, v)


def test_loaded_tensors_are_writable_fresh_memory(tmp_path):
    t = tl.ones(3)
    out = roundtrip(t, tmp_path)
    out.add_(1)  # in place: the loaded memory must be writable ...
    np.testing.assert_array_equal(out.numpy(), [2, 2, 2])
    np.testing.assert_array_equal(t.numpy(), [1, 1, 1])  # ... and not shared with anything


def test_nested_containers_keep_types_keys_and_order(tmp_path):
    od = OrderedDict()
    for k in ("z", "a", "m", "b"):  # not sorted: order must survive
        od[k] = tl.tensor([ord(k)])
    obj = {
        "od": od,
        "int_keys": {3: "three", 0: "zero", -7: "minus seven", 2 ** 70: "big"},
        "mixed_keys": {1.5: "f", None: "none", True: "t", (1, "a", (2.0,)): "tuple", "": "empty"},
        "list": [1, 2.5, "s", None, False, [], (), {}],
        "tuple": (1, (2, (3,)), [4]),
        "numbers": [0, -1, 2 ** 100, -(2 ** 65), 0.1, -0.0, float("inf"), float("-inf"), 1e-310,
                    1.7976931348623157e308],
        "strings": ["", "héllo ✓ 🐍", "quote\" back\\slash \n\t", "\ud800 lone surrogate",
                    "{\"type\": \"tensor\"}"],
        "bools": [True, False],
        "numpy": [np.float32(1.25), np.int64(-3), np.bool_(True), np.float64(0.1), np.arange(6).reshape(2, 3),
                  np.array([1 + 2j], dtype=np.complex64), np.zeros((0, 2), dtype=np.uint16)],
        "meta": [tl.float16, tl.long, tl.device("cpu"), tl.Size([2, 3])],
    }
    out = roundtrip(obj, tmp_path)
    assert type(out["od"]) is OrderedDict and list(out["od"]) == ["z", "a", "m", "b"]
    assert [v.item() for v in out["od"].values()] == [ord(k) for k in "zamb"]
    assert out["int_keys"] == obj["int_keys"] and list(out["int_keys"]) == list(obj["int_keys"])
    assert all(type(k) is int for k in out["int_keys"])
    assert out["mixed_keys"] == obj["mixed_keys"]
    assert [type(k) for k in out["mixed_keys"]] == [type(k) for k in obj["mixed_keys"]]
    assert out["list"] == obj["list"] and type(out["list"]) is list
    assert [type(v) for v in out["list"]] == [type(v) for v in obj["list"]]
    assert out["tuple"] == obj["tuple"] and type(out["tuple"][2]) is list
    for a, b in zip(out["numbers"], obj["numbers"]):
        assert type(a) is type(b) and (a == b) and (math.copysign(1, a) == math.copysign(1, b))
    assert out["strings"] == obj["strings"]
    assert out["bools"] == [True, False] and all(type(b) is bool for b in out["bools"])
    for a, b in zip(out["numpy"], obj["numpy"]):
        assert type(a) is type(b) and a.dtype == b.dtype and np.array_equal(a, b) and np.shape(a) == np.shape(b)
    assert out["meta"][0] is tl.float16 and out["meta"][1] is tl.int64
    assert out["meta"][2] is tl.device("cpu")
    assert type(out["meta"][3]) is tl.Size and out["meta"][3] == (2, 3)


def test_scalars_and_none_at_top_level(tmp_path):
    for obj in (None, 3, 2.5, "x", True, [], {}):
        out = roundtrip(obj, tmp_path)
        assert out == obj and type(out) is type(obj)


def test_nan_float_value(tmp_path):
    assert math.isnan(roundtrip({"loss": float("nan")}, tmp_path)["loss"])


def test_requires_grad_and_fresh_leaves(tmp_path):
    w = tl.randn(2, 3, requires_grad=True)
    w.sum().backward()
    assert w.grad is not None
    y = w * 2  # a non-leaf: loads as a leaf that requires grad (as in PyTorch)
    c = tl.ones(2)
    out = roundtrip({"w": w, "y": y, "c": c}, tmp_path)
    assert out["w"].requires_grad and out["w"].is_leaf and out["w"].grad is None  # .grad is not saved
    assert out["y"].requires_grad and out["y"].is_leaf and out["y"].grad_fn is None
    assert not out["c"].requires_grad
    (out["w"] * out["y"]).sum().backward()  # usable as new leaves
    np.testing.assert_allclose(out["w"].grad.numpy(), out["y"].detach().numpy(), rtol=1e-6)


def test_same_tensor_twice_loads_as_one_object(tmp_path):
    a, b = tl.ones(2), tl.ones(2)
    out = roundtrip({"x": a, "tied": [a], "other": b}, tmp_path)
    assert out["x"] is out["tied"][0]
    assert out["other"] is not out["x"]
    with zipfile.ZipFile(tmp_path / "obj.tl") as zf:
        assert sorted(n for n in zf.namelist() if n.startswith("tensors/")) == ["tensors/0.npy", "tensors/1.npy"]


def test_checkpoint_with_model_and_optimizer_state(tmp_path):
    w, b = tl.randn(4, 3, requires_grad=True), tl.zeros(4, requires_grad=True)
    ckpt = {
        "epoch": 7,
        "loss": 0.123456789,
        "model": OrderedDict([("fc.weight", w.detach()), ("fc.bias", b.detach())]),
        "optimizer": {
            "state": {0: {"step": tl.tensor(10.0), "exp_avg": tl.zeros(4, 3), "exp_avg_sq": tl.ones(4, 3)},
                      1: {"step": tl.tensor(10.0), "exp_avg": tl.zeros(4), "exp_avg_sq": tl.ones(4)}},
            "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0, "amsgrad": False,
                              "foreach": None, "params": [0, 1]}],
        },
    }
    out = roundtrip(ckpt, tmp_path)
    assert out["epoch"] == 7 and out["loss"] == 0.123456789
    assert list(out["model"]) == ["fc.weight", "fc.bias"]
    assert_same_bits(out["model"]["fc.weight"], ckpt["model"]["fc.weight"])
    assert set(out["optimizer"]["state"]) == {0, 1}
    assert out["optimizer"]["param_groups"] == ckpt["optimizer"]["param_groups"]
    assert type(out["optimizer"]["param_groups"][0]["betas"]) is tuple


def test_file_objects_and_path_forms(tmp_path):
    t = tl.arange(5)
    buf = io.BytesIO()
    tl.save({"t": t}, buf)
    buf.seek(0)
    assert_same_bits(tl.load(buf)["t"], t)

    class Unseekable(io.RawIOBase):
        def __init__(self, data):
            self._b = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self._b.readinto(b)

    assert_same_bits(tl.load(io.BufferedReader(Unseekable(buf.getvalue())))["t"], t)
    stream = io.BytesIO()
    stream.write(b"some header")  # a file object is read from (and written at) its current position
    tl.save([t], stream)
    stream.seek(len(b"some header"))
    assert_same_bits(tl.load(stream)[0], t)
    tl.save(t, str(tmp_path / "s.tl"))
    assert_same_bits(tl.load(str(tmp_path / "s.tl")), t)
    with open(tmp_path / "s.tl", "rb") as f:
        assert_same_bits(tl.load(f), t)


def test_saving_is_deterministic(tmp_path):
    obj = {"a": tl.arange(10, dtype=tl.float32), 1: [np.float32(2), "x"]}
    tl.save(obj, tmp_path / "1.tl")
    tl.save(obj, tmp_path / "2.tl")
    assert (tmp_path / "1.tl").read_bytes() == (tmp_path / "2.tl").read_bytes()


def test_file_format_is_a_zip_with_a_json_manifest_and_npy_members(tmp_path):
    tl.save({"w": tl.ones(2, 3, requires_grad=True), "n": np.int32(4)}, tmp_path / "f.tl")
    with zipfile.ZipFile(tmp_path / "f.tl") as zf:
        assert zf.namelist() == ["manifest.json", "tensors/0.npy", "arrays/0.npy"]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
        m = json.loads(zf.read("manifest.json"))
        arr = np.load(io.BytesIO(zf.read("tensors/0.npy")), allow_pickle=False)
    assert m["format"] == "tinygrad_lab.save" and m["version"] == 1
    assert m["tensors"] == [{"file": "tensors/0.npy", "dtype": "float32", "shape": [2, 3], "requires_grad": True,
                             "device": "cpu"}]
    assert m["root"] == {"type": "dict", "items": [["w", {"type": "tensor", "index": 0}],
                                                   ["n", {"type": "numpy_scalar", "index": 0}]]}
    np.testing.assert_array_equal(arr, np.ones((2, 3), np.float32))


# ============================================================================ map_location

@pytest.fixture
def fake_accel(monkeypatch):
    """'fakeaccel': the stand-in device (tests/standin.py) under a name this module may unregister."""
    monkeypatch.setattr(backends, "_DEVICES", dict(backends._DEVICES))  # forget devices made in this test
    backend = StandInBackend()
    backend.name = "fakeaccel"
    monkeypatch.setitem(backends._BACKENDS, "fakeaccel", backend)
    return monkeypatch


def test_map_location_forms(tmp_path, fake_accel):
    path = tmp_path / "m.tl"
    g = tl.tensor([1.0, 2.0], device="fakeaccel:1", requires_grad=True)
    c = tl.tensor([3, 4])
    tl.save({"g": g, "c": c}, path)

    out = tl.load(path)  # None: where they were saved
    assert str(out["g"].device) == "fakeaccel:1" and str(out["c"].device) == "cpu"
    assert out["g"].requires_grad

    for loc in ("cpu", tl.device("cpu")):
        out = tl.load(path, map_location=loc)
        assert out["g"].device is tl.device("cpu") and out["c"].device is tl.device("cpu")
        np.testing.assert_array_equal(out["g"].detach().numpy(), [1.0, 2.0])
        assert out["g"].requires_grad and out["g"].is_leaf

    out = tl.load(path, map_location="fakeaccel:0")
    assert str(out["g"].device) == "fakeaccel:0" and str(out["c"].device) == "fakeaccel:0"

    for mapping in ({"fakeaccel:1": "cpu"}, {tl.device("fakeaccel:1"): tl.device("cpu")}):
        out = tl.load(path, map_location=mapping)
        assert out["g"].device is tl.device("cpu")
        assert out["c"].device is tl.device("cpu")
    out = tl.load(path, map_location={"cpu": "fakeaccel"})  # 'fakeaccel' means index 0, as for cuda
    assert str(out["c"].device) == "fakeaccel:0" and str(out["g"].device) == "fakeaccel:1"

    seen = []

    def fn(t, location):
        seen.append(location)
        return t if location != "cpu" else None

    out = tl.load(path, map_location=fn)
    assert seen == ["fakeaccel:1", "cpu"]
    assert out["g"].device is tl.device("cpu") and out["g"].requires_grad
    assert out["c"].device is tl.device("cpu")

    with pytest.raises(TypeError, match="map_location must be"):
        tl.load(path, map_location=3)
    with pytest.raises(TypeError, match="map_location keys and values"):
        tl.load(path, map_location={"cpu": 0})


def test_unavailable_saved_device_gives_clear_error(tmp_path, fake_accel):
    path = tmp_path / "gpu.tl"
    tl.save({"w": tl.ones(2, device="fakeaccel:0")}, path)
    fake_accel.delitem(backends._BACKENDS, "fakeaccel")
    fake_accel.setattr(backends, "_DEVICES", {k: v for k, v in backends._DEVICES.items() if k[0] != "fakeaccel"})
    with pytest.raises(RuntimeError, match=r"gpu\.tl.*saved on device 'fakeaccel:0'.*map_location='cpu'"):
        tl.load(path)
    with pytest.raises(RuntimeError, match=r"gpu\.tl.*map_location.*'nosuch:0'"):
        tl.load(path, map_location="nosuch:0")
    out = tl.load(path, map_location="cpu")
    assert out["w"].device is tl.device("cpu")


# ============================================================================ atomic writes

def _dir_listing(d: pathlib.Path) -> list:
    return sorted(p.name for p in d.iterdir())


def test_failed_save_leaves_old_file_intact_and_no_temp_files(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.tl"
    tl.save({"v": tl.ones(3)}, path)
    before = path.read_bytes()
    calls = []
    real = serialization._write_array

    def failing(zf, name, arr):
        calls.append(name)
        if len(calls) == 2:  # the first member went out, then the "disk" fails mid-save
            with zf.open(zipfile.ZipInfo(name), "w") as fp:
                fp.write(b"\x93NUMPY partial")
            raise OSError(28, "No space left on device")
        real(zf, name, arr)

    monkeypatch.setattr(serialization, "_write_array", failing)
    with pytest.raises(OSError, match="No space left"):
        tl.save({"a": tl.zeros(100), "b": tl.zeros(100)}, path)
    assert len(calls) == 2
    assert path.read_bytes() == before
    assert _dir_listing(tmp_path) == ["ckpt.tl"]
    np.testing.assert_array_equal(tl.load(path)["v"].numpy(), [1, 1, 1])


def test_interrupted_save_cleans_up(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.tl"
    path.write_bytes(b"old contents")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tl.save(tl.ones(2), path)
    assert path.read_bytes() == b"old contents"
    assert _dir_listing(tmp_path) == ["ckpt.tl"]


def test_unsupported_object_fails_before_touching_the_file(tmp_path):
    path = tmp_path / "ckpt.tl"
    path.write_bytes(b"old contents")
    with pytest.raises(TypeError):
        tl.save({"ok": tl.ones(2), "bad": object()}, path)
    assert path.read_bytes() == b"old contents"
    assert _dir_listing(tmp_path) == ["ckpt.tl"]


def test_save_overwrites_and_keeps_mode_and_writes_through_symlinks(tmp_path):
    path = tmp_path / "ckpt.tl"
    tl.save(1, path)
    os.chmod(path, 0o640)
    tl.save(2, path)
    assert tl.load(path) == 2 and (os.stat(path).st_mode & 0o777) == 0o640
    link = tmp_path / "latest.tl"
    link.symlink_to(path)
    tl.save(3, link)
    assert link.is_symlink() and tl.load(path) == 3


def test_text_mode_files_are_refused_with_a_clear_error(tmp_path):
    path = tmp_path / "x.tl"
    tl.save({"a": tl.ones(2)}, path)
    with open(path, "r") as f, pytest.raises(TypeError, match=r"load\(\) needs a file object opened in binary "
                                                              r"mode \('rb'\), got a text-mode TextIOWrapper"):
        tl.load(f)
    with pytest.raises(TypeError, match=r"save\(\) needs a file object opened in binary mode \('wb'\)"):
        tl.save({"a": 1}, io.StringIO())
    with open(tmp_path / "y.tl", "w") as f, pytest.raises(TypeError, match="binary mode"):
        tl.save({"a": 1}, f)


def test_save_into_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        tl.save(1, tmp_path / "nope" / "x.tl")


# ============================================================================ unsupported objects

Point = namedtuple("Point", "x y")


class Model:
    def state_dict(self):
        return {}


def _local_object():
    class Local:
        pass
    return Local()


class Slotted:
    __slots__ = ("x",)


class OwnNew:
    def __new__(cls):
        return super().__new__(cls)


@pytest.mark.parametrize("obj, path, fragment", [
    ({"model": {"fc.weight": lambda: 1}}, "obj['model']['fc.weight']", "function <lambda>"),
    ({"model": _local_object()}, "obj['model']", "defined inside a function"),
    ([1, {2: range(3)}], "obj[1][2]", "range"),
    ({"d": memoryview(b"x")}, "obj['d']", "memoryview"),
    ({"s": Slotted()}, "obj['s']", "slots"),
    ({"f": OwnNew()}, "obj['f']", "its own __new__"),
    ({"m": Model().state_dict}, "obj['m']", "method"),
    ((Point(1, 2),), "obj[0]", "Point"),
    ({"c": 1 + 2j}, "obj['c']", "complex"),
    ({"o": np.array([object()], dtype=object)}, "obj['o']", "dtype object"),
    ({"b": b"bytes"}, "obj['b']", "bytes"),
    ({"t": {tl.device("cpu"): 1}}, "obj['t'] (key", "dict key"),
    ({"k": {object(): 1}}, "obj['k'] (key", "dict key"),
])
def test_unsupported_objects_name_their_path(tmp_path, obj, path, fragment):
    with pytest.raises(TypeError) as info:
        tl.save(obj, tmp_path / "x.tl")
    assert path in str(info.value) and fragment in str(info.value)
    assert not (tmp_path / "x.tl").exists()


def test_cycles_and_depth_are_refused(tmp_path):
    cyc = {"a": []}
    cyc["a"].append(cyc)
    with pytest.raises(ValueError, match=r"circular reference at obj\['a'\]\[0\]"):
        tl.save(cyc, tmp_path / "c.tl")
    deep = []
    for _ in range(serialization.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(ValueError, match="nested more than"):
        tl.save(deep, tmp_path / "d.tl")
    shared = [1]
    assert roundtrip({"a": shared, "b": shared}, tmp_path) == {"a": [1], "b": [1]}  # shared, not circular


# ============================================================================ damaged and foreign files

def _reference_bytes(tmp_path) -> bytes:
    obj = {"model": OrderedDict([("w", tl.arange(12, dtype=tl.float32).reshape(3, 4)), ("b", tl.zeros(4))]),
           "state": {0: {"step": tl.tensor(3.0)}}, "epoch": 2, "loss": 0.5, "arr": np.arange(3, dtype=np.int16)}
    tl.save(obj, tmp_path / "ref.tl")
    return (tmp_path / "ref.tl").read_bytes()


def _members(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _zip(members: dict, compression=zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _with_manifest(data: bytes, edit) -> bytes:
    members = _members(data)
    m = json.loads(members["manifest.json"])
    edit(m)
    members["manifest.json"] = json.dumps(m).encode()
    return _zip(members)


def _npy(arr, allow_pickle=False) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


def _load_bytes(tmp_path, data: bytes, name="bad.tl"):
    path = tmp_path / name
    path.write_bytes(data)
    return tl.load(path)


def _expect_error(tmp_path, data: bytes, match: str | None = None):
    with pytest.raises(SerializationError) as info:
        _load_bytes(tmp_path, data)
    msg = str(info.value)
    assert "bad.tl" in msg, msg
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)
    assert info.value.__cause__ is None  # no raw zipfile/json/numpy traceback chained under ours
    assert info.value.__context__ is None or info.value.__suppress_context__
    if match is not None:
        assert match in msg, msg
    return msg


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.tl"):
        tl.load(tmp_path / "missing.tl")


def _set(path, value):
    def edit(m):
        target = m
        for p in path[:-1]:
            target = target[p]
        target[path[-1]] = value
    return edit


def _bad_cases(ref: bytes) -> dict:
    members = _members(ref)
    m = json.loads(members["manifest.json"])
    cases = {
        "empty": (b"", "empty"),
        "random bytes": (bytes(range(256)) * 4, "not a zip"),
        "truncated": (ref[: len(ref) // 2], "zip"),
        "plain pickle": (pickle.dumps({"a": 1}), "pickle"),
        "npy file": (_npy(np.ones(3)), "numpy.load"),
        "zip not ours": (_zip({"hello.txt": b"hi"}), "no 'manifest.json'"),
        "torch-like zip": (_zip({"archive/data.pkl": pickle.dumps(1), "archive/version": b"3"}), "PyTorch"),
        "npz file": (_zip({"a.npy": _npy(np.ones(2))}), "not written by tinygrad_lab"),
        "manifest not json": (_zip({**members, "manifest.json": b"{not json"}), "not valid JSON"),
        "manifest not ascii": (_zip({**members, "manifest.json": "{\"é\": 1}".encode("latin-1")}), "ASCII"),
        "manifest is a list": (_zip({**members, "manifest.json": b"[1, 2]"}), "format"),
        "wrong format name": (_with_manifest(ref, _set(["format"], "torch")), "format"),
        "newer version": (_with_manifest(ref, _set(["version"], 99)), "newer"),
        "version not int": (_with_manifest(ref, _set(["version"], "1")), "version"),
        "extra manifest field": (_with_manifest(ref, _set(["code"], "import os")), "unexpected fields"),
        "unknown node type": (_with_manifest(ref, _set(["root", "type"], "os.system")), "unknown node type"),
        "pickle node type": (_with_manifest(ref, _set(["root"], {"type": "pickle", "data": "gASVAAAA"})),
                             "unknown node type"),
        "node is a list": (_with_manifest(ref, _set(["root"], [1, 2])), "malformed node"),
        "json float": (_with_manifest(ref, _set(["root"], 1.5)), "malformed node"),
        "NaN constant": (_zip({**members, "manifest.json": members["manifest.json"].replace(b'"epoch",2',
                                                                                          b'"epoch",NaN')}),
                         "NaN"),
        "duplicate field": (_zip({**members, "manifest.json": members["manifest.json"].replace(
            b'"version":1', b'"version":1,"version":1')}), "repeats"),
        "bad float": (_with_manifest(ref, _set(["root"], {"type": "float", "value": "__import__('os')"})),
                      "invalid float"),
        "tensor index out of range": (_with_manifest(ref, _set(["root"], {"type": "tensor", "index": 99})),
                                      "does not exist"),
        "tensor index negative": (_with_manifest(ref, _set(["root"], {"type": "tensor", "index": -1})),
                                  "does not exist"),
        "list as dict key": (_with_manifest(ref, _set(["root"], {"type": "dict", "items": [[
            {"type": "list", "items": []}, 1]]})), "as a dict key"),
        "duplicate dict keys": (_with_manifest(ref, _set(["root"], {"type": "dict", "items": [[1, 2], [True, 3]]})),
                                "repeats the dict key"),
        "dict item not pair": (_with_manifest(ref, _set(["root"], {"type": "dict", "items": [[1, 2, 3]]})), "pair"),
        "shape mismatch": (_with_manifest(ref, _set(["tensors", 0, "shape"], [4, 3])), "shape"),
        "negative shape": (_with_manifest(ref, _set(["tensors", 0, "shape"], [-1])), "invalid shape"),
        "dtype mismatch": (_with_manifest(ref, _set(["tensors", 0, "dtype"], "float64")), "manifest says"),
        "unknown dtype": (_with_manifest(ref, _set(["tensors", 0, "dtype"], "object")), "unknown dtype"),
        "object array dtype": (_with_manifest(ref, _set(["arrays", 0, "dtype"], "|O")), "unsupported dtype"),
        "requires_grad on int": (_with_manifest(ref, _set(["tensors", 0], {**m["tensors"][0], "dtype": "int64",
                                                                           "requires_grad": True})),
                                 "requires_grad"),
        "requires_grad not bool": (_with_manifest(ref, _set(["tensors", 0, "requires_grad"], 1)), "requires_grad"),
        "bad device": (_with_manifest(ref, _set(["tensors", 0, "device"], "../../etc")), "invalid device"),
        "member path traversal": (_with_manifest(ref, _set(["tensors", 0, "file"], "../../etc/passwd")),
                                  "expected 'tensors/0.npy'"),
        "missing member": (_zip({k: v for k, v in members.items() if k != "tensors/1.npy"}), "missing"),
        "extra member": (_zip({**members, "data.pkl": pickle.dumps(1)}), "unexpected"),
        "compressed member": (_zip(members, compression=zipfile.ZIP_DEFLATED), "compressed"),
        "member replaced by garbage": (_zip({**members, "tensors/0.npy": b"garbage"}), "not a valid .npy"),
        "member truncated": (_zip({**members, "tensors/0.npy": members["tensors/0.npy"][:-8]}), "truncated"),
        "member with trailing data": (_zip({**members, "tensors/0.npy": members["tensors/0.npy"] + b"x"}),
                                      "beyond its shape"),
        "member with object npy": (_zip({**members, "tensors/0.npy": _npy(np.array([None] * 12, dtype=object)
                                                                           .reshape(3, 4), allow_pickle=True)}),
                                   "never loaded"),
        "member with structured npy": (_zip({**members, "tensors/1.npy": _npy(np.zeros(4, dtype="f4,i4"))}),
                                       "records"),
        "numpy_scalar on an array": (_with_manifest(ref, _set(["root"], {"type": "numpy_scalar", "index": 0})),
                                     "not 0-d"),
        "deep manifest": (_with_manifest(ref, _set(["root"], json.loads('{"type":"list","items":[' * 300 +
                                                                        ']}' * 300))), "nested more than"),
        "very deep json": (_zip({**members, "manifest.json": b"[" * 100000 + b"]" * 100000}), "JSON"),
    }
    return cases


def test_damaged_and_foreign_files_raise_clear_errors(tmp_path):
    ref = _reference_bytes(tmp_path)
    for label, (data, match) in _bad_cases(ref).items():
        try:
            _expect_error(tmp_path, data, match)
        except BaseException as e:
            raise AssertionError(f"case {label!r}: {type(e).__name__}: {e}") from e


def test_fortran_order_and_big_endian_members_are_read_correctly(tmp_path):
    ref = _reference_bytes(tmp_path)
    members = _members(ref)
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    members["tensors/0.npy"] = _npy(np.asfortranarray(w).astype(">f4"))
    out = _load_bytes(tmp_path, _zip(members), "other.tl")
    np.testing.assert_array_equal(out["model"]["w"].numpy(), w)
    assert out["model"]["w"].dtype is tl.float32 and out["model"]["w"].numpy().dtype.isnative


def _mutations(ref: bytes, rng: np.random.Generator):
    """Seeded damaged variants of a valid file: (label, bytes)."""
    members = _members(ref)
    names = list(members)
    kinds = ["truncate", "flip", "flip_many", "replace_member", "drop_member", "random", "splice", "manifest_byte"]
    for i in range(200):
        kind = kinds[i % len(kinds)]
        if kind == "truncate":
            yield kind, ref[: int(rng.integers(0, len(ref)))]
        elif kind in ("flip", "flip_many"):
            data = bytearray(ref)
            for _ in range(1 if kind == "flip" else int(rng.integers(2, 20))):
                pos = int(rng.integers(0, len(data)))
                data[pos] ^= int(rng.integers(1, 256))
            yield kind, bytes(data)
        elif kind == "replace_member":
            name = names[int(rng.integers(0, len(names)))]
            yield kind, _zip({**members, name: rng.bytes(int(rng.integers(0, 300)))})
        elif kind == "drop_member":
            drop = names[int(rng.integers(0, len(names)))]
            yield kind, _zip({k: v for k, v in members.items() if k != drop})
        elif kind == "random":
            yield kind, (b"PK\x03\x04" if rng.random() < 0.5 else b"") + rng.bytes(int(rng.integers(0, 2000)))
        elif kind == "splice":
            a, b = sorted(int(x) for x in rng.integers(0, len(ref), size=2))
            yield kind, ref[:a] + rng.bytes(int(rng.integers(0, 50))) + ref[b:]
        else:  # damage the manifest text itself, then re-zip (so the CRC is valid)
            text = bytearray(members["manifest.json"])
            pos = int(rng.integers(0, len(text)))
            text[pos] = int(rng.choice(list(b'{}[]",:0123456789-aeflnrstux ')))
            yield kind, _zip({**members, "manifest.json": bytes(text)})


def _assert_equal_objects(a, b):
    assert type(a) is type(b)
    if isinstance(a, tl.Tensor):
        assert_same_bits(a, b)
        assert a.requires_grad == b.requires_grad
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _assert_equal_objects(a[k], b[k])
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes() and a.shape == b.shape
    else:
        assert a == b


def test_fuzz_damaged_files_never_escape_as_raw_errors(tmp_path):
    ref = _reference_bytes(tmp_path)
    expected = tl.load(tmp_path / "ref.tl")
    rng = np.random.default_rng(20240611)
    outcomes = {"error": 0, "intact": 0}
    for i, (kind, data) in enumerate(_mutations(ref, rng)):
        path = tmp_path / f"fuzz{i}.tl"
        path.write_bytes(data)
        try:
            out = tl.load(path)
        except SerializationError as e:
            assert f"fuzz{i}.tl" in str(e), (kind, str(e))
            outcomes["error"] += 1
        except RuntimeError as e:
            # a well-formed manifest whose device name was changed to one that does not exist here
            # (e.g. 'cpu' -> 'cp4'): the device error, which also names the file
            assert str(e).startswith(f"cannot load {str(path)!r}") and "device" in str(e), (kind, str(e))
            outcomes["error"] += 1
        except BaseException as e:
            raise AssertionError(f"case {i} ({kind}) raised a raw {type(e).__name__}: {e}") from e
        else:
            if kind == "manifest_byte":
                # an edited manifest re-zipped with a valid CRC is a different *valid* file, not a damaged
                # one (e.g. the key 'state' became 's,ate'): it may load, as long as it is well formed
                assert type(out) is dict
            else:
                # damage the format does not depend on (a timestamp, a local-header copy of a field):
                # the result must be exactly the original, never a silently different object
                _assert_equal_objects(out, expected)
            outcomes["intact"] += 1
        path.unlink()
    assert outcomes["error"] >= 150, outcomes


# ============================================================================ never runs code

class _Evil:
    def __init__(self, sentinel):
        self.sentinel = sentinel

    def __reduce__(self):  # unpickling this creates the sentinel file
        return (open, (str(self.sentinel), "w"))


def test_loading_never_executes_code(tmp_path):
    sentinel = tmp_path / "pwned"
    payload = pickle.dumps(_Evil(sentinel))
    pickle.loads(payload).close()  # the payload is live: unpickling it does create the file
    assert sentinel.exists()
    sentinel.unlink()

    ref = _reference_bytes(tmp_path)
    members = _members(ref)
    evil_npy = io.BytesIO()
    np.save(evil_npy, np.array([_Evil(sentinel)] * 12, dtype=object).reshape(3, 4), allow_pickle=True)
    crafted = [
        payload,  # a bare pickle
        _zip({"data.pkl": payload}),  # PyTorch's layout
        _zip({**members, "data.pkl": payload}),  # our layout plus a pickle
        _zip({**members, "tensors/0.npy": evil_npy.getvalue()}),  # an object array whose items unpickle
        _with_manifest(ref, _set(["root"], {"type": "pickle", "data": payload.hex()})),
        _with_manifest(ref, _set(["root"], {"type": "__reduce__", "items": ["builtins.open", [str(sentinel), "w"]]})),
        _with_manifest(ref, _set(["root"], {"type": "builtins.open", "name": str(sentinel)})),
        _with_manifest(ref, _set(["root"], {"type": "dtype", "name": "__import__('os').system('touch pwned')"})),
        _with_manifest(ref, _set(["root"], {"type": "device", "name": "cpu; import os"})),
        _with_manifest(ref, _set(["arrays", 0, "dtype"], "O")),
        _with_manifest(ref, _set(["tensors", 0, "file"], "data.pkl")),
    ]
    for i, data in enumerate(crafted):
        with pytest.raises(SerializationError):
            _load_bytes(tmp_path, data)
        assert not sentinel.exists(), f"crafted file {i} ran code"
    # weights_only=False changes nothing: there is no unsafe mode
    with pytest.raises(SerializationError):
        tl.load(io.BytesIO(_zip({**members, "tensors/0.npy": evil_npy.getvalue()})), weights_only=False)
    assert not sentinel.exists()


def test_huge_claimed_sizes_do_not_allocate(tmp_path):
    """A header that claims a giant array is refused before any memory is allocated."""
    ref = _reference_bytes(tmp_path)
    members = _members(ref)
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (1 << 40,)})
    members["tensors/1.npy"] = buf.getvalue() + b"\0" * 64
    data = _with_manifest(_zip(members), _set(["tensors", 1, "shape"], [1 << 40]))
    msg = _expect_error(tmp_path, data)
    assert "truncated" in msg or "not a valid" in msg


# ============================================================================ PyTorch (light)

def test_values_match_torch(tmp_path):
    torch = pytest.importorskip("torch", exc_type=ImportError)
    lin = torch.nn.Linear(3, 2)
    ref = {k: v.detach() for k, v in lin.state_dict().items()}
    ref["counts"] = torch.tensor([1, 2, 3], dtype=torch.int64)
    ref["half"] = torch.tensor([0.1, -2.0], dtype=torch.float16)
    ours = OrderedDict((k, tl.tensor(v.numpy())) for k, v in ref.items())
    out = roundtrip(ours, tmp_path)
    assert list(out) == list(ref)
    for k, v in ref.items():
        assert repr(out[k].dtype).rpartition(".")[2] == repr(v.dtype).rpartition(".")[2]
        assert tuple(out[k].shape) == tuple(v.shape)
        assert torch.equal(torch.from_numpy(out[k].numpy().copy()), v)
    lin2 = torch.nn.Linear(3, 2)
    lin2.load_state_dict({k: torch.from_numpy(out[k].numpy().copy()) for k in ("weight", "bias")})
    x = torch.randn(4, 3)
    assert torch.equal(lin(x), lin2(x))


# ============================================================================ crafted archive layouts (issue 16)

def _local_header(name: bytes, data_crc: int, size: int) -> bytes:
    return struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 0, 0, 0x21, data_crc, size, size, len(name), 0) + name


def _directory(entries: list, start: int) -> bytes:
    """The central directory for (name, crc, size, offset) entries, in the order given, and its end record."""
    cd = b"".join(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 0, 0, 0x21, crc, size, size,
                              len(name), 0, 0, 0, 0, 0o644 << 16, offset) + name
                  for name, crc, size, offset in entries)
    return cd + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(cd), start, 0)


def _overlapping_archive(n: int, payload: int) -> tuple[bytes, int]:
    """A 'quoted overlap' zip bomb in our format: n uint8 tensors whose stored members each run
    from their own .npy header over every later member's header to the end of one shared
    payload. Every member is smaller than the file, so size checks alone pass. Returns the
    bytes and the total number of bytes the members claim."""
    chain, metas, starts = b"\0" * payload, [], []
    for i in reversed(range(n)):  # built from the end: member i's data is its .npy header + all that follows
        name = f"tensors/{i}.npy".encode()
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(buf, {"descr": "|u1", "fortran_order": False, "shape": (len(chain),)})
        data = buf.getvalue() + chain
        metas.append((name, zipfile.crc32(data), len(data), len(chain)))
        chain = _local_header(name, metas[-1][1], len(data)) + data
        starts.append(len(chain))  # counted from the end: where this member's header is
    metas.reverse()
    manifest = json.dumps({"format": "tinygrad_lab.save", "version": 1, "arrays": [],
                           "tensors": [{"file": f"tensors/{i}.npy", "dtype": "uint8", "shape": [m[3]],
                                        "requires_grad": False, "device": "cpu"} for i, m in enumerate(metas)],
                           "root": {"type": "list", "items": [{"type": "tensor", "index": i} for i in range(n)]}
                           }).encode()
    head = _local_header(b"manifest.json", zipfile.crc32(manifest), len(manifest)) + manifest
    body = head + chain
    entries = [(b"manifest.json", zipfile.crc32(manifest), len(manifest), 0)]
    entries += [(name, crc, size, len(body) - start) for (name, crc, size, _), start in zip(metas, starts[::-1])]
    return body + _directory(entries, len(body)), sum(m[2] for m in metas)


def test_overlapping_members_are_refused(tmp_path):
    data, claimed = _overlapping_archive(n=40, payload=100_000)
    assert claimed > 30 * len(data)  # ~4 MB read from a ~100 kB file, without the check
    with zipfile.ZipFile(io.BytesIO(data)) as zf:  # a well-formed zip as far as zipfile is concerned
        assert zf.testzip() is None and len(zf.read("tensors/3.npy")) > len(data) * 0.9
    msg = _expect_error(tmp_path, data, "starts inside member 'tensors/0.npy'")
    assert "overlapping" in msg


def test_out_of_order_and_shared_members_are_refused(tmp_path):
    ref = _reference_bytes(tmp_path)
    with zipfile.ZipFile(io.BytesIO(ref)) as zf:
        infos, start = zf.infolist(), zf.start_dir
    entries = [(i.filename.encode(), i.CRC, i.file_size, i.header_offset) for i in infos]
    assert len(entries) == 5
    shuffled = ref[:start] + _directory([entries[0], entries[2], entries[1], *entries[3:]], start)
    assert _load_bytes(tmp_path, ref[:start] + _directory(entries, start))  # the rebuilt directory itself loads
    _expect_error(tmp_path, shuffled, "member 'tensors/0.npy' comes before member 'tensors/1.npy'")
    # two directory entries naming the same bytes: the second starts inside the first
    twice = ref[:start] + _directory([entries[0], entries[1], (b"tensors/1.npy", *entries[1][1:])], start)
    _expect_error(tmp_path, twice, "member 'tensors/1.npy' starts inside member 'tensors/0.npy'")
    # a member whose data would run into the directory itself
    long = entries[:4] + [(entries[4][0], entries[4][1], entries[4][2] + 40, entries[4][3])]
    _expect_error(tmp_path, ref[:start] + _directory(long, start), "runs into the zip directory")


_KILLED_SAVE = r"""
import sys, time
import tinygrad_lab as tl
from tinygrad_lab import serialization
real = serialization._write_array

def stall_after_first_tensor(zf, name, arr):
    real(zf, name, arr)
    if name == "tensors/0.npy":
        print("writing", flush=True)
        time.sleep(60)

if sys.argv[2] == "stall":
    serialization._write_array = stall_after_first_tensor
print("start", flush=True)
tl.save({"a": tl.zeros(1_000_000), "b": tl.ones(10), "c": tl.zeros(1_000_000)}, sys.argv[1])
print("saved", flush=True)
"""


def test_a_save_killed_mid_write_leaves_no_litter_after_the_next_save(tmp_path):
    import signal
    import subprocess
    import sys
    path = tmp_path / "ckpt.tl"
    tl.save({"epoch": 0}, path)
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(tl.__file__).parents[1])}
    rng = np.random.default_rng(16)
    littered = 0
    for trial, mode in enumerate(["stall", "stall", "stall", "race", "race", "race"]):
        child = subprocess.Popen([sys.executable, "-c", _KILLED_SAVE, str(path), mode], env=env,
                                 stdout=subprocess.PIPE, text=True)
        try:
            if mode == "stall":
                assert child.stdout.readline() == "start\n"
                assert child.stdout.readline() == "writing\n"  # stopped between two members: mid-write
            else:
                assert child.stdout.readline() == "start\n"
                time.sleep(float(rng.uniform(0.0, 0.05)))  # somewhere in the write, or after it
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
            child.stdout.close()
        listing = _dir_listing(tmp_path)
        littered += len(listing) > 1
        if mode == "stall":
            assert len(listing) == 2 and listing[0].startswith(".ckpt.tl.") and listing[0].endswith(".tmp")
            assert tl.load(path) == {"epoch": trial}  # the old file is intact
        tl.save({"epoch": trial + 1}, path)           # the next save removes the dead writer's temporary
        assert _dir_listing(tmp_path) == ["ckpt.tl"], f"trial {trial} ({mode})"
        assert tl.load(path) == {"epoch": trial + 1}
    assert littered >= 3


def test_a_running_save_keeps_its_temporary(tmp_path):
    # a temporary whose writer still runs (here: this process) is not touched by another save
    mine = tmp_path / f".ckpt.tl.{os.getpid()}.{'ab' * 6}.tmp"
    mine.write_bytes(b"partial")
    other = tmp_path / f".other.tl.999999.{'cd' * 6}.tmp"   # another file's temporary: not ours to clean
    other.write_bytes(b"partial")
    tl.save(1, tmp_path / "ckpt.tl")
    assert _dir_listing(tmp_path) == sorted([mine.name, other.name, "ckpt.tl"])


# ============================================================================ files that name classes and functions

class _Trap:
    """Allowed in one test: building it must not call __init__ (which would write the sentinel)."""

    def __init__(self, sentinel):
        open(sentinel, "w").close()


def _object_node(module, name, state_items=()):
    return {"type": "object", "class": {"type": "global", "module": module, "name": name},
            "state": {"type": "dict", "items": list(state_items)}}


def test_files_naming_dangerous_globals_are_refused_without_running_anything(tmp_path):
    import sys
    sentinel = tmp_path / "pwned"
    ref = _reference_bytes(tmp_path)
    command = [["cmd"], f"touch {sentinel}"]
    crafted = [
        _object_node("os", "system", [command]),
        _object_node("subprocess", "Popen", [["args", ["touch", str(sentinel)]]]),
        _object_node("tempfile", "_TemporaryFileCloser", [["name", str(sentinel)], ["delete", True]]),
        _object_node("antigravity", "geohash"),                       # importing this module would run it
        {"type": "global", "module": "builtins", "name": "eval"},
        {"type": "global", "module": "os", "name": "system"},
        {"type": "defaultdict", "factory": {"type": "global", "module": "os", "name": "system"}, "items": []},
        {"type": "list", "items": [{"type": "global", "module": "builtins", "name": "open"}]},
        _object_node("tinygrad_lab.nn.modules.linear", "Linear", [["weight", _object_node("os", "system")]]),
    ]
    assert "antigravity" not in sys.modules
    for weights_only in (True, False):
        for i, root in enumerate(crafted):
            data = _with_manifest(ref, lambda m, root=root: m.update(root=root, version=2))
            with pytest.raises(WeightsOnlyLoadError) as info:
                tl.load(io.BytesIO(data), weights_only=weights_only)
            assert isinstance(info.value, SerializationError), i
            assert not sentinel.exists(), f"crafted file {i} ran code"
    assert "antigravity" not in sys.modules                           # nothing was imported


def test_allowed_classes_are_built_without_calling_their_code(tmp_path):
    sentinel = tmp_path / "init-ran"
    ref = _reference_bytes(tmp_path)
    root = _object_node(__name__, "_Trap", [["x", 1]])
    data = _with_manifest(ref, lambda m: m.update(root=root, version=2))
    with serialization.safe_globals([_Trap]):
        trap = tl.load(io.BytesIO(data))
    assert type(trap) is _Trap and trap.x == 1 and not sentinel.exists()
    # an allowed *function* named as the class of an object, or malformed objects and references
    bad = [
        (_object_node("builtins", "len"), "not a class"),
        ({"type": "ref", "index": 0}, "before it is built"),
        ({"type": "list", "items": [{"type": "ref", "index": 1}, _object_node(__name__, "_Trap")]}, "before it is built"),
        ({"type": "object", "class": {"type": "global", "module": __name__, "name": "_Trap"}, "state": [1]},
         "no dict of attributes"),
        (_object_node(__name__, "_Trap", [[1, 2]]), "not a string"),
        ({"type": "global", "module": "os; import sys", "name": "x"}, "invalid global"),
        ({"type": "object", "class": {"type": "tensor", "index": 0}, "state": {"type": "dict", "items": []}},
         "not a global node"),
        ({"type": "dict", "items": [[_object_node(__name__, "_Trap"), 1]]}, "as a dict key"),
        ({"type": "parameter", "index": 99}, "does not exist"),
    ]
    with serialization.safe_globals([_Trap, len]):
        for root, match in bad:
            data = _with_manifest(ref, lambda m, root=root: m.update(root=root, version=2))
            _expect_error(tmp_path, data, match)
    assert not sentinel.exists()


def test_a_deeply_nested_model_file_is_refused_by_depth(tmp_path):
    ref = _reference_bytes(tmp_path)
    root = {"type": "dict", "items": []}
    for _ in range(serialization.MAX_DEPTH):
        root = _object_node(__name__, "_Trap", [["inner", root]])
    data = _with_manifest(ref, lambda m: m.update(root=root, version=2))
    with serialization.safe_globals([_Trap]):
        _expect_error(tmp_path, data, "nested more than")

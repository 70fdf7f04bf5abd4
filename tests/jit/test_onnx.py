"""ONNX export: the traced graph runs in onnxruntime with the engine's results; unsupported ops are
named; the file is written atomically and deterministically. Skipped without onnx/onnxruntime."""
from __future__ import annotations

import os

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import nn
from tinygrad_lab.autograd import Function

from ._models import F, as_tuple, host, models

onnx = pytest.importorskip("onnx")
tl_onnx = pytest.importorskip("tinygrad_lab.onnx")


def _run(path, inputs) -> list:
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: host(x) for i, x in zip(session.get_inputs(), inputs)})


def _eager(fn, inputs) -> tuple:
    if isinstance(fn, nn.Module):
        fn.eval()
    with tl.no_grad():
        return as_tuple(fn(*inputs))


@pytest.mark.parametrize("name", sorted(models()))
def test_models_round_trip_through_onnxruntime(name, tmp_path):
    factory, shape = models()[name]
    tl.manual_seed(0)
    model = factory()
    path = tmp_path / f"{name}.onnx"
    tl_onnx.export(model, tl.randn(*shape), path)
    x = tl.randn(*shape)  # other values than the example: the graph is general
    for got, expected in zip(_run(path, [x]), _eager(model, [x])):
        assert got.shape == tuple(expected.shape) and got.dtype == host(expected).dtype
        np.testing.assert_allclose(got, host(expected), rtol=1e-5, atol=1e-6)


def _many_ops(x, y, idx):
    a = F.pad(x.transpose(0, 1).reshape(3, 4).flip(0), (1, 2)).log_softmax(-1)
    b = x.max(1).values + x.argmax(1).float() + x.amin(0).sum() + x.argmin().float()
    c = x[1:, ::2] * 2 - y[:3, ::2].exp().sqrt() / 3 + x[..., None, 0:2][1:, 0].clamp(-0.5, 0.5)
    d = tl.where(x > 0, x, y) ** 2 + (1 - x.sigmoid()).log1p() + (x.abs() + 1).rsqrt() + F.logsigmoid(x)
    e = tl.cat([x, y], 1).std(0) + F.gelu(x).mean() + x.norm() + (x != y).float().sum()
    f = F.embedding(idx, y) + x.unsqueeze(0)[:, :2].expand(2, 2, 3).sum(0)
    return a, b, c, d, (x @ y.T).tanh(), e, f, x.softmax(0), F.max_pool2d(x[None], 2, ceil_mode=True)


def test_many_ops_round_trip(tmp_path):
    tl.manual_seed(0)
    inputs = (tl.randn(4, 3), tl.randn(4, 3), tl.tensor([3, 0]))
    path = tmp_path / "ops.onnx"
    tl_onnx.export(_many_ops, inputs, path)
    inputs = (tl.randn(4, 3), tl.randn(4, 3), tl.tensor([1, 1]))
    for got, expected in zip(_run(path, inputs), _eager(_many_ops, inputs)):
        np.testing.assert_allclose(got, host(expected), rtol=1e-5, atol=1e-6)


def test_pooling_and_conv_variants_round_trip(tmp_path):
    tl.manual_seed(0)
    w1, w2 = tl.randn(2, 7, 3), tl.randn(4, 1, 3, 3)

    def pools(x):
        return (F.max_pool2d(x, 3, 2, 1, ceil_mode=True), F.avg_pool2d(x, 2), tl.ops.conv.max_pool1d(x[0], 2),
                F.conv1d(x[0], w1, padding=1), F.conv2d(x[:, :1], w2, stride=2, padding=(1, 0)),
                tl.ops.conv.avg_pool1d(x[0], 3, 2))

    x = tl.randn(2, 5, 7, 7)
    tl_onnx.export(pools, x, tmp_path / "pools.onnx")
    for got, expected in zip(_run(tmp_path / "pools.onnx", [x]), _eager(pools, [x])):
        np.testing.assert_allclose(got, host(expected), rtol=1e-5, atol=1e-5)


def test_three_d_conv_and_pools_round_trip(tmp_path):
    """conv3d (uneven stride, padding and dilation per dim, groups), max/avg pool3d batched and
    unbatched (C, D, H, W), which has the rank of a batched 2-d input."""
    tl.manual_seed(0)
    w = tl.randn(4, 2, 2, 3, 1)

    def volumes(x):
        return (F.conv3d(x, w, stride=(1, 2, 1), padding=(1, 0, 1), dilation=(2, 1, 1), groups=2),
                F.max_pool3d(x, (2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0), ceil_mode=True),
                F.avg_pool3d(x, 2), F.max_pool3d(x[0], 2), F.avg_pool3d(x[0], (1, 2, 3), stride=1))

    x = tl.randn(2, 4, 5, 6, 7)
    tl_onnx.export(volumes, x, tmp_path / "volumes.onnx")
    got, expected = _run(tmp_path / "volumes.onnx", [x]), _eager(volumes, [x])
    assert len(got) == len(expected) == 5
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, host(e), rtol=1e-5, atol=1e-5)


def test_names_initializers_and_determinism(tmp_path):
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    x = tl.randn(2, 4)
    first = tmp_path / "a.onnx"
    proto = tl_onnx.export(model, x, first, input_names=["features"], output_names=["scores"])
    assert [i.name for i in proto.graph.input] == ["features"] and [o.name for o in proto.graph.output] == ["scores"]
    assert sorted(i.name for i in proto.graph.initializer) == ["0.bias", "0.weight"]
    assert [n.op_type for n in proto.graph.node] == ["Gemm", "Relu"]
    assert proto.opset_import[0].version == tl_onnx.OPSET
    second = tmp_path / "b.onnx"
    tl_onnx.export(model, x, second, input_names=["features"], output_names=["scores"])
    assert first.read_bytes() == second.read_bytes()
    assert model.training  # eval() only while exporting
    model[1].eval()
    tl_onnx.export(model, x, second)
    assert model.training and not model[1].training  # each module gets its own mode back


def test_outputs_that_are_inputs_or_repeated(tmp_path):
    lin = nn.Linear(3, 2)
    x = tl.randn(2, 3)

    def fn(x):
        y = lin(x)
        return x, y, y

    tl_onnx.export(fn, x, tmp_path / "m.onnx")
    got = _run(tmp_path / "m.onnx", [x])
    np.testing.assert_array_equal(got[0], host(x))
    np.testing.assert_array_equal(got[1], got[2])


def test_written_atomically(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_bytes(b"old")
    tl_onnx.export(nn.Linear(3, 2), tl.randn(1, 3), path)
    assert onnx.load(str(path)).graph.node[0].op_type == "Gemm"
    assert os.listdir(tmp_path) == ["model.onnx"]  # no temporary file left behind


def test_unsupported_ops_are_named(tmp_path):
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x * x

    with pytest.raises(tl_onnx.UnsupportedOp, match=r"op Cube \(a user-defined autograd.Function"):
        tl_onnx.export(lambda x: Cube.apply(x) + 1, tl.randn(3), tmp_path / "cube.onnx")
    with pytest.raises(tl_onnx.UnsupportedOp, match=r"op NllLoss \(a built-in op.*no ONNX conversion"):
        tl_onnx.export(lambda x, t: F.cross_entropy(x, t), (tl.randn(2, 3), tl.tensor([0, 2])),
                       tmp_path / "loss.onnx")
    with pytest.raises(tl_onnx.UnsupportedOp, match="return_indices=True"):
        tl_onnx.export(lambda x: F.max_pool2d(x, 2, return_indices=True)[1].float(), tl.randn(1, 1, 4, 4),
                       tmp_path / "idx.onnx")
    assert not list(tmp_path.iterdir())


def test_without_onnx_the_error_says_what_to_install(monkeypatch, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` now fails
    with pytest.raises(ImportError, match="pip install onnx"):
        tl_onnx.export(nn.Linear(2, 2), tl.randn(1, 2), tmp_path / "m.onnx")

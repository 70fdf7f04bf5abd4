"""nn.functional.grid_sample and affine_grid (tinygrad_lab/ops/sampling.py) against PyTorch: outputs and
gradients of input, grid and theta in float32 and float64, for every mode x padding mode x align_corners,
4-D and 5-D, with grids reaching outside the image; finite differences (first and second derivatives);
the Spatial Transformer Network of PyTorch's tutorial trained a step from the same weights; devices;
warnings and errors."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import tinygrad_lab as tl
import tinygrad_lab.nn.functional as F
from tinygrad_lab.autograd import gradcheck, gradgradcheck

from ._pairs import compare

DTYPES = ["float64", "float32"]
MODES_2D = list(itertools.product(["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"],
                                  [False, True]))
MODES_3D = [m for m in MODES_2D if m[0] != "bicubic"]
# float32: a gradient of the grid is a sum of differences of pixels (it cancels), so it carries float32
# rounding of the pixels' size, PyTorch's as ours
TOL = {"float64": (1e-9, 1e-11), "float32": (1e-4, 5e-5)}


def _rng(seed: int = 0):
    return np.random.default_rng(seed)


def _grid(shape, seed: int = 1, reach: float = 1.6) -> np.ndarray:
    """A grid whose points lie inside the image and up to `reach` (normalised) outside it."""
    return _rng(seed).uniform(-reach, reach, shape)


def _sample(lib, x, g, mode, padding_mode, align_corners):
    return lib.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)


# ---------------------------------------------------------------- grid_sample against PyTorch

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode, padding_mode, align_corners", MODES_2D)
def test_grid_sample_4d_matches_pytorch(torch, mode, padding_mode, align_corners, dtype):
    x = _rng().standard_normal((2, 3, 5, 6))
    g = _grid((2, 4, 7, 2))
    compare(torch, lambda lib, a, b: _sample(lib, a, b, mode, padding_mode, align_corners), [x, g], dtype,
            tol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode, padding_mode, align_corners", MODES_3D)
def test_grid_sample_5d_matches_pytorch(torch, mode, padding_mode, align_corners, dtype):
    x = _rng().standard_normal((2, 2, 4, 5, 3))
    g = _grid((2, 3, 4, 2, 3))
    compare(torch, lambda lib, a, b: _sample(lib, a, b, mode, padding_mode, align_corners), [x, g], dtype,
            tol=TOL[dtype])


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_far_outside_and_one_pixel_wide(torch, mode, padding_mode):
    """Points many image widths away (reflection folds them back, again and again), on a 1-pixel-wide
    input, where align_corners=True's mirrors coincide."""
    x = _rng().standard_normal((1, 2, 1, 4))
    g = _grid((1, 3, 5, 2), reach=9.0)
    for align in (False, True):
        compare(torch, lambda lib, a, b: _sample(lib, a, b, mode, padding_mode, align), [x, g], "float64",
                tol=TOL["float64"])


def test_second_derivatives_match_pytorch(torch):
    """grad of (d loss / d grid) . v, with respect to input and grid (bilinear's grid gradient is itself
    differentiable: in the input, and across the x and y weights)."""
    x, g = _rng().standard_normal((2, 2, 4, 5)), _grid((2, 3, 3, 2))
    w, v = _rng(2).standard_normal((2, 2, 3, 3)), _rng(3).standard_normal((2, 3, 3, 2))
    results = []
    for lib in (tl, torch):
        xs, gs = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
        loss = (_sample(lib, xs, gs, "bilinear", "border", False) * lib.tensor(w)).sum()
        (dg,) = lib.autograd.grad(loss, [gs], create_graph=True)
        results.append([t.detach().numpy() for t in lib.autograd.grad((dg * lib.tensor(v)).sum(), [xs, gs])])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-11)


def test_nearest_gives_the_grid_a_zero_gradient(torch):
    """As PyTorch: zeros, not None, and the output requires grad when only the grid does."""
    g = tl.tensor(_grid((1, 2, 2, 2)), requires_grad=True)
    out = F.grid_sample(tl.tensor(_rng().standard_normal((1, 1, 3, 3))), g, mode="nearest", align_corners=False)
    assert out.requires_grad
    out.sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), np.zeros((1, 2, 2, 2)))


def test_non_finite_grid_values_read_as_minus_one():
    """PyTorch's documentation: NaN reads as -1 (its CPU kernels give NaN, or crash); inf too, here."""
    x = tl.tensor(_rng().standard_normal((1, 2, 3, 4)))
    bad = tl.tensor(np.array([[[[np.nan, 0.3], [np.inf, -np.inf]]]]))
    good = tl.tensor(np.array([[[[-1.0, 0.3], [-1.0, -1.0]]]]))
    for padding in ("zeros", "border", "reflection"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no NumPy warning about invalid values either
            got = F.grid_sample(x, bad, padding_mode=padding, align_corners=False).numpy()
        np.testing.assert_array_equal(got, F.grid_sample(x, good, padding_mode=padding, align_corners=False).numpy())


# ---------------------------------------------------------------- finite differences

@pytest.mark.parametrize("mode, padding_mode, align_corners",
                         [m for m in MODES_2D if m[0] != "nearest"])
def test_grid_sample_passes_gradcheck(mode, padding_mode, align_corners):
    x = tl.tensor(_rng().standard_normal((2, 2, 4, 5)), requires_grad=True)
    g = tl.tensor(_grid((2, 3, 3, 2)), requires_grad=True)
    def fn(a, b):
        return F.grid_sample(a, b, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    assert gradcheck(fn, (x, g))
    assert gradgradcheck(fn, (x, g))


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_trilinear_passes_gradcheck(padding_mode):
    x = tl.tensor(_rng().standard_normal((1, 2, 3, 4, 3)), requires_grad=True)
    g = tl.tensor(_grid((1, 2, 3, 2, 3)), requires_grad=True)
    fn = lambda a, b: F.grid_sample(a, b, padding_mode=padding_mode, align_corners=False)  # noqa: E731
    assert gradcheck(fn, (x, g))
    assert gradgradcheck(fn, (x, g))


def test_nearest_passes_gradcheck_in_the_input():
    g = tl.tensor(_grid((2, 3, 3, 2)))
    x = tl.tensor(_rng().standard_normal((2, 2, 4, 5)), requires_grad=True)
    assert gradcheck(lambda a: F.grid_sample(a, g, mode="nearest", align_corners=False), (x,))


# ---------------------------------------------------------------- affine_grid

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 5, 7), (2, 1, 1, 4), (2, 3, 4, 3, 5)])
def test_affine_grid_matches_pytorch(torch, size, align_corners, dtype):
    k = len(size) - 2
    theta = _rng().standard_normal((size[0], k, k + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a unit-size dim with align_corners=True warns (tested below)
        compare(torch, lambda lib, t: lib.nn.functional.affine_grid(t, size, align_corners=align_corners), [theta],
                dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [(1, 1, 28, 28), (2, 1, 7, 9), (1, 1, 3, 6, 5)])
def test_identity_affine_grid_is_pytorchs_to_the_bit(torch, size, dtype):
    k = len(size) - 2
    theta = np.tile(np.eye(k, k + 1), (size[0], 1, 1)).astype(dtype)
    for align in (False, True):
        ours = F.affine_grid(tl.tensor(theta), size, align_corners=align).numpy()
        theirs = torch.nn.functional.affine_grid(torch.tensor(theta), size, align_corners=align).numpy()
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_identity_transform_takes_pytorchs_side_at_pixel_centres(torch, padding_mode, align_corners):
    """An identity theta (where a Spatial Transformer starts) samples within an ulp of the pixel centres,
    where bilinear's slope jumps: the gradient of theta depends on which side of each centre the point
    falls, and float32 lands where PyTorch's 2-d kernel does."""
    size = (2, 3, 19, 29)  # sizes where rounding each operation would fall on the other side at some centres
    theta = np.tile(np.eye(2, 3), (2, 1, 1)).astype("float32")
    x = _rng().standard_normal(size).astype("float32")
    w = _rng(2).standard_normal(size).astype("float32")
    grads = []
    for lib in (tl, torch):
        t = lib.tensor(theta, requires_grad=True)
        grid = lib.nn.functional.affine_grid(t, size, align_corners=align_corners)
        out = _sample(lib, lib.tensor(x), grid, "bilinear", padding_mode, align_corners)
        (out * lib.tensor(w)).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-4)


def test_affine_grid_then_grid_sample_passes_gradcheck():
    theta = tl.tensor(np.array([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.05]]] * 2), requires_grad=True)
    x = tl.tensor(_rng().standard_normal((2, 2, 5, 6)), requires_grad=True)
    def fn(t, a):
        return F.grid_sample(a, F.affine_grid(t, (2, 2, 4, 3), align_corners=False), align_corners=False)
    assert gradcheck(fn, (theta, x))


# ---------------------------------------------------------------- PyTorch's Spatial Transformer tutorial

def _tutorial_net(lib):
    """The network of PyTorch's "Spatial Transformer Networks" tutorial, as written there, for `lib`."""
    nn, Fn = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1 = nn.Linear(320, 50)
            self.fc2 = nn.Linear(50, 10)
            self.localization = nn.Sequential(
                nn.Conv2d(1, 8, kernel_size=7), nn.MaxPool2d(2, stride=2), nn.ReLU(True),
                nn.Conv2d(8, 10, kernel_size=5), nn.MaxPool2d(2, stride=2), nn.ReLU(True))
            self.fc_loc = nn.Sequential(nn.Linear(10 * 3 * 3, 32), nn.ReLU(True), nn.Linear(32, 3 * 2))
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(lib.tensor([1, 0, 0, 0, 1, 0], dtype=lib.float))

        def stn(self, x):
            xs = self.localization(x)
            xs = xs.view(-1, 10 * 3 * 3)
            theta = self.fc_loc(xs)
            theta = theta.view(-1, 2, 3)
            grid = Fn.affine_grid(theta, x.size(), align_corners=False)
            return Fn.grid_sample(x, grid, align_corners=False)

        def forward(self, x):
            x = self.stn(x)
            x = Fn.relu(Fn.max_pool2d(self.conv1(x), 2))
            x = Fn.relu(Fn.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.view(-1, 320)
            x = Fn.relu(self.fc1(x))
            x = Fn.dropout(x, training=self.training)
            x = self.fc2(x)
            return Fn.log_softmax(x, dim=1)

    return Net()


@pytest.mark.parametrize("start", ["identity", "perturbed"])
def test_spatial_transformer_tutorial_step_matches_pytorch(torch, start):
    """The tutorial's model from the same weights (its identity start, or a transform away from it), one
    SGD step on the same batch (in eval mode: dropout draws other masks than PyTorch's): the loss, every
    parameter's gradient, and the loss after the step agree."""
    torch.manual_seed(0)
    theirs = _tutorial_net(torch)
    if start == "perturbed":
        with torch.no_grad():
            theirs.fc_loc[2].weight.normal_(0, 0.01)
    ours = _tutorial_net(tl)
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    data = _rng().standard_normal((8, 1, 28, 28)).astype("float32")
    target = _rng(1).integers(0, 10, 8)
    losses, grads = [], []
    for lib, model in ((tl, ours), (torch, theirs)):
        model.eval()
        opt = lib.optim.SGD(model.parameters(), lr=0.01)
        x, y = lib.tensor(data), lib.tensor(target)
        loss = lib.nn.functional.nll_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        grads.append({k: p.grad.numpy() for k, p in model.named_parameters()})
        opt.step()
        losses.append((loss.item(), lib.nn.functional.nll_loss(model(x), y).item()))
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)
    for name, g in grads[1].items():
        scale = np.abs(g).max()
        np.testing.assert_allclose(grads[0][name], g, rtol=1e-3, atol=1e-4 * scale + 1e-7, err_msg=name)


# ---------------------------------------------------------------- devices

def test_grid_sample_on_every_device(device):
    x, g = _rng().standard_normal((2, 3, 4, 5)), _grid((2, 3, 2, 2))
    results = []
    for dev in ("cpu", device):
        xs, gs = tl.tensor(x, requires_grad=True, device=dev), tl.tensor(g, requires_grad=True, device=dev)
        theta = tl.tensor(np.tile(np.eye(2, 3), (2, 1, 1)), requires_grad=True, device=dev)
        grid = F.affine_grid(theta, (2, 3, 3, 2), align_corners=True)
        out = F.grid_sample(xs, gs, mode="bicubic", padding_mode="reflection", align_corners=False)
        out2 = F.grid_sample(xs, grid, padding_mode="border", align_corners=True)
        (out.sum() + (out2 * out2).sum()).backward()
        results.append([t.detach().cpu().numpy() for t in (out, out2, xs.grad, gs.grad, theta.grad)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_input_and_grid_on_different_devices():
    x, g = tl.randn(1, 1, 3, 3), tl.zeros(1, 2, 2, 2, device="standin")
    with pytest.raises(RuntimeError, match=r"grid_sampler\(\): expected input and grid to be on same device, "
                                           r"but input is on cpu and grid is on standin"):
        F.grid_sample(x, g, align_corners=False)


# ---------------------------------------------------------------- warnings and errors

def test_align_corners_none_warns_as_pytorch_and_means_false(torch):
    theta = tl.tensor(np.array([[[0.8, 0.1, 0.2], [-0.1, 0.9, 0.0]]]))
    x = tl.tensor(_rng().standard_normal((1, 1, 4, 5)))
    for call in (lambda: F.affine_grid(theta, (1, 1, 3, 3)), lambda: F.grid_sample(x, tl.zeros(1, 2, 2, 2).double())):
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed to "
                                             "align_corners=False since 1.3.0") as record:
            call()
        assert record[0].filename == __file__  # attributed to the learner's line, not to the engine's
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = F.grid_sample(x, F.affine_grid(theta, (1, 1, 3, 3)))
    want = F.grid_sample(x, F.affine_grid(theta, (1, 1, 3, 3), align_corners=False), align_corners=False)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_unit_size_with_align_corners_warns_as_pytorch(torch):
    with pytest.warns(UserWarning, match="affine_grid behavior has changed for unit-size grids when "
                                         "align_corners=True"):
        F.affine_grid(tl.zeros(1, 2, 3), (1, 1, 1, 4), align_corners=True)


_X, _G = (2, 3, 5, 5), (2, 4, 4, 2)

# (call(lib), exception PyTorch raises, what our message says): PyTorch's type, a message naming the op,
# the shapes or dtypes and what is wrong
BAD_CALLS = [
    (lambda lib: lib.nn.functional.grid_sample(lib.zeros(*_X), lib.zeros(2, 4, 4, 3), align_corners=False),
     RuntimeError, r"grid_sampler\(\): expected grid to have size 2 in last dimension, but got grid with sizes "
                   r"\[2, 4, 4, 3\]"),
    (lambda lib: lib.nn.functional.grid_sample(lib.zeros(*_X), lib.zeros(3, 4, 4, 2), align_corners=False),
     RuntimeError, r"expected grid and input to have same batch size, but got input with sizes \[2, 3, 5, 5\] "
                   r"and grid with sizes \[3, 4, 4, 2\]"),
    (lambda lib: lib.nn.functional.grid_sample(lib.zeros(2, 3, 4), lib.zeros(2, 4, 1), align_corners=False),
     RuntimeError, r"expected 4D or 5D input and grid with same number of dimensions, but got input with sizes "
                   r"\[2, 3, 4\]"),
    (lambda lib: lib.nn.functional.grid_sample(lib.zeros(*_X), lib.zeros(*_G), mode="linear", align_corners=False),
     ValueError, r"nn.functional.grid_sample\(\): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                 r"got: 'linear'"),
    (lambda lib: lib.nn.functional.grid_sample(lib.zeros(*_X), lib.zeros(*_G), padding_mode="zero"),
     ValueError, r"expected padding_mode to be 'zeros', 'border', or 'reflection', but got: 'zero'"),
    (lambda lib: lib.nn.functional.grid_sample(lib.zeros(2, 1, 3, 3, 3), lib.zeros(2, 2, 2, 2, 3), mode="bicubic",
                                               align_corners=False),
     RuntimeError, r"grid_sampler\(\): bicubic interpolation only supports 4D input"),
    (lambda lib: lib.nn.functional.grid_sample(lib.zeros(2, 3, 0, 5), lib.zeros(*_G), align_corners=False),
     RuntimeError, r"expected input to have non-empty spatial dimensions, but input has sizes \[2, 3, 0, 5\] with "
                   r"dimension 2 being empty"),
    (lambda lib: lib.nn.functional.grid_sample(lib.zeros(*_X), lib.zeros(*_G).double(), align_corners=False),
     RuntimeError, r"grid_sampler\(\): expected input and grid to have same dtype, but input has Float and grid "
                   r"has Double"),
    (lambda lib: lib.nn.functional.grid_sample(lib.zeros(*_X).long(), lib.zeros(*_G).long(), align_corners=False),
     NotImplementedError, r"\"grid_sampler_2d\" not implemented for 'Long' \(input of shape \[2, 3, 5, 5\]\)"),
    (lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 3, 3), (2, 3, 4, 4), align_corners=False),
     ValueError, r"Expected a batch of 2D affine matrices of shape Nx2x3 for size \(2, 3, 4, 4\). Got"),
    (lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3), (2, 3, 4, 4, 4), align_corners=False),
     ValueError, r"Expected a batch of 3D affine matrices of shape Nx3x4 for size \(2, 3, 4, 4, 4\). Got"),
    (lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3), (2, 3, 4), align_corners=False),
     NotImplementedError, r"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                          r"respectively. Got size \(2, 3, 4\)."),
    (lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3).long(), (2, 3, 4, 4), align_corners=False),
     ValueError, r"Expected theta to have floating point type, but got .*int64"),
    (lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3), (2, 3, 0, 4), align_corners=False),
     ValueError, r"Expected non-zero, positive output size. Got \(2, 3, 0, 4\)"),
    (lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3), (3, 3, 4, 4), align_corners=False),
     RuntimeError, r"affine_grid\(\): expected theta and size to have the same batch size, but got theta of shape "
                   r"\[2, 2, 3\] and size \(3, 3, 4, 4\)"),
]


@pytest.mark.parametrize("k", range(len(BAD_CALLS)))
def test_bad_arguments_raise_pytorchs_errors(torch, k):
    call, kind, message = BAD_CALLS[k]
    with pytest.raises(kind):
        call(torch)
    with pytest.raises(kind, match=message):
        call(tl)


def test_a_non_tensor_argument_is_a_type_error():
    x, g = tl.zeros(1, 1, 3, 3), tl.zeros(1, 2, 2, 2)
    with pytest.raises(TypeError, match=r"grid_sampler\(\): argument 'input' \(position 1\) must be Tensor, not "
                                        r"numpy.ndarray"):
        F.grid_sample(x.numpy(), g, align_corners=False)
    with pytest.raises(TypeError, match=r"grid_sampler\(\): argument 'grid' \(position 2\) must be Tensor"):
        F.grid_sample(x, g.numpy(), align_corners=False)
    with pytest.raises(TypeError, match=r"affine_grid\(\): argument 'theta' \(position 1\) must be Tensor"):
        F.affine_grid(np.zeros((1, 2, 3)), (1, 1, 3, 3), align_corners=False)


def test_empty_batches_and_grids(torch):
    for xs, gs in [((0, 3, 4, 4), (0, 2, 2, 2)), ((2, 0, 4, 4), (2, 2, 2, 2)), ((2, 3, 4, 4), (2, 0, 3, 2)),
                   ((2, 3, 2, 4, 4), (2, 1, 0, 2, 3))]:
        x, g = tl.zeros(*xs, requires_grad=True), tl.zeros(*gs, requires_grad=True)
        out = F.grid_sample(x, g, align_corners=False)
        assert tuple(out.shape) == tuple(torch.nn.functional.grid_sample(torch.zeros(xs), torch.zeros(gs),
                                                                         align_corners=False).shape)
        out.sum().backward()
        assert tuple(x.grad.shape) == xs and tuple(g.grad.shape) == gs

"""Sampling an image at arbitrary points: `grid_sample`, and the grids `affine_grid` makes for it (the two
halves of a Spatial Transformer Network: a small network predicts an affine matrix theta, affine_grid
turns theta into a sampling position for every output pixel, grid_sample reads the input there).

Coordinates. A grid holds, for every output pixel, where to read the input, normalised: -1 is the left
(top, front) edge of the input and +1 the right (bottom, back) one; the last dim of the grid is
(x, y) for a 4-D input (N, C, H, W), (x, y, z) for a 5-D one: x runs along W, y along H, z along D.
Along a dim of n pixels the normalised g becomes the pixel position p (0 is the first pixel's centre):
    align_corners=False:  p = ((g + 1) * n - 1) / 2    (-1 and 1 are the outer edges of the corner pixels)
    align_corners=True:   p = (g + 1) / 2 * (n - 1)    (-1 and 1 are the centres of the corner pixels)
A position outside the image is handled by the padding mode: 'zeros' reads 0 there, 'border' clips p
to [0, n - 1], 'reflection' mirrors it at the edges (again and again, as in a hall of mirrors) and clips.

Taps and weights. Every mode reads a few input pixels around p (its taps) and adds them up, weighted:
    nearest    1 tap per dim:  the pixel round(p), weight 1
    bilinear   2 taps per dim: i = floor(p) and i + 1, weights 1 - t and t, where t = p - i
    bicubic    4 taps per dim: i - 1 .. i + 2, weights from Keys' cubic kernel (a = -0.75) at t
A 2-d sample combines the taps of x and y (4 for bilinear, 16 for bicubic; 8 for trilinear in 3-d),
the weight of a combined tap being the product of its per-dim weights. So for every output pixel
    out[n, c, pixel] = sum over taps k of  W[n, k, pixel] * input[n, c, tap k of pixel]
which runs as one gather of all taps at once (`TapGather`: advanced indexing, no loop over pixels)
and one weighted sum. A tap outside the image ('zeros' padding) gets weight 0 (and reads pixel 0, so
that the gather stays in bounds).

Gradients. The weights are computed with ordinary differentiable ops from the positions, and the
positions from the grid (`GridToPixels`), so the gradient of the grid is automatic: for bilinear
d out / d p_x = (1 - t_y) * (in[i_y, i_x + 1] - in[i_y, i_x]) + t_y * (...), the slope between the taps.
The gradient of the input is the gather's adjoint, a scatter-add of g * W back onto the taps
(`TapScatter`, with the backend's index_add: taps shared by several output pixels add up). The gather
and the scatter are each other's gradient, so every gradient here can be differentiated again.

Rounding. At a pixel centre the slope of bilinear sampling jumps, so there the gradient of the grid
depends on the last bit of the position: `_unnormalize` and `_centres` (affine_grid's) round as PyTorch's
CPU kernels do, and an identity theta (where a Spatial Transformer starts) gets PyTorch's gradient.

Deviations from PyTorch:
- an infinite grid value is read as -1, as PyTorch's documentation says NaN is (and so is NaN, here;
  PyTorch's CPU kernels give NaN or crash on both);
- float64 4-D input with align_corners=False: PyTorch's 2-d kernel rounds the position once, here each
  operation is rounded (float32 is rounded as PyTorch). The values agree to 1e-15; at points within an ulp
  of a pixel centre (an identity grid) the gradient of the grid may take the slope of the other side;
- with border padding, bicubic's gradient of the grid is exactly 0 where every tap of a dim is clipped to
  the same edge pixel (PyTorch's float32 kernel leaves rounding noise there, up to 2e-5).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .. import dtypes
from .._warn import warn
from ..autograd.tensor_base import make
from . import elementwise as ew
from . import linalg as la
from . import movement as mv
from . import reduce as rd
from .op import Op, constant, tensor_args

__all__ = ["affine_grid", "grid_sample"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDING_MODES = ("zeros", "border", "reflection")
_CUBIC_A = -0.75  # Keys' kernel parameter, as PyTorch's bicubic (PIL uses -0.5)
_FAR = 3.0  # positions more than 3 pixels outside the image read no pixel at all (bicubic reaches 2)
_DEFAULT_ALIGN = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


# ---------------------------------------------------------------- the ops

class GridToPixels(Op):
    """Normalised grid coordinates (last dim x, y[, z]) -> pixel positions, with the padding mode applied:
    'border' clips, 'reflection' mirrors and clips (bicubic pads its taps instead, `_cubic_position`), and
    far outside the image a position is clipped where it reads the same pixels. The map is piecewise
    linear. Backward: g times its slope, the scale n / 2 (or (n - 1) / 2 with align_corners), times 0 where
    clipped and -1 where mirrored an odd number of times."""

    @staticmethod
    def forward(ctx, grid, sizes, padding, align_corners, cubic):
        xp = ctx.xp
        g = grid._data
        n = xp.asarray(np.array(sizes, dtype=g.dtype))  # the size of the dim each column of the grid runs along
        g = xp.where(xp.isfinite(g), g, g.dtype.type(-1))  # NaN and inf read as -1
        scale = (n - 1) / 2 if align_corners else n / 2
        p = _unnormalize(xp, g, n, align_corners)
        p, slope = (_cubic_position if cubic else _padded_position)(xp, p, n, padding, align_corners)
        if ctx.needs_input_grad[0]:
            ctx.slope = slope * scale * xp.isfinite(grid._data)
        return p

    @staticmethod
    def backward(ctx, g):
        return ew.mul(g, constant(ctx, ctx.slope)), None, None, None, None


def _unnormalize(xp, g, n, align_corners: bool):
    """Pixel positions of normalised coordinates g, rounded as PyTorch's CPU kernels round them. That
    matters at pixel centres, where the slope of bilinear sampling jumps: an identity affine_grid (where
    a Spatial Transformer starts) lands within an ulp of them, and which side's slope the gradient takes
    depends on that ulp. PyTorch's 2-d kernel (x, y columns) rounds (g + 1) * n / 2 - 1/2 once after g + 1;
    reproduced for float32 by computing in float64 (exact there) and rounding once. Its 3-d kernel, and
    float64 here, round each operation."""
    if align_corners:
        return (g + 1) / 2 * (n - 1)
    if g.shape[-1] == 2 and g.dtype.itemsize < 8:
        return (((g + 1).astype(np.float64) * n - 1) / 2).astype(g.dtype)
    return ((g + 1) * n - 1) / 2


class TapGather(Op):
    """input (N, C, *spatial) read at the taps: out[n, c, k, ...] = input[n, c, index[n, k, ...]], index
    being a position in the flattened spatial dims. Backward: TapScatter(g, index), the adjoint, which adds
    each gradient back onto the pixel it was read from."""

    @staticmethod
    def forward(ctx, x, index):
        ctx.index = index
        d = x._data
        flat = d.reshape(d.shape[:2] + (_numel(d.shape[2:]),))
        return flat[_tap_key(ctx.xp, index, d.shape[1])].reshape(d.shape[:2] + index.shape[1:])

    @staticmethod
    def backward(ctx, g):
        return TapScatter.apply(g, ctx.index, ctx.input_shapes[0]), None


class TapScatter(Op):
    """zeros(shape) with g (N, C, K, ...) added at the taps: the gradient of TapGather (repeated taps add
    up, with the backend's index_add). It is linear in g; backward: TapGather(gg, index)."""

    @staticmethod
    def forward(ctx, g, index, shape):
        ctx.index = index
        d = g._data
        out = ctx.xp.zeros(_numel(shape), dtype=d.dtype)
        # into the flattened array, by one index per value: np.add.at takes 16 x 3 x 128 x 128 x 4 taps in
        # 12 ms so, 41 ms by the (batch, channel, position) key of the gather
        batch, channel, taps = _tap_key(ctx.xp, index, shape[1])
        flat = ((batch * shape[1] + channel) * _numel(shape[2:]) + taps).reshape(-1)
        ctx.device.backend.index_add(out, flat, d.reshape(-1))
        return out.reshape(shape)

    @staticmethod
    def backward(ctx, gg):
        return TapGather.apply(gg, ctx.index), None, None


def _tap_key(xp, index, channels: int) -> tuple:
    """The advanced-indexing key (batch, channel, position) of the taps in an (N, C, P) array: the three
    index arrays broadcast to (N, C, K * pixels)."""
    n = index.shape[0]
    taps = index.reshape(n, 1, _numel(index.shape[1:]))
    return xp.arange(n).reshape(n, 1, 1), xp.arange(channels).reshape(1, channels, 1), taps


def _numel(shape: tuple) -> int:
    return int(np.prod(shape, dtype=np.int64))


# ---------------------------------------------------------------- padding modes, on arrays

def _padded_position(xp, p, n, padding: str, align_corners: bool) -> tuple:
    """(position after the padding mode, slope of that map) for bilinear and nearest."""
    if padding == "zeros":  # beyond _FAR outside, no tap is inside: clip there (keeps the indices small)
        return _clip(xp, p, -_FAR, n - 1 + _FAR)
    if padding == "border":
        return _clip(xp, p, 0, n - 1)
    p, sign = _reflect(xp, p, n, align_corners)
    p, inside = _clip(xp, p, 0, n - 1)
    return p, sign * inside


def _cubic_position(xp, p, n, padding: str, align_corners: bool) -> tuple:
    """(position, slope) for bicubic, whose taps are padded one by one (`_padded_taps`): the position is
    kept where it reads the same pixels, and finite indices come out of it."""
    if padding == "zeros":
        return _clip(xp, p, -_FAR, n - 1 + _FAR)
    if padding == "border":  # below -1 (from n on) every tap is clipped to the first (last) pixel: slope 0
        return xp.clip(p, -2, n), ((p >= -1) & (p < n)).astype(p.dtype)
    return p, xp.ones_like(p)  # 'reflection': every tap, however far, is mirrored into the image


def _clip(xp, p, lo, hi) -> tuple:
    """(p clipped to [lo, hi], slope 1 strictly inside, 0 elsewhere: the edge itself counts as clipped)."""
    return xp.clip(p, lo, hi), ((p > lo) & (p < hi)).astype(p.dtype)


def _reflect(xp, p, n, align_corners: bool) -> tuple:
    """(p mirrored into [lo, lo + span], sign of the map's slope): the mirrors are the corner pixels'
    centres (align_corners: lo = 0, span = n - 1) or their outer edges (lo = -1/2, span = n). p is folded
    to d = |p - lo| and d = flips * span + rest: an even number of flips leaves lo + rest, an odd one
    lo + span - rest. An empty span (one pixel, align_corners) gives 0, slope 0."""
    lo, span = (0.0, n - 1) if align_corners else (-0.5, n)
    safe = xp.where(span > 0, span, 1)
    below = p < lo
    d = xp.abs(p - lo)
    flips = xp.floor(d / safe)
    rest = d - flips * safe
    odd = (flips % 2) == 1
    out = xp.where(odd, span - rest, rest) + lo
    sign = xp.where(below, -1, 1) * xp.where(odd, -1, 1) * (span > 0)
    return xp.where(span > 0, out, 0), sign.astype(p.dtype)


def _padded_taps(xp, i, n: int, padding: str, align_corners: bool):
    """Bicubic's tap indices (integers as floats) moved into the image by the padding mode ('zeros' keeps them)."""
    if padding == "border":
        return xp.clip(i, 0, n - 1)
    if padding == "reflection":
        return xp.clip(_reflect(xp, i, xp.asarray(np.array(n, dtype=i.dtype)), align_corners)[0], 0, n - 1)
    return i


# ---------------------------------------------------------------- taps and weights, per dim

def _taps(pos, n: int, mode: str, padding: str, align_corners: bool) -> tuple:
    """The taps along one dim of size n for positions `pos` (N, *out): (indices (N, T, *out) as floats,
    in-image mask (N, T, *out), weights: a tensor (N, T, *out)), T = 1, 2 or 4 taps."""
    xp = pos._device.backend.xp
    p = pos._data
    if mode == "nearest":
        i = xp.rint(p)
        t = ew.sub(pos, _const(pos, i))
        # weight 1, written 1 + 0 * t: the output stays a function of the grid, of slope 0 (PyTorch gives
        # the grid a zero gradient in nearest mode, not none)
        return i[:, None], _inside(i, n)[:, None], mv.unsqueeze(ew.add(ew.mul(t, 0.0), 1.0), 1)
    i = xp.floor(p)
    t = ew.sub(pos, _const(pos, i))
    if mode == "bilinear":
        index = xp.stack([i, i + 1], axis=1)
        return index, _inside(index, n), mv.stack([ew.sub(1.0, t), t], 1)
    index = _padded_taps(xp, xp.stack([i - 1, i, i + 1, i + 2], axis=1), n, padding, align_corners)
    a = _CUBIC_A
    far, near = (a, -5 * a, 8 * a, -4 * a), (a + 2, -(a + 3), 0.0, 1.0)  # Keys' kernel beyond and within 1
    weights = [_horner(ew.add(t, 1.0), far), _horner(t, near), _horner(ew.sub(1.0, t), near),
               _horner(ew.sub(2.0, t), far)]
    return index, _inside(index, n), mv.stack(weights, 1)


def _horner(s, coefficients: tuple):
    """The cubic c0 s^3 + c1 s^2 + c2 s + c3 of tensor s, by Horner's rule."""
    out = ew.mul(s, coefficients[0])
    for c in coefficients[1:-1]:
        out = ew.mul(ew.add(out, c), s)
    return ew.add(out, coefficients[-1])


def _inside(index, n: int):
    return (index >= 0) & (index < n)


def _const(like, arr):
    """A constant tensor on `like`'s device."""
    return make(arr, like._device)


def _combine(per_dim: list, sizes: tuple) -> tuple:
    """The taps of all dims combined (every tap of one dim with every tap of the others): (flat index
    into the spatial dims (N, K, *out), weights (N, K, *out) with the taps outside the image zeroed).
    per_dim is ordered as the input's spatial dims (z, y, x), with their sizes."""
    index, mask, weights = per_dim[0]
    index = index.astype(np.int64)
    for (i, m, w), n in zip(per_dim[1:], sizes[1:]):
        shape = (w._data.shape[0], index.shape[1] * i.shape[1]) + w._data.shape[2:]
        index = (index[:, :, None] * n + i.astype(np.int64)[:, None]).reshape(shape)
        mask = (mask[:, :, None] & m[:, None]).reshape(shape)
        weights = mv.reshape(ew.mul(mv.unsqueeze(weights, 2), mv.unsqueeze(w, 1)), index.shape)
    index = index * mask  # a tap outside the image reads pixel 0, with weight 0
    return index, ew.mul(weights, _const(weights, mask.astype(weights._data.dtype)))


# ---------------------------------------------------------------- grid_sample

@tensor_args("input", "grid", op="grid_sampler")
def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros", align_corners: bool | None = None):
    """Sample input (N, C, H, W) at grid (N, Ho, Wo, 2) -> (N, C, Ho, Wo), or input (N, C, D, H, W) at grid
    (N, Do, Ho, Wo, 3) -> (N, C, Do, Ho, Wo), as torch.nn.functional.grid_sample: mode 'bilinear'
    (trilinear for 5-D input), 'nearest' or 'bicubic' (4-D only); padding_mode 'zeros', 'border' or
    'reflection'; align_corners None means False, with PyTorch's warning. Differentiable in input and grid
    (the grid's gradient is 0 in nearest mode), and again in both (see the module docstring)."""
    _check_modes(mode, padding_mode)
    if align_corners is None:
        warn(_DEFAULT_ALIGN)
        align_corners = False
    _check_sample(input, grid, mode)
    spatial = tuple(input._data.shape[2:])  # (H, W) or (D, H, W); the grid's columns run (x, y[, z]): reversed
    pos = GridToPixels.apply(grid, spatial[::-1], padding_mode, bool(align_corners), mode == "bicubic")
    last = len(spatial) - 1
    per_dim = [_taps(mv.select(pos, -1, last - d), n, mode, padding_mode, bool(align_corners))
               for d, n in enumerate(spatial)]
    index, weights = _combine(per_dim, spatial)
    return rd.sum(ew.mul(TapGather.apply(input, index), mv.unsqueeze(weights, 1)), 2)


def _check_modes(mode: str, padding_mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")


def _check_sample(input, grid, mode: str) -> None:
    """PyTorch's checks of grid_sampler's arguments, with its messages (and types)."""
    xs, gs = list(input._data.shape), list(grid._data.shape)
    sizes = f"input with sizes {xs} and grid with sizes {gs}"
    if input._device is not grid._device:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be on same device, but input is on "
                           f"{input._device} and grid is on {grid._device}")
    _check_dtypes(input, grid)
    if len(xs) < 1 or len(gs) < 1 or xs[0] != gs[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}")
    if gs[-1] != len(xs) - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {len(xs) - 2} in last dimension, but got "
                           f"grid with sizes {gs}")
    for d in range(2, len(xs)):
        if xs[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                               f"has sizes {xs} with dimension {d} being empty")
    if len(xs) not in (4, 5) or len(gs) != len(xs):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got {sizes}")
    if mode == "bicubic" and len(xs) != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _check_dtypes(input, grid) -> None:
    xd, gd = input._data.dtype, grid._data.dtype
    if xd != gd:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{dtypes.scalar_name(xd)} and grid has {dtypes.scalar_name(gd)}")
    if xd.kind != "f":
        kernel = "grid_sampler_3d" if input._data.ndim == 5 else "grid_sampler_2d"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtypes.scalar_name(xd)}' (input of shape "
                                  f"{list(input._data.shape)}); convert input and grid with .float() first")


# ---------------------------------------------------------------- affine_grid

@tensor_args("theta")
def affine_grid(theta, size, align_corners: bool | None = None):
    """The sampling grid of a batch of affine maps, as torch.nn.functional.affine_grid: theta (N, 2, 3) and
    size (N, C, H, W) give a grid (N, H, W, 2); theta (N, 3, 4) and size (N, C, D, H, W) a grid (N, D, H, W, 3).
    Output pixel (x, y[, z]), in normalised coordinates (see the module docstring), reads from
    theta @ (x, y[, z], 1): the product of a fixed base grid (H*W, 3) with theta^T, a matmul, so the
    gradient of theta comes from matmul's. align_corners None means False, with PyTorch's warning."""
    if align_corners is None:
        warn(_DEFAULT_ALIGN)
        align_corners = False
    size = tuple(int(s) for s in size)
    _check_theta(theta, size, bool(align_corners))
    spatial = size[2:]
    base = make(theta._device.backend.xp.asarray(_base_grid(spatial, bool(align_corners), theta._data.dtype)),
                theta._device)
    grid = la.matmul(base, mv.transpose(theta, 1, 2))  # (P, k + 1) @ (N, k + 1, k) -> (N, P, k)
    return mv.reshape(grid, (size[0],) + spatial + (len(spatial),))


def _base_grid(spatial: tuple, align_corners: bool, dtype) -> np.ndarray:
    """(prod(spatial), k + 1): the normalised (x, y[, z], 1) of every output pixel, x fastest. Along a dim of
    n pixels: the pixel centres, -1 + 2i / (n - 1) with align_corners, (2i + 1) / n - 1 without (0 for n = 1)."""
    axes = [_centres(n, align_corners, np.dtype(dtype)) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # one array per spatial dim, (D,) H, W
    columns = [m.reshape(-1) for m in reversed(mesh)] + [np.ones(mesh[0].size, dtype)]
    return np.stack(columns, axis=1)


def _centres(n: int, align_corners: bool, dtype) -> np.ndarray:
    """The pixel centres along a dim of n pixels in normalised coordinates, rounded as PyTorch's are (see
    `_unnormalize` for why the last ulp matters): torch.linspace(-1, 1, n), each value -1 + i * step
    (from the other end in the second half) rounded once, step = 2 / (n - 1) rounded; without
    align_corners then times (n - 1), divided by n."""
    if n == 1:
        return np.zeros(1, dtype)
    step = Fraction(float(np.dtype(dtype).type(2) / np.dtype(dtype).type(n - 1)))
    exact = [-1 + step * i if i < n // 2 else 1 - step * (n - 1 - i) for i in range(n)]
    line = np.array([float(v) for v in exact], dtype=dtype)  # float(Fraction) rounds once, to float64
    if dtype.itemsize < 8:  # float32's exact values are float64 numbers: that rounding was exact
        line = line.astype(np.float64).astype(dtype)
    return line if align_corners else line * dtype.type(n - 1) / dtype.type(n)


def _check_theta(theta, size: tuple, align_corners: bool) -> None:
    """PyTorch's checks of affine_grid's arguments, with its messages (and types)."""
    if theta._data.dtype.kind != "f":
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    shape = list(theta._data.shape)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    k = len(size) - 2
    if len(shape) != 3 or shape[1:] != [k, k + 1]:
        raise ValueError(f"Expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1} for size {size}. "
                         f"Got {shape}.")
    if align_corners and min(size[2:]) == 1:
        warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when align_corners=True. "
             "This is not an intended use case of affine_grid. See the documentation of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if shape[0] != size[0]:
        raise RuntimeError(f"affine_grid(): expected theta and size to have the same batch size, but got theta of "
                           f"shape {shape} and size {size}")

"""tinygrad_lab.func (torch.func's transforms): by hand (derivatives known exactly), by the loops the
transforms stand for, and against torch.func when PyTorch is installed, including the per-sample-gradient
and model-ensembling recipes of PyTorch's tutorials, run with only the import changed."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
from tinygrad_lab import func as fn

from ._helpers import assert_tree_like_torch

RNG = np.random.default_rng(0)
X, Y, M = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal((2, 3))


def t(a, **kw):
    return tl.tensor(np.asarray(a, dtype=np.float64), **kw)


def close(got, want, atol=1e-12):
    np.testing.assert_allclose(got.numpy() if isinstance(got, tl.Tensor) else got, want, atol=atol)


# ---------------------------------------------------------------- gradients

def test_grad_is_a_function_of_the_same_arguments():
    g = fn.grad(lambda x: x.sin().sum())
    close(g(t(X)), np.cos(X))
    gx, gy = fn.grad(lambda x, y: (x * y * y).sum(), argnums=(0, 1))(t(X), t(Y))
    close(gx, Y * Y)
    close(gy, 2 * X * Y)


def test_grad_of_a_dict_of_parameters_is_a_dict():
    params = {"w": t(M), "b": t(X[:2])}
    g = fn.grad(lambda p, x: (p["w"] @ x + p["b"]).sum())(params, t(Y))
    assert set(g) == {"w", "b"}
    close(g["w"], np.tile(Y, (2, 1)))
    close(g["b"], np.ones(2))


def test_transforms_nest():
    x0, y0 = 1.5, 0.25
    close(fn.grad(fn.grad(lambda x: x ** 3))(t(x0)), 6 * x0)  # d²/dx² x³
    inner = fn.grad(lambda x: fn.grad(lambda y: x * y * y)(t(y0)))  # d/dx (2 x y0) through a closure
    close(inner(t(x0)), 2 * y0)
    close(fn.hessian(lambda x: (x ** 3).sum())(t(X)), np.diag(6 * X))


def test_grad_and_value_and_aux():
    (g, (value, aux)) = fn.grad_and_value(lambda x: ((x * x).sum(), x.mean()), has_aux=True)(t(X))
    close(g, 2 * X)
    assert value.item() == pytest.approx((X * X).sum()) and aux.item() == pytest.approx(X.mean())
    assert not g.requires_grad and not value.requires_grad


def test_results_stay_in_the_graph_of_inputs_that_require_grad():
    x = t(X, requires_grad=True)
    g = fn.grad(lambda x: (x ** 3).sum())(x)  # 3x², differentiable again by ordinary backward
    g.sum().backward()
    close(x.grad, 6 * X)


def test_vjp_and_jvp():
    out, vjp_fn = fn.vjp(lambda x: t(M) @ x, t(X))
    (v,) = vjp_fn(t([1.0, 2.0]))
    close(out, M @ X)
    close(v, np.array([1.0, 2.0]) @ M)
    out, tangent = fn.jvp(lambda x: t(M) @ x.exp(), (t(X),), (t(Y),))
    close(tangent, M @ (np.exp(X) * Y))


def test_jacobians_both_ways():
    f = lambda x, y: t(M) @ (x * y)  # noqa: E731
    for transform in (fn.jacrev, fn.jacfwd):
        close(transform(f)(t(X), t(Y)), M * Y)
        jx, jy = transform(f, argnums=(0, 1))(t(X), t(Y))
        close(jy, M * X)


def test_errors_name_the_problem():
    with pytest.raises(RuntimeError, match="single element"):
        fn.grad(lambda x: x * 2)(t(X))
    with pytest.raises(RuntimeError, match="argnums=3"):
        fn.grad(lambda x: x.sum(), argnums=3)(t(X))
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        fn.vmap(lambda a, b: a + b)(t(X), t(M))
    with pytest.raises(RuntimeError, match="randomness"):
        fn.vmap(lambda a: a + tl.randn(()))(t(X))


# ---------------------------------------------------------------- vmap: the loop it stands for

def test_vmap_maps_over_the_dims_given():
    close(fn.vmap(lambda row: row.sum())(t(M)), M.sum(1))
    close(fn.vmap(lambda col: col.max(), in_dims=1)(t(M)), M.max(0))
    close(fn.vmap(lambda a, b: a * b, in_dims=(0, None))(t(M), t(X)), M * X)
    close(fn.vmap(lambda a: a * 2, out_dims=1)(t(M)), (M * 2).T)
    close(fn.vmap(fn.vmap(lambda a, b: a * b), in_dims=(0, None))(t(M), t(X)), M * X)  # nested
    out = fn.vmap(lambda d: {"s": d["a"] + d["b"], "p": (d["a"] * d["b"],)})({"a": t(M), "b": t(M)})
    close(out["s"], 2 * M)
    close(out["p"][0], M * M)


def test_vmap_randomness_same_and_different():
    tl.manual_seed(0)
    same = fn.vmap(lambda a: a + tl.rand(()), randomness="same")(t(np.zeros(4)))
    different = fn.vmap(lambda a: a + tl.rand(()), randomness="different")(t(np.zeros(4)))
    assert len(set(same.tolist())) == 1 and len(set(different.tolist())) == 4


def test_per_sample_gradients_equal_a_loop_of_backward_passes():
    model = tl.nn.Linear(3, 2).double()
    data, targets = t(RNG.standard_normal((5, 3))), tl.tensor([0, 1, 1, 0, 1])
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        return tl.nn.functional.cross_entropy(fn.functional_call(model, p, (x.unsqueeze(0),)), y.unsqueeze(0))

    per_sample = fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(params, data, targets)
    for i in range(5):
        model.zero_grad()
        tl.nn.functional.cross_entropy(model(data[i:i + 1]), targets[i:i + 1]).backward()
        close(per_sample["weight"][i], model.weight.grad.numpy())
        close(per_sample["bias"][i], model.bias.grad.numpy())


def test_functional_call_leaves_the_module_as_it_was():
    model = tl.nn.Sequential(tl.nn.Linear(3, 2), tl.nn.BatchNorm1d(2)).double().eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    zeros = {k: tl.zeros_like(v) for k, v in model.named_parameters()}
    out = fn.functional_call(model, zeros, t(M))
    close(out, np.zeros((2, 2)))
    assert all(np.array_equal(model.state_dict()[k].numpy(), v.numpy()) for k, v in before.items())
    assert isinstance(model[0].weight, tl.nn.Parameter)
    with pytest.raises(ValueError, match="multiple dictionaries"):
        fn.functional_call(model, ({"0.bias": zeros["0.bias"]}, {"0.bias": zeros["0.bias"]}), t(M))
    with pytest.raises(AttributeError, match="no parameter or buffer named '0.scale'"):
        fn.functional_call(model, {"0.scale": zeros["0.bias"]}, t(M))


def test_an_ensemble_by_stack_module_state_and_vmap():
    models = [tl.nn.Linear(3, 2).double() for _ in range(4)]
    params, buffers = fn.stack_module_state(models)
    assert params["weight"].shape == (4, 2, 3) and params["weight"].requires_grad

    def one(p, b, x):
        return fn.functional_call(models[0], (p, b), (x,))

    out = fn.vmap(one, in_dims=(0, 0, None))(params, buffers, t(M))
    for i, m in enumerate(models):
        close(out[i].detach(), m(t(M)).detach().numpy())


# ---------------------------------------------------------------- against torch.func

def _cases(lib):
    F = lib.func
    Mm = lib.tensor(M)
    return {
        "grad": lambda: F.grad(lambda x: (x.sin() * x).sum())(lib.tensor(X)),
        "grad argnums": lambda: F.grad(lambda x, y: (x.exp() * y).sum(), argnums=(0, 1))(lib.tensor(X), lib.tensor(Y)),
        "grad of grad": lambda: F.grad(F.grad(lambda x: x.sin() * x.exp()))(lib.tensor(np.asarray(0.7))),
        "jacrev": lambda: F.jacrev(lambda x: Mm @ x.tanh())(lib.tensor(X)),
        "jacfwd argnums": lambda: F.jacfwd(lambda x, y: x.sin() * y, argnums=(0, 1))(lib.tensor(X), lib.tensor(Y)),
        "hessian": lambda: F.hessian(lambda x: (x.sin() * x.roll(1)).sum())(lib.tensor(X)),
        "vjp": lambda: F.vjp(lambda x: Mm @ x.exp(), lib.tensor(X))[1](lib.tensor([0.5, -1.0])),
        "jvp": lambda: F.jvp(lambda x: Mm @ x.exp(), (lib.tensor(X),), (lib.tensor(Y),)),
        "vmap of jacrev": lambda: F.vmap(F.jacrev(lambda x: x.sin() * x.sum()))(Mm),
        "vmap out_dims": lambda: F.vmap(lambda a, b: (a * b, a.sum()), in_dims=(1, None), out_dims=(1, 0))(
            Mm, lib.tensor(X[:2])),
    }


@pytest.mark.parametrize("name", list(_cases(tl)))
def test_matches_torch_func(name, torch):
    import torch.func  # noqa: F401 (torch.func is a submodule)
    torch.set_default_dtype(torch.float64)
    try:
        want = _cases(torch)[name]()
    finally:
        torch.set_default_dtype(torch.float32)
    assert_tree_like_torch(_cases(tl)[name](), want)


def test_functional_call_replaces_a_tied_weight_under_every_name():
    class Tied(tl.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = tl.nn.Linear(2, 2, bias=False)
            self.b = tl.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    model = Tied().double()
    w = t(2 * np.eye(2))
    close(fn.functional_call(model, {"a.weight": w}, t([1.0, 1.0])), [4.0, 4.0])
    assert model.b.weight is model.a.weight and isinstance(model.a.weight, tl.nn.Parameter)
    untied = fn.functional_call(model, {"a.weight": w}, t([1.0, 1.0]), tie_weights=False).detach()
    close(untied, (model.a.weight.detach().numpy() @ (2 * np.eye(2) @ np.ones(2))))

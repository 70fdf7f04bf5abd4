"""The project's bad-input corpus: misuses a learner makes, one entry each, run by tests/test_misuses.py.

Each entry is a program written once against a module `m` (tinygrad_lab, or torch for the oracle):

    exc     the exception family it must raise (a Warning subclass: it must warn, and run on)
    says    what our message must name, as regexes: the op, and the shapes/dtypes/devices involved
    torch   SAME: PyTorch runs the same program and raises (or warns) in the same family;
            a program: PyTorch's equivalent, where the call is spelled differently;
            Differs(reason, raises): PyTorch does not raise (raises=None) or raises another type; the
            reason says why our answer is the better one for a learner (tests check that it still holds)

`other(m)` is a second device: the test suite's 'standin' accelerator here, PyTorch's 'meta' device
there (the one second device every PyTorch install has). The categories: creation, shapes, dims,
dtypes, devices, non-tensor arguments, autograd, modules, optimizers, data loading, files.
"""
from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass
from typing import Callable

import numpy as np

SAME = "same"


@dataclass(frozen=True)
class Differs:
    """PyTorch behaves otherwise: `raises` None (it runs) or the type it raises instead; `reason`: why we differ."""

    reason: str
    raises: type | None = None


@dataclass(frozen=True)
class Misuse:
    exc: type | tuple
    says: tuple
    program: Callable
    torch: object = SAME


def E(exc, says, program, torch=SAME) -> Misuse:  # noqa: N802 (a table row)
    return Misuse(exc, (says,) if isinstance(says, str) else tuple(says), program, torch)


def other(m) -> str:
    """The second device: 'standin' (tests/standin.py) for tinygrad_lab, 'meta' for PyTorch."""
    return "meta" if m.__name__ == "torch" else "standin"


def is_torch(m) -> bool:
    return m.__name__ == "torch"


# ---------------------------------------------------------------- helpers for longer programs

def _backward_twice(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _saved_input_modified(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    y = a * a  # saves a (version 0)
    a.mul_(2)
    y.sum().backward()


def _saved_output_modified(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # saves its output
    y.add_(1)
    y.sum().backward()


def _iadd_leaf(m):
    x = m.ones(2, requires_grad=True)
    x += 1


def _leaf_view_in_place(m):
    x = m.ones(3, requires_grad=True)
    x[0] = 5.0


def _hook_shape(m):
    x = m.ones(2, requires_grad=True)
    x.register_hook(lambda g: g[:1])
    (x * 2).sum().backward()


def _hook_float(m):
    x = m.ones(2, requires_grad=True)
    (x * 2).register_hook(lambda g: 1.0)
    (x * 2).sum().backward()
    y = x * 3
    y.register_hook(lambda g: 1.0)
    y.sum().backward()


def _hook_dtype(m):
    x = m.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g.double())
    y.sum().backward()


def _grad_unused_input(m):
    x = m.ones(2, requires_grad=True)
    z = m.ones(2, requires_grad=True)
    m.autograd.grad((x * 2).sum(), [x, z])


def _grad_non_scalar(m):
    x = m.ones(2, requires_grad=True)
    m.autograd.grad(x * 2, [x])


def _grad_input_without_grad(m):
    x = m.ones(2, requires_grad=True)
    z = m.ones(2)
    m.autograd.grad((x * 2).sum(), [z])


def _backward_gradient_shape(m):
    x = m.ones(2, 3, requires_grad=True)
    (x * 2).backward(m.ones(3, 2))


def _backward_gradient_device(m):
    x = m.ones(2, requires_grad=True)
    (x * 2).backward(m.ones(2, device=other(m)))


def _function_class(m):
    class Double(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double


def _function_instance_called(m):
    _function_class(m)()(m.ones(2, requires_grad=True))


def _function_gradient_count(m):
    class Two(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    Two.apply(m.ones(2, requires_grad=True)).sum().backward()


def _function_gradient_shape(m):
    class Wrong(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.sum()

    Wrong.apply(m.ones(3, requires_grad=True)).sum().backward()


def _non_leaf_grad(m):
    y = m.ones(2, requires_grad=True) * 2
    return y.grad


def _non_leaf_requires_grad_false(m):
    y = m.ones(2, requires_grad=True) * 2
    y.requires_grad = False


def _deepcopy_non_leaf(m):
    import copy
    copy.deepcopy(m.ones(2, requires_grad=True) * 2)


def _grad_wrong_shape(m):
    x = m.ones(2, 3, requires_grad=True)
    x.grad = m.ones(3, 2)


def _grad_wrong_dtype(m):
    x = m.ones(2, requires_grad=True)
    x.grad = m.ones(2, dtype=m.float64)


def _grad_wrong_device(m):
    x = m.ones(2, requires_grad=True)
    x.grad = m.ones(2, device=other(m))


def _grad_not_tensor(m):
    x = m.ones(2, requires_grad=True)
    x.grad = [1.0, 2.0]


def _backward_in_no_grad(m):
    x = m.ones(2, requires_grad=True)
    with m.no_grad():
        y = (x * 2).sum()
    y.backward()


def _backward_inputs_empty(m):
    x = m.ones(2, requires_grad=True)
    (x * 2).sum().backward(inputs=[])


def _gradcheck_float32(m):
    x = m.ones(2, requires_grad=True)
    m.autograd.gradcheck(lambda t: t * 2, (x,), raise_exception=False)


def _read_only_write(m):
    a = np.zeros(3)
    a.flags.writeable = False
    m.from_numpy(a).add_(1)


# modules

def _linear(m, *args, **kwargs):
    m.manual_seed(0)
    return m.nn.Linear(*args, **kwargs)


def _state_dict_missing(m):
    lin = _linear(m, 2, 3)
    lin.load_state_dict({"weight": m.zeros(3, 2)})


def _state_dict_unexpected(m):
    lin = _linear(m, 2, 3)
    lin.load_state_dict({"weight": m.zeros(3, 2), "bias": m.zeros(3), "scale": m.zeros(1)})


def _state_dict_size(m):
    lin = _linear(m, 2, 3)
    lin.load_state_dict({"weight": m.zeros(2, 2), "bias": m.zeros(3)})


def _state_dict_not_dict(m):
    _linear(m, 2, 3).load_state_dict([1, 2])


def _assign_parameter_int(m):
    lin = _linear(m, 2, 3)
    lin.weight = 3


def _register_parameter_tensor(m):
    lin = _linear(m, 2, 3)
    lin.register_parameter("scale", m.ones(2))


def _register_parameter_dotted(m):
    lin = _linear(m, 2, 3)
    lin.register_parameter("a.b", m.nn.Parameter(m.ones(2)))


def _register_buffer_list(m):
    _linear(m, 2, 3).register_buffer("stats", [1, 2])


def _add_module_not_module(m):
    _linear(m, 2, 3).add_module("act", lambda x: x)


def _module_list_append(m):
    m.nn.ModuleList([]).append(3)


def _sequential_index(m):
    return m.nn.Sequential(_linear(m, 2, 2))[3]


def _no_forward(m):
    class Empty(m.nn.Module):
        pass

    Empty()(m.ones(2))


def _module_to_bogus(m):
    _linear(m, 2, 3).to("gpu")


def _get_submodule(m):
    m.nn.Sequential(_linear(m, 2, 2)).get_submodule("1")


def _mse_bad_reduction(m):
    m.nn.MSELoss(reduction="avg")(m.ones(2), m.ones(2))


def _lstm_input_size(m):
    m.manual_seed(0)
    m.nn.LSTM(4, 3)(m.ones(5, 2, 3))


def _batchnorm_features(m):
    m.nn.BatchNorm1d(4)(m.ones(8, 3))


def _layernorm_shape(m):
    m.nn.LayerNorm(4)(m.ones(2, 3))


def _embedding_index(m):
    m.manual_seed(0)
    m.nn.Embedding(5, 2)(m.tensor([1, 7]))


def _conv_channels(m):
    m.manual_seed(0)
    m.nn.Conv2d(3, 4, 3)(m.ones(1, 2, 8, 8))


def _linear_features(m):
    _linear(m, 3, 2)(m.ones(4, 5))


# optimizers

def _params(m):
    return [m.nn.Parameter(m.ones(2, 2))]


def _backward_empty_inputs(m):
    x = m.ones(2, requires_grad=True)
    (x * 2).sum().backward(inputs=[])


def _sgd_non_leaf(m):
    m.optim.SGD([m.ones(2, requires_grad=True) * 2], lr=0.1)


def _sgd_duplicate_group(m):
    p = m.nn.Parameter(m.ones(2))
    opt = m.optim.SGD([p], lr=0.1)
    opt.add_param_group({"params": [p]})


def _sgd_state_groups(m):
    opt = m.optim.SGD(_params(m), lr=0.1)
    state = opt.state_dict()
    state["param_groups"] = state["param_groups"] * 2
    opt.load_state_dict(state)


def _scheduler_not_optimizer(m):
    m.optim.lr_scheduler.StepLR("sgd", step_size=1)


# data

def _tensor_dataset_sizes(m):
    m.utils.data.TensorDataset(m.ones(3, 2), m.ones(4))


def _random_split_lengths(m):
    m.utils.data.random_split(m.utils.data.TensorDataset(m.ones(4)), [2, 3])


def _collate_unequal(m):
    data = [m.ones(2), m.ones(3)]
    next(iter(m.utils.data.DataLoader(data, batch_size=2)))


def _collate_object(m):
    next(iter(m.utils.data.DataLoader([object(), object()], batch_size=2)))


def _loader(m, **kwargs):
    return m.utils.data.DataLoader(m.utils.data.TensorDataset(m.ones(4, 2)), **kwargs)


# files

def _path(name: str) -> str:
    folder = tempfile.mkdtemp(prefix="misuse-")
    return os.path.join(folder, name)


def _load_missing(m):
    m.load(_path("missing.pt"))


def _load_directory(m):
    m.load(tempfile.mkdtemp(prefix="misuse-"))


def _load_text(m):
    p = _path("notes.txt")
    with open(p, "w", encoding="utf-8") as f:
        f.write("not a checkpoint\n")
    m.load(p)


def _load_truncated(m):
    p = _path("model.pt")
    m.save({"w": m.ones(100)}, p)
    with open(p, "rb") as f:
        data = f.read()
    with open(p, "wb") as f:
        f.write(data[: len(data) // 2])
    m.load(p)


def _save_missing_folder(m):
    m.save({"w": m.ones(2)}, os.path.join(tempfile.mkdtemp(prefix="misuse-"), "no", "such", "folder", "m.pt"))


def _save_text_mode(m):
    m.save({"w": m.ones(2)}, io.StringIO())


def _load_text_mode(m):
    p = _path("model.pt")
    m.save({"w": m.ones(2)}, p)
    with open(p, encoding="latin-1") as f:
        m.load(f)


def _load_bad_map_location(m):
    p = _path("model.pt")
    m.save({"w": m.ones(2)}, p)
    m.load(p, map_location="gpu")


def _save_to_directory(m):
    m.save({"w": m.ones(2)}, tempfile.mkdtemp(prefix="misuse-"))


def _load_empty(m):
    p = _path("empty.pt")
    open(p, "wb").close()
    m.load(p)


BROADCAST = r"size of tensor a \({a}\) must match the size of tensor b \({b}\) at non-singleton dimension {d}"
DIM_RANGE = r"Dimension out of range \(expected to be in range of \[{lo}, {hi}\], but got {got}\)"
NOT_TENSOR = r"{op}\(\): argument '\w+' \(position \d\) must be Tensor, not {what}"
OTHER_DEVICE = r"(standin|cpu).*(standin|cpu)"  # both devices are named
META_SKIPS = ("PyTorch's meta device, the oracle's only second device, computes shapes without checking devices "
              "in this op; with a real GPU PyTorch raises 'Expected all tensors to be on the same device'")

CORPUS: dict[str, Misuse] = {
    # ============================================================ creation
    "zeros_float_size": E(TypeError, (r"zeros\(\)", "float", r"2\.5"), lambda m: m.zeros(2.5, 3)),
    "zeros_float_in_tuple": E(TypeError, (r"zeros\(\)", "float", "pos 1"), lambda m: m.zeros((2, 2.5))),
    "zeros_negative": E(RuntimeError, (r"zeros", r"negative dimension -1", r"\[-1, 3\]"), lambda m: m.zeros(-1, 3)),
    "ones_bool_size": E(TypeError, (r"ones\(\)", "bool"), lambda m: m.ones(True)),
    "empty_string_size": E(TypeError, (r"empty\(\)", "str"), lambda m: m.empty("3")),
    "rand_float_size": E(TypeError, (r"rand\(\)", "float"), lambda m: m.rand(2.5)),
    "randn_negative": E(RuntimeError, (r"randn", "-2"), lambda m: m.randn(-2)),
    "randperm_negative": E(RuntimeError, (r"randperm", "-1"), lambda m: m.randperm(-1)),
    "randperm_float": E(TypeError, (r"randperm\(\)", "'n'", "float"), lambda m: m.randperm(2.5)),
    "eye_negative": E(RuntimeError, (r"eye", "-1"), lambda m: m.eye(-1)),
    "eye_float": E(TypeError, (r"eye\(\)", "float"), lambda m: m.eye(2.5)),
    "linspace_float_steps": E(TypeError, (r"linspace\(\)", "steps", "float"), lambda m: m.linspace(0, 1, 2.5)),
    "linspace_negative_steps": E(RuntimeError, (r"linspace", "-1"), lambda m: m.linspace(0, 1, -1)),
    "randint_empty_range": E(RuntimeError, (r"from=5 >= to=2",), lambda m: m.randint(5, 2, (3,))),
    "randint_float_size": E(TypeError, (r"randint\(\)", "float"), lambda m: m.randint(0, 5, (2.5,))),
    "arange_zero_step": E(RuntimeError, (r"arange", "step must be nonzero"), lambda m: m.arange(0, 5, 0)),
    "arange_wrong_sign": E(RuntimeError, (r"arange", "start=0, end=5, step=-1"), lambda m: m.arange(0, 5, -1)),
    "full_float_size": E(TypeError, (r"full\(\)", "float"), lambda m: m.full((2.5,), 1.0)),
    "full_uint8_overflow": E(RuntimeError, (r"full\(\)", "uint8", "overflow", "300"),
                             lambda m: m.full((2,), 300, dtype=m.uint8)),
    "tensor_ragged": E(ValueError, (r"tensor\(\)", "rectangular|inhomogeneous"), lambda m: m.tensor([[1, 2], [3]])),
    "tensor_none": E(RuntimeError, (r"tensor\(\)", "NoneType"), lambda m: m.tensor([1.0, None])),
    "tensor_dict": E(RuntimeError, (r"tensor\(\)", "dict"), lambda m: m.tensor({"a": 1})),
    "tensor_string": E(TypeError, (r"tensor\(\)", "str"), lambda m: m.tensor("abc")),
    "tensor_int_overflow": E(ValueError, (r"tensor\(\)", "Overflow", "int64"), lambda m: m.tensor([2**63])),
    "tensor_uint8_overflow": E(RuntimeError, (r"tensor\(\)", "uint8", "overflow", "300"),
                               lambda m: m.tensor([300], dtype=m.uint8)),
    "tensor_int32_overflow": E(RuntimeError, (r"tensor\(\)", "int32", "overflow"),
                               lambda m: m.tensor([2**31], dtype=m.int32)),
    "tensor_nan_into_int": E(RuntimeError, (r"tensor\(\)", "int64", "overflow", "nan"),
                             lambda m: m.tensor([float("nan")], dtype=m.int64)),
    "tensor_int_requires_grad": E(RuntimeError, ("floating point", "int64"),
                                  lambda m: m.tensor([1, 2], requires_grad=True)),
    "zeros_int_requires_grad": E(RuntimeError, ("floating point", "int64"),
                                 lambda m: m.zeros(2, dtype=m.int64, requires_grad=True)),
    "requires_grad_on_int": E(RuntimeError, ("floating point", "int64"),
                              lambda m: m.zeros(2, dtype=m.int64).requires_grad_()),
    "from_numpy_list": E(TypeError, (r"expected np\.ndarray", "list"), lambda m: m.from_numpy([1, 2])),
    "from_numpy_strings": E(TypeError, ("dtype", "U1|str"), lambda m: m.from_numpy(np.array(["a"]))),
    "tensor_complex_array": E(TypeError, ("unsupported dtype", "complex64"),
                              lambda m: m.tensor(np.zeros(2, np.complex64)),
                              torch=Differs("tinygrad_lab has no complex dtypes; PyTorch does", None)),
    "from_numpy_uint16": E(TypeError, ("unsupported dtype", "uint16"), lambda m: m.from_numpy(np.zeros(2, np.uint16)),
                           torch=Differs("tinygrad_lab has 9 dtypes (no uint16); PyTorch 2 has uint16", None)),
    "normal_negative_std": E(RuntimeError, ("normal", "std", "-1"), lambda m: m.normal(0.0, -1.0, size=(2,))),
    "default_dtype_int": E(TypeError, ("default", "int64"), lambda m: m.set_default_dtype(m.int64)),
    "dtype_not_a_dtype": E(TypeError, ("dtype", "5"), lambda m: m.zeros(2, dtype=5)),
    "linear_float_features": E(TypeError, (r"Linear\(\)", "in_features", "float", r"2\.7"), lambda m: m.nn.Linear(2.7, 4)),
    "linear_negative_features": E(RuntimeError, (r"Linear", "in_features|negative", "-1"), lambda m: m.nn.Linear(-1, 4)),
    "linear_bool_features": E(TypeError, (r"Linear\(\)", "in_features", "bool"), lambda m: m.nn.Linear(True, 4),
                              torch=Differs("PyTorch takes True as 1 (bool is an int); a bool size is a slip", None)),
    "conv2d_float_kernel": E(TypeError, (r"Conv2d\(\)", "kernel_size", "float"), lambda m: m.nn.Conv2d(3, 4, 2.5)),
    "conv2d_float_channels": E(TypeError, (r"Conv2d\(\)", "out_channels", "float"), lambda m: m.nn.Conv2d(3, 4.0, 3)),
    "conv2d_groups": E(ValueError, ("in_channels must be divisible by groups",), lambda m: m.nn.Conv2d(3, 4, 3, groups=2)),
    "embedding_float": E(TypeError, (r"Embedding\(\)", "num_embeddings", "float"), lambda m: m.nn.Embedding(10.5, 3)),
    "embedding_padding_idx": E(AssertionError, ("Padding_idx must be within num_embeddings",),
                               lambda m: m.nn.Embedding(10, 3, padding_idx=10)),
    "batchnorm_float": E(TypeError, (r"BatchNorm1d\(\)", "num_features", "float"), lambda m: m.nn.BatchNorm1d(3.5)),
    "layernorm_float": E(TypeError, (r"LayerNorm\(\)", "normalized_shape", "float"), lambda m: m.nn.LayerNorm(3.5)),
    "lstm_float_layers": E(TypeError, (r"LSTM\(\)", "num_layers", "float"), lambda m: m.nn.LSTM(2, 3, num_layers=1.5)),
    "rnn_float_hidden": E(TypeError, ("hidden_size", "float"), lambda m: m.nn.RNN(2, 3.5)),
    "lstm_zero_hidden": E(ValueError, ("hidden_size must be greater than zero",), lambda m: m.nn.LSTM(2, 0)),
    "dropout_probability": E(ValueError, ("dropout probability", r"1\.5"), lambda m: m.nn.Dropout(1.5)),
    "prelu_float": E(TypeError, (r"PReLU\(\)", "num_parameters", "float"), lambda m: m.nn.PReLU(2.5)),
    "gru_cell_float": E(TypeError, (r"GRUCell\(\)", "float"), lambda m: m.nn.GRUCell(2.5, 3)),

    # ============================================================ shapes
    "broadcast_add": E(RuntimeError, (BROADCAST.format(a=3, b=4, d=1), r"add", r"\[2, 3\]", r"\[4\]"),
                       lambda m: m.zeros(2, 3) + m.zeros(4)),
    "broadcast_mul_3d": E(RuntimeError, (BROADCAST.format(a=3, b=5, d=1), "mul", r"\[2, 3, 4\]", r"\[5, 4\]"),
                          lambda m: m.zeros(2, 3, 4) * m.zeros(5, 4)),
    "broadcast_sub": E(RuntimeError, (BROADCAST.format(a=3, b=4, d=0), "sub"), lambda m: m.zeros(3) - m.zeros(4)),
    "broadcast_div": E(RuntimeError, (BROADCAST.format(a=2, b=3, d=1), "div"), lambda m: m.ones(4, 2) / m.ones(4, 3)),
    "broadcast_pow": E(RuntimeError, ("pow", r"\[2\]", r"\[3\]"), lambda m: m.ones(2) ** m.ones(3)),
    "broadcast_maximum": E(RuntimeError, ("maximum", r"\[2\]", r"\[3\]"), lambda m: m.maximum(m.ones(2), m.ones(3))),
    "broadcast_compare": E(RuntimeError, ("less|lt", r"\[2\]", r"\[3\]"), lambda m: m.ones(2) < m.ones(3)),
    "broadcast_where": E(RuntimeError, ("where", r"\[2\]", r"\[3\]"),
                         lambda m: m.where(m.ones(2, dtype=m.bool), m.ones(2), m.ones(3))),
    "broadcast_iadd": E(RuntimeError, ("add", r"\[2\]", r"\[3\]"), lambda m: m.zeros(2).add_(m.ones(3))),
    "broadcast_in_place_grows": E(RuntimeError, (r"\[3\]", r"\[2, 3\]"), lambda m: m.zeros(3).add_(m.ones(2, 3))),
    "matmul_2d": E(RuntimeError, ("matmul|mat1 and mat2", r"2x3 and 4x5"), lambda m: m.zeros(2, 3) @ m.zeros(4, 5)),
    "matmul_batched": E(RuntimeError, (r"x3 and 4x5",), lambda m: m.zeros(2, 2, 3) @ m.zeros(4, 5)),
    "matmul_matrix_vector": E(RuntimeError, (r"2x3", r"\b4\b"), lambda m: m.zeros(2, 3) @ m.zeros(4)),
    "matmul_vectors": E(RuntimeError, (r"\[3\]", r"\[4\]"), lambda m: m.zeros(3) @ m.zeros(4)),
    "matmul_scalar": E(RuntimeError, ("matmul", "at least 1D", "0D and 1D"), lambda m: m.tensor(2.0) @ m.ones(2)),
    "matmul_batch_broadcast": E(RuntimeError, ("matmul|size of tensor", r"\b2\b", r"\b3\b"),
                                lambda m: m.zeros(2, 4, 4) @ m.zeros(3, 4, 4)),
    "reshape": E(RuntimeError, (r"shape '\[4\]' is invalid for input of size 6",), lambda m: m.zeros(2, 3).reshape(4)),
    "reshape_inferred": E(RuntimeError, (r"shape '\[-1, 4\]' is invalid for input of size 6",),
                          lambda m: m.zeros(2, 3).reshape(-1, 4)),
    "reshape_two_unknowns": E(RuntimeError, ("only one dimension can be inferred", r"-1"),
                              lambda m: m.zeros(6).reshape(-1, -1)),
    "reshape_float": E(TypeError, ("reshape", "float"), lambda m: m.zeros(6).reshape(2.0, 3)),
    "view_size": E(RuntimeError, (r"shape '\[5\]' is invalid for input of size 6",), lambda m: m.zeros(2, 3).view(5)),
    "view_non_contiguous": E(RuntimeError, ("view", r"\.reshape", r"\[3, 2\]"), lambda m: m.zeros(2, 3).t().view(6)),
    "expand_size": E(RuntimeError, ("expand", r"\b3\b", r"\b4\b"), lambda m: m.zeros(3, 1).expand(4, 2)),
    "expand_fewer_dims": E(RuntimeError, ("expand", "number of sizes provided"), lambda m: m.zeros(2, 3).expand(3)),
    "cat_sizes": E(RuntimeError, (r"Sizes of tensors must match except in dimension 0\. Expected size 3 but got size 4",),
                   lambda m: m.cat([m.zeros(2, 3), m.zeros(2, 4)])),
    "cat_ndims": E(RuntimeError, (r"same number of dimensions: got 2 and 1",), lambda m: m.cat([m.zeros(2, 3), m.zeros(3)])),
    "cat_empty_list": E(ValueError, ("cat", "non-empty"), lambda m: m.cat([])),
    "stack_sizes": E(RuntimeError, (r"equal size.*\[2, 3\].*\[3, 2\]",), lambda m: m.stack([m.zeros(2, 3), m.zeros(3, 2)])),
    "stack_empty": E(RuntimeError, ("stack", "non-empty"), lambda m: m.stack([])),
    "permute_length": E(RuntimeError, ("permute", r"input.dim\(\) = 2", r"len\(dims\) = 3"),
                        lambda m: m.zeros(2, 3).permute(0, 1, 2)),
    "permute_repeated": E(RuntimeError, ("permute", "duplicate dims", r"\[0, 0\]"), lambda m: m.zeros(2, 3).permute(0, 0)),
    "flatten_order": E(RuntimeError, ("flatten", "start_dim", "end_dim"), lambda m: m.zeros(2, 3, 4).flatten(2, 1)),
    "split_sizes": E(RuntimeError, ("split", r"\[1, 1\]", r"\b3\b"), lambda m: m.zeros(3).split([1, 1])),
    "chunk_zero": E(RuntimeError, ("chunk", "greater than 0", "0"), lambda m: m.zeros(3).chunk(0)),
    "t_3d": E(RuntimeError, (r"t\(\)", "<= 2", "3"), lambda m: m.zeros(2, 3, 4).t()),
    "squeeze_out_of_range": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=3), "squeeze"), lambda m: m.zeros(2, 1).squeeze(3)),
    "gather_index_dims": E(RuntimeError, ("gather", "same number of dimensions|dimension"),
                           lambda m: m.zeros(2, 3).gather(1, m.tensor([0, 1]))),
    "gather_index_range": E((RuntimeError, IndexError), ("gather", r"\b5\b", r"\b3\b"),
                            lambda m: m.zeros(2, 3).gather(1, m.tensor([[0], [5]]))),
    "index_dim0": E(IndexError, (r"index 5 is out of bounds for (dimension|axis) 0 with size 2", r"\[2, 3\]"),
                    lambda m: m.zeros(2, 3)[5]),
    "index_dim1": E(IndexError, (r"index 7 is out of bounds for (dimension|axis) 1 with size 3", r"\[2, 3\]"),
                    lambda m: m.zeros(2, 3)[0, 7]),
    "index_negative": E(IndexError, (r"index -4 is out of bounds for (dimension|axis) 0 with size 3",),
                        lambda m: m.zeros(3)[-4]),
    "index_tensor": E(IndexError, (r"index 5 is out of bounds for (dimension|axis) 0 with size 3",),
                      lambda m: m.zeros(3)[m.tensor([0, 5])]),
    "index_too_many": E(IndexError, ("too many indices", r"\b2\b", r"\b3\b"), lambda m: m.zeros(2, 3)[0, 0, 0]),
    "index_mask_shape": E(IndexError, ("mask", r"\[3\]", r"\[2\]"),
                          lambda m: m.zeros(2)[m.tensor([True, False, True])]),
    "index_float_tensor": E(IndexError, ("long, int, byte or bool", "float32|Float"), lambda m: m.zeros(3)[m.tensor([0.0])]),
    "setitem_shape": E(RuntimeError, ("shape|size", r"\[3\]", r"\[2\]"), lambda m: m.zeros(2).__setitem__(slice(None), m.ones(3))),
    "linear_features": E(RuntimeError, (r"4x5 and 3x2|mat1 and mat2", r"\b5\b", r"\b3\b"), _linear_features),
    "linear_functional_weight": E(RuntimeError, ("4x5", "2x3|3x2"), lambda m: m.nn.functional.linear(m.ones(4, 5), m.ones(3, 2))),
    "bilinear_sizes": E(RuntimeError, ("bilinear", "input1", r"\b2\b", r"\b3\b"),
                        lambda m: m.nn.functional.bilinear(m.ones(4, 2), m.ones(4, 5), m.ones(6, 3, 5))),
    "conv2d_channels": E(RuntimeError, (r"groups=1, weight of size \[4, 3, 3, 3\]", r"input\[1, 2, 8, 8\]", "3 channels"),
                         _conv_channels),
    "conv2d_input_dims": E(RuntimeError, ("conv2d", "3D|4D", r"\[8\]"),
                           lambda m: m.nn.functional.conv2d(m.ones(8), m.ones(1, 1, 3, 3))),
    "conv2d_kernel_too_large": E(RuntimeError, ("Kernel size", r"\(5 x 5\)|\(5, 5\)", r"\(3 x 3\)|\(3, 3\)"),
                                 lambda m: m.nn.functional.conv2d(m.ones(1, 1, 3, 3), m.ones(1, 1, 5, 5))),
    "max_pool_too_large": E(RuntimeError, ("max_pool2d|Output size", "too small|pad"),
                            lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 2, 2), 3)),
    "max_pool_padding": E(RuntimeError, ("pad should be at most half of effective kernel size", "pad=2"),
                          lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 8, 8), 3, padding=2)),
    "mse_size_warning": E(UserWarning, (r"target size \(Size\(\[2, 1\]\)\)", r"input size \(Size\(\[2\]\)\)"),
                          lambda m: m.nn.functional.mse_loss(m.ones(2), m.ones(2, 1))),
    "l1_size_warning": E(UserWarning, (r"target size", r"\[3, 1\]"), lambda m: m.nn.functional.l1_loss(m.ones(3), m.ones(3, 1))),
    "cross_entropy_target_shape": E((RuntimeError, ValueError), ("cross_entropy|nll_loss|target|batch", r"\b4\b", r"\b3\b"),
                                    lambda m: m.nn.functional.cross_entropy(m.ones(4, 5), m.tensor([0, 1, 2]))),
    "cross_entropy_class_range": E(IndexError, ("Target 7 is out of bounds",),
                                   lambda m: m.nn.functional.cross_entropy(m.ones(2, 5), m.tensor([0, 7]))),
    "nll_loss_1d_target": E((RuntimeError, ValueError), ("nll_loss|target", r"\[2, 3\]"),
                            lambda m: m.nn.functional.nll_loss(m.ones(2, 3), m.tensor([[0, 1], [1, 0]]))),
    "bce_shape": E(ValueError, ("target size", r"\[3\]", r"\[2\]|\[3, 1\]"),
                   lambda m: m.nn.functional.binary_cross_entropy(m.full((3,), 0.5), m.ones(3, 1))),
    "bce_logits_shape": E(ValueError, ("(?i)target size", r"\[3, 1\]", r"\[3\]"),
                          lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.ones(3), m.ones(3, 1))),
    "bce_out_of_range": E(RuntimeError, ("between 0 and 1",),
                          lambda m: m.nn.functional.binary_cross_entropy(m.full((2,), 1.5), m.ones(2))),
    "layer_norm_shape": E(RuntimeError, ("normalized_shape|layer_norm", r"\[4\]", r"\[2, 3\]"), _layernorm_shape),
    "batch_norm_features": E(RuntimeError, ("running_mean|batch_norm", r"\b4\b", r"\b3\b"), _batchnorm_features),
    "embedding_out_of_range": E(IndexError, ("index out of range|out of bounds", r"\b7\b", r"\b5\b"), _embedding_index),
    "lstm_input_size": E(RuntimeError, (r"input.size\(-1\) must be equal to input_size", "Expected 4, got 3"), _lstm_input_size),
    "one_hot_classes": E(RuntimeError, ("one_hot|Class values must be smaller than num_classes", r"\b3\b"),
                         lambda m: m.nn.functional.one_hot(m.tensor([0, 5]), 3)),
    "pad_odd_length": E((RuntimeError, ValueError), ("pad", "even|divisible by 2"),
                        lambda m: m.nn.functional.pad(m.ones(2, 2), (1, 2, 3))),
    "pad_reflect_too_wide": E(RuntimeError, ("pad", "reflect", "less than", r"\(5, 1\)", r"\[2, 5\]"),
                              lambda m: m.nn.functional.pad(m.ones(2, 5), (5, 1), mode="reflect")),
    "pad_reflect_rank": E(NotImplementedError, ("pad", "reflect", "padding size 4", "2D", r"\[2, 5\]"),
                          lambda m: m.nn.functional.pad(m.ones(2, 5), (1, 1, 1, 1), mode="reflect")),
    "pad_value_for_replicate": E(RuntimeError, ("pad", "replicate", "value"),
                                 lambda m: m.nn.functional.pad(m.ones(2, 5), (1, 1), mode="replicate", value=1.0)),
    "pad_unknown_mode": E(NotImplementedError, ("pad", "'mirror'"),
                          lambda m: m.nn.functional.pad(m.ones(2, 5), (1, 1), mode="mirror")),
    "pad_circular_wraps_twice": E(RuntimeError, ("circular", "more than once", r"\(6, 0\)", r"\[2, 5\]"),
                                  lambda m: m.nn.functional.pad(m.ones(2, 5), (6, 0), mode="circular")),
    "pad_crops_too_much": E(RuntimeError, ("pad", r"\(-3, -3\)", r"\[2, 5\]"),
                            lambda m: m.nn.functional.pad(m.ones(2, 5), (-3, -3))),
    "pad_float_widths": E(TypeError, ("pad", "tuple of ints", "float"),
                          lambda m: m.nn.functional.pad(m.ones(2, 5), (1.5, 1))),
    "circular_pad_layer_rank": E(ValueError, ("CircularPad2d", "3D or 4D", "2D"),
                                 lambda m: m.nn.CircularPad2d(1)(m.ones(3, 3))),
    "conv_reflect_padding_too_wide": E(RuntimeError, ("reflect", r"\(3, 3\)", r"\[1, 1, 3, 3\]"),
                                       lambda m: m.nn.Conv2d(1, 1, 3, padding=3, padding_mode="reflect")(
                                           m.ones(1, 1, 3, 3))),
    # ============================================================ dims
    "dim_sum": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=2), "sum"), lambda m: m.zeros(2, 3).sum(2)),
    "dim_mean_negative": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=-3), "mean"), lambda m: m.zeros(2, 3).mean(-3)),
    "dim_size": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=2),), lambda m: m.zeros(2, 3).size(2)),
    "dim_transpose": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=3), "transpose"), lambda m: m.zeros(2, 3).transpose(0, 3)),
    "dim_unsqueeze": E(IndexError, (DIM_RANGE.format(lo=-3, hi=2, got=4), "unsqueeze"), lambda m: m.zeros(2, 3).unsqueeze(4)),
    "dim_cat": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=2), "cat"), lambda m: m.cat([m.zeros(2, 3)] * 2, dim=2)),
    "dim_stack": E(IndexError, (DIM_RANGE.format(lo=-3, hi=2, got=3), "stack"), lambda m: m.stack([m.zeros(2, 3)] * 2, dim=3)),
    "dim_softmax": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=2), "softmax"), lambda m: m.zeros(2, 3).softmax(2)),
    "dim_log_softmax": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=-3), "log_softmax"),
                         lambda m: m.zeros(2, 3).log_softmax(-3)),
    "dim_argmax": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=2), "argmax"), lambda m: m.zeros(2, 3).argmax(2)),
    "dim_max": E(IndexError, (DIM_RANGE.format(lo=-1, hi=0, got=1), "max"), lambda m: m.zeros(3).max(1)),
    "dim_var": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=5), "var"), lambda m: m.zeros(2, 3).var(5)),
    "dim_logsumexp": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=2), "logsumexp"), lambda m: m.zeros(2, 3).logsumexp(2)),
    "dim_flip": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=2), "flip"), lambda m: m.zeros(2, 3).flip(2)),
    "dim_split": E(IndexError, (DIM_RANGE.format(lo=-1, hi=0, got=1), "split"), lambda m: m.zeros(3).split(1, dim=1)),
    "dim_gather": E(IndexError, (DIM_RANGE.format(lo=-1, hi=0, got=1), "gather"), lambda m: m.zeros(3).gather(1, m.tensor([0]))),
    "dim_repeated": E(RuntimeError, ("sum", "appears multiple times", r"\(0, 0\)|0"), lambda m: m.zeros(2, 3).sum((0, 0))),
    "dim_float": E(TypeError, ("sum|dim", "float"), lambda m: m.zeros(2, 3).sum(0.5)),
    "dim_norm": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=2), "norm"), lambda m: m.zeros(2, 3).norm(dim=2)),
    "dim_nn_softmax": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=3), "softmax"), lambda m: m.nn.Softmax(dim=3)(m.ones(2, 2))),
    "dim_flatten_module": E(IndexError, (DIM_RANGE.format(lo=-2, hi=1, got=4), "flatten"), lambda m: m.nn.Flatten(4)(m.ones(2, 2))),
    "softmax_no_dim": E(UserWarning, ("Implicit dimension choice for softmax",), lambda m: m.nn.functional.softmax(m.ones(2, 2))),
    # ============================================================ dtypes
    "mean_of_ints": E(RuntimeError, ("mean", "Long|int64"), lambda m: m.tensor([1, 2]).mean()),
    "softmax_of_ints": E((RuntimeError, NotImplementedError), ("softmax", "Long|int64"), lambda m: m.tensor([1, 2]).softmax(0)),
    "var_of_ints": E(RuntimeError, ("var|std", "Long|int64"), lambda m: m.tensor([1, 2]).var()),
    "matmul_dtypes": E(RuntimeError, ("float32|Float", "float64|Double"), lambda m: m.zeros(2, 2) @ m.zeros(2, 2, dtype=m.float64)),
    "matmul_int_float": E(RuntimeError, ("Long|int64", "Float|float32"), lambda m: m.ones(2, 2, dtype=m.int64) @ m.ones(2, 2)),
    "linear_int_input": E(RuntimeError, ("Long|int64", "Float|float32"), lambda m: _linear(m, 2, 2)(m.ones(1, 2, dtype=m.int64))),
    "conv2d_int_input": E(RuntimeError, ("conv2d", "floating|Long|int64"),
                          lambda m: m.nn.functional.conv2d(m.ones(1, 1, 3, 3, dtype=m.int64), m.ones(1, 1, 2, 2))),
    "bitwise_and_floats": E(RuntimeError, ("bitwise_and", "Float|float32"), lambda m: m.ones(2) & m.ones(2)),
    "bitwise_or_float_int": E(RuntimeError, ("bitwise_or", "Float|float32"), lambda m: m.ones(2) | m.tensor([1, 2])),
    "bitwise_not_float": E(TypeError, ("bitwise_not|~", "Float|float32"), lambda m: ~m.ones(2)),
    "bool_subtraction": E(RuntimeError, ("(?i)subtract", "bool"), lambda m: m.tensor([True, False]) - m.tensor([False, False])),
    "bool_negation": E(RuntimeError, ("(?i)negat", "bool"), lambda m: -m.tensor([True, False])),
    "nll_loss_float_target": E(RuntimeError, ("nll_loss|target", "Float|float32", "Long|int64"),
                               lambda m: m.nn.functional.nll_loss(m.ones(2, 3), m.tensor([0.0, 1.0]))),
    "embedding_float_indices": E(RuntimeError, ("embedding|indices", "Long|Int|int64", "Float|float32"),
                                 lambda m: m.nn.functional.embedding(m.tensor([0.0, 1.0]), m.ones(3, 2))),
    "gather_float_index": E(RuntimeError, ("gather", "int64|Long", "float32|Float"),
                            lambda m: m.zeros(2, 3).gather(1, m.tensor([[0.0]]))),
    "one_hot_float": E(RuntimeError, ("one_hot", "Long|int64", "Float|float32"),
                       lambda m: m.nn.functional.one_hot(m.tensor([0.0, 1.0]), 3)),
    "int_negative_power": E(RuntimeError, ("Integers to negative integer powers are not allowed",),
                            lambda m: m.tensor([2, 3]) ** -1),
    "in_place_result_type": E(RuntimeError, ("float32|Float", "can't be cast to the desired output type", "int64|Long"),
                              lambda m: m.tensor([1, 2]).add_(1.5)),
    "in_place_tensor_result_type": E(RuntimeError, ("float32|Float", "can't be cast", "int64|Long"),
                                     lambda m: m.tensor([1, 2]).mul_(m.ones(2))),
    "where_int_condition": E(RuntimeError, ("where expected condition to be a boolean tensor", "int64|Long"),
                             lambda m: m.where(m.tensor([1, 0]), m.zeros(2), m.ones(2))),
    "where_float_condition": E(RuntimeError, ("where expected condition to be a boolean tensor", "float32|Float"),
                               lambda m: m.where(m.tensor([1.0, 0.0]), m.zeros(2), m.ones(2))),
    "masked_fill_float_mask": E(RuntimeError, ("masked_fill|where|condition", "bool|Bool", "float32|Float"),
                                lambda m: m.zeros(2).masked_fill(m.ones(2), 1.0)),
    "cross_entropy_int_input": E((RuntimeError, NotImplementedError), ("log_softmax|cross_entropy", "Long|int64"),
                                 lambda m: m.nn.functional.cross_entropy(m.ones(2, 3, dtype=m.int64), m.tensor([0, 1]))),
    "backward_int": E(RuntimeError, ("floating point|does not require grad",), lambda m: m.tensor([1, 2]).sum().backward()),
    "operand_string": E(TypeError, ("str",), lambda m: m.zeros(2) + "a"),
    "operand_string_reflected": E(TypeError, ("str",), lambda m: "a" * m.zeros(2)),
    "operand_none": E(TypeError, ("NoneType",), lambda m: m.zeros(2) * None),
    "operand_object": E(TypeError, ("object",), lambda m: m.zeros(2) - object()),
    "operand_list": E(TypeError, ("list",), lambda m: m.zeros(2) + [1, 2]),
    "operand_complex": E(TypeError, ("complex",), lambda m: m.zeros(2) + 1j,
                         torch=Differs("tinygrad_lab has no complex dtypes; PyTorch promotes to complex64", None)),

    # ============================================================ issue 16: silent answers and unclear errors
    "int_floordiv_zero": E(RuntimeError, ("ZeroDivisionError", "floor_divide", "int64"), lambda m: m.tensor([3, 4]) // 0),
    "int_mod_zero": E(RuntimeError, ("ZeroDivisionError", "remainder", r"\[2\]"),
                      lambda m: m.tensor([3, 4]) % m.tensor([1, 0])),
    "int_trunc_div_zero": E(RuntimeError, ("ZeroDivisionError", "div"),
                            lambda m: m.tensor([3, 4]).div(0, rounding_mode="trunc")),
    "cat_tensor": E(TypeError, (r"cat\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not Tensor",
                                r"\[2, 3\]"), lambda m: m.cat(m.zeros(2, 3))),
    "stack_tensor": E(TypeError, (r"stack\(\): argument 'tensors'", "not Tensor"), lambda m: m.stack(m.zeros(2, 3))),
    "cat_0d": E(RuntimeError, (r"zero-dimensional tensor \(at position 0\) cannot be concatenated",),
                lambda m: m.cat([m.tensor(1.0), m.tensor(2.0)])),
    "min_empty_dim": E(IndexError, (r"min\(\): Expected reduction dim 0 to have non-zero size", r"\[0, 3\]"),
                       lambda m: m.zeros(0, 3).min(dim=0)),
    "argmax_empty": E(IndexError, (r"argmax\(\): Expected reduction dim to be specified", r"\[0\]"),
                      lambda m: m.zeros(0).argmax()),
    "amax_empty_dim": E(IndexError, (r"amax\(\): Expected reduction dim 0 to have non-zero size",),
                        lambda m: m.zeros(0, 3).amax(0)),
    "max_empty": E(RuntimeError, (r"max\(\): Expected reduction dim to be specified",), lambda m: m.zeros(0).max()),
    "std_one_element": E(UserWarning, (r"std\(\): degrees of freedom is <= 0", r"\[1\]"), lambda m: m.tensor([1.0]).std()),
    "var_one_element": E(UserWarning, (r"var\(\): degrees of freedom is <= 0",), lambda m: m.zeros(3, 1).var(1)),
    "linear_ndarray": E(TypeError, (NOT_TENSOR.format(op="linear", what=r"numpy\.ndarray"),),
                        lambda m: _linear(m, 3, 2)(np.zeros((1, 3)))),
    "linear_list": E(TypeError, (NOT_TENSOR.format(op="linear", what="list"),), lambda m: _linear(m, 3, 2)([[0.0] * 3])),
    "relu_list": E(TypeError, (NOT_TENSOR.format(op="relu", what="list"),), lambda m: m.nn.functional.relu([1.0])),
    "matmul_ndarray": E(TypeError, (NOT_TENSOR.format(op="matmul", what=r"numpy\.ndarray"),),
                        lambda m: m.matmul(m.zeros(2, 2), np.eye(2))),
    "mse_ndarray_target": E(TypeError, (NOT_TENSOR.format(op="mse_loss", what=r"numpy\.ndarray"),),
                            lambda m: m.nn.functional.mse_loss(m.zeros(2), np.zeros(2))),
    "logsigmoid_ndarray": E(TypeError, (NOT_TENSOR.format(op="logsigmoid", what=r"numpy\.ndarray"),),
                            lambda m: m.nn.functional.logsigmoid(np.zeros(2))),
    "conv2d_ndarray": E(TypeError, (NOT_TENSOR.format(op="conv2d", what=r"numpy\.ndarray"),),
                        lambda m: m.nn.functional.conv2d(np.zeros((1, 1, 3, 3)), m.zeros(1, 1, 2, 2))),
    "cat_ndarray_element": E(TypeError, (r"cat\(\): expected Tensor as element 1",),
                             lambda m: m.cat([m.zeros(2), np.zeros(2)])),
    "embedding_negative": E(IndexError, ("index out of range in self", "-1", r"\b5\b"),
                            lambda m: (m.manual_seed(0), m.nn.Embedding(5, 2)(m.tensor([-1])))),
    "from_numpy_read_only_write": E(RuntimeError, ("read-only", "add_", r"\[3\]"), _read_only_write,
                                    torch=Differs("PyTorch warns that the array is not writable and then writes "
                                                  "into memory NumPy promised not to change", UserWarning)),
    # ============================================================ autograd
    "backward_twice": E(RuntimeError, ("backward through the graph a second time", "MulBackward"), _backward_twice),
    "saved_input_modified": E(RuntimeError, ("modified by an inplace operation", r"\[2\]", "version 1"),
                              _saved_input_modified),
    "saved_output_modified": E(RuntimeError, ("modified by an inplace operation", "Exp"), _saved_output_modified),
    "iadd_leaf": E(RuntimeError, ("leaf Variable that requires grad", "in-place"), _iadd_leaf),
    "leaf_setitem": E(RuntimeError, ("leaf Variable that requires grad", "in-place"), _leaf_view_in_place),
    "hook_shape": E(RuntimeError, ("hook '<lambda>' has changed the size of value", r"\[2\]", r"\[1\]"), _hook_shape),
    "hook_float": E(TypeError, ("hook", "returned 'float'"), _hook_float),
    "hook_dtype": E(RuntimeError, ("hook '<lambda>' has changed the type of value", "float32", "float64"), _hook_dtype),
    "grad_unused_input": E(RuntimeError, ("appears to not have been used in the graph", "allow_unused"),
                           _grad_unused_input),
    "grad_non_scalar": E(RuntimeError, ("grad can be implicitly created only for scalar outputs", r"\[2\]"),
                         _grad_non_scalar),
    "grad_input_without_grad": E(RuntimeError, ("does not require grad",), _grad_input_without_grad),
    "backward_gradient_shape": E(RuntimeError, ("Mismatch in shape", r"\[3, 2\]", r"\[2, 3\]"), _backward_gradient_shape),
    "backward_gradient_device": E(RuntimeError, (OTHER_DEVICE,), _backward_gradient_device),
    "function_instance_called": E(RuntimeError, ("non-static forward method is deprecated", r"Double\.apply"),
                                  _function_instance_called),
    "function_gradient_count": E(RuntimeError, ("TwoBackward returned an incorrect number of gradients",
                                                r"expected 1, got 2"), _function_gradient_count),
    "function_gradient_shape": E(RuntimeError, ("WrongBackward returned an invalid gradient at index 0", r"\[3\]"),
                                 _function_gradient_shape),
    "backward_empty_inputs": E(RuntimeError, (r"'inputs'.*cannot be empty",), _backward_empty_inputs),
    "non_leaf_grad": E(UserWarning, (r"not a leaf.*retain_grad\(\)", "retain_grad"),
                       _non_leaf_grad),
    "non_leaf_requires_grad_false": E(RuntimeError, ("requires_grad flags of leaf variables", "detach"),
                                      _non_leaf_requires_grad_false),
    "deepcopy_non_leaf": E(RuntimeError, ("graph leaves", "deepcopy"), _deepcopy_non_leaf),
    "grad_wrong_shape": E(RuntimeError, ("grad", r"\(3, 2\)|\[3, 2\]", r"\(2, 3\)|\[2, 3\]"), _grad_wrong_shape),
    "grad_wrong_dtype": E(RuntimeError, ("grad", "float64|double", "float32|Float"), _grad_wrong_dtype),
    "grad_wrong_device": E(RuntimeError, ("grad", OTHER_DEVICE), _grad_wrong_device),
    "grad_not_tensor": E(TypeError, ("assigned grad", "Tensor or None", "list"), _grad_not_tensor),
    "backward_in_no_grad": E(RuntimeError, ("does not require grad and does not have a grad_fn",), _backward_in_no_grad),
    "gradcheck_float32": E(UserWarning, ("float32|double precision",), _gradcheck_float32),
    # ============================================================ modules
    "state_dict_missing": E(RuntimeError, ("Missing key", '"bias"'), _state_dict_missing),
    "state_dict_unexpected": E(RuntimeError, ("Unexpected key", '"scale"'), _state_dict_unexpected),
    "state_dict_size": E(RuntimeError, ("size mismatch for weight", r"\[2, 2\]", r"\[3, 2\]"), _state_dict_size),
    "state_dict_not_dict": E(TypeError, ("Expected state_dict to be dict-like", "list"), _state_dict_not_dict),
    "assign_parameter_int": E(TypeError, ("cannot assign 'int' as parameter 'weight'",), _assign_parameter_int),
    "register_parameter_tensor": E(TypeError, ("parameter 'scale'", "Parameter or None"), _register_parameter_tensor),
    "register_parameter_dotted": E(KeyError, (r"\.", "a.b"), _register_parameter_dotted),
    "register_buffer_list": E(TypeError, ("cannot assign 'list' object to buffer 'stats'",), _register_buffer_list),
    "add_module_not_module": E(TypeError, ("is not a Module subclass",), _add_module_not_module),
    "module_list_append": E(TypeError, ("int is not a Module subclass",), _module_list_append),
    "sequential_index": E(IndexError, ("index 3 is out of range",), _sequential_index),
    "module_without_forward": E(NotImplementedError, (r"Module \[Empty\] is missing the required \"forward\"",),
                                _no_forward),
    "module_to_bogus_device": E(RuntimeError, ("gpu", "cpu"), _module_to_bogus),
    "module_call_extra_argument": E(TypeError, ("forward", "positional arguments"),
                                    lambda m: _linear(m, 2, 2)(m.ones(1, 2), m.ones(1, 2))),
    "mse_bad_reduction": E(ValueError, ("avg is not a valid value for reduction",), _mse_bad_reduction),
    "lstm_input_size_call": E(RuntimeError, (r"Expected 4, got 3",), _lstm_input_size),
    # ============================================================ optimizers
    "sgd_non_leaf": E(ValueError, ("can't optimize a non-leaf Tensor",), _sgd_non_leaf),
    "sgd_duplicate_group": E(ValueError, ("more than one parameter group",), _sgd_duplicate_group),
    "sgd_state_groups": E(ValueError, ("different number of parameter groups",), _sgd_state_groups),
    "scheduler_not_optimizer": E(TypeError, ("str is not an Optimizer",), _scheduler_not_optimizer),
    "sgd_negative_lr": E(ValueError, ("Invalid learning rate: -1",), lambda m: m.optim.SGD(_params(m), lr=-1)),
    "adam_beta": E(ValueError, ("Invalid beta parameter at index 0: 1.5",),
                   lambda m: m.optim.Adam(_params(m), betas=(1.5, 0.9))),
    "adam_eps": E(ValueError, ("Invalid epsilon value: -1.0",), lambda m: m.optim.Adam(_params(m), eps=-1.0)),
    "sgd_empty": E(ValueError, ("empty parameter list",), lambda m: m.optim.SGD([], lr=0.1)),
    "sgd_one_tensor": E(TypeError, ("iterable of Tensors or dicts",), lambda m: m.optim.SGD(m.nn.Parameter(m.ones(2)), lr=0.1)),
    "sgd_negative_momentum": E(ValueError, ("Invalid momentum value: -0.5",),
                               lambda m: m.optim.SGD(_params(m), lr=0.1, momentum=-0.5)),
    "sgd_nesterov_without_momentum": E(ValueError, ("Nesterov momentum requires a momentum",),
                                       lambda m: m.optim.SGD(_params(m), lr=0.1, nesterov=True)),
    # ============================================================ data loading
    "tensor_dataset_sizes": E(ValueError, ("Size mismatch between tensors", r"\[3, 2\]", r"\[4\]"), _tensor_dataset_sizes,
                              torch=Differs("PyTorch asserts (AssertionError, gone under python -O); a ValueError "
                                            "always runs and names the shapes", AssertionError)),
    "random_split_lengths": E(ValueError, ("Sum of input lengths does not equal the length of the input dataset",),
                              _random_split_lengths),
    "collate_unequal": E(RuntimeError, (r"stack expects each tensor to be equal size, but got \[2\]",), _collate_unequal),
    "collate_object": E(TypeError, ("default_collate", "object"), _collate_object),
    "loader_batch_zero": E(ValueError, ("batch_size should be a positive integer value", "batch_size=0"),
                           lambda m: _loader(m, batch_size=0)),
    "loader_batch_float": E(ValueError, ("batch_size should be a positive integer value", r"2\.5"),
                            lambda m: _loader(m, batch_size=2.5)),
    "loader_negative_workers": E(ValueError, ("num_workers option should be non-negative",),
                                 lambda m: _loader(m, num_workers=-1)),
    "loader_sampler_and_shuffle": E(ValueError, ("sampler option is mutually exclusive with shuffle",),
                                    lambda m: _loader(m, shuffle=True, sampler=[0, 1])),
    # ============================================================ files
    "load_missing": E(FileNotFoundError, ("missing.pt",), _load_missing),
    "load_directory": E(IsADirectoryError, ("misuse-",), _load_directory),
    "save_missing_folder": E(FileNotFoundError, ("no/such/folder", "does not exist"), _save_missing_folder,
                             torch=Differs("PyTorch raises a RuntimeError; FileNotFoundError (an OSError) is what "
                                           "open() raises and what a learner's except clause expects", RuntimeError)),
    "save_to_directory": E(IsADirectoryError, ("it is a directory",), _save_to_directory,
                           torch=Differs("PyTorch raises a RuntimeError from its C++ writer", RuntimeError)),
    "save_text_mode": E(TypeError, ("binary mode",), _save_text_mode),
    "load_text_mode": E(TypeError, ("binary mode",), _load_text_mode),
    "load_text_file": E(RuntimeError, ("not a zip archive", "notes.txt"), _load_text,
                        torch=Differs("PyTorch reports an UnpicklingError about weights_only for a text file",
                                      Exception)),
    "load_truncated": E(RuntimeError, ("damaged or truncated",), _load_truncated),
    "load_empty": E(RuntimeError, ("the file is empty",), _load_empty,
                    torch=Differs("PyTorch raises a bare EOFError with no message", EOFError)),
    "load_bad_map_location": E(RuntimeError, ("map_location", "gpu"), _load_bad_map_location),
}

"""All of a model's parameters as one flat vector, and back (as torch.nn.utils)."""
from __future__ import annotations

from ...autograd.tensor_base import TensorBase
from ...ops import movement as mv

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _same_device(params: list) -> None:
    devices = {str(p.device) for p in params}
    if len(devices) > 1:
        raise TypeError(f"Found two parameters on different devices, this is currently not supported "
                        f"(devices: {sorted(devices)}).")


def parameters_to_vector(parameters) -> TensorBase:
    """One 1-D tensor holding every parameter's values, flattened in order (differentiable: a cat)."""
    params = list(parameters)
    _same_device(params)
    return mv.cat([mv.reshape(p, (-1,)) for p in params])


def vector_to_parameters(vec: TensorBase, parameters) -> None:
    """Point each parameter's `.data` at its slice of vec (the inverse of parameters_to_vector); as in
    PyTorch the parameters then share vec's memory."""
    if not isinstance(vec, TensorBase):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    _same_device(params)
    needed = sum(p.numel() for p in params)
    if vec.dim() != 1 or vec.numel() != needed:
        raise RuntimeError(f"vector_to_parameters: expected a 1-D vector of {needed} elements for parameters of "
                           f"{needed} elements, got shape {list(vec.shape)}")
    pointer = 0
    for p in params:
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n

"""tinygrad_lab.nn.utils: gradient clipping, parameters as one vector, padding and packing sequences,
parametrizations (a tensor computed from the parameter really trained)."""
from . import parametrizations, parametrize, rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["parametrizations", "parametrize", "rnn", "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters"]

"""tinygrad_lab.nn: modules, parameters, initialisation and the functional interface."""
from . import functional, init
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from . import utils  # noqa: E402  (after the modules: RNNs read utils.rnn's PackedSequence)
from . import parallel  # noqa: E402  (builds on the modules)
from .parallel import DataParallel

__all__ = ["functional", "init", "Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "utils",
           "parallel", "DataParallel"] + list(_modules_all)

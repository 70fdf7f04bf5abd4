"""Op families: each op's forward (on backend arrays) and backward (with ops) sit together.
Every built-in op subclasses `Op` (ops/op.py)."""
import warnings

# inf and nan are legitimate results (log(0), 1/0, sqrt'(0)); PyTorch returns them
# silently, so NumPy's RuntimeWarnings from inside our ops would only point users at
# our internals. Scoped to our op modules: NumPy's global error state is left alone.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"tinygrad_lab\.ops\.")

from . import (broadcast, elementwise, indexing, inplace, linalg, movement, promotion, reduce, shapes,  # noqa: E402,F401
               transfer)
from .op import Op  # noqa: E402,F401

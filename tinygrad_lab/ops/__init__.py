"""Op families: each op's forward (on backend arrays) and backward (with ops) sit together."""
from . import elementwise, indexing, inplace, linalg, movement, reduce, transfer  # noqa: F401

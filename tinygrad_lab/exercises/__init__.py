"""Classroom exercises: the checks their graded cells call, and `release` (an nbgrader course folder
with the student versions).

The exercise notebooks live in notebooks/exercises/; `tinygrad-lab exercises release --course DIR`
lays out DIR for nbgrader and runs nbgrader's generate_assignment on them.
"""
from .checks import (check_bug_report, check_classifier, check_fixed_op, check_function_backward, check_gradcheck,
                     check_linear, check_linear_init, check_momentum_helps, check_pairwise_sq_dists,
                     check_sgd_momentum, check_speedup)

__all__ = ["check_bug_report", "check_classifier", "check_fixed_op", "check_function_backward", "check_gradcheck",
           "check_linear", "check_linear_init", "check_momentum_helps", "check_pairwise_sq_dists",
           "check_sgd_momentum", "check_speedup"]

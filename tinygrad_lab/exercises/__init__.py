"""Classroom exercises: the checks their graded cells call, and `release` (the student versions).

The exercise notebooks live in notebooks/exercises/; `tinygrad-lab exercises release`
writes copies with the solutions removed, in nbgrader's conventions.
"""
from .checks import (check_accuracy, check_bug_report, check_function_backward, check_linear, check_sgd_momentum,
                     check_speedup)

__all__ = ["check_accuracy", "check_bug_report", "check_function_backward", "check_linear", "check_sgd_momentum",
           "check_speedup"]

"""Classroom exercises: the checks their graded cells call, and `release` (an nbgrader course folder
with the student versions).

The exercise notebooks live in notebooks/exercises/: the lessons' exercises (NN_*.ipynb, checks.py and
lessons.py) and the build-it track (build_NN_*.ipynb, build.py), where the learner writes a piece of the
engine that the engine then runs (tinygrad_lab.seams). notebooks/COURSE.md maps them to the lessons.
`tinygrad-lab exercises release --course DIR` lays out DIR for nbgrader and runs nbgrader's
generate_assignment on them.
"""
from .build import (check_accumulate, check_adam_step, check_backward_order, check_batch_sampler, check_evaluate,
                    check_fetch_batch, check_grad_check, check_im2col, check_layer_norm, check_matmul_backward,
                    check_numerical_grad, check_sgd_step, check_sigmoid_function, check_sigmoid_in_engine,
                    check_train_epoch, check_unbroadcast, check_unbroadcast_in_engine, check_walk_in_engine)
from .checks import (check_bug_report, check_classifier, check_fixed_op, check_function_backward, check_gradcheck,
                     check_linear, check_linear_init, check_momentum_helps, check_pairwise_sq_dists,
                     check_sgd_momentum, check_speedup)
from .lessons import (check_attention, check_data_parallel, check_loss_gradient, check_resume, check_rnn,
                      check_run_until_settled, check_tensorboard_logging, check_time_per_call, check_unroll)

__all__ = ["check_accumulate", "check_adam_step", "check_attention", "check_backward_order", "check_batch_sampler",
           "check_bug_report", "check_classifier", "check_data_parallel", "check_evaluate", "check_fetch_batch",
           "check_fixed_op", "check_function_backward", "check_grad_check", "check_gradcheck", "check_im2col",
           "check_layer_norm", "check_linear", "check_linear_init", "check_loss_gradient", "check_matmul_backward",
           "check_momentum_helps", "check_numerical_grad", "check_pairwise_sq_dists", "check_resume", "check_rnn",
           "check_run_until_settled", "check_sgd_momentum", "check_sgd_step", "check_sigmoid_function",
           "check_sigmoid_in_engine", "check_speedup", "check_tensorboard_logging", "check_time_per_call",
           "check_train_epoch", "check_unbroadcast", "check_unbroadcast_in_engine", "check_unroll",
           "check_walk_in_engine"]

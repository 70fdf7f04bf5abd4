"""inf/nan results come back silently, as in PyTorch, without muting NumPy for the user.

Run in a fresh interpreter with -W error (pytest installs warning filters of its
own for each test, which would hide what a user sees)."""
import subprocess
import sys

PROGRAM = """
import numpy as np
import tinygrad_lab as tl
x = tl.tensor([0.0, 1.0, -1.0], requires_grad=True)
y = x.log()
y[:2].sum().backward()
z = x.sqrt() / x
assert y[:2].tolist() == [-float("inf"), 0.0] and np.isnan(y[2].item()) and np.isnan(z[0].item())
assert x.grad.tolist() == [float("inf"), 1.0, 0.0]
print("ops: silent")
np.log(np.zeros(1))  # the user's own NumPy code: -W error turns its warning into an exception
"""


def test_ops_are_silent_and_user_numpy_still_warns():
    run = subprocess.run([sys.executable, "-W", "error", "-c", PROGRAM], capture_output=True, text=True)
    assert "ops: silent" in run.stdout, run.stderr
    assert run.returncode != 0 and "RuntimeWarning: divide by zero encountered in log" in run.stderr

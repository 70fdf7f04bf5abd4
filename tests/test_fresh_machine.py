"""A learner's program on a machine that has nothing set up: a $HOME that cannot exist, the C locale, a strict umask,
an unrelated current folder, a clock just after boot. Run in a fresh interpreter, so no state of the
test session (imports, caches, matplotlib's config) helps it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = r"""
import os, time
time.monotonic = lambda: 1.0  # booted a second ago
import numpy as np
import tinygrad_lab as tl
from tinygrad_lab import nn
from tinygrad_lab.widgets.training import LiveLoss, loss_curve_png

tl.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt = tl.optim.SGD(model.parameters(), lr=0.1)
x, y = tl.randn(32, 2), tl.randn(32, 1)
live = LiveLoss(total=5, every=30)  # longer than the machine has been up
for _ in range(5):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    live.update(loss)
assert live.values, "the first value was never drawn"
assert loss_curve_png(live.values).startswith(b"\x89PNG")
tl.save(model.state_dict(), "model.pt")
mode = os.stat("model.pt").st_mode & 0o777
assert mode & 0o077 == 0, oct(mode)  # the umask is respected
back = tl.load("model.pt")
assert sorted(back) == sorted(model.state_dict())
assert [f for f in os.listdir(".") if f != "model.pt"] == [], os.listdir(".")
print("fresh machine: ok")
"""


def test_a_training_step_save_and_live_loss_on_a_bare_machine(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    home = blocker / "home"  # can never be created (its parent is a file), even by root
    work = tmp_path / "work"
    work.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(ROOT),
        "HOME": str(home),
        "LANG": "C",
        "LC_ALL": "C",
        "TMPDIR": str(tmp_path),
        "MPLBACKEND": "Agg",
    }
    run = subprocess.run([sys.executable, "-c", PROGRAM], cwd=work, env=env, capture_output=True, text=True,
                         timeout=300, preexec_fn=lambda: os.umask(0o077))
    assert "fresh machine: ok" in run.stdout, run.stderr[-3000:]

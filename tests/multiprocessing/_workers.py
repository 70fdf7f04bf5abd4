"""Functions run in child processes (importable, so the spawn start method can find them)."""
import os


def write_rank(i, out):
    out[i] = float(i + 1)


def fail_on_rank_one(i):
    if i == 1:
        raise ValueError("rank 1 failed on purpose")


def exit_hard(i):
    os._exit(3)

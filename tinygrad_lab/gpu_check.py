"""The GPU check: everything that needs real NVIDIA hardware, in one command, results in one folder.

    python3 -m tinygrad_lab.gpu_check OUT_DIR      # from a checkout; or: make gpu-check OUT=OUT_DIR

Made for a machine that has CuPy, PyTorch, NumPy and pytest but maybe nothing else of the
project's dependencies (no virtualenv, no network): it runs from the source tree with the
python that starts it, and each step says what it lacks instead of failing the rest.

Steps (each one's output in OUT_DIR/<step>.txt, the statuses in OUT_DIR/summary.json):
  environment  Python, NumPy, CuPy, PyTorch versions, nvidia-smi, tinygrad_lab.cuda's verdict
  tests        the CUDA-parametrised tests (pytest -k cuda, pyproject's addopts overridden, since
               they name nbval options; test files whose imports are missing are reported, not fatal)
  bench        tinygrad-lab bench on cpu,cuda: lsq at d = 1024..8192, then the MLP and CNN steps
  lesson06     notebooks/06_cpu_vs_gpu.ipynb executed (with nbclient when it is installed), saved
Without a GPU it writes the environment and "no GPU: <why>" and exits 0 without running the rest.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "notebooks" / "06_cpu_vs_gpu.ipynb"
BENCH = [["--workload", "lsq", "--sizes", "1024,2048,4096,8192"], ["--workload", "mlp,cnn"]]


def _run(cmd: list, out: Path, timeout: float) -> dict:
    """Run one step's command, its output into `out`; never raises."""
    t0 = time.monotonic()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    try:
        run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        text, code = run.stdout + run.stderr, run.returncode
    except subprocess.TimeoutExpired as e:
        text, code = f"{e.stdout or ''}{e.stderr or ''}\n!! timed out after {timeout} s", -1
    out.write_text(f"$ {' '.join(map(str, cmd))}\n{text}", encoding="utf-8")
    return {"command": " ".join(map(str, cmd)), "exit_code": code, "seconds": round(time.monotonic() - t0, 1),
            "output": out.name, "status": "ok" if code == 0 else "failed"}


def environment() -> dict:
    """What this machine has: versions of the libraries that matter, and whether CUDA is usable."""
    info: dict = {"python": sys.version.split()[0], "executable": sys.executable}
    for name in ("numpy", "cupy", "torch", "pytest", "scipy", "hypothesis", "nbclient", "threadpoolctl"):
        if importlib.util.find_spec(name) is None:
            info[name] = None
        else:
            mod = __import__(name)
            info[name] = getattr(mod, "__version__", "?")
    smi = shutil.which("nvidia-smi")
    if smi:
        run = subprocess.run([smi], capture_output=True, text=True, timeout=60)
        info["nvidia_smi"] = run.stdout.strip() or run.stderr.strip()
    from . import cuda
    info["cuda_available"], info["cuda_unavailable_reason"] = cuda.is_available(), cuda.unavailable_reason()
    return info


def _lesson_command(out_dir: Path) -> list:
    if importlib.util.find_spec("nbclient") and importlib.util.find_spec("nbformat"):
        code = ("import nbformat, nbclient, sys; nb = nbformat.read(sys.argv[1], as_version=4); "
                "nbclient.NotebookClient(nb, timeout=600, kernel_name='python3').execute(); "
                "nbformat.write(nb, sys.argv[2]); print('executed', sys.argv[1], '->', sys.argv[2])")
        return [sys.executable, "-c", code, str(LESSON), str(out_dir / LESSON.name)]
    # no Jupyter: the code cells run in one Python process, displays printed (magics skipped)
    code = ("import json, sys\nns = {'display': print}\nfor i, c in enumerate(json.load(open(sys.argv[1]))['cells']):\n"
            "    if c['cell_type'] == 'code':\n        src = ''.join(c['source'])\n"
            "        src = '\\n'.join(l for l in src.splitlines() if not l.lstrip().startswith(('%', '!')))\n"
            "        print(f'--- cell {i}'); exec(compile(src, f'cell {i}', 'exec'), ns)\n")
    return [sys.executable, "-c", code, str(LESSON)]


def main(argv: list | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out_dir = Path(argv[0] if argv else os.environ.get("OUT") or "gpu-check").resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    env = environment()
    (out_dir / "environment.json").write_text(json.dumps(env, indent=2), encoding="utf-8")
    summary: dict = {"environment": "environment.json", "steps": {}}
    if not env["cuda_available"]:
        summary["status"] = f"no GPU: {env['cuda_unavailable_reason']}"
    else:
        steps = summary["steps"]
        steps["tests"] = _run([sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider", "-q",
                               "-rs", "--continue-on-collection-errors", "-k", "cuda", "tests"],
                              out_dir / "tests.txt", 3000)
        for i, args in enumerate(BENCH):
            steps[f"bench{i}"] = _run([sys.executable, "-m", "tinygrad_lab.cli", "bench", "--devices", "cpu,cuda",
                                       *args, "--no-progress", "--json", str(out_dir / f"bench{i}.json")],
                                      out_dir / f"bench{i}.txt", 1800)
        steps["lesson06"] = _run(_lesson_command(out_dir), out_dir / "lesson06.txt", 900)
        failed = [name for name, s in steps.items() if s["status"] != "ok"]
        summary["status"] = "ok" if not failed else f"failed: {', '.join(failed)}"
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"GPU check: {summary['status']} (results in {out_dir})")
    return 0 if summary["status"] == "ok" or summary["status"].startswith("no GPU") else 1


if __name__ == "__main__":
    sys.exit(main())

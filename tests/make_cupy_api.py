"""Regenerates tests/cupy_api.json: the names and signatures of CuPy's API, read from CuPy itself.

The stand-in device (tests/fake_cupy.py) offers only what this list holds, so code that calls a
NumPy-only function or keyword fails in CI as it would on a GPU. CuPy's wheels import on a machine
without a GPU, so no GPU is needed here:

    python tests/make_cupy_api.py            # downloads the wheels of every version in VERSIONS

For each version the wheel (and the two small packages CuPy imports) is pip-downloaded into a
temporary folder, installed there with --target, and introspected in a subprocess: public names of
the modules below, and for each callable its parameters (from `inspect.signature`, or from the
signature Cython embeds as the first line of a docstring), ufuncs' keyword arguments (probed: CuPy
names a wrong keyword before it touches the GPU), and the methods and attributes of the classes
below. The JSON keeps each version's list; the stand-in allows only what every version has.
"""
from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).with_name("cupy_api.json")
WHEEL = "cupy-cuda12x"
VERSIONS = {"13": "13.*", "14": "14.*"}  # the range the `cuda` extra allows (pyproject.toml)
IMPORT_DEPS = ["fastrlock>=0.5", "cuda-pathfinder>=1.3.4,<2"]  # what `import cupy` needs beyond NumPy
MODULES = ["cupy", "cupy.random", "cupy.linalg", "cupy.lib.stride_tricks", "cupyx", "cupyx.scipy.special"]
CLASSES = ["cupy.ndarray", "cupy.ufunc", "cupy.random.RandomState", "cupy.cuda.Device", "cupy.cuda.Event",
           "cupy.cuda.Stream", "cupy.cuda.MemoryPool", "cupy._core.flags.Flags"]
UFUNC_KWARGS = ["out", "dtype", "casting", "where", "order", "subok", "signature", "axes", "axis", "keepdims"]


def _params(sig: inspect.Signature) -> list[str]:
    """A signature as short strings: 'a', 'axis=' (has a default), '*args', '**kw', and the markers '/', '*'."""
    params = [p for p in sig.parameters.values() if p.name != "self"]
    out = []
    for i, p in enumerate(params):
        if p.kind is p.KEYWORD_ONLY and (i == 0 or params[i - 1].kind not in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)):
            out.append("*")
        if p.kind is p.VAR_POSITIONAL:
            out.append("*" + p.name)
        elif p.kind is p.VAR_KEYWORD:
            out.append("**" + p.name)
        else:
            out.append(p.name + ("=" if p.default is not p.empty else ""))
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind is not p.POSITIONAL_ONLY):
            out.append("/")
    return out


def _doc_signature(obj) -> inspect.Signature | None:
    """The signature Cython embeds as a docstring's first line, 'name(self, a, b=1) -> type'."""
    lines = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    m = re.match(r"^[\w.]+\((.*)\)(\s*->.*)?$", lines[0].strip()) if lines else None
    if not m:
        return None
    text = re.sub(r"\\\*", "*", m.group(1))
    text = re.sub(r"\b(?:int|str|object|bool|tuple|_Ops)\s+(?=\w)", "", text)  # Cython argument types
    try:
        scope: dict = {}
        exec(f"def f({re.sub(r'=([^,]+)', '=None', text)}): pass", scope)
        return inspect.signature(scope["f"])
    except SyntaxError:
        return None


def _signature(obj) -> list[str] | None:
    try:
        return _params(inspect.signature(obj))
    except (TypeError, ValueError):
        sig = _doc_signature(obj)
        return None if sig is None else _params(sig)


def _probe_ufunc_kwargs(cupy) -> list[str]:
    """The keywords cupy's ufuncs take: a wrong one is a TypeError before any GPU work."""
    ok = []
    for kw in UFUNC_KWARGS:
        try:
            cupy.add(1, 2, **{kw: None})
        except TypeError as e:
            if "Wrong arguments" in str(e):
                continue
        except Exception:  # noqa: BLE001  (no GPU: any other error means the keyword was accepted)
            pass
        ok.append(kw)
    return ok


def _entry(obj, cupy) -> dict:
    if isinstance(obj, cupy.ufunc):
        return {"kind": "ufunc", "nin": obj.nin, "nout": obj.nout}
    if inspect.ismodule(obj):
        return {"kind": "module"}
    if inspect.isclass(obj):
        return {"kind": "class"}
    if callable(obj):
        return {"kind": "function", "params": _signature(obj)}
    return {"kind": "constant"}


def introspect() -> dict:
    """Run inside an environment where `import cupy` gives the version to describe."""
    import importlib

    import cupy
    modules = {}
    for name in MODULES:
        mod = importlib.import_module(name)
        modules[name] = {n: _entry(getattr(mod, n), cupy) for n in sorted(dir(mod)) if not n.startswith("_")}
    classes = {}
    for path in CLASSES:
        mod, _, cls_name = path.rpartition(".")
        cls = getattr(importlib.import_module(mod), cls_name)
        members = {}
        for n in sorted(dir(cls)):
            dunder = n.startswith("__") and n.endswith("__")
            if n.startswith("_") and not (dunder and (path == "cupy.ndarray" or n == "__call__")):
                continue  # private names; dunders only of the array (its protocols) and calls
            attr = inspect.getattr_static(cls, n)
            kind = "method" if callable(attr) or isinstance(attr, (staticmethod, classmethod)) else "attribute"
            members[n] = {"kind": kind, "params": _signature(getattr(cls, n))} if kind == "method" else \
                {"kind": kind}
        classes[path] = members
    return {"version": cupy.__version__, "modules": modules, "classes": classes,
            "ufunc_call_kwargs": _probe_ufunc_kwargs(cupy),
            "flags": [n for n in ("c_contiguous", "f_contiguous", "owndata", "writeable", "aligned")
                      if hasattr(cupy._core.flags.Flags, n)]}


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args], check=True)


def build() -> dict:
    out = {"generated_by": "python tests/make_cupy_api.py", "wheel": WHEEL, "versions": {}}
    for major, spec in VERSIONS.items():
        with tempfile.TemporaryDirectory() as tmp:
            wheels, target = Path(tmp, "wheels"), Path(tmp, "site")
            _pip("download", "--no-deps", "-d", str(wheels), f"{WHEEL}=={spec}", *IMPORT_DEPS)
            _pip("install", "--no-deps", "--target", str(target), *map(str, sorted(wheels.iterdir())))
            res = subprocess.run([sys.executable, __file__, "--introspect"], check=True, capture_output=True,
                                 text=True, env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
            out["versions"][major] = json.loads(res.stdout)
            print(f"cupy {out['versions'][major]['version']}: "
                  f"{sum(map(len, out['versions'][major]['modules'].values()))} names", file=sys.stderr)
    return out


def _dump(obj, indent: str = "") -> str:
    """JSON with one line per name (a leaf dict or list stays on its line), so diffs read per name."""
    if not isinstance(obj, dict) or not any(isinstance(v, dict) for v in obj.values()):
        return json.dumps(obj, sort_keys=True)
    inner = indent + " "
    items = [f"{inner}{json.dumps(k)}: {_dump(v, inner)}" for k, v in sorted(obj.items())]
    return "{\n" + ",\n".join(items) + "\n" + indent + "}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--introspect"]:
        json.dump(introspect(), sys.stdout)
    else:
        OUT.write_text(_dump(build()) + "\n")
        print(f"wrote {OUT}", file=sys.stderr)

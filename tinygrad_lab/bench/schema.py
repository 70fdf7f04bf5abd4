"""The JSON schema of `tinygrad-lab bench --json` files, and a small validator for it.

The schema is standard JSON Schema (draft 2020-12), so any validator accepts it; `validate` here
implements just the subset it uses (type, enum, required, properties, additionalProperties,
items, minimum) so that checking a file needs no extra dependency.
"""
from __future__ import annotations

from typing import Any, Callable

SCHEMA_VERSION = 1

_NUM = {"type": ["number", "null"], "minimum": 0}
_INT = {"type": ["integer", "null"], "minimum": 0}
_STR = {"type": ["string", "null"]}

RECORD: dict[str, Any] = {
    "type": "object",
    "description": "one implementation of one case at one thread count",
    "required": ["workload", "variant", "size", "shape", "dtype", "impl", "device", "threads", "status", "reason",
                 "median_s", "min_s", "max_s", "repeats", "inner_loops", "floor", "ratio_to_floor",
                 "speedup_vs_numpy", "targets", "blas_threads", "torch_threads", "foreign_cpu"],
    "additionalProperties": False,
    "properties": {
        "workload": {"type": "string"},
        "variant": {"type": "string", "description": "which op or direction, '' when the workload has one"},
        "size": {"type": "integer", "minimum": 1},
        "shape": {"type": "string"},
        "dtype": {"type": "string"},
        "impl": {"type": "string"},
        "device": {"type": "string"},
        "threads": {"type": "integer", "minimum": 1},
        "status": {"enum": ["ok", "skipped", "error"]},
        "reason": _STR,
        "median_s": _NUM,
        "min_s": _NUM,
        "max_s": _NUM,
        "repeats": {"type": "integer", "minimum": 0},
        "inner_loops": _INT,
        "floor": {"type": "string", "description": "the implementation ratio_to_floor is taken to"},
        "ratio_to_floor": _NUM,
        "speedup_vs_numpy": _NUM,
        "targets": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["goal", "met"],
                "additionalProperties": False,
                "properties": {"goal": {"type": "string"}, "met": {"type": ["boolean", "null"]}},
            },
        },
        "blas_threads": _INT,
        "torch_threads": _INT,
        "foreign_cpu": _NUM,
        "launches_per_step": {**_INT, "description": "kernel launches of one step (where the device counts them)"},
        "syncs_per_step": {**_INT, "description": "device->host reads of one step (where the device counts them)"},
        "uploads_per_step": {**_INT, "description": "host->device copies of one step (where the device counts them)"},
        "peak_bytes_per_step": {**_INT, "description": "device memory peak of one step above what was held before"},
    },
}

ENVIRONMENT: dict[str, Any] = {
    "type": "object",
    "required": ["timestamp", "python", "platform", "cpu", "cpus", "numpy", "blas", "tinygrad_lab", "torch",
                 "cupy", "gpu", "harness_overhead_s"],
    "properties": {
        "timestamp": {"type": "string"},
        "python": {"type": "string"},
        "platform": {"type": "string"},
        "cpu": {"type": "string"},
        "cpus": {"type": "integer", "minimum": 1},
        "numpy": {"type": "string"},
        "blas": {"type": "array", "items": {"type": "object"}},
        "tinygrad_lab": _STR,
        "torch": _STR,
        "cupy": _STR,
        "gpu": {
            "type": "object",
            "required": ["available", "reason", "name"],
            "properties": {"available": {"type": "boolean"}, "reason": _STR, "name": _STR},
        },
        "harness_overhead_s": _NUM,
    },
}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "tinygrad-lab bench results",
    "type": "object",
    "required": ["schema_version", "environment", "records"],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"enum": [SCHEMA_VERSION]},
        "environment": ENVIRONMENT,
        "records": {"type": "array", "items": RECORD},
    },
}

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def errors(doc: Any, schema: dict[str, Any] = SCHEMA, path: str = "$") -> list[str]:
    """Every way `doc` breaks `schema`, as 'path: problem' strings (empty when it is valid)."""
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else types
        if not any(_TYPES[t](doc) for t in names):
            return [f"{path}: expected {' or '.join(names)}, got {type(doc).__name__} {doc!r:.60}"]
    if "enum" in schema and doc not in schema["enum"]:
        return [f"{path}: {doc!r} is not one of {schema['enum']}"]
    found = []
    if "minimum" in schema and _TYPES["number"](doc) and doc < schema["minimum"]:
        found.append(f"{path}: {doc} is below the minimum {schema['minimum']}")
    if isinstance(doc, dict):
        props = schema.get("properties", {})
        found += [f"{path}: missing key {k!r}" for k in schema.get("required", ()) if k not in doc]
        if schema.get("additionalProperties") is False:
            found += [f"{path}: unexpected key {k!r}" for k in doc if k not in props]
        for k, sub in props.items():
            if k in doc:
                found += errors(doc[k], sub, f"{path}.{k}")
    if isinstance(doc, list) and "items" in schema:
        for i, item in enumerate(doc):
            found += errors(item, schema["items"], f"{path}[{i}]")
    return found


def validate(doc: Any, schema: dict[str, Any] = SCHEMA) -> None:
    """Raise ValueError listing the problems if `doc` does not follow `schema`."""
    problems = errors(doc, schema)
    if problems:
        shown = "\n  ".join(problems[:20]) + (f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else "")
        raise ValueError(f"not a valid tinygrad-lab bench document:\n  {shown}")

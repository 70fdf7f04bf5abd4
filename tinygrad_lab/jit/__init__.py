"""Static graphs: trace a function once, then replay it (`jit.trace`), as torch.jit.trace does.

Eager mode (define-by-run) is what the rest of tinygrad_lab does: every `a * b` goes through
Python, `Function.apply` checks the arguments, decides whether autograd must record a node,
runs the op and wraps the result, and the graph is whatever the code happened to do this time.
It is easy to write and to debug (print anything, branch on anything), but the framework never
sees the program as a whole, so it cannot optimise it, and each tiny op pays the same fixed cost.

A trace (define-then-run) runs the function once with example inputs and records the ops it ran
(from the engine's one instrumentation point, the event stream), then replays that recording:

    traced = jit.trace(model, x)       # runs model(x) once, records 3 ops
    y = traced(x2)                     # replays them: no Python per op, no dispatch
    print(traced)                      # the recorded ops (the static graph)
    print(traced.code)                 # the Python the replay runs
    traced.graph()                     # the same graph view as eager code gets
    traced.kernels                     # the fused kernels (and their CUDA source on a GPU)

What a static graph buys:

- no dispatch: without gradients, the replay calls each op's forward on arrays directly,
  skipping the checks, grad-mode logic, events and graph nodes of `Function.apply`;
- whole-program optimisations: unused ops are removed (dead-code elimination) and chains of
  elementwise ops are fused into one kernel with buffers reused between calls (jit/fusion.py);
- a program that can be saved and run elsewhere: `tinygrad_lab.onnx.export` writes it as ONNX.

What it costs (the same limits as torch.jit.trace):

- Python control flow is frozen: `if x.sum() > 0:` ran once, with the example inputs, and the
  branch it took is in the trace for good (a `TracerWarning` points at the line). Loops are
  unrolled to the number of iterations they made.
- Shapes, dtypes and devices are fixed: calling with others raises an error naming the
  difference; trace again for them.
- Tensors the function reads but does not compute (parameters, buffers, tensors from the
  enclosing scope) are captured by reference: a replay reads their current values, so
  training a traced model works. Tensors it creates itself (a zero initial state) keep the
  values they had during the trace, and so does randomness (dropout in training mode: a
  warning; trace in eval() mode).
- Training: when a gradient is needed (grad mode on and an input or a captured tensor requires
  grad), the replay runs every op through `Function.apply`, so autograd records the graph as
  in eager mode and `backward()` gives exactly the eager gradients. That path saves only the
  Python between the ops (module calls, argument parsing); fusion applies without gradients.
  The same path is taken while anyone subscribes to the engine's events (graph.record(), a
  profiler, an enclosing trace), so they see every op, as they would eagerly.
- No in-place ops on traced tensors, no backward() inside the traced function: errors that say so.
- One thread at a time: fused kernels reuse their buffers between calls.
"""
from .ir import Step, Trace, Value
from .traced import TracedFunction, trace
from .tracer import Detach, TracerWarning, TracingError

__all__ = ["Detach", "Step", "Trace", "TracedFunction", "TracerWarning", "TracingError", "Value", "compile", "trace"]


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor", mode=None, options=None,
            disable: bool = False):  # noqa: A001 (torch.compile's name)
    """torch.compile's signature, returning `model` itself (or, without one, a decorator that does): there
    is no compiler here, and a compiled model computes what the model computes, so code written for
    PyTorch 2 runs unchanged, at eager speed. For a static graph to look at and replay, use `trace`."""
    if model is None:
        return lambda fn: fn
    return model

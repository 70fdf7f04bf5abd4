"""Jupyter widgets that show the engine's own records (UI only: the logic is in graph/ and bench/).

GraphView        the recorded graph, clickable; `GraphView.live()` grows while a cell runs
BackwardStepper  Step / Back / Play / Reset through the real backward pass, with the chain rule
CompareStepper   a learner's piece of the engine (tinygrad_lab.seams) beside the engine's own, node by
                 node on one graph, the first node where the gradients differ marked
TimingPlot       a benchmark workload over sizes and devices, plotted (tinygrad_lab.bench)
LiveLoss         a progress bar and a live loss curve for training loops

The browser side is one ES module (+ css) per widget in the repository's widgets/ folder.
"""
from .compare import CompareStepper
from .graph_view import GraphView
from .stepper import BackwardStepper
from .timing import TimingPlot
from .training import LiveLoss

__all__ = ["BackwardStepper", "CompareStepper", "GraphView", "LiveLoss", "TimingPlot"]

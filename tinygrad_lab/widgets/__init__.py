"""Jupyter widgets that show the engine's own records (UI only: the logic is in graph/ and bench/).

GraphView        the recorded graph, clickable; `GraphView.live()` grows while a cell runs
BackwardStepper  Step / Back / Play / Reset through the real backward pass, with the chain rule
TimingPlot       a benchmark workload over sizes and devices, plotted (tinygrad_lab.bench)
LiveLoss         a progress bar and a live loss curve for training loops

The browser side is one ES module (+ css) per widget in the repository's widgets/ folder.
"""
from .graph_view import GraphView
from .stepper import BackwardStepper
from .timing import TimingPlot
from .training import LiveLoss

__all__ = ["BackwardStepper", "GraphView", "LiveLoss", "TimingPlot"]

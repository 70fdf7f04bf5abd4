"""The recorded graph: live capture, Graphviz rendering and the backward stepper model.

    g = graph.capture(loss, params=dict(model.named_parameters()))  # what produced `loss`
    with graph.record() as rec: ...                                  # every op run in the block
    g.to_dot(), g.to_svg()                                           # Graphviz source / drawing
    s = graph.BackwardStepper(loss); s.step(); s.back(); s.run()     # the real backward, node by node

UI-free: the widgets only display what this package computes.
"""
from .capture import capture
from .explain import Explanation, explain
from .model import Graph, GraphNode, ModuleCall, SavedTensor, TensorSummary
from .record import Recorder, record
from .render import GraphvizNotFound, to_dot, to_svg
from .stepper import BackwardStepper, Step
from .summarise import summarise

__all__ = ["capture", "record", "Recorder", "Graph", "GraphNode", "ModuleCall", "SavedTensor", "TensorSummary",
           "to_dot", "to_svg", "GraphvizNotFound", "summarise", "BackwardStepper", "Step", "Explanation", "explain"]

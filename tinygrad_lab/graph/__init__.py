"""The recorded graph: live capture, Graphviz rendering and the backward stepper model.

    g = graph.capture(loss, params=dict(model.named_parameters()))  # what produced `loss`
    with graph.record() as rec: ...                                  # every op run in the block
    g.to_dot(), g.to_svg(), g.to_png()                               # Graphviz source / drawings
    s = graph.BackwardStepper(loss); s.step(); s.back(); s.run()     # the real backward, node by node
    step.explain(), step.source()                                    # its chain rule with every number, its code

UI-free: the widgets only display what this package computes.
"""
from .capture import capture
from .explain import Explanation, Number, explain
from .model import Graph, GraphNode, ModuleCall, SavedTensor, TensorSummary
from .record import Recorder, record
from .render import GraphvizNotFound, to_dot, to_png, to_svg
from .source import Source, backward_source
from .stepper import BackwardStepper, Step
from .summarise import summarise

__all__ = ["capture", "record", "Recorder", "Graph", "GraphNode", "ModuleCall", "SavedTensor", "TensorSummary",
           "to_dot", "to_svg", "to_png", "GraphvizNotFound", "summarise", "BackwardStepper", "Step", "Explanation", "Number", "explain", "Source", "backward_source"]

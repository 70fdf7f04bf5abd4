"""What a drawing shows: which graph nodes are drawn alone and which are folded into boxes.

Modules can be collapsed on request (by name or depth). Above a node budget the
view summarises on its own: deepest modules first, then chains of elementwise
ops, and as a last resort the earliest nodes, so any graph draws in seconds.
Every step is deterministic, and `View.note` says what was hidden.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ..ops import elementwise
from .nodes import DrawnGraph, ModuleCall


class Box(NamedTuple):
    """One drawn node standing for one or more graph nodes.

    kind     "node" (one graph node), "module" (a collapsed module call),
             "chain" (elementwise ops in a row) or "rest" (the earliest nodes, folded)
    members  the graph node ids it stands for, ascending
    call     the collapsed module (kind "module")
    cluster  the module call it is drawn inside, when clustering
    """

    kind: str
    members: tuple
    call: ModuleCall | None
    cluster: ModuleCall | None


class View(NamedTuple):
    boxes: list        # Box, in order of their first member
    box_of: list       # graph node id -> index in boxes
    edges: list        # (from box, to box, output nr of a multi-output node or None, argument nr or None)
    hidden: int        # graph nodes not drawn on their own
    note: str          # what was hidden, in words ("" when nothing was)


def summarise(graph: DrawnGraph, collapse: Sequence[str] | int | None = None, max_nodes: int | None = 300) -> View:
    """The view of `graph` with `collapse` applied (module names as `named_modules()` spells
    them, or a depth: 0 is the outermost module), summarised to at most `max_nodes` boxes."""
    calls = graph.modules
    collapsed = _requested(calls, collapse)
    units = _module_units(graph, collapsed)
    count = len(set(units))
    if max_nodes is not None and count > max_nodes:
        for call, saving in _deepest_first(graph, calls, collapsed):
            collapsed.add(call.key)
            count -= saving
            if count <= max_nodes:
                break
        units = _module_units(graph, collapsed)
        if count > max_nodes:
            for chain in _elementwise_chains(graph, units):
                inside = chain + _private_leaves(graph, chain, units)
                for i in inside:
                    units[i] = ("c", chain[0])
                count -= len(inside) - 1
                if count <= max_nodes:
                    break
        if count > max_nodes:
            _fold_earliest(units, max_nodes)
    return _build(graph, units)


def _requested(calls: tuple, collapse) -> set:
    if collapse is None:
        return set()
    if isinstance(collapse, int):
        return {c.key for c in calls if c.depth == collapse}
    names = {collapse} if isinstance(collapse, str) else set(collapse)
    return {c.key for c in calls if c.name in names}


def _module_units(graph: DrawnGraph, collapsed: set) -> list:
    """Per node: the unit it is drawn as, ("m", key) of its outermost collapsed module or ("n", id)."""
    units = []
    for n in graph.nodes:
        unit = ("n", n.id)
        if collapsed:
            for c in n.scope:
                if c.key in collapsed:
                    unit = ("m", c.key)
                    break
        units.append(unit)
    return units


def _deepest_first(graph: DrawnGraph, calls: tuple, collapsed: set):
    """(call, boxes saved by collapsing it), deepest modules first. Deeper calls are collapsed
    before a call is reached, so it then holds its direct nodes plus one box per child."""
    direct = [0] * len(calls)
    children = [set() for _ in calls]
    hidden_under = set(collapsed)  # calls inside a collapsed call gain nothing
    for n in graph.nodes:
        if n.scope:
            direct[n.scope[-1].key] += 1
    for c in calls:
        if c.parent is not None:
            children[c.parent].add(c.key)
            if c.parent in hidden_under:
                hidden_under.add(c.key)
    for c in sorted(calls, key=lambda c: (-c.depth, c.key)):
        if c.key not in hidden_under:
            units = direct[c.key] + sum(1 for k in children[c.key] if _has_members(k, direct, children))
            if units > 1:
                yield c, units - 1


def _has_members(key: int, direct: list, children: list) -> bool:
    stack = [key]
    while stack:
        k = stack.pop()
        if direct[k]:
            return True
        stack.extend(children[k])
    return False


_ELEMENTWISE = elementwise.__name__


def _elementwise_chains(graph: DrawnGraph, units: list) -> list:
    """Runs of single elementwise ops where each feeds only the next (in one module), longest first.
    Outputs stay out of chains, so they remain in view."""
    nodes, outputs = graph.nodes, graph.output_ids()
    out_degree: dict = {}
    for n in nodes:
        for unit in dict.fromkeys(units[src] for src, _ in n.inputs if units[src] != units[n.id]):
            out_degree[unit] = out_degree.get(unit, 0) + 1

    def chainable(i: int) -> bool:
        n = nodes[i]
        return units[i][0] == "n" and n.fn is not None and n.fn.__module__ == _ELEMENTWISE and i not in outputs

    succ: dict = {}
    has_pred = set()
    for n in nodes:
        if not chainable(n.id):
            continue
        for src, _ in n.inputs:
            if (chainable(src) and out_degree.get(units[src]) == 1 and src not in succ
                    and nodes[src].module == n.module):
                succ[src] = n.id
                has_pred.add(n.id)
                break
    chains = []
    for start in succ:
        if start not in has_pred:
            chain = [start]
            while chain[-1] in succ:
                chain.append(succ[chain[-1]])
            chains.append(chain)
    return sorted(chains, key=lambda c: (-len(c), c[0]))


def _private_leaves(graph: DrawnGraph, chain: list, units: list) -> list:
    """Leaf tensors only this chain uses (summing 1,000 inputs is one box, not 1,001)."""
    uses: dict = {}
    for i in chain:
        for src, _ in graph.nodes[i].inputs:
            if graph.nodes[src].kind != "op" and units[src] == ("n", src):
                uses[src] = uses.get(src, 0) + 1
    return [src for src, k in uses.items() if graph.consumers[src] == k]


def _fold_earliest(units: list, max_nodes: int) -> None:
    """Fold the units whose last node came earliest into one, so that max_nodes remain
    (the end of the graph, near the output, stays in view)."""
    last = {unit: i for i, unit in enumerate(units)}
    order = sorted(last, key=last.__getitem__)
    keep = set(order[len(order) - max_nodes + 1:]) if max_nodes > 1 else set()
    for i, unit in enumerate(units):
        if unit not in keep:
            units[i] = ("r", 0)


_KINDS = {"n": "node", "m": "module", "c": "chain", "r": "rest"}


def _build(graph: DrawnGraph, units: list) -> View:
    index: dict = {}
    members: list = []
    box_of = []
    for i, unit in enumerate(units):
        b = index.get(unit)
        if b is None:
            b = index[unit] = len(members)
            members.append([])
        members[b].append(i)
        box_of.append(b)
    calls = graph.modules
    boxes = []
    for (tag, key), b in index.items():
        kind = _KINDS[tag]
        call = calls[key] if kind == "module" else None
        if kind == "module":
            cluster = calls[call.parent] if call.parent is not None else None
        else:  # a node, or a chain (keyed by its first op): where that node was made
            cluster = graph.nodes[key].module if kind != "rest" else None
        boxes.append(Box(kind, tuple(members[b]), call, cluster))
    edges = {}
    for n in graph.nodes:
        to = box_of[n.id]
        for k, (src, nr) in enumerate(n.inputs):
            frm = box_of[src]
            if frm != to:
                alone = boxes[frm].kind == "node" and boxes[to].kind == "node"  # x * x: one edge per argument
                multi = alone and len(graph.nodes[src].output_shapes) > 1
                edges[(frm, to, nr if multi else None, k if alone else None)] = None
    return View(boxes, box_of, list(edges), *_note(boxes, len(graph)))


def _note(boxes: list, total: int) -> tuple:
    """(hidden, note): how many nodes are not drawn on their own, and by what."""
    hidden = sum(len(b.members) for b in boxes if b.kind != "node")
    if not hidden:
        return 0, ""
    kinds = [b.kind for b in boxes]
    modules, chains = kinds.count("module"), kinds.count("chain")
    folded = sum(len(b.members) for b in boxes if b.kind == "rest")
    parts = ([f"{modules} module{_s(modules)} collapsed"] if modules else []) + \
            ([f"{chains} elementwise chain{_s(chains)} collapsed"] if chains else []) + \
            ([f"{folded:,} earliest nodes folded"] if folded else [])
    return hidden, f"{hidden:,} of {total:,} nodes hidden: " + ", ".join(parts)


def _s(n: int) -> str:
    return "" if n == 1 else "s"

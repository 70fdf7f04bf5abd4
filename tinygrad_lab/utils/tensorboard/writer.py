"""SummaryWriter: scalars, histograms, text and the model's graph, as TensorBoard event files."""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime

import numpy as np

from ...autograd.tensor_base import TensorBase

try:
    from tensorboard.compat.proto import event_pb2, graph_pb2, summary_pb2
    from tensorboard.compat.proto.attr_value_pb2 import AttrValue
    from tensorboard.compat.proto.node_def_pb2 import NodeDef
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.compat.proto.versions_pb2 import VersionDef
    from tensorboard.plugins.text.metadata import create_summary_metadata as _text_metadata
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
except ImportError as e:  # the error names what to install, at import as PyTorch's does
    raise ImportError(f"tinygrad_lab.utils.tensorboard needs the tensorboard package: pip install "
                      f"'tinygrad-lab[tensorboard]' ({e})") from None


def _number(value) -> float:
    if isinstance(value, TensorBase):
        return float(value.item())
    return float(np.asarray(value).item())


def _values(values) -> np.ndarray:
    if isinstance(values, TensorBase):
        values = values._device.backend.to_host(values.detach()._data)
    return np.asarray(values, dtype=np.float64).reshape(-1)


def _tensorflow_edges() -> np.ndarray:
    """TensorFlow's default histogram buckets: ±1e-12 growing by 10% to ±1e20, and 0."""
    pos = 1e-12 * 1.1 ** np.arange(int(np.ceil(np.log(1e20 / 1e-12) / np.log(1.1))))
    top = np.finfo(np.float64).max
    return np.concatenate([[-top], -pos[::-1], [0.0], pos, [top]])


def histogram_proto(values, bins="tensorflow", max_bins: int | None = None) -> summary_pb2.HistogramProto:
    """The histogram of `values` as TensorBoard stores it (bucket upper limits and counts; empty
    buckets at both ends dropped). `bins` as numpy.histogram, or "tensorflow" (the default)."""
    v = _values(values)
    if v.size == 0:
        raise ValueError("add_histogram: the histogram of an empty tensor is not defined")
    if not np.isfinite(v).all():
        raise ValueError("add_histogram: the values contain NaN or infinity")
    counts, edges = np.histogram(v, bins=_tensorflow_edges() if isinstance(bins, str) and bins == "tensorflow" else bins)
    nonzero = np.flatnonzero(counts)
    lo, hi = nonzero[0], nonzero[-1] + 1
    return summary_pb2.HistogramProto(min=float(v.min()), max=float(v.max()), num=int(v.size), sum=float(v.sum()),
                                      sum_squares=float(v @ v), bucket_limit=edges[lo + 1:hi + 1].tolist(),
                                      bucket=counts[lo:hi].astype(np.float64).tolist())


class SummaryWriter:
    """Writes event files into `log_dir` (default runs/DATETIME_HOSTNAME+comment), as
    torch.utils.tensorboard.SummaryWriter. Events are written by a background thread:
    `flush()` or `close()` (or leaving a `with` block) puts them on disk."""

    def __init__(self, log_dir: str | None = None, comment: str = "", purge_step: int | None = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self._options = dict(max_queue_size=max_queue, flush_secs=flush_secs, filename_suffix=filename_suffix)
        self._writers: dict[str, EventFileWriter] = {}
        self._file(self.log_dir)

    def get_logdir(self) -> str:
        return self.log_dir

    def _file(self, logdir: str) -> EventFileWriter:
        writer = self._writers.get(logdir)
        if writer is None:
            writer = self._writers[logdir] = EventFileWriter(logdir, **self._options)
            if self.purge_step is not None:  # TensorBoard drops older events from this step on
                writer.add_event(event_pb2.Event(step=self.purge_step, file_version="brain.Event:2"))
                writer.add_event(event_pb2.Event(step=self.purge_step, session_log=event_pb2.SessionLog(
                    status=event_pb2.SessionLog.START)))
        return writer

    def _write(self, value: summary_pb2.Summary.Value, step, walltime, logdir: str | None = None) -> None:
        event = event_pb2.Event(summary=summary_pb2.Summary(value=[value]),
                                wall_time=time.time() if walltime is None else walltime)
        if step is not None:
            event.step = int(step)
        self._file(logdir or self.log_dir).add_event(event)

    def add_scalar(self, tag: str, scalar_value, global_step: int | None = None, walltime: float | None = None,
                   new_style: bool = False, double_precision: bool = False) -> None:
        """One number (a Python number or a one-element tensor) under `tag` at `global_step`."""
        self._write(summary_pb2.Summary.Value(tag=tag, simple_value=_number(scalar_value)), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: int | None = None,
                    walltime: float | None = None) -> None:
        """Several curves on one chart: each in its own run folder `log_dir/main_tag_tag`, under `main_tag`."""
        for tag, value in tag_scalar_dict.items():
            logdir = os.path.join(self.log_dir, f"{main_tag}_{tag}".replace("/", "_"))
            self._write(summary_pb2.Summary.Value(tag=main_tag, simple_value=_number(value)), global_step,
                        walltime, logdir)

    def add_histogram(self, tag: str, values, global_step: int | None = None, bins="tensorflow",
                      walltime: float | None = None, max_bins: int | None = None) -> None:
        """The distribution of a tensor's values (weights, gradients, activations)."""
        self._write(summary_pb2.Summary.Value(tag=tag, histo=histogram_proto(values, bins, max_bins)),
                    global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """Text (Markdown) under `tag` (stored as `tag/text_summary`, as PyTorch does)."""
        tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf-8")],
                             tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
        value = summary_pb2.Summary.Value(tag=f"{tag}/text_summary", metadata=_text_metadata(tag, ""), tensor=tensor)
        self._write(value, global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose: bool = False, use_strict_trace: bool = True) -> None:
        """The graph our engine records when `model` runs on `input_to_model` (a tensor or a tuple),
        grouped by module as TensorBoard's Graphs tab shows it."""
        from ...graph import capture  # the recorded graph (imported here: graph/ builds on nn and utils)
        inputs = input_to_model if isinstance(input_to_model, (tuple, list)) else (input_to_model,)
        out = model(*inputs)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, TensorBase)]
        graph = capture(outs, params=dict(model.named_parameters()))
        self._file(self.log_dir).add_event(event_pb2.Event(
            graph_def=graph_def(graph).SerializeToString(), wall_time=time.time()))
        if verbose:
            print(graph)

    def flush(self) -> None:
        for w in self._writers.values():
            w.flush()

    def close(self) -> None:
        for w in self._writers.values():
            w.flush()
            w.close()
        self._writers.clear()

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _scope_path(scope: tuple) -> list:
    """Module calls as TensorBoard groups: 'Sequential', 'Linear[0]', ..."""
    return [f"{c.type}[{c.name.rsplit('.', 1)[-1]}]" if c.name else c.type for c in scope]


def graph_def(graph) -> graph_pb2.GraphDef:
    """A recorded graph (`tinygrad_lab.graph.Graph`) as TensorBoard's GraphDef: one node per op or
    leaf tensor, named by its module path, with its output shape and device."""
    names = []
    for n in graph.nodes:
        if n.kind == "op":
            leaf = f"{n.op}_{n.id}"
        else:
            leaf = (n.name or n.kind).rsplit(".", 1)[-1] if n.kind == "parameter" else f"{n.name or 'input'}_{n.id}"
        names.append("/".join(_scope_path(n.scope) + [leaf]))
    nodes = []
    for n, name in zip(graph.nodes, names):
        shapes = [TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(s)) for s in shape]) for shape in n.output_shapes]
        attr = {"_output_shapes": AttrValue(list=AttrValue.ListValue(shape=shapes))}
        if n.dtype:
            attr["dtype"] = AttrValue(s=n.dtype.encode())
        op = n.op if n.kind == "op" else n.kind.capitalize()
        nodes.append(NodeDef(name=name, op=op, input=[names[i] for i, _ in n.inputs], device=n.device, attr=attr))
    return graph_pb2.GraphDef(node=nodes, versions=VersionDef(producer=22))

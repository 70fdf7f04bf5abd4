"""Batches of sequences of different lengths: padding and packing (torch.nn.utils.rnn).

A *padded* batch is one tensor (T, B, *) (or (B, T, *) with batch_first) whose shorter
sequences are filled up with a padding value. A *packed* batch (PackedSequence) keeps only
the real steps: the sequences are sorted by length, longest first, and `data` holds step 0 of
every sequence, then step 1 of every sequence that is that long, and so on;
`batch_sizes[t]` says how many sequences have a step t. RNN, LSTM and GRU accept a
PackedSequence and then never compute on padding.

Everything here moves rows with one indexing op, so gradients flow back to the padded
input or to the packed data.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import creation, dtypes
from ...autograd.tensor_base import TensorBase
from ...ops import movement as mv

__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpad_sequence", "unpack_sequence", "invert_permutation"]


class PackedSequence(NamedTuple):
    """data (sum of the lengths, *), batch_sizes (int64 on the CPU, one per time step), and the
    permutation that sorted the batch by length (sorted_indices) with its inverse
    (unsorted_indices), both None when the batch came sorted."""

    data: TensorBase
    batch_sizes: TensorBase
    sorted_indices: TensorBase | None = None
    unsorted_indices: TensorBase | None = None

    def to(self, *args, **kwargs) -> "PackedSequence":
        """data moved / cast as Tensor.to; the index tensors follow data's device, batch_sizes stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))  # noqa: E731
        return PackedSequence(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cpu(self) -> "PackedSequence":
        return self.to("cpu")

    def cuda(self, device=None) -> "PackedSequence":
        return self.to("cuda" if device is None else device)

    def float(self) -> "PackedSequence":
        return self.to(dtypes.float32)

    def double(self) -> "PackedSequence":
        return self.to(dtypes.float64)

    def half(self) -> "PackedSequence":
        return self.to(dtypes.float16)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    perm = permutation.cpu().numpy()
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(perm.size)
    return creation.tensor(inverse, device=permutation.device)


def _lengths(lengths) -> np.ndarray:
    if isinstance(lengths, TensorBase):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D tensor, got shape {list(lengths.shape)}")
        lengths = lengths.cpu().numpy()
    out = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if out.size and out.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    return out


def _packed_positions(sorted_lengths: np.ndarray):
    """(batch_sizes, t, j) for the packed rows in order: row r is step t[r] of the j[r]-th longest sequence."""
    steps = int(sorted_lengths[0]) if sorted_lengths.size else 0
    batch_sizes = (sorted_lengths[None, :] > np.arange(steps)[:, None]).sum(axis=1)
    t = np.repeat(np.arange(steps), batch_sizes)
    j = np.concatenate([np.arange(b) for b in batch_sizes]) if steps else np.zeros(0, np.int64)
    return batch_sizes, t, j


def _sorted_lengths_and_order(packed: "PackedSequence"):
    """The lengths of a packed batch's sequences, longest first, and the original batch position of each."""
    batch_sizes = packed.batch_sizes.numpy()
    steps = int(batch_sizes[0]) if batch_sizes.size else 0
    sorted_lengths = (batch_sizes[None, :] > np.arange(steps)[:, None]).sum(axis=1)
    order = (packed.sorted_indices.cpu().numpy() if packed.sorted_indices is not None
             else np.arange(sorted_lengths.size))
    return sorted_lengths, order


def _time_major(x, batch_first: bool):
    return mv.transpose(x, 0, 1) if batch_first else x


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *)) whose b-th sequence has lengths[b] real steps.
    With enforce_sorted=True the lengths must already decrease; otherwise the batch is sorted here
    and the permutation is kept in the result."""
    lengths = _lengths(lengths)
    x = _time_major(input, batch_first)
    if lengths.size != x.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.size} (batch_size="
                           f"{x.shape[1]})")
    if lengths.size and lengths.max() > x.shape[0]:
        raise RuntimeError(f"pack_padded_sequence: a length of {lengths.max()} is longer than the padded sequences "
                           f"({x.shape[0]} steps)")
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        order, sorted_indices = np.arange(lengths.size), None
    else:
        order = np.argsort(-lengths, kind="stable")
        sorted_indices = creation.tensor(order, device=x.device)
    batch_sizes, t, j = _packed_positions(lengths[order])
    data = x[t, order[j]]
    return PackedSequence(data, creation.tensor(batch_sizes), sorted_indices, invert_permutation(sorted_indices))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None):
    """Undo pack_padded_sequence: (padded, lengths), padded (T, B, *) in the original batch order,
    with padding_value after each sequence's end; lengths an int64 CPU tensor."""
    data, steps = sequence.data, sequence.batch_sizes.numel()
    sorted_lengths, order = _sorted_lengths_and_order(sequence)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    _, t, j = _packed_positions(sorted_lengths)
    rows = np.full((steps, order.size), t.size, dtype=np.int64)  # every slot reads the padding row...
    rows[t, order[j]] = np.arange(t.size)                        # ...except the real steps
    padding = creation.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = mv.cat([data, padding])[rows]
    lengths = np.empty_like(sorted_lengths)
    lengths[order] = sorted_lengths
    return _time_major(padded, batch_first), creation.tensor(lengths)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"):
    """Stack tensors of shapes (L_i, *) into one (T, B, *) (or (B, T, *)) padded with padding_value,
    after each sequence (padding_side='right') or before it ('left')."""
    if isinstance(sequences, TensorBase):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences:
        if s.dim() == 0 or tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: every sequence must have shape (L, {', '.join(map(str, trailing))}), "
                               f"got {list(s.shape)}")
    lengths = np.array([s.shape[0] for s in sequences])
    steps, starts = int(lengths.max()), np.concatenate([[0], np.cumsum(lengths)[:-1]])
    first = steps - lengths if padding_side == "left" else np.zeros_like(lengths)  # where each sequence begins
    rows = np.full((steps, lengths.size), lengths.sum(), dtype=np.int64)
    for b, (n, start, at) in enumerate(zip(lengths, starts, first)):
        rows[at:at + n, b] = np.arange(start, start + n)
    padding = creation.full((1,) + trailing, padding_value, dtype=sequences[0].dtype, device=sequences[0].device)
    padded = mv.cat(sequences + [padding])[rows]
    return _time_major(padded, batch_first)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors (L_i, *): pad_sequence, then pack_padded_sequence."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    """The list of sequences, each cut to its length, from a padded batch."""
    x = _time_major(padded_sequences, batch_first)
    return [x[:int(n), b] for b, n in enumerate(_lengths(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences (in the original order) from a PackedSequence."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def _like(packed: PackedSequence, padded) -> PackedSequence:
    """`padded` (T, B, *), in the original batch order, packed the way `packed` is (RNN outputs)."""
    sorted_lengths, order = _sorted_lengths_and_order(packed)
    _, t, j = _packed_positions(sorted_lengths)
    return PackedSequence(padded[t, order[j]], packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)


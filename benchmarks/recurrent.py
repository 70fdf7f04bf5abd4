"""One training step of the recurrent workloads real programs spend their time in, tinygrad_lab
beside PyTorch on the CPU with one BLAS thread, in one run:

    lstm_lm     the word language model's step (benchmarks/programs/word_language_model.py):
                embedding 200, 2-layer LSTM of 200, bptt 35, batch 20, 1,000 words; forward,
                NLL, backward, gradient clipping, SGD
    gru_lm      the same with a GRU
    bilstm      a bidirectional LSTM tagger's step: batch 32, 30 words, embedding 100,
                128 per direction, 10 tags, cross-entropy, SGD
    polynomial  one step of 'Learning PyTorch with examples' polynomial fit
                (benchmarks/programs/polynomial_autograd.py): x ** 2, x ** 3 on 2,000 floats

Run `python benchmarks/recurrent.py [names...]` from the repository root. The harness is
`tinygrad-lab bench`'s (tinygrad_lab.bench.timer): warm-up, calibrated loops, samples of the two
libraries interleaved, medians; both libraries start from the same weights and data.
"""
from __future__ import annotations

import math
import runpy
import sys
from pathlib import Path

import numpy as np

from tinygrad_lab.bench.timer import ForeignLoad, Timed, Timer, fmt_time

HERE = Path(__file__).resolve().parent
runner = runpy.run_path(str(HERE / "programs.py"))  # the program runner: loading programs, one thread
wlm = runner["load"]("word_language_model")
poly = runner["load"]("polynomial_autograd")


def _same_weights(torch, model, seed: int = 0) -> None:
    """Every parameter from one NumPy generator, so both libraries start from the same point."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.uniform(-0.1, 0.1, tuple(p.shape)).astype(np.float32)))


def lm_step(torch, rnn_type: str):
    """A step of the word language model (LSTM or GRU) on a fixed batch."""
    torch.manual_seed(0)
    model = wlm._model_class(torch)(rnn_type, wlm.VOCAB, wlm.EMSIZE, wlm.NHID, wlm.NLAYERS, wlm.DROPOUT)
    _same_weights(torch, model)
    data = wlm.train_data(torch, 1)
    inputs, targets = wlm.get_batch(data, 0)
    criterion = torch.nn.NLLLoss()
    hidden = model.init_hidden(wlm.BATCH_SIZE)

    def step():
        model.zero_grad()
        output, _ = model(inputs, hidden)
        loss = criterion(output, targets)
        loss.backward()
        wlm.sgd_step(torch, model, wlm.LR, wlm.CLIP)
        return loss
    return step


def bilstm_step(torch, batch: int = 32, words: int = 30, vocab: int = 5000, emb: int = 100, hidden: int = 128,
                tags: int = 10):
    """A step of a bidirectional LSTM tagger (embedding, BiLSTM, linear, cross-entropy, SGD)."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.ModuleDict({"emb": nn.Embedding(vocab, emb), "lstm": nn.LSTM(emb, hidden, bidirectional=True,
                                                                              batch_first=True),
                           "out": nn.Linear(2 * hidden, tags)})
    _same_weights(torch, model)
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.integers(0, vocab, (batch, words)))
    y = torch.tensor(rng.integers(0, tags, (batch * words,)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step():
        opt.zero_grad()
        features, _ = model["lstm"](model["emb"](x))
        loss = torch.nn.functional.cross_entropy(model["out"](features).reshape(-1, tags), y)
        loss.backward()
        opt.step()
        return loss
    return step


def polynomial_step(torch):
    """One step of the polynomial fit, as the program runs it."""
    return lambda: poly.run(torch, 1)


WORKLOADS = {
    "lstm_lm": lambda torch: lm_step(torch, "LSTM"),
    "gru_lm": lambda torch: lm_step(torch, "GRU"),
    "bilstm": bilstm_step,
    "polynomial": polynomial_step,
}


def main(names) -> None:
    import torch

    import tinygrad_lab
    libs = {"tinygrad_lab": tinygrad_lab, "torch": torch}
    limiter = runner["one_thread"]()  # noqa: F841 - the limits hold while it lives
    timer = Timer(min_sample_s=0.2, repeats=9, warmup=2)
    load = ForeignLoad()
    print(f"{'workload':12s} {'tinygrad_lab':>12s} {'torch':>10s} {'ratio':>6s}   (median per step, 1 thread)")
    ratios = []
    for name in names:
        timings = timer.measure([Timed(key, WORKLOADS[name](lib)) for key, lib in libs.items()])
        ours, theirs = timings["tinygrad_lab"].median_s, timings["torch"].median_s
        ratios.append(ours / theirs)
        print(f"{name:12s} {fmt_time(ours):>12s} {fmt_time(theirs):>10s} {ours / theirs:5.2f}x", flush=True)
    mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    share = load.share()
    print(f"geometric mean {mean:.2f}x PyTorch; other processes used "
          f"{'?' if share is None else f'{share:.0%}'} of the CPUs meanwhile")


if __name__ == "__main__":
    main(sys.argv[1:] or list(WORKLOADS))

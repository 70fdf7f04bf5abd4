"""pytorch/examples word_language_model, the LSTM model (`python main.py --model LSTM`), its default
sizes (embedding 200, hidden 200, 2 layers, dropout 0.2, bptt 35, batch 20, lr 20, clip 0.25) and
training loop: truncated backpropagation through time with the hidden state detached between
batches, gradient clipping and a hand-written SGD step. In place of WikiText-2, a synthetic corpus
of 1,000 word ids drawn from a fixed sparse Markov chain (`corpus`), so a model can learn it.
"""
import math

import numpy as np

STEPS = 2
FULL_STEPS = 20
VOCAB, EMSIZE, NHID, NLAYERS, DROPOUT = 1000, 200, 200, 2, 0.2
BPTT, BATCH_SIZE, LR, CLIP = 35, 20, 20.0, 0.25


def corpus(n_tokens: int, vocab: int = VOCAB, seed: int = 0) -> np.ndarray:
    """Word ids from a Markov chain where each word is followed by one of 4 likely successors."""
    rng = np.random.default_rng(seed)
    successors = rng.integers(0, vocab, size=(vocab, 4))
    out = np.empty(n_tokens, dtype=np.int64)
    out[0] = 0
    picks, noise = rng.integers(0, 4, size=n_tokens), rng.integers(0, vocab, size=n_tokens)
    surprise = rng.random(n_tokens) < 0.1
    for i in range(1, n_tokens):
        out[i] = noise[i] if surprise[i] else successors[out[i - 1], picks[i]]
    return out


def batchify(torch, data, bsz: int):
    """The token stream as bsz columns (steps, bsz), as the example's batchify."""
    nbatch = data.size(0) // bsz
    data = data[:nbatch * bsz]
    return data.view(bsz, -1).t().contiguous()


def get_batch(source, i: int):
    seq_len = min(BPTT, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


def train_data(torch, steps: int):
    return batchify(torch, torch.tensor(corpus(BPTT * BATCH_SIZE * steps + BATCH_SIZE)), BATCH_SIZE)


def sgd_step(torch, model, lr: float, clip: float) -> None:
    """The example's update: clip the gradients' norm, then p -= lr * grad by hand."""
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)


def _model_class(torch):
    nn, F = torch.nn, torch.nn.functional

    class RNNModel(nn.Module):
        """Container module with an encoder, a recurrent module, and a decoder."""

        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5):
            super().__init__()
            self.ntoken = ntoken
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output).view(-1, self.ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if self.rnn_type == "LSTM":
                return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
            return weight.new_zeros(self.nlayers, bsz, self.nhid)

    return RNNModel


def repackage_hidden(torch, h):
    """The hidden state detached from how it was computed (truncated backpropagation)."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(torch, v) for v in h)


def run(torch, steps: int = STEPS, rnn_type: str = "LSTM") -> float:
    torch.manual_seed(1111)
    data = train_data(torch, steps)
    model = _model_class(torch)(rnn_type, VOCAB, EMSIZE, NHID, NLAYERS, DROPOUT)
    criterion = torch.nn.NLLLoss()
    model.train()
    hidden = model.init_hidden(BATCH_SIZE)
    total = 0.0
    for i in range(0, data.size(0) - 1, BPTT):
        inputs, targets = get_batch(data, i)
        hidden = repackage_hidden(torch, hidden)
        model.zero_grad()
        output, hidden = model(inputs, hidden)
        loss = criterion(output, targets)
        loss.backward()
        sgd_step(torch, model, LR, CLIP)
        total += loss.item()
    return total / math.ceil((data.size(0) - 1) / BPTT)

"""pytorch/examples word_language_model, the Transformer model (`python main.py --model Transformer`):
`TransformerModel` subclasses `nn.Transformer` (whose decoder stack it never uses, as the example)
and runs its encoder with a causal mask over embeddings plus sinusoidal positions. The example's
default sizes (embedding 200, 2 heads, feed-forward 200, 2 layers, dropout 0.2) and training loop,
on the synthetic corpus of word_language_model.py.
"""
import math

from .word_language_model import BATCH_SIZE, BPTT, CLIP, DROPOUT, EMSIZE, LR, NHID, NLAYERS, VOCAB, get_batch, \
    sgd_step, train_data

STEPS = 2
FULL_STEPS = 20
NHEAD = 2


def _model_classes(torch):
    nn, F = torch.nn, torch.nn.functional

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0).transpose(0, 1)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x + self.pe[:x.size(0), :]
            return self.dropout(x)

    class TransformerModel(nn.Transformer):
        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
            super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers)
            self.model_type = "Transformer"
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp, dropout)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)
            initrange = 0.1
            nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, src, has_mask=True):
            if has_mask:
                if self.src_mask is None or self.src_mask.size(0) != len(src):
                    self.src_mask = nn.Transformer.generate_square_subsequent_mask(len(src)).to(src.device)
            else:
                self.src_mask = None
            src = self.input_emb(src) * math.sqrt(self.ninp)
            src = self.pos_encoder(src)
            output = self.encoder(src, mask=self.src_mask)
            output = self.decoder(output)
            return F.log_softmax(output, dim=-1)

    return TransformerModel


def run(torch, steps: int = STEPS) -> float:
    torch.manual_seed(1111)
    data = train_data(torch, steps)
    model = _model_classes(torch)(VOCAB, EMSIZE, NHEAD, NHID, NLAYERS, DROPOUT)
    criterion = torch.nn.NLLLoss()
    model.train()
    total = 0.0
    for i in range(0, data.size(0) - 1, BPTT):
        inputs, targets = get_batch(data, i)
        model.zero_grad()
        output = model(inputs)
        loss = criterion(output.view(-1, VOCAB), targets)
        loss.backward()
        sgd_step(torch, model, LR, CLIP)
        total += loss.item()
    return total / math.ceil((data.size(0) - 1) / BPTT)

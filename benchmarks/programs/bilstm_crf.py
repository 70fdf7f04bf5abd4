"""The NLP tutorial 'Advanced: Making Dynamic Decisions and the Bi-LSTM CRF': a bidirectional LSTM
tagger with a CRF on top, trained on the tutorial's two toy sentences. The CRF's forward algorithm
and the gold path's score are plain Python loops over words and tags: thousands of tiny ops per
step, half of the time in backward. Hyperparameters as the tutorial (embedding 5, hidden 4, SGD
lr 0.01 with weight decay 1e-4); the initial LSTM state is zeros rather than `torch.randn`, so the
two libraries compute the same numbers from the same weights.
"""
STEPS = 2
FULL_STEPS = 40
START_TAG, STOP_TAG = "<START>", "<STOP>"
EMBEDDING_DIM, HIDDEN_DIM = 5, 4
TRAINING_DATA = [
    ("the wall street journal reported today that apple corporation made money".split(), "B I I I O O O B I O O".split()),
    ("georgia tech is a university in georgia".split(), "B I O O O O B".split()),
]


def _argmax(torch, vec) -> int:
    _, idx = torch.max(vec, 1)
    return idx.item()


def _log_sum_exp(torch, vec):
    """log(sum(exp(vec))) of a (1, n) row, computed stably (as the tutorial)."""
    max_score = vec[0, _argmax(torch, vec)]
    max_score_broadcast = max_score.view(1, -1).expand(1, vec.size()[1])
    return max_score + torch.log(torch.sum(torch.exp(vec - max_score_broadcast)))


def _model_class(torch):
    nn = torch.nn

    class BiLSTM_CRF(nn.Module):
        def __init__(self, vocab_size, tag_to_ix, embedding_dim, hidden_dim):
            super().__init__()
            self.hidden_dim = hidden_dim
            self.tag_to_ix = tag_to_ix
            self.tagset_size = len(tag_to_ix)
            self.word_embeds = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2, num_layers=1, bidirectional=True)
            self.hidden2tag = nn.Linear(hidden_dim, self.tagset_size)
            self.transitions = nn.Parameter(torch.randn(self.tagset_size, self.tagset_size))
            self.transitions.data[tag_to_ix[START_TAG], :] = -10000
            self.transitions.data[:, tag_to_ix[STOP_TAG]] = -10000

        def init_hidden(self):
            return (torch.zeros(2, 1, self.hidden_dim // 2), torch.zeros(2, 1, self.hidden_dim // 2))

        def _forward_alg(self, feats):
            init_alphas = torch.full((1, self.tagset_size), -10000.)
            init_alphas[0][self.tag_to_ix[START_TAG]] = 0.
            forward_var = init_alphas
            for feat in feats:
                alphas_t = []
                for next_tag in range(self.tagset_size):
                    emit_score = feat[next_tag].view(1, -1).expand(1, self.tagset_size)
                    trans_score = self.transitions[next_tag].view(1, -1)
                    next_tag_var = forward_var + trans_score + emit_score
                    alphas_t.append(_log_sum_exp(torch, next_tag_var).view(1))
                forward_var = torch.cat(alphas_t).view(1, -1)
            terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
            return _log_sum_exp(torch, terminal_var)

        def _get_lstm_features(self, sentence):
            self.hidden = self.init_hidden()
            embeds = self.word_embeds(sentence).view(len(sentence), 1, -1)
            lstm_out, self.hidden = self.lstm(embeds, self.hidden)
            lstm_out = lstm_out.view(len(sentence), self.hidden_dim)
            return self.hidden2tag(lstm_out)

        def _score_sentence(self, feats, tags):
            score = torch.zeros(1)
            tags = torch.cat([torch.tensor([self.tag_to_ix[START_TAG]], dtype=torch.long), tags])
            for i, feat in enumerate(feats):
                score = score + self.transitions[tags[i + 1], tags[i]] + feat[tags[i + 1]]
            return score + self.transitions[self.tag_to_ix[STOP_TAG], tags[-1]]

        def neg_log_likelihood(self, sentence, tags):
            feats = self._get_lstm_features(sentence)
            return self._forward_alg(feats) - self._score_sentence(feats, tags)

    return BiLSTM_CRF


def run(torch, steps: int = STEPS) -> float:
    torch.manual_seed(1)
    word_to_ix = {}
    for sentence, _ in TRAINING_DATA:
        for word in sentence:
            word_to_ix.setdefault(word, len(word_to_ix))
    tag_to_ix = {"B": 0, "I": 1, "O": 2, START_TAG: 3, STOP_TAG: 4}
    model = _model_class(torch)(len(word_to_ix), tag_to_ix, EMBEDDING_DIM, HIDDEN_DIM)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)
    total = 0.0
    for _ in range(steps):
        total = 0.0
        for sentence, tags in TRAINING_DATA:
            model.zero_grad()
            sentence_in = torch.tensor([word_to_ix[w] for w in sentence], dtype=torch.long)
            targets = torch.tensor([tag_to_ix[t] for t in tags], dtype=torch.long)
            loss = model.neg_log_likelihood(sentence_in, targets)
            loss.backward()
            optimizer.step()
            total += loss.item()
    return total

"""Whole PyTorch-style programs: they run on tinygrad_lab with only the import changed,
give PyTorch's numbers from the same starting weights, and actually learn."""
import importlib

import numpy as np

import tinygrad_lab as tl

# A training script as a PyTorch user writes it. `lib` is the only thing that differs:
# `import torch` or `import tinygrad_lab as torch`.
PROGRAM = '''
from collections import OrderedDict
nn, F, optim = torch.nn, torch.nn.functional, torch.optim
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(OrderedDict(fc1=nn.Linear(4, 16), act=nn.Tanh(), fc2=nn.Linear(16, 16)))
        self.norm = nn.LayerNorm(16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(F.relu(self.norm(self.body(x))))

model = Net().double()
model.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
opt = optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-4)
sched = optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
loader = DataLoader(TensorDataset(torch.tensor(X), torch.tensor(Y)), batch_size=8, shuffle=False)
loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
losses = []
for epoch in range(3):
    model.train()
    for xb, yb in loader:
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    sched.step()
model.eval()
with torch.no_grad():
    final = model(torch.tensor(X)).softmax(dim=1).numpy()
'''


def _run(lib_name: str, init: dict, X, Y) -> dict:
    ns = {"torch": importlib.import_module(lib_name), "init": init, "X": X, "Y": Y}
    exec(compile(PROGRAM, "<pytorch program>", "exec"), ns)
    return ns


def _data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((32, 4))
    Y = (X[:, 0] > 0).astype(np.int64) + (X[:, 1] > 0.5).astype(np.int64)
    return X, Y


def test_pytorch_program_gives_pytorch_numbers_with_only_the_import_changed(torch):
    X, Y = _data()
    torch.manual_seed(0)
    # initial weights: PyTorch's own default init, shared by both runs through the state_dict
    exec_ns = {"torch": torch, "init": None}
    exec(compile(PROGRAM.split("model.load_state_dict")[0], "<init>", "exec"), exec_ns)
    init = {k: v.detach().numpy().copy() for k, v in exec_ns["model"].state_dict().items()}
    ref = _run("torch", init, X, Y)
    ours = _run("tinygrad_lab", init, X, Y)
    assert len(ours["losses"]) == len(ref["losses"]) == 12
    np.testing.assert_allclose(ours["losses"], ref["losses"], rtol=1e-9)
    np.testing.assert_allclose(ours["final"], ref["final"], rtol=1e-9, atol=1e-12)
    assert ref["losses"][-1] < ref["losses"][0]


def test_mlp_learns_spirals():
    tl.manual_seed(0)
    X, y = tl.datasets.spirals(100, n_classes=3, seed=0)
    model = tl.nn.Sequential(tl.nn.Linear(2, 64), tl.nn.ReLU(), tl.nn.Linear(64, 64), tl.nn.ReLU(),
                             tl.nn.Linear(64, 3))
    opt = tl.optim.Adam(model.parameters(), lr=0.01)
    loader = tl.utils.data.DataLoader(tl.utils.data.TensorDataset(X, y), batch_size=32, shuffle=True)
    for _ in range(150):
        for xb, yb in loader:
            opt.zero_grad()
            tl.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
    with tl.no_grad():
        accuracy = (model(X).argmax(dim=1) == y).float().mean().item()
    assert accuracy > 0.95


def test_cnn_learns_digits():
    tl.manual_seed(0)
    X, y = tl.datasets.digits(flatten=False)
    X = X / 16.0
    perm = np.random.default_rng(0).permutation(len(y))
    train, test = perm[:1400], perm[1400:]
    nn = tl.nn
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(16 * 2 * 2, 10))
    opt = tl.optim.Adam(model.parameters(), lr=0.01)
    loader = tl.utils.data.DataLoader(tl.utils.data.TensorDataset(X[train], y[train]), batch_size=64, shuffle=True)
    for _ in range(8):
        for xb, yb in loader:
            opt.zero_grad()
            tl.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
    model.eval()
    with tl.no_grad():
        accuracy = (model(X[test]).argmax(dim=1) == y[test]).float().mean().item()
    assert accuracy > 0.90


def test_checkpoint_round_trips_bit_for_bit_and_training_resumes(tmp_path):
    nn = tl.nn
    tl.manual_seed(0)

    def make():
        model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
        opt = tl.optim.Adam(model.parameters(), lr=0.01)
        return model, opt, tl.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    x, y = tl.randn(8, 1, 8, 8), tl.randint(0, 3, (8,))

    def train(model, opt, sched, steps):
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = tl.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
        return losses

    model, opt, sched = make()
    train(model, opt, sched, 3)
    path = tmp_path / "ckpt.tlab"
    tl.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), "epoch": 3}, path)
    snapshot = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    expected = train(model, opt, sched, 3)

    ckpt = tl.load(path)
    model2, opt2, sched2 = make()
    model2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["opt"])
    sched2.load_state_dict(ckpt["sched"])
    assert ckpt["epoch"] == 3
    assert list(ckpt["model"]) == list(snapshot)
    for k, v in ckpt["model"].items():  # bit for bit, buffers (running stats, counters) included
        assert v.numpy().dtype == snapshot[k].dtype
        np.testing.assert_array_equal(v.numpy(), snapshot[k], err_msg=k)
    assert train(model2, opt2, sched2, 3) == expected  # resumes exactly where it left off
    for (k, a), (_, b) in zip(model.state_dict().items(), model2.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)

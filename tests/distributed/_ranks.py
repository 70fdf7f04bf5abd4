"""Run by tests/distributed/test_mpi.py as a 2-rank MPI job: each rank checks the collectives and
DistributedDataParallel against values it can compute alone, and prints 'rank R of N: ok'."""
import sys

import numpy as np

import tinygrad_lab as tl
import tinygrad_lab.distributed as dist
from tinygrad_lab import nn

dist.init_process_group(backend="mpi")
rank, size = dist.get_rank(), dist.get_world_size()
assert dist.is_initialized() and dist.get_backend() == "mpi" and size == 2

# all_reduce with each op, in place
for op, expected in [(dist.ReduceOp.SUM, [3.0, 30.0]), (dist.ReduceOp.AVG, [1.5, 15.0]),
                     (dist.ReduceOp.MAX, [2.0, 20.0]), (dist.ReduceOp.MIN, [1.0, 10.0]),
                     (dist.ReduceOp.PRODUCT, [2.0, 200.0])]:
    x = tl.tensor([rank + 1.0, 10.0 * (rank + 1)])
    assert dist.all_reduce(x, op=op) is None
    assert x.tolist() == expected, (op, x.tolist())
x = tl.tensor([rank + 1, 4])
dist.all_reduce(x, op=dist.ReduceOp.BOR)
assert x.tolist() == [3, 4] and x.dtype == tl.int64

# broadcast from rank 1, all_gather, async handles, barrier
b = tl.full((2, 2), float(rank))
dist.broadcast(b, src=1)
assert b.tolist() == [[1.0, 1.0], [1.0, 1.0]]
out = [tl.zeros(3) for _ in range(size)]
work = dist.all_gather(out, tl.arange(3.0) + 10 * rank, async_op=True)
assert work.wait() and [o.tolist() for o in out] == [[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]]
dist.barrier()

# DistributedDataParallel: rank 0's weights everywhere, then averaged gradients equal the
# full-batch gradient that each rank can compute alone
tl.manual_seed(100 + rank)  # different initial weights on each rank
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
ddp = nn.parallel.DistributedDataParallel(model)
weights = [p.detach().numpy().copy() for p in model.parameters()]
gathered = [tl.zeros(*w.shape) for w in weights for _ in range(size)]
for i, p in enumerate(model.parameters()):
    dist.all_gather(gathered[i * size:(i + 1) * size], p.detach())
for i in range(len(weights)):
    assert gathered[i * size].tolist() == gathered[i * size + 1].tolist(), "weights differ after DDP()"

tl.manual_seed(0)
X, Y = tl.randn(8, 3), tl.randn(8, 1)
shard = slice(4 * rank, 4 * rank + 4)
nn.functional.mse_loss(ddp(X[shard]), Y[shard]).backward()
got = [p.grad.numpy().copy() for p in model.parameters()]

reference = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
reference.load_state_dict(model.state_dict())
nn.functional.mse_loss(reference(X), Y).backward()
for g, r in zip(got, reference.parameters()):
    np.testing.assert_allclose(g, r.grad.numpy(), rtol=1e-5, atol=1e-7)

# no_sync keeps this rank's own gradient
model.zero_grad()
with ddp.no_sync():
    nn.functional.mse_loss(ddp(X[shard]), Y[shard]).backward()
local = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
local.load_state_dict(model.state_dict())
nn.functional.mse_loss(local(X[shard]), Y[shard]).backward()
for p, r in zip(model.parameters(), local.parameters()):
    np.testing.assert_allclose(p.grad.numpy(), r.grad.numpy(), rtol=1e-6)

dist.destroy_process_group()
assert not dist.is_initialized()
sys.stdout.write(f"rank {rank} of {size}: ok\n")  # one write: print's text and newline could interleave
sys.stdout.flush()

"""Shared-memory tensors across processes, with the fork and the spawn start methods: what a
child writes in place, the parent sees (and the other way round); Queues carry handles, not copies."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_lab as tl
import tinygrad_lab.multiprocessing as mp

METHODS = ["fork", "spawn"]


def _add_one(t):
    t.add_(1)


def _add_from_queue(q, done):
    t = q.get()
    t.mul_(10)
    done.put(t.is_shared())


def _send_back(q, received):
    q.put(tl.arange(6.0).reshape(2, 3))
    q.put(tl.nn.Parameter(tl.ones(2)))
    received.wait(60)  # as in PyTorch, the sender must live until the receiver has the tensors


def _train_step(model):
    with tl.no_grad():
        for p in model.parameters():
            p.add_(1.0)


def test_share_memory_moves_the_data_once_and_keeps_the_values():
    t = tl.arange(6.0).reshape(2, 3)
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared()
    data = t.numpy()
    assert t.share_memory_().numpy() is data  # already shared: nothing moves
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3))
    assert t[0].is_shared()  # views of shared memory are shared


def test_share_memory_refuses_what_it_cannot_move():
    with pytest.raises(RuntimeError, match="standin.*cannot be shared"):
        tl.ones(2, device="standin").share_memory_()


def test_module_share_memory_shares_parameters_gradients_and_buffers():
    model = tl.nn.Sequential(tl.nn.Linear(3, 2), tl.nn.BatchNorm1d(2))
    model[0].weight.grad = tl.zeros(2, 3)
    assert model.share_memory() is model
    assert all(p.is_shared() for p in model.parameters())
    assert all(b.is_shared() for b in model.buffers())
    assert model[0].weight.grad.is_shared()


@pytest.mark.parametrize("method", METHODS)
def test_a_child_updates_a_shared_tensor_in_place_and_the_parent_sees_it(method):
    t = tl.zeros(4).share_memory_()
    p = mp.get_context(method).Process(target=_add_one, args=(t,))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    assert t.tolist() == [1.0, 1.0, 1.0, 1.0]


def test_without_sharing_a_forked_child_writes_to_its_own_copy():
    t = tl.zeros(4)
    p = mp.get_context("fork").Process(target=_add_one, args=(t,))
    p.start()
    p.join(60)
    assert p.exitcode == 0 and t.tolist() == [0.0] * 4


@pytest.mark.parametrize("method", METHODS)
def test_a_tensor_put_on_a_queue_keeps_sharing_with_the_sender(method):
    ctx = mp.get_context(method)
    q, done = ctx.Queue(), ctx.Queue()
    t = tl.arange(4.0)  # not shared yet: putting it on the queue moves it, as in PyTorch
    p = ctx.Process(target=_add_from_queue, args=(q, done))
    p.start()
    q.put(t)
    assert done.get(timeout=60) is True
    p.join(60)
    assert p.exitcode == 0
    assert t.is_shared() and t.tolist() == [0.0, 10.0, 20.0, 30.0]


@pytest.mark.parametrize("method", METHODS)
def test_tensors_and_parameters_come_back_from_a_child(method):
    ctx = mp.get_context(method)
    q, received = ctx.Queue(), ctx.Event()
    p = ctx.Process(target=_send_back, args=(q, received))
    p.start()
    t, param = q.get(timeout=60), q.get(timeout=60)
    received.set()
    p.join(60)
    assert t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and t.is_shared()
    assert isinstance(param, tl.nn.Parameter) and param.requires_grad and param.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("method", METHODS)
def test_module_share_memory_lets_a_child_train_the_parents_model(method):
    model = tl.nn.Linear(2, 1)
    before = [p.detach().clone() for p in model.parameters()]
    model.share_memory()
    p = mp.get_context(method).Process(target=_train_step, args=(model,))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    for old, new in zip(before, model.parameters()):
        np.testing.assert_allclose(new.detach().numpy(), old.numpy() + 1.0)


def test_a_view_moves_alone_and_stops_sharing_memory_with_its_base():
    base = tl.arange(6.0)
    view = base[1:4]
    view.share_memory_()
    view.add_(1)
    assert view.is_shared() and view.tolist() == [2.0, 3.0, 4.0]
    assert not base.is_shared() and base.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_other_devices_travel_by_value_and_non_leaf_tensors_are_refused():
    q = mp.get_context("fork").SimpleQueue()
    sent = tl.ones(2, device="standin", requires_grad=True)
    q.put(sent)
    got = q.get()
    assert got.device == sent.device and got.requires_grad and got.tolist() == [1.0, 1.0]
    x = tl.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf tensor which requires_grad"):
        q.put(x * 2)


def test_spawn_runs_fn_with_its_index_in_each_process():
    from ._workers import write_rank
    out = tl.zeros(2).share_memory_()
    assert mp.spawn(write_rank, args=(out,), nprocs=2) is None
    assert out.tolist() == [1.0, 2.0]


def test_spawn_raises_a_childs_exception_with_its_traceback():
    from ._workers import exit_hard, fail_on_rank_one
    with pytest.raises(mp.ProcessRaisedException, match=r"(?s)Traceback.*ValueError: rank 1 failed on purpose") as e:
        mp.spawn(fail_on_rank_one, nprocs=2, start_method="fork")
    assert e.value.error_index == 1
    with pytest.raises(mp.ProcessExitedException, match="exit code 3"):
        mp.spawn(exit_hard, nprocs=1, start_method="fork")

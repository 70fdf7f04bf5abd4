"""`spawn(fn, args, nprocs)`: start `nprocs` processes running `fn(i, *args)` and wait for them,
as torch.multiprocessing.spawn. A process that raises makes `join()` stop the others and
raise `ProcessRaisedException` carrying its traceback; one that dies without a Python
exception (killed, os._exit) gives `ProcessExitedException`. Nothing waits forever."""
from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import traceback


class ProcessException(Exception):
    def __init__(self, msg: str, error_index: int, pid: int):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process died without a Python exception (a signal, os._exit)."""

    def __init__(self, msg: str, error_index: int, pid: int, exit_code: int, signal_name: str | None = None):
        super().__init__(msg, error_index, pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i: int, args: tuple, error_queue) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is being interrupted too
    except Exception:
        error_queue.put(traceback.format_exc())
        raise SystemExit(1)


class ProcessContext:
    """The processes `spawn(..., join=False)` started; `join()` until they are done."""

    def __init__(self, processes: list, error_queues: list):
        self.processes, self.error_queues = processes, error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait (at most `timeout` seconds) for the processes; True once all have finished.
        The first failure stops the others and raises."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            i = self.sentinels.pop(sentinel)
            self.processes[i].join()
            if self.processes[i].exitcode != 0 and failed is None:
                failed = i
        if failed is None:
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        raise self._error(failed)

    def _error(self, i: int) -> ProcessException:
        p, queue = self.processes[i], self.error_queues[i]
        if not queue.empty():
            return ProcessRaisedException(f"\n\n-- Process {i} terminated with the following error:\n{queue.get()}",
                                          i, p.pid)
        if p.exitcode < 0:
            name = signal.Signals(-p.exitcode).name
            return ProcessExitedException(f"process {i} terminated with signal {name}", i, p.pid, p.exitcode, name)
        return ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}", i, p.pid, p.exitcode)


def start_processes(fn, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:
    ctx = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        queue = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, queue), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(queue)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:
    """Run fn(i, *args) for i in range(nprocs), each in a new process (`fn` must be importable:
    defined in a module, not in a notebook cell, with the spawn start method)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)

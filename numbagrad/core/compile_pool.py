"""Compiles shared with worker processes, so that a cold start uses more than one core.

Numba compiles under one lock per process, so threads cannot compile side by side; other
processes can, and what they compile reaches this one through Numba's on-disk cache (a load
takes milliseconds). A *job* names a function and its arguments, ``(module, function, *args)``
(plain strings and numbers), whose call compiles something with ``cache=True`` or loads it.
``run(jobs)`` shares the jobs between this process (from the front of the list) and the
workers (from the back), then calls every job here: a job a worker did is a cache load, one
it could not do (an error, a dead worker) is compiled here. ``prefetch(jobs)`` hands jobs to
the workers alone, ahead of the ``run`` that needs them. Correctness never depends on a
worker: every job runs here in the end.

Workers start on the first job (``NUMBAGRAD_COMPILE_WORKERS``, default: one per core beyond
the first, at most 3; 0 turns this off) and leave after ``IDLE_EXIT`` seconds without work.
"""

import atexit
import collections
import importlib
import json
import os
import subprocess
import sys
import threading
import time

from . import progress

IDLE_EXIT = 60.0  # seconds a worker waits for a job before it exits
WAIT_LIMIT = 900.0  # seconds to wait for a worker's compile before doing it here
# a busy worker that is stopped (SIGSTOP, a debugger) this long, or uses no CPU this long,
# is abandoned: killed, its job compiled here (a compile always keeps its process busy)
STOP_LIMIT = 2.0
STALL_LIMIT = 30.0


def workers_wanted():
    """How many worker processes to use (``NUMBAGRAD_COMPILE_WORKERS``; else cores - 1, <= 3)."""
    env = os.environ.get("NUMBAGRAD_COMPILE_WORKERS")
    if not sys.executable:
        return 0
    if env is not None:
        try:
            return max(int(env), 0)
        except ValueError:
            return 0
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return min(cores - 1, 3)


def call(job):
    """Run ``job`` (module, function, *args) in this process."""
    module, function, *args = job
    return getattr(importlib.import_module(module), function)(*args)


class _Worker:
    """One worker process and the thread that feeds it jobs from the pool's queue."""

    def __init__(self, pool):
        self.pool = pool
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
        env = dict(os.environ, NUMBAGRAD_COMPILE_WORKERS="0", NUMBAGRAD_PROGRESS="0",
                   PYTHONPATH=os.pathsep.join(
                       p for p in (package_root, os.environ.get("PYTHONPATH")) if p))
        # -P: the working directory is not on the worker's path, so a module planted
        # there (numpy.py) is never imported
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "numbagrad.core.compile_pool"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        self.job = None  # the job the worker is doing, with its CPU time when last seen
        self.cpu, self.cpu_seen, self.stopped_since = None, 0.0, None
        self.thread = threading.Thread(target=self._feed, daemon=True,
                                       name="numbagrad-compile-worker")
        self.thread.start()

    def stalled(self, now):
        """Whether the worker's job makes no progress: the process has been stopped for
        ``STOP_LIMIT`` s, or used no CPU for ``STALL_LIMIT`` s (Linux only: elsewhere,
        only ``WAIT_LIMIT`` bounds the wait)."""
        seen = _process_state(self.proc.pid)
        if seen is None:
            return False
        state, cpu = seen
        if state in "Tt":
            if self.stopped_since is None:
                self.stopped_since = now
            return now - self.stopped_since > STOP_LIMIT
        self.stopped_since = None
        if cpu != self.cpu:
            self.cpu, self.cpu_seen = cpu, now
        return now - self.cpu_seen > STALL_LIMIT

    def alive(self):
        return self.proc.poll() is None and self.thread.is_alive()

    def _feed(self):
        pool = self.pool
        try:  # jobs wait here until the worker has imported numbagrad and can start at once
            ready = self.proc.stdout.readline().strip() == "ready"
        except (OSError, ValueError):
            ready = False
        if not ready:
            pool._lost(self)
            self.reap()
            return
        while True:
            job = pool._next_for_worker()
            if job is None:  # idle: let the process go
                self.reap()
                return
            self.cpu, self.cpu_seen, self.job = None, time.monotonic(), job
            try:
                self.proc.stdin.write(json.dumps(job) + "\n")
                self.proc.stdin.flush()
                reply = self.proc.stdout.readline()
            except (OSError, ValueError):
                reply = ""
            self.job = None
            pool._finished(job, reply.strip() == "ok")
            if not reply:  # the worker is gone (idle exit, crash): a new one takes over
                pool._lost(self)
                self.reap()
                return

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def reap(self):
        """Close the worker's input (it exits after its job) and collect the process."""
        self.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()  # else the pipe is closed by the collector, with a ResourceWarning


class Pool:
    """The jobs waiting for a worker, the jobs a worker is doing, and the workers."""

    def __init__(self, workers=None):
        self.workers_wanted = workers_wanted() if workers is None else workers
        self.cond = threading.Condition()
        # jobs waiting: workers take from the right, ``run`` takes its own from the left
        self.queue = collections.deque()
        self.busy = set()  # jobs a worker is compiling
        self.workers = []
        self.done_by_worker = set()
        self.run_lock = threading.Lock()

    # ---- the workers' side ----------------------------------------------------------------
    def _next_for_worker(self):
        with self.cond:
            while not self.queue:
                if not self.cond.wait(IDLE_EXIT):
                    return None
            job = self.queue.pop()
            self.busy.add(job)
            return job

    def _finished(self, job, ok):
        with self.cond:
            self.busy.discard(job)
            if ok:
                self.done_by_worker.add(job)
            self.cond.notify_all()

    def _lost(self, worker):
        with self.cond:
            if worker in self.workers:
                self.workers.remove(worker)
            self.cond.notify_all()

    def _ensure_workers(self):
        with self.cond:
            self.workers = [w for w in self.workers if w.alive()]
            while len(self.workers) < self.workers_wanted:
                try:
                    self.workers.append(_Worker(self))
                except (OSError, TypeError, ValueError):  # no interpreter to start (embedded)
                    # or no subprocess here: everything compiles in this process
                    self.workers_wanted = 0
                    return

    # ---- this process's side --------------------------------------------------------------
    def prefetch(self, jobs):
        """Hand ``jobs`` to the workers (none: nothing happens) without waiting."""
        if self.workers_wanted == 0:
            return
        jobs = [tuple(j) for j in jobs]
        with self.cond:
            fresh = [j for j in jobs if j not in self.queue and j not in self.busy
                     and j not in self.done_by_worker]
            self.queue.extend(reversed(fresh))  # the first job goes first
            self.cond.notify_all()
        self._ensure_workers()

    def run(self, jobs):
        """Call every job here, the workers doing some of them first (see the module)."""
        jobs = [tuple(j) for j in jobs]
        with self.run_lock:
            if self.workers_wanted and len(jobs) > 1:
                with self.cond:
                    fresh = [j for j in jobs if j not in self.queue and j not in self.busy
                             and j not in self.done_by_worker]
                    # at the left, in order: workers reach them last-first, after any
                    # prefetched jobs
                    self.queue.extendleft(reversed(fresh))
                    self.cond.notify_all()
                self._ensure_workers()
            mine = set()
            for job in jobs:
                with self.cond:
                    if job not in self.queue:
                        continue  # a worker has it: its result waits in the cache
                    self.queue.remove(job)
                call(job)
                mine.add(job)
            with self.cond:  # the workers' jobs of this list: wait for them (or their loss)
                waiting = sum(j in self.busy or j in self.queue for j in jobs)
                if waiting:
                    with progress.compiling(f"{waiting} kernel(s) in a worker process"):
                        self._wait_for_workers(jobs)
                for j in jobs:  # jobs still queued (every worker died): ours now
                    if j in self.queue:
                        self.queue.remove(j)
            for job in jobs:
                if job not in mine:
                    call(job)  # a cache load, or the compile a worker could not do

    def _wait_for_workers(self, jobs):
        """Wait (holding ``cond``) until no worker does one of ``jobs``; a stalled worker is
        killed on the way (its feeder then gives its job back), and after ``WAIT_LIMIT`` s
        the jobs left are this process's anyway."""
        deadline = time.monotonic() + WAIT_LIMIT
        while not self.cond.wait_for(
                lambda: not self.workers or not any(j in self.busy for j in jobs), 1.0):
            now = time.monotonic()
            if now > deadline:
                return
            for w in list(self.workers):
                if w.job is not None and w.stalled(now):
                    w.proc.kill()

    def close(self):
        for w in self.workers:
            w.close()


def _process_state(pid):
    """(state letter, CPU ticks used) of process ``pid`` from /proc, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[11]) + int(fields[12])  # utime + stime


POOL = Pool()
atexit.register(POOL.close)


def _serve():
    """A worker: read jobs (JSON lines) on stdin, run each, answer "ok" or "error"; exit
    when stdin closes or stays silent for ``IDLE_EXIT`` seconds."""
    lines = collections.deque()
    arrived = threading.Condition()

    def read():
        for line in sys.stdin:
            with arrived:
                lines.append(line)
                arrived.notify()
        with arrived:
            lines.append(None)
            arrived.notify()

    threading.Thread(target=read, daemon=True).start()
    importlib.import_module("numbagrad")
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        with arrived:
            if not lines and not arrived.wait_for(lambda: lines, IDLE_EXIT):
                return
            line = lines.popleft()
        if line is None:
            return
        try:
            call(json.loads(line))
            answer = "ok"
        except Exception:  # noqa: BLE001 - the parent compiles it itself
            answer = "error"
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _serve()

"""Jobs for tests/test_compile_pool.py: each records which process ran it."""

import os
import pathlib
import signal
import time


def mark(directory, name, parent_pid, mode):
    """Leave ``<name>.<pid>`` in ``directory``. In a worker (not ``parent_pid``), ``mode``
    "raise" fails, "die" kills the worker, "stop" stops it (SIGSTOP) and "hang" sleeps
    for ten minutes; "slow" takes 0.4 s anywhere, as a compile would (a worker starts in
    about a second)."""
    if os.getpid() != parent_pid:
        if mode == "raise":
            raise RuntimeError("this job fails in a worker")
        if mode == "die":
            os._exit(3)
        if mode == "stop":
            os.kill(os.getpid(), signal.SIGSTOP)
        if mode == "hang":
            time.sleep(600)
    if mode == "slow":
        time.sleep(0.4)
    (pathlib.Path(directory) / f"{name}.{os.getpid()}").touch()

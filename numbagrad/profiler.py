"""torch.profiler: its basic form, ``profile(activities=[ProfilerActivity.CPU])`` over the
events of numbagrad.autograd.profiler (CPU only; no schedule, no TensorBoard handler)."""

import enum

from .autograd import profiler as _autograd_profiler
from .autograd.profiler import record_function
from .autograd.profiler_util import EventList

__all__ = ["profile", "record_function", "ProfilerActivity", "supported_activities",
           "EventList"]


class ProfilerActivity(enum.Enum):
    """The kinds of activity a profile can record; numbagrad records CPU only (asking for
    CUDA records nothing more).

    Same as ``torch.profiler.ProfilerActivity``.
    """

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    """The activities numbagrad can record: CPU.

    Same as ``torch.profiler.supported_activities``.
    """
    return {ProfilerActivity.CPU}


class profile:  # noqa: N801 - torch's name
    """Context manager recording the CPU time of every numbagrad op run inside it
    (``start()``/``stop()`` without ``with``); ``on_trace_ready(prof)`` is called at stop.

    Same as ``torch.profiler.profile`` without ``schedule`` (every step is recorded),
    memory, FLOP and stack recording.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None):
        if schedule is not None:
            raise NotImplementedError("numbagrad.profiler.profile: schedule is not supported; "
                                      "every step between start() and stop() is recorded")
        self.activities = set(activities) if activities is not None else \
            supported_activities()
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.step_num = 0
        self.profiler = None

    def start(self):
        """Start recording."""
        self.profiler = _autograd_profiler.profile(record_shapes=self.record_shapes)
        self.profiler.__enter__()

    def stop(self):
        """Stop recording; calls ``on_trace_ready(self)`` when given."""
        self.profiler.__exit__(None, None, None)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self):
        """Mark a step's end (counted only: there is no schedule to advance)."""
        self.step_num += 1

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _finished(self):
        if self.profiler is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.profiler

    def events(self):
        """The recorded events (FunctionEvent), in start order."""
        return self._finished().events()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The events summed by name (and input shapes when ``group_by_input_shape``)."""
        return self._finished().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path):
        """Write the recorded events as a Chrome trace JSON file."""
        return self._finished().export_chrome_trace(path)

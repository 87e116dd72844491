"""torch.autograd.profiler_util: the profiler's events, their averages by name, torch's
table of them and the Chrome trace (numbagrad/autograd/profiler.py records the events)."""

import json
import os

__all__ = ["Interval", "FunctionEvent", "FunctionEventAvg", "EventList"]

# torch's keys: any *cuda*/*device* key sorts by a device time, which is 0 here (CPU only)
_DEVICE_ZERO = ("device_time", "device_time_total", "self_device_time_total", "cuda_time",
                "cuda_time_total", "self_cuda_time_total", "cpu_memory_usage",
                "self_cpu_memory_usage", "device_memory_usage", "self_device_memory_usage")


def _format_time(time_us):
    """torch's time format: us below a millisecond, ms below a second, then s."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


class Interval:
    """A start and an end in microseconds.

    Same as ``torch.autograd.profiler_util.Interval``.
    """

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        """The interval's length in microseconds."""
        return self.end - self.start


class _TimeStrings:
    """The ``*_str`` forms and the always-zero device and memory columns torch's events have."""

    is_async = False
    is_remote = False
    is_legacy = False
    use_device = None
    node_id = -1
    overload_name = ""
    flops = 0
    stack = ()

    def __getattr__(self, name):
        if name in _DEVICE_ZERO:
            return 0
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def cpu_time_str(self):
        """cpu_time formatted as torch's table prints it."""
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        """cpu_time_total formatted as torch's table prints it."""
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        """self_cpu_time_total formatted as torch's table prints it."""
        return _format_time(self.self_cpu_time_total)


class FunctionEvent(_TimeStrings):
    """One op call or record_function range: name, thread, times in microseconds, the
    events nested directly inside it, and the input shapes when they were recorded.

    Same as ``torch.autograd.profiler_util.FunctionEvent`` (CPU times only).
    """

    count = 1

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None,  # noqa: A002
                 is_user_annotation=False):
        self.id = id
        self.name = name
        self.key = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.is_user_annotation = is_user_annotation
        self.cpu_children = []
        self.cpu_parent = None

    @property
    def cpu_time_total(self):
        """Wall time from the call's start to its end, in microseconds."""
        return self.time_range.elapsed_us()

    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self):
        """cpu_time_total less that of the events nested directly inside, as torch computes."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} thread={self.thread} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg(_TimeStrings):
    """The events of one key (name, or name and input shapes) summed: count, total and self
    times; ``cpu_time`` is the average per call.

    Same as ``torch.autograd.profiler_util.FunctionEventAvg``.
    """

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0
        self.self_cpu_time_total = 0
        self.input_shapes = None
        self.is_user_annotation = False
        self.cpu_parent = None
        self.cpu_children = None

    def add(self, other):
        """Add event (or average) ``other`` of the same key to these sums."""
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.is_user_annotation = other.is_user_annotation
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self):
        """Average CPU total time per call, in microseconds."""
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of events (or of their averages) with torch's summaries.

    Same as ``torch.autograd.profiler_util.EventList``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args)

    @property
    def self_cpu_time_total(self):
        """The sum of the events' self CPU times, in microseconds."""
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """torch's table of these events, one row each, sorted by attribute ``sort_by``
        (``"self_cpu_time_total"``, ``"cpu_time_total"``, ``"count"``, ...), descending."""
        return _build_table(self, sort_by, header, row_limit, max_name_column_width,
                            max_shapes_column_width, top_level_events_only, time_unit)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The events summed by name (and input shapes when ``group_by_input_shapes``),
        in order of first occurrence."""
        groups = {}
        for evt in self:
            key = (evt.key, str(evt.input_shapes)) if group_by_input_shapes else evt.key
            groups.setdefault(key, FunctionEventAvg()).add(evt)
        averages = EventList(groups.values())
        if not group_by_input_shapes:
            for avg in averages:
                avg.input_shapes = ""  # torch's: no shapes column unless grouped by them
        return averages

    def total_average(self):
        """All events summed into one average, keyed ``Total``."""
        total = FunctionEventAvg()
        for evt in self:
            total.add(evt)
        total.key = "Total"
        return total

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto) JSON file."""
        pid = os.getpid()
        trace = []
        for evt in self:
            if not isinstance(evt, FunctionEvent):
                continue
            trace.append({
                "ph": "X", "cat": "user_annotation" if evt.is_user_annotation else "cpu_op",
                "name": evt.name, "pid": pid, "tid": evt.thread,
                "ts": evt.time_range.start, "dur": evt.cpu_time_total,
                "args": {"Input Dims": evt.input_shapes, "External id": evt.id}})
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms",
                       "traceName": os.fspath(path)}, f)


def _build_table(events, sort_by, header, row_limit, max_name_width, max_shapes_width,
                 top_level_only, time_unit):
    """torch's _build_table for CPU events: same columns, widths, alignment and footer."""
    if len(events) == 0:
        return ""
    has_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_width is not None:
        name_width = min(name_width, max_name_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
               "# of Calls"]
    widths = [name_width] + [12] * 6
    if has_shapes:
        shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
        if max_shapes_width is not None:
            shapes_width = min(shapes_width, max_shapes_width)
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def fmt(time_us):
        if time_unit == "s":
            return f"{time_us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{time_us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{time_us:.3f}us"
        return _format_time(time_us)

    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [sep, row_format.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_width is not None and len(name) >= max_name_width - 3:
            name = name[:max_name_width - 3] + "..."
        row = [name, _format_time_share(e.self_cpu_time_total, total),
               fmt(e.self_cpu_time_total), _format_time_share(e.cpu_time_total, total),
               fmt(e.cpu_time_total), fmt(e.cpu_time), e.count]
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        lines.append(row_format.format(*row))
    lines += [sep, f"Self CPU time total: {fmt(total)}"]
    return "".join(line + "\n" for line in lines)


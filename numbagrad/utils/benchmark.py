"""numbagrad.utils.benchmark: torch.utils.benchmark's Timer, Measurement and Compare.

``Timer`` runs Python statements through the standard library's ``timeit.Timer``, as torch's
does, with torch's warm-up, block-size choice and stopping rules, and the statement's ``torch``
is numbagrad (a script written as ``import numbagrad as torch`` times what it runs).
``num_threads`` sets the threads of numbagrad's parallel kernels (``numbagrad.set_num_threads``)
during the measurement. A ``Measurement`` holds the times, its statistics and torch's printout;
``Compare`` prints measurements as torch's table. Left out: C++ statements
(``language="cpp"``), Callgrind instruction counts and the fuzzers.
"""

import collections
import contextlib
import dataclasses
import enum
import math
import textwrap
import timeit

import numpy as np

import numbagrad

__all__ = ["Colorize", "Compare", "Language", "Measurement", "TaskSpec", "Timer",
           "select_unit", "timer", "trim_sigfig", "unit_to_english"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
# torch's thresholds of the interquartile range over the median for its two warnings
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25
_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}


def timer():
    """``timeit.default_timer()``. Same as ``torch.utils.benchmark.timer`` (no accelerator)."""
    return timeit.default_timer()


def select_unit(t):
    """(unit, its seconds) to show ``t`` s. Same as ``torch.utils.benchmark.select_unit``."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return unit, _UNITS[unit]


def unit_to_english(u):
    """The unit "us" -> "microsecond". Same as ``torch.utils.benchmark.unit_to_english``."""
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """``x`` rounded to ``n`` significant figures. Same as ``torch.utils.benchmark.trim_sigfig``."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10 ** (math.ceil(math.log10(abs(x))) - n)
    return float(round(x / scale) * scale)


@contextlib.contextmanager
def _threads(n):
    prior = numbagrad.get_num_threads()
    try:
        numbagrad.set_num_threads(n)
        yield
    finally:
        numbagrad.set_num_threads(prior)


class Language(enum.Enum):
    """A Timer's language (Python only here). Same as ``torch.utils.benchmark.Language``."""

    PYTHON = 0
    CPP = 1


@dataclasses.dataclass(frozen=True, repr=False)
class TaskSpec:
    """A Timer's statements and labels. Same as ``torch.utils.benchmark.TaskSpec``."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """The label (or the statement), with the sub-label."""
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                f"{textwrap.indent(self.stmt, '  ')}")

    def setup_str(self):
        """The setup as a Measurement prints it ("" for none)."""
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        """Title, description and setup: the head of a Measurement's printout."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(repr=False)
class Measurement:
    """The times of a statement: ``raw_times`` are seconds per block of ``number_per_run``
    runs; ``times``, ``mean``, ``median`` and ``iqr`` are per run. TaskSpec's fields
    (``stmt``, ``label``, ``num_threads``...) read through.

    Same as ``torch.utils.benchmark.Measurement``.
    """

    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __post_init__(self):
        self._sorted_times = ()
        self._warnings = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self):
        """Seconds per run of each block."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        """Median of ``times``."""
        self._lazy_init()
        return self._median

    @property
    def mean(self):
        """Mean of ``times``."""
        self._lazy_init()
        return self._mean

    @property
    def iqr(self):
        """Interquartile range of ``times``."""
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """Digits of the median the spread of the middle half of ``times`` supports (1 to 4)."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = np.array(self._sorted_times[n // 4:math.ceil(3 * n / 4)])
        interval = max(1.645 * middle.std() / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        digits = math.floor(math.log10(self._median / interval))
        return min(max(digits, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        """Whether the spread of ``times`` is large enough to doubt the median."""
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self):
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            values = np.array(self._sorted_times, dtype=np.float64)
            self._median, self._p25, self._p75 = (float(q) for q in
                                                  np.quantile(values, [0.5, 0.25, 0.75]))
            self._mean = float(values.mean())
            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                self._add_warning("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, msg):
        self._warnings += (f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% "
                           f"of the median measurement.\n           {msg}",)

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        """Whether the interquartile range is under ``threshold`` times the median."""
        return self.iqr / self.median < threshold

    @property
    def title(self):
        """The task's title (label and sub-label, or the statement)."""
        return self.task_spec.title

    @property
    def as_row_name(self):
        """The name of this measurement's row in a Compare table."""
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to "
                         f"{self._p75 / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {self.num_threads} "
                     f"thread{'s' if self.num_threads > 1 else ''}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """One Measurement per TaskSpec, of all their times per run (``number_per_run=1``).

        Same as ``torch.utils.benchmark.Measurement.merge``.
        """
        grouped = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].append(m)
        return [Measurement(1, [t for m in group for t in m.times], spec)
                for spec, group in grouped.items()]


class Timer:
    """Times a Python statement ``stmt`` after ``setup``, in ``globals`` (whose ``torch`` is
    numbagrad unless given): ``timeit(number)`` runs it ``number`` times in one block,
    ``blocked_autorange`` and ``adaptive_autorange`` pick a block size and repeat blocks.

    Same as ``torch.utils.benchmark.Timer`` for Python statements.
    """

    _timer_cls = timeit.Timer

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("numbagrad's benchmark Timer times Python statements only")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this "
                             "code can simply be moved to `setup`.")
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", numbagrad)
        self._language = Language.PYTHON
        stmt, setup = (_strip(s) for s in (stmt, setup))
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description,
                                   env=env, num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)  # never 0: statistics divide by it

    def _measurement(self, number, times):
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number=1000000):
        """One block of ``number`` runs, after a warm-up of ``number // 100`` (at least 2).

        Same as ``torch.utils.benchmark.Timer.timeit``.
        """
        with _threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return self._measurement(number, [self._timeit(number=number)])

    def repeat(self, repeat=-1, number=-1):
        """Not provided, as in torch: use ``blocked_autorange``."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        """Not provided, as in torch: use ``blocked_autorange``."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _loop(self, number, stop, min_run_time, max_run_time=None, callback=None):
        """Blocks of ``number`` runs until ``min_run_time`` has passed and ``stop(times)``, or
        ``max_run_time`` has passed."""
        total, can_stop, times = 0.0, False, []
        with _threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time):
        """Runs per block: ten-fold until the timer's overhead is under 1e-4 of a block that
        takes a thousandth of ``min_run_time``, or a block takes ``min_run_time``."""
        with _threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of a size that makes the timer's overhead negligible, for ``min_run_time``
        seconds at least.

        Same as ``torch.utils.benchmark.Timer.blocked_autorange``.
        """
        number = self._estimate_block_size(min_run_time)
        times = self._loop(number, lambda times: True, min_run_time, callback=callback)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks as ``blocked_autorange``'s until more than 3, ``min_run_time`` seconds, and
        an interquartile range under ``threshold`` times the median, or ``max_run_time``.

        Same as ``torch.utils.benchmark.Timer.adaptive_autorange``.
        """
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times):
            return len(times) > 3 and self._measurement(number, times).meets_confidence(threshold)

        times = self._loop(number, stop, min_run_time, max_run_time, callback=callback)
        return self._measurement(number, times)

    def collect_callgrind(self, number=100, *, repeats=None, collect_baseline=True,
                          retain_out_file=False):
        """Instruction counts under Callgrind: not provided by numbagrad.

        Same signature as ``torch.utils.benchmark.Timer.collect_callgrind``.
        """
        raise NotImplementedError("numbagrad's benchmark Timer measures wall time only: "
                                  "collect_callgrind is not supported")


def _strip(code):
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()


# ---- Compare: torch's table, rows by (threads, env, sub_label or stmt), columns by description
class Colorize(enum.Enum):
    """Compare's cell colors. Same as ``torch.utils.benchmark.Colorize``."""

    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


_BEST, _GOOD, _BAD, _VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
_BOLD, _END = "\033[1m", "\033[0m"


def _ordered_unique(items):
    return list(dict.fromkeys(items))


class _Column:
    """One description's cells: a common number format for its medians."""

    def __init__(self, grouped, scale, trim, highlight):
        self.grouped = grouped
        flat = [r for group in grouped for r in group]
        self.trim = trim
        self.highlight = highlight and any(r.has_warnings for r in flat if r)
        leading = [math.ceil(math.log10(r.median / scale)) if r else None for r in flat]
        unit_digits = max(d for d in leading if d is not None)
        decimals = min(max(m.significant_figures - d, 0) for d, m in zip(leading, flat)
                       if m is not None and d is not None) if trim else 1
        length = unit_digits + decimals + (1 if decimals else 0)
        self.template = f"{{:>{length}.{decimals}f}}{{:>{7 if self.highlight else 0}}}"

    def num_to_str(self, value, sigfigs, spread):
        if value is None:
            return " " * len(self.num_to_str(1, sigfigs, None))
        if self.trim:
            value = trim_sigfig(value, sigfigs)
        flag = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        return self.template.format(value, flag)


def _color(segment, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + segment + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + segment + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + segment + _END * 2
    if value >= best * 2:
        return _BAD + segment + _END * 2
    return segment


def _table(results, colorize, trim, highlight):
    """torch's rendering of the measurements of one label."""
    if len({r.label for r in results}) != 1:
        raise AssertionError("All results must share the same label")
    unit, scale = select_unit(min(r.median for r in results))
    row_keys = _ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results)
    row_keys.sort(key=lambda k: k[:2])  # stable: statements keep their order
    col_keys = _ordered_unique(r.description for r in results)
    cells = [[None] * len(col_keys) for _ in row_keys]
    for r in results:
        cells[row_keys.index((r.num_threads, r.env, r.as_row_name))][
            col_keys.index(r.description)] = r
    envs = {r.env for r in results}
    render_env = len(envs) > 1
    env_len = max(len(e) for e in envs) if render_env else 0
    groups, group_of, separators, prior_threads, prior_env = [], [], [], -1, ""
    for (threads, env, _), row in zip(row_keys, cells):
        new_group = threads != prior_threads
        if new_group:
            prior_threads, prior_env = threads, ""
            groups.append([])
        separators.append((threads if new_group else None, render_env and env != prior_env))
        groups[-1].append(row)
        group_of.append(len(groups) - 1)
        prior_env = env
    columns = [_Column([tuple(row[i] for row in g) for g in groups], scale, trim, highlight)
               for i in range(len(col_keys))]

    string_rows = [[""] + col_keys]
    for row, (_, show_env) in zip(cells, separators):
        first = next(r for r in row if r is not None)
        env = (f"({first.env})" if show_env else "").ljust(env_len + 4)
        strings = ["  " + env + first.as_row_name]
        for m, col in zip(row, columns):
            strings.append(col.num_to_str(None, 1, None) if m is None else col.num_to_str(
                m.median / scale, m.significant_figures,
                m.iqr / m.median if m.has_warnings else None))
        string_rows.append(strings)
    width = max(len(r) for r in string_rows)
    for r in string_rows:
        r.extend([""] * (width - len(r)))
    widths = [max(len(s) for s in col) for col in zip(*string_rows)]
    lines = ["  |  ".join(s.center(w) for s, w in zip(string_rows[0], widths))]
    overall = len(lines[0])
    for strings, row, (threads, _), g in zip(string_rows[1:], cells, separators, group_of):
        if threads is not None:
            lines.append(f"{threads} threads: ".ljust(overall, "-"))
        if colorize == Colorize.ROWWISE:
            best = [min(r.median for r in row if r is not None)] * len(strings)
        elif colorize == Colorize.COLUMNWISE:
            best = [min((r.median for r in c.grouped[g] if r is not None), default=None)
                    for c in columns]
        else:
            best = [-1] * len(strings)
        out = [strings[0].ljust(widths[0])]
        for s, w, r, b in zip(strings[1:], widths[1:], row, best):
            s = s.center(w)
            if colorize != Colorize.NONE and r is not None and b is not None:
                s = _color(s, r.median, b)
            out.append(s)
        lines.append("  |  ".join(out))
    warned = highlight and any(r.has_warnings for r in results)
    note = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
            if warned else "")
    label = results[0].label
    return (f"[{(' ' + (label or '') + ' ').center(overall - 2, '-')}]\n" + "\n".join(lines)
            + f"\n\nTimes are in {unit_to_english(unit)}s ({unit}).\n{note}")


class Compare:
    """A table of measurements: one per label, a row per sub-label (or statement) and thread
    count, a column per description; ``print()`` or ``str()`` it.

    Same as ``torch.utils.benchmark.Compare``.
    """

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self):
        return "\n".join(self._render())

    def extend_results(self, results):
        """Add Measurements to the table."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        """Show each column with the digits its measurements support."""
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        """Color cells against the best of their column (or, ``rowwise``, their row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        """Flag cells whose measurement has a large spread."""
        self._highlight_warnings = True

    def print(self):
        """Print the table."""
        print(str(self))

    def _render(self):
        by_label = collections.defaultdict(list)
        for r in Measurement.merge(self._results):
            by_label[r.label].append(r)
        return [_table(group, self._colorize, self._trim_significant_figures,
                       self._highlight_warnings) for group in by_label.values()]

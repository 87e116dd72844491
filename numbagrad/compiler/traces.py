"""The traces a compiled function keeps: per signature, one per path its guards took."""

import threading
import warnings


class Traces:
    """A compiled function's traces: per signature, the traces made (most recently used
    first; several when guards took other paths), at most ``max_traces`` signatures and
    ``max_traces`` traces per signature; signatures that needed more run eagerly."""

    def __init__(self, name, max_traces, depth):
        self.name, self.max_traces = name, max_traces
        self.depth = depth  # frames from _go_eager's warning up to the user's call
        self.by_key = {}  # signature -> [program, ...], in use order (dicts keep insertion)
        self.eager = set()
        self.lock = threading.Lock()

    def replay(self, key, run):
        """``(program, run(program))`` for the first current trace of ``key`` whose guards
        hold (``run`` returns None when they do not), or None."""
        programs = self.by_key.get(key)
        for program in programs or ():
            if not program.constants_current():
                continue
            out = run(program)
            if out is not None:
                if program is not programs[0]:
                    with self.lock:
                        if program in programs:
                            programs.remove(program)
                            programs.insert(0, program)
                return program, out
        return None

    def add(self, key, program):
        """Keep ``program`` for ``key``; False (and the key runs eagerly) when it cannot be
        replayed or the key has ``max_traces`` traces already."""
        if program.opaque:
            where, what = program.opaque[0]
            self._go_eager(key, f"{what} at {where} computes a value from the inputs that a "
                                "replay cannot recompute")
            return False
        with self.lock:
            programs = [p for p in self.by_key.pop(key, []) if p.constants_current()]
            full = len(programs) >= self.max_traces
            if not full:
                programs.insert(0, program)
                self.by_key[key] = programs
                while len(self.by_key) > self.max_traces:
                    self.by_key.pop(next(iter(self.by_key)))
        if full:
            reads = sorted({f"{what} at {where}" for p in programs
                            for _, _, where, what in p.reads})
            self._go_eager(key, f"the values it reads ({'; '.join(reads[:3])}) took "
                                f"{len(programs) + 1} different paths")
        return not full

    def _go_eager(self, key, why):
        with self.lock:
            self.eager.add(key)
            self.by_key.pop(key, None)
        warnings.warn(f"numbagrad.compile: {self.name}: {why}; calls with these argument "
                      "shapes and dtypes run eagerly from now on (fullgraph=True makes such a "
                      "read an error)", stacklevel=self.depth)

    def programs(self):
        return [p for ps in self.by_key.values() for p in ps]

    values = programs

    def __len__(self):
        return sum(len(ps) for ps in self.by_key.values())

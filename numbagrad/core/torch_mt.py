"""torch's CPU bit generator: its mt19937 engine, seeding and state layout (follows ATen,
see NOTICE). The raw words come from NumPy's C MT19937, which twists and tempers as the
standard mt19937 does; this module maps torch's state (words, ``left``, ``next``) onto
NumPy's (key, pos) and back, so nothing here is compiled."""

import os
import struct
import threading

import numpy as np

N = 624
DEFAULT_SEED = 67280421310721        # torch's seed of a new Generator
STATE_BYTES = 5056                   # sizeof(CPUGeneratorImplState)
_U32 = np.uint32


def seed_words(seed):
    """init_genrand: the 624 words torch's mt19937 starts from (32 bits of the seed)."""
    s = seed & 0xFFFFFFFF
    words = [s]
    for j in range(1, N):
        s = (1812433253 * (s ^ (s >> 30)) + j) & 0xFFFFFFFF
        words.append(s)
    return np.array(words, _U32)


def _locked(method):
    def run(self, *args):
        with self.lock:
            return method(self, *args)
    run.__name__, run.__doc__ = method.__name__, method.__doc__
    return run


def temper(y):
    """mt19937's tempering of an array of uint32 words."""
    y = y ^ (y >> _U32(11))
    y ^= (y << _U32(7)) & _U32(0x9D2C5680)
    y ^= (y << _U32(15)) & _U32(0xEFC60000)
    return y ^ (y >> _U32(18))


class Engine:
    """One generator's state: torch's mt19937 and its two cached normals.

    torch draws ``mt[next]`` after decrementing ``left`` and twists when ``left`` reaches
    0; NumPy draws ``key[pos]`` and twists at pos 624. A state of torch's own making has
    ``left + next == 625`` (or ``left == 1``), which is NumPy's ``pos = next``; any other
    (a hand-made state) keeps its ``left - 1`` draws before the twist in ``_pre``.
    ``lock`` is held for each whole draw (torch_rng), so that threads sharing a generator
    interleave whole calls."""

    __slots__ = ("_bg", "_gen", "_pre", "_next", "seed", "next_double", "next_float", "lock")

    def __init__(self, seed=DEFAULT_SEED):
        self.lock = threading.RLock()
        self._bg = np.random.MT19937(0)
        self._gen = np.random.Generator(self._bg)
        self.manual_seed(seed)

    @_locked
    def manual_seed(self, seed):
        self.seed = int(seed) % 2 ** 64
        self.load(seed_words(self.seed), 1, 0)   # torch keeps 32 bits
        self.next_double = None
        self.next_float = None

    def load(self, mt, left, nxt):
        """Take torch's state: words ``mt``, counters ``left`` and ``next``."""
        mt = np.asarray(mt, _U32)
        left, nxt = int(left), int(nxt)
        if left > 1 and nxt + left - 1 == N:
            pos, self._pre = nxt, mt[:0]
        else:
            pos, self._pre = N, temper(mt[nxt:nxt + left - 1])
        self._next = nxt
        self._bg.state = {"bit_generator": "MT19937", "state": {"key": mt, "pos": pos}}

    def words(self):
        """torch's state: (words uint32[624], int64 [left, next])."""
        st = self._bg.state["state"]
        mt, pos = np.asarray(st["key"], _U32), int(st["pos"])
        if pos < N:
            return mt, np.array([N + 1 - pos, pos], np.int64)
        return mt, np.array([self._pre.size + 1, self._next], np.int64)

    def u32(self, n):
        """The engine's next n draws (uint32), as torch's random() gives them."""
        k = min(n, self._pre.size)
        if k == 0:
            out = self._gen.integers(0, 0xFFFFFFFF, size=n, dtype=_U32, endpoint=True)
        else:
            out = np.empty(n, _U32)
            out[:k], self._pre = self._pre[:k], self._pre[k:]
            self._next += k
            out[k:] = self._gen.integers(0, 0xFFFFFFFF, size=n - k, dtype=_U32, endpoint=True)
        if n > k:
            self._next = N   # from now on pos 624 means torch's left 1, next 624
        return out

    def u64(self, n):
        """random64(): the first draw is the high word."""
        r = self.u32(2 * n).astype(np.uint64)
        return (r[0::2] << np.uint64(32)) | r[1::2]

    # torch's byte layout: seed u64, left i32, seeded i32, next u64, 624 words as u64,
    # normal_x/y/rho f64, normal_is_valid i32 (+4 pad), next float f32, its flag, 3 pad
    @_locked
    def get_state(self):
        mt, pos = self.words()
        head = struct.pack("<Qiiq", self.seed, int(pos[0]), 1, int(pos[1]))
        words = mt.astype("<u8").tobytes()
        nd = self.next_double
        tail = struct.pack("<dddi4x", 0.0, 0.0 if nd is None else nd, 0.0, nd is not None)
        nf = self.next_float
        tail += struct.pack("<f?3x", 0.0 if nf is None else nf, nf is not None)
        return np.frombuffer(head + words + tail, np.uint8).copy()

    @_locked
    def set_state(self, raw):
        raw = bytes(raw)
        seed, left, seeded, nxt = struct.unpack_from("<Qiiq", raw, 0)
        words = np.frombuffer(raw, "<u8", N, 24)
        if not (seeded and 0 < left <= N and 0 <= (nxt & 0xFFFFFFFF) <= N):
            raise RuntimeError("Invalid mt19937 state")
        _, ny, _, nvalid = struct.unpack_from("<dddi", raw, 24 + 8 * N)
        nf, fvalid = struct.unpack_from("<f?", raw, 24 + 8 * N + 32)
        self.seed = seed
        self.load(words.astype(_U32), left, nxt & 0xFFFFFFFF)   # torch keeps u32 words
        self.next_double = ny if nvalid else None
        self.next_float = np.float32(nf) if fvalid else None


def entropy_seed():
    """A nondeterministic 64-bit seed, as torch's seed() takes from /dev/urandom."""
    return int.from_bytes(os.urandom(8), "little")

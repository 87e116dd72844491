"""The tape: a thread-local Wengert list of fixed-width integer records and flat value arenas.

Every node (a leaf, a constant or an op's output) is one row of ``NODE_FIELDS`` int64s in
``nodes``. Arguments, shapes and attributes live in CSR form in their own flat arrays, so the
Numba sweep reads the whole graph without touching a Python object. ``array.array`` is
used for recording because appending to it costs about what appending to a list does, and
``np.frombuffer`` hands it to Numba without a copy; the values, appended in large pieces,
go into an ``Arena`` (core/arena.py: a NumPy buffer grown by doubling and reused by the
next tape).

Values: a node with fewer than ``BIG`` elements (and all of whose operands are small too) has
its value copied, as float64, into the ``val`` arena, and is differentiated inside the serial
sweep. The copy is late: a node's offset is handed out at once and its array kept, and the
kept arrays are written in one ``np.concatenate`` every 64 arrays or when the arena is read
(NumPy's overhead per call, not the bytes, was most of a small array's copy). Those arrays
are the tensors' own memory: a change in place before the copy is one the sweep's
saved-value checks raise on (the version counters), as they would have anyway. A large value
no derivative reads (an add's, a view's, a matrix product's: most of a training step's) is
not written (FLAG_UNWRITTEN) and has no offset (UNSET): an op recorded later that reads it
writes it then (``Tape.need``), else a backward gives it the place its adjoint needs,
after every written value (``Tape.place_unwritten``). Larger nodes
keep a reference to their NumPy array (``big_val``) and are differentiated by their op's
parallel kernel, called from Python between segments of the sweep.
Everything an @njit forward kernel needs to recompute a node is recorded (op code, argument
nodes, shapes, attributes, and the values of source nodes), so a tape can be replayed.
"""

import itertools
import os
import struct
import sys
import threading
import weakref
from array import array

import numpy as np

from .arena import _FLUSH_AT, Arena

# Op codes of the source nodes, the first records of the op table (engine/registry.py)
LEAF_CODE, CONST_CODE, BRIDGE_CODE = 0, 1, 2

# Field offsets of a node record, and the fields' names (for code that reads whole arrays
# of records: ``column``). What a sweep reads of an operand (voff, size, flags) comes first,
# within one cache line of the 104-byte record as often as can be.
(F_CODE, F_VOFF, F_SIZE, F_FLAGS, F_ARG, F_NARG, F_NDIM, F_SHP, F_IAT, F_NIAT, F_FAT,
 F_NFAT, F_BIG) = range(13)
NODE_FIELDS = 13
FIELD_NAMES = ("code", "voff", "size", "flags", "arg_ptr", "nargs", "ndim", "shape_ptr",
               "iat_ptr", "niat", "fat_ptr", "nfat", "big")
_FIELD = {name: f for f, name in enumerate(FIELD_NAMES)}
_NODE = struct.Struct(f"{NODE_FIELDS}q")
# array.extend(tuple) converts item by item (~1 us for a record); packing is ~3x cheaper
_ARGS = [struct.Struct(f"{n}q") for n in range(8)]
FLAG_NEEDS_GRAD = 1
FLAG_BIG = 2
FLAG_HOOK = 4  # gradient hooks registered: the sweep hands the node to Python
# The value's dtype is float32 (the arena holds float64 copies; create_graph rebuilds the
# node's Tensor in its own dtype from this bit)
FLAG_F32 = 8
# The value is not in the arena: no derivative recorded so far reads it (its voff is UNSET
# until a backward gives its adjoint a place)
FLAG_UNWRITTEN = 16
UNSET = -2
# a tape.dirty entry's first exempt node when no node is exempt
DIRTY_FOR_ALL = 1 << 62
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_NO_INTS = np.empty(0, np.int64)

# torch's grad_fn name of each op code: the op table (engine/registry.py) appends each op's as it
# is declared, so that a tensor names its node without reaching up into the ops layer
GRAD_FN_NAMES = []

# Elements from which a node leaves the serial sweep for its op's parallel kernel. Measured
# in bench/threshold.py: a 2-thread prange loop pays its fork/join back between 16k and 32k.
BIG = int(os.environ.get("NUMBAGRAD_BIG_THRESHOLD", 32768))


# held while a value not written is written or placed (Tape.need, Tape.place_unwritten): a
# recorder and another thread's backward may reach one node at once
_placing = threading.Lock()
# Bits of what an op's derivative reads (engine/registry.py OpDef.value_reads): operand 0, 1,
# 2, its output
READ_X0, READ_X1, READ_X2, READ_Y = 1, 2, 4, 8
# Values smaller than this are written even if nothing reads them: leaving one unwritten
# (and writing it when an op reads it) costs about what writing it does
# (at least 2: a one-element value may be a scalar graph's operand, which is always written)
_LATE_MIN = max(2, int(os.environ.get("NUMBAGRAD_LATE_MIN", 2048)))


class Tape:
    __slots__ = ("nodes", "args", "shapes", "iat", "fat", "val", "big_val", "sources",
                 "source_refs", "leaves", "leaf_nodes", "dirty", "freed", "any_freed",
                 "retained", "thread", "serial", "bridges", "hooks", "functions", "names",
                 "sites", "transposes",
                 "linear_t", "view_nodes", "big", "pinned", "traced_casts", "guards", "sweeps",
                 "node_objects", "node_metadata", "node_post_hooks", "output_of", "blas", "has_big",
                 "keep_all", "unwritten_nodes", "has_unwritten", "plain", "__weakref__")

    def __init__(self):
        self.nodes = array("q")
        self.args = bytearray()  # int64 argument nodes, packed (see push)
        self.shapes = array("q")
        self.iat = array("q")
        self.fat = array("d")
        self.val = Arena()
        self.big_val = []
        self.sources = {}  # id(tensor) -> node, for leaves and constant tensors
        self.source_refs = []  # keeps those tensors alive so their ids stay unique
        self.leaves = []  # (node, tensor) of the leaves that require grad
        self.leaf_nodes = array("q")  # their nodes, for a backward's vectorized reads
        # node -> (tensor description, version counter, producer, expected version, the
        # tensor, first exempt node) of values changed in place: a node reading one fails
        # unless it is the exempt one or later (the in-place op's own: DIRTY_FOR_ALL, none)
        self.dirty = {}
        self.freed = None  # uint8 per node once a backward has freed its saved values
        self.any_freed = False
        self.retained = {}  # node -> tensor that called retain_grad()
        self.thread = threading.get_ident()
        self.serial = next(_serials)  # creation order: bridges always point to older tapes
        # backward runs sweeping this tape now (their views pin its buffers: it cannot grow)
        self.sweeps = []
        self.bridges = {}  # node -> (older tape, its node) for non-leaves of older tapes
        self.hooks = {}  # node -> the list of hooks of its tensor (Tensor.register_hook)
        self.functions = {}  # node -> the custom autograd.Function call recorded there
        self.names = {}  # node -> grad_fn name shown instead of its op's (custom Functions)
        self.sites = {}  # node -> forward call site, recorded in anomaly mode
        # t() node -> its input's node, for transposes whose only consumer is the matrix
        # product F.linear recorded them for: that product's backward writes the input's
        # gradient in the input's own layout (engine.py), so no strided scatter is needed
        self.transposes = {}
        # F.linear's weight (a source) -> (its t() node, the weight's version then): a loop
        # that applies one layer at every step shares one transpose, as the replay merges them
        self.linear_t = {}
        # nodes recorded as views of their first input (sharing its memory and version
        # counter): changing that input in place changes their saved values too
        self.view_nodes = []
        # Nodes of at least this many elements keep their own array (see BIG). A tape traced
        # for compiled replay sets it out of reach: replay keeps every value in the arena.
        self.big = BIG
        # every value written, read or not (a tape traced for compiled replay)
        self.keep_all = False
        self.unwritten_nodes = []  # nodes recorded UNSET (place_unwritten)
        self.has_unwritten = False  # a node was recorded FLAG_UNWRITTEN (ever)
        self.has_big = False  # a node has FLAG_BIG (until then no operand's flag is read)
        # pinned: current_tape() keeps handing out this tape (a trace in progress)
        self.pinned = False
        # during a compile trace: the constants cast to another dtype on their way into the
        # graph (the tape holds the cast copy; the trace must watch the original for changes)
        self.traced_casts = None
        # during a compile trace: its guards (core/trace_guards.py), values read out of it
        self.guards = None
        # grad_fn objects (numbagrad/grad_fn.py), made on first use: the live object of each
        # node, its metadata dict, its post hooks, and each custom Function output's
        # (call node, output index)
        self.node_objects = self.node_metadata = self.node_post_hooks = self.output_of = None
        # a node calls BLAS on work big enough for its pool's size to count (engine/record.py):
        # backward and replay then hold the BLAS pools at one thread (numbagrad/_blas.py)
        self.blas = False
        self._replan()

    def _replan(self):
        # plain: nothing a scalar graph's op must look at (no backward sweeps the tape, no
        # value changed in place, no big value): push_0d's precondition, one read per op
        self.plain = not self.sweeps and not self.dirty and self.big > 1 and not self.has_big

    def add_sweep(self, sweep):
        """A backward (or close(): CLOSED) holds the tape: no node may be pushed."""
        self.sweeps.append(sweep)
        self.plain = False

    def drop_sweep(self, sweep):
        if sweep in self.sweeps:
            self.sweeps.remove(sweep)
            self._replan()

    def mark_dirty(self, node, entry):
        """``node``'s value changed in place: ``entry`` as ``dirty``'s (see __init__)."""
        self.dirty[node] = entry
        self.plain = False

    def __len__(self):
        return len(self.nodes) // NODE_FIELDS

    def close(self):
        """Take no more nodes: every op from now on records on a new tape, bridging this
        one's tensors (views of its buffers may outlive any sweep, or it has outgrown)."""
        if CLOSED not in self.sweeps:
            self.add_sweep(CLOSED)

    def outgrown(self):
        """Whether a differentiated tape is large enough that new graphs built on its live
        tensors should go on tapes of their own: else each such graph (a loss recomputed
        from one kept non-leaf, in a loop) stays here while that tensor lives."""
        return not self.pinned and (len(self.nodes) >= FRESH_TAPE_NODES * NODE_FIELDS or
                                    self.val.n >= _OUTGROWN_VALUES)

    def __del__(self):
        val = getattr(self, "val", None)
        if val is not None:
            val.release()

    def push(self, code, value, size, shape, args, iat, fat, flags, reads=READ_Y):
        """Append one node; returns its index. ``value`` is the NumPy value (array or scalar);
        ``reads``: the READ_* bits of the op (as push_array's: without READ_Y, a large value
        is not written)."""
        if flags & FLAG_BIG and _native_push_big is not None:
            node = _native_push_big(self, code, value, size, shape, args, iat, fat, flags)
            if node is not None:
                return node
        nodes = self.nodes
        node = len(nodes) // NODE_FIELDS
        if flags & FLAG_BIG:
            voff = -1
            big = len(self.big_val)
            self.big_val.append(value)
            self.has_big, self.plain = True, False
        else:
            big = -1
            val = self.val
            voff = val.n
            if size == 1:
                val.append(float(value) if shape == () else float(value.reshape(-1)[0]))
            elif size < _LATE_MIN or reads & READ_Y or self.keep_all:
                val.keep(value, size)
            else:
                voff = UNSET
                flags |= FLAG_UNWRITTEN
        self_args = self.args
        nargs = len(args)
        shapes = self.shapes
        niat = len(iat)
        # the record goes in last: an append that fails (BufferError: another thread's
        # backward views these buffers) leaves only entries no node points to
        record = _NODE.pack(code, voff, size, flags, len(self_args) >> 3, nargs, len(shape),
                            len(shapes), len(self.iat), niat, len(self.fat), len(fat), big)
        if shape:
            shapes.extend(shape)
        if nargs:
            self_args += (_ARGS[nargs].pack(*args) if nargs < 8 else
                          struct.pack(f"{nargs}q", *args))
        if niat:
            if isinstance(iat, np.ndarray):  # index maps: one C-level copy, not an int loop
                self.iat.frombytes(np.ascontiguousarray(iat, np.int64).view(np.uint8))
            else:
                self.iat.extend(iat)
        if len(fat):
            self.fat.extend(fat)
        nodes.frombytes(record)
        if flags & FLAG_UNWRITTEN:  # (after the record: a backward's place_unwritten reads it)
            self.unwritten_nodes.append(node)
            self.has_unwritten = True
        return node

    def push_0d(self, code, value, a, b=-1, fat=()):
        """push() of a 0-d float64 result of elementwise op ``code`` on node ``a`` (and ``b``,
        or -1 for a unary op), with float attributes ``fat``: a scalar graph's node, in
        fewer steps, on a tape the caller found ``plain``."""
        nodes = self.nodes
        node = len(nodes) // NODE_FIELDS
        val = self.val
        if val.pending:
            val.flush()
        voff = val.n
        try:
            val.cells[voff] = value
        except IndexError:  # (the arena is full: the rare case pays for the check)
            val._grow(voff + 1)
            val.cells[voff] = value
        val.n = voff + 1
        self_args = self.args
        # (no shape and no int attributes: their pointers are never read, 0 saves two len())
        if fat:
            fats = self.fat
            record = _NODE.pack(code, voff, 1, FLAG_NEEDS_GRAD, len(self_args) >> 3,
                                1 if b < 0 else 2, 0, 0, 0, 0, len(fats), len(fat), -1)
            fats.extend(fat)
        else:
            record = _NODE.pack(code, voff, 1, FLAG_NEEDS_GRAD, len(self_args) >> 3,
                                1 if b < 0 else 2, 0, 0, 0, 0, 0, 0, -1)
        self_args += _ARGS[1].pack(a) if b < 0 else _ARGS[2].pack(a, b)
        nodes.frombytes(record)  # last, as in push()
        return node

    def push_array(self, code, value, a, b, iat, fat, f32, reads):
        """push() of an array (or NumPy scalar) result of op ``code`` on node ``a`` (and
        ``b``, or -1), with int and float attributes ``iat`` and ``fat`` (tuples): an array
        op's node, in fewer steps. ``reads``: the op's READ_* bits (its derivative reads
        its output: the value is written; else, of _LATE_MIN elements or more, not: need).
        The operands it reads are the caller's to write (need). Returns -1, pushing
        nothing, where push() is needed (a big value or operand, no element)."""
        nodes = self.nodes
        size = value.size
        if size >= self.big or not size or self.has_big and (
                nodes[a * NODE_FIELDS + F_FLAGS] & FLAG_BIG or
                (b >= 0 and nodes[b * NODE_FIELDS + F_FLAGS] & FLAG_BIG)):
            return -1
        val = self.val
        voff = val.n
        flags = FLAG_NEEDS_GRAD | f32
        if size < _LATE_MIN or reads & READ_Y or self.keep_all:
            pending = val.pending  # Arena.keep, inline: this is every array op's path
            if not pending:
                val.start = voff
            elif len(pending) >= _FLUSH_AT:
                val.flush()
                val.start = voff
                pending = val.pending
            pending.append(value)
            val.n = voff + size
        else:
            voff = UNSET
            flags |= FLAG_UNWRITTEN
        shape = value.shape
        ndim = len(shape)
        shapes = self.shapes
        self_args = self.args
        record = _NODE.pack(code, voff, size, flags, len(self_args) >> 3,
                            1 if b < 0 else 2, ndim, len(shapes), len(self.iat), len(iat),
                            len(self.fat), len(fat), -1)
        if ndim:
            shapes.extend(shape)
        self_args += _ARGS[1].pack(a) if b < 0 else _ARGS[2].pack(a, b)
        if iat:
            self.iat.extend(iat)
        if fat:
            self.fat.extend(fat)
        node = len(nodes) // NODE_FIELDS
        nodes.frombytes(record)  # last, as in push()
        if flags & FLAG_UNWRITTEN:
            self.unwritten_nodes.append(node)
            self.has_unwritten = True
        return node

    def need(self, node, data):
        """An op recorded now reads ``node``'s value, ``data`` (its tensor's array): write it
        if it was not (after the others if it has no place yet)."""
        base = node * NODE_FIELDS
        nodes = self.nodes
        if not nodes[base + F_FLAGS] & FLAG_UNWRITTEN:
            return
        with _placing:  # (a backward in another thread may be placing it)
            flags = nodes[base + F_FLAGS]
            if flags & FLAG_UNWRITTEN:
                voff = nodes[base + F_VOFF]
                if voff == UNSET:
                    nodes[base + F_VOFF] = self.val.n
                    self.val.keep(data, nodes[base + F_SIZE])
                else:
                    self.val.write_at(voff, data)
                nodes[base + F_FLAGS] = flags & ~FLAG_UNWRITTEN

    def place_unwritten(self):
        """Give each node recorded UNSET and still so the place its adjoint needs, after
        every value written so far (a backward's arrays span it; its values stay unwritten)."""
        with _placing:
            nodes, val = self.nodes, self.val
            if val.pending:
                val.flush()
            n = val.n
            for node in self.unwritten_nodes:
                base = node * NODE_FIELDS
                if nodes[base + F_VOFF] == UNSET:
                    nodes[base + F_VOFF] = n
                    n += nodes[base + F_SIZE]
            self.unwritten_nodes = []
            val.placed += n - val.n
            val.n = n

    def is_big(self, node):
        """Whether ``node`` keeps its own array (FLAG_BIG)."""
        return bool(self.nodes[node * NODE_FIELDS + F_FLAGS] & FLAG_BIG)

    def unwritten(self, node):
        """Whether ``node``'s value was never written (no derivative read it)."""
        return bool(self.nodes[node * NODE_FIELDS + F_FLAGS] & FLAG_UNWRITTEN)

    def source(self, t, with_big=False):
        """The node of a leaf or constant tensor on this tape, creating it on first use;
        ``with_big``: as a big node (its own array) whatever its size, from two elements."""
        node = self.sources.get(id(t))
        if node is None and _native_source is not None and (with_big or t._data.size >= self.big):
            node = _native_source(self, t, with_big)
        if node is None:
            if self.guards is not None and id(t) in self.guards.int_args:
                self.guards.int_static.add(self.guards.int_args[id(t)])  # a constant now
            data = t._data
            size = data.size
            big = FLAG_BIG if size >= self.big or with_big and size > 1 else 0
            flags = (FLAG_NEEDS_GRAD if t._requires_grad else 0) | big | \
                (FLAG_F32 if data.dtype is _F32 else 0)
            code = LEAF_CODE if t._requires_grad else CONST_CODE
            if big or size < 2:
                node = self.push(code, data, size, data.shape, (), (), (), flags)
            else:
                node = self._push_source(code, data, size, flags)
            self._capture(t, node)
            if t._requires_grad:
                self.leaves.append((node, t))
                self.leaf_nodes.append(node)
        return node

    def _push_source(self, code, data, size, flags):
        """push() of a source's array value (kept in the arena, no operands, no attributes),
        in fewer steps: a loop's input slice (``xs[t]``) is a new source at every step."""
        val = self.val
        voff = val.n
        val.keep(data, size)
        shape = data.shape
        shapes = self.shapes
        record = _NODE.pack(code, voff, size, flags, len(self.args) >> 3, 0, len(shape),
                            len(shapes), len(self.iat), 0, len(self.fat), 0, -1)
        shapes.extend(shape)
        node = len(self.nodes) // NODE_FIELDS
        self.nodes.frombytes(record)  # last, as in push()
        return node

    def _capture(self, t, node):
        """Remember source ``t``: its id maps to ``node`` here, and ``t`` knows this tape, so
        an in-place change of ``t`` can mark every tape that saved its old value."""
        self.sources[id(t)] = node
        self.source_refs.append(t)
        tapes = getattr(t, "_captured_by", None)
        if tapes is None:
            tapes = t._captured_by = []
        elif len(tapes) >= _PRUNE_AT:
            # a tensor used in every step of a loop meets a new tape each step: forget the
            # dead ones, or the list grows by one weak reference per step
            tapes[:] = [ref for ref in tapes if ref() is not None]
        tapes.append(weakref.ref(self))

    # ---- reading one node (the layers above do not know the record's layout) ----------
    def field(self, node, f):
        return self.nodes[node * NODE_FIELDS + f]

    def code(self, node):
        """The op code of ``node``."""
        return self.nodes[node * NODE_FIELDS + F_CODE]

    def flags(self, node):
        return self.nodes[node * NODE_FIELDS + F_FLAGS]

    def set_flag(self, node, flag):
        self.nodes[node * NODE_FIELDS + F_FLAGS] |= flag

    def needs_grad(self, node):
        return bool(self.nodes[node * NODE_FIELDS + F_FLAGS] & FLAG_NEEDS_GRAD)

    def grad_fn_name(self, node):
        """torch's name of ``node``'s grad_fn (a custom Function's own, else its op's)."""
        name = self.names.get(node) if self.names else None
        return name or GRAD_FN_NAMES[self.nodes[node * NODE_FIELDS + F_CODE]]

    def shape_of(self, node):
        base = node * NODE_FIELDS
        s = self.nodes[base + F_SHP]
        return tuple(self.shapes[s:s + self.nodes[base + F_NDIM]])

    def arg_nodes(self, node):
        base = node * NODE_FIELDS
        a = self.nodes[base + F_ARG]
        n = self.nodes[base + F_NARG]
        return struct.unpack_from(f"{n}q", self.args, a * 8)

    def attrs(self, node):
        """(int attributes as an int64 array, float attributes as a tuple) of ``node``."""
        base = node * NODE_FIELDS
        i0, ni = self.nodes[base + F_IAT], self.nodes[base + F_NIAT]
        f0, nf = self.nodes[base + F_FAT], self.nodes[base + F_NFAT]
        iat = np.array(self.iat[i0:i0 + ni], np.int64) if ni else _NO_INTS
        return iat, tuple(self.fat[f0:f0 + nf]) if nf else ()

    def float_dtype(self, node):
        """float32 for a node whose value is float32, else float64 (the arena's dtype)."""
        return _F32 if self.nodes[node * NODE_FIELDS + F_FLAGS] & FLAG_F32 else _F64

    def big_value(self, node):
        """The array a big node keeps (see BIG), or None for a node valued in the arena."""
        big = self.nodes[node * NODE_FIELDS + F_BIG]
        return self.big_val[big] if big >= 0 else None

    def value(self, node):
        """``node``'s value in its shape: a big node's own array, else a copy of its arena
        values in ``float_dtype(node)``. A value no derivative reads was not kept: a
        RuntimeError names the node."""
        big = self.big_value(node)
        if big is not None:
            return big
        if self.unwritten(node):
            raise RuntimeError(f"numbagrad: the value of node {node} ({self.grad_fn_name(node)}) "
                               f"was not kept: no derivative reads it")
        base = node * NODE_FIELDS
        voff, size = self.nodes[base + F_VOFF], self.nodes[base + F_SIZE]
        return self.val.array()[voff:voff + size].astype(self.float_dtype(node)).reshape(
            self.shape_of(node))

    def overwrite(self, node, data):
        """Make ``data`` (the node's tensor's current values, in place) ``node``'s recorded
        value: a change through ``.data``, which torch's saved tensors see too."""
        big = self.nodes[node * NODE_FIELDS + F_BIG]
        if big >= 0:
            self.big_val[big] = data  # (the old array may be another tensor's memory now)
            return
        base = node * NODE_FIELDS
        voff, size = self.nodes[base + F_VOFF], self.nodes[base + F_SIZE]
        if size == np.size(data) and not self.nodes[base + F_FLAGS] & FLAG_UNWRITTEN:
            self.val.array()[voff:voff + size] = np.asarray(data, np.float64).reshape(-1)

    def records(self):
        """The node records as an (n, NODE_FIELDS) int64 array: a copy (a NumPy view would
        pin the ``array.array``, and the next push would raise BufferError)."""
        return np.frombuffer(self.nodes, np.int64).reshape(len(self), NODE_FIELDS).copy()

    def bridge(self, t):
        """The node standing, on this tape, for non-leaf ``t`` of an older tape."""
        node = self.sources.get(id(t))
        if node is None:
            data = t._array()
            flags = FLAG_NEEDS_GRAD | (FLAG_BIG if data.size >= self.big else 0) | \
                (FLAG_F32 if data.dtype is _F32 else 0)
            node = self.push(BRIDGE_CODE, data, data.size, data.shape, (), (), (), flags)
            self._capture(t, node)
            self.bridges[node] = (t._tape, t._node)
        return node


_serials = itertools.count()
_PRUNE_AT = 8  # weak references to tapes a source keeps before dropping the dead ones
# A new graph starts on a fresh tape once the current one holds this many nodes, so that
# memory of graphs nobody references any more is let go with their tensors.
FRESH_TAPE_NODES = 1 << 16
# ... or, after a backward, once its arena holds this many values (32 MB)
_OUTGROWN_VALUES = 1 << 22
# in Tape.sweeps: the tape takes no more nodes (Tape.close)
CLOSED = "closed"


class _Local(threading.local):
    tape = None


_local = _Local()


def column(records, name):
    """Field ``name`` (one of FIELD_NAMES) of every record in ``records``, an (n, NODE_FIELDS)
    array such as ``Tape.records()``: a view, writable when ``records`` is."""
    return records[:, _FIELD[name]]


# references to the current tape that nothing else holds: this thread's slot, current_tape's
# local name and getrefcount's argument (every tensor of the graph adds one: its _tape)
_UNHELD = 3


# push()'s big nodes and source()'s new big sources in C (engine/fast_push.py sets them where
# built; same arguments less ``reads``): each returns the node, or None for Python to push it
_native_push_big = _native_source = None


def current_tape():
    """The tape a new graph (an op on leaves and constants only) is recorded on."""
    tape = _local.tape
    if tape is not None and tape.pinned:
        return tape
    if tape is None or (sys.getrefcount(tape) <= _UNHELD and tape.nodes) or \
            len(tape.nodes) >= FRESH_TAPE_NODES * NODE_FIELDS:
        # Nothing holds the current graph (no tensor of it is alive: torch would have freed
        # it), or it is large: start a fresh tape. Old tapes are never reused; they die with
        # their tensors, and later ops that combine their tensors with newer ones bridge
        # between tapes.
        tape = _local.tape = Tape()
    return tape


def fresh_tape():
    """A new tape for this thread's next graph (its current one cannot grow: another
    thread's backward is sweeping it)."""
    tape = _local.tape = Tape()
    return tape


def traced_tape():
    """The tape of a numbagrad.compile trace in progress on this thread, or None."""
    tape = _local.tape
    return tape if tape is not None and tape.traced_casts is not None else None


def install(tape):
    """Make ``tape`` this thread's current tape; returns the previous one (for restore)."""
    previous = _local.tape
    _local.tape = tape
    return previous


def retire(tape):
    """After a backward that freed ``tape``'s graph, new ops go onto a fresh tape."""
    if _local.tape is tape:
        _local.tape = None

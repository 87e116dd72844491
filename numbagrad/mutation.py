"""Changing a tensor in place: the op computed out of place and written into its memory (or
through a view into its base, as torch's CopySlices), its version counters bumped, and the
nodes that saved the old value marked, so that a backward through them raises torch's error.
The Tensor methods that change a tensor (numbagrad/_methods.py, _inplace_forms.py) go
through ``_inplace``; forward AD wraps it there (``_methods._inplace``)."""

import weakref

import numpy as np

from .core import grad_mode
from .core.tape import DIRTY_FOR_ALL
from .engine.record import record
from .engine.registry import OPS
from .ops.elementwise import pointwise
from .ops.index import indexing
from .tensor import WriteThrough


def _inplace(self, compute):
    """Run ``compute(self)`` out of place, write the result into self's storage, and move
    self onto the new node, as torch rebases a tensor onto an in-place op's grad_fn."""
    recording = grad_mode.state.enabled
    if recording and self._tape is None and self._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = self._base
    if recording and base is not None and base._tape is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    # the nodes from here on are the in-place op's: their reads of self's old value are
    # saved before the change (torch saves a clone), not reads of a value changed since
    since = len(self._tape) if self._tape is not None else None
    result = compute(self)
    if result.dtype is not self.dtype and not np.can_cast(result._data.dtype, self._data.dtype,
                                                           "same_kind"):
        raise RuntimeError(f"result type {result.dtype.scalar_name} can't be cast to the "
                           f"desired output type {self.dtype.scalar_name}")
    if np.shape(result._data) != np.shape(self._data):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(np.shape(result._data))}")
    if recording and base is not None and (base._requires_grad or result._requires_grad) and \
            isinstance(base._data, np.ndarray):
        return _inplace_through_view(self, base, result)
    data = self._data
    if since is not None and self._tape.val.pending:
        self._tape.val.flush()  # (the old value may be a pending array: this very memory)
    if isinstance(data, np.ndarray):
        np.copyto(data, result._data, casting="unsafe")
    else:
        self._data = np.asarray(result._data).astype(data.dtype)[()]
    _bump_version(self, since)
    if result._tape is not None:
        self._rebase(result._tape, result._node)
        self._requires_grad = True
    return self


def _inplace_through_view(view, base, result):
    """An in-place op on a view of a tensor in a graph, as torch records it: the base takes
    the view's new values at the view's positions (CopySlices over the base's node), and the
    view, whose node is then stale, is recorded again over the base's new node on its next
    use (fresh_view: AsStridedBackward0)."""
    positions = np.arange(base._data.size).reshape(base._data.shape)
    for fn in view._view[0]:
        positions = fn(positions)
    flat = np.asarray(positions).reshape(-1)
    if np.unique(flat).size != flat.size:
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the tensor "
                           "before performing the operation.")
    value = result if result.dtype is base.dtype else pointwise.to_dtype(result, base.dtype)
    new = base._data.copy()
    new.reshape(-1)[flat] = np.asarray(value._data).reshape(-1)
    region = np.shape(positions)
    out = record(indexing.COPY_SLICES, new, (base, value), (len(region), *region, *flat.tolist()))
    np.copyto(base._data, new)  # the view's memory too
    _bump_version(base)  # (the view shares the counter)
    if out._tape is not None:
        base._rebase(out._tape, out._node)
        base._requires_grad = True
        view._requires_grad = True
    return view


def _bump_version(t, since=None):
    """Mark the nodes whose recorded value ``t`` was: backward through a saver then fails
    (one recorded before node ``since`` of ``t``'s tape: the in-place op's own nodes, from
    ``since`` on, read the value before the change).
    The tensors sharing ``t``'s memory in a graph (the base of a view, the tensor a
    detach() alias was taken of) have changed too: their nodes are marked, and their next
    use records their new values (record.refresh, tape.source). A ``.data`` alias writes
    its change into the recorded values instead (tensor.WriteThrough)."""
    t._vc[0] += 1
    marks = []  # (tape, node, producer, tensor described, the tensor named in the message)
    if t._tape is not None:
        producer = OPS[t._tape.code(t._node)].grad_fn
        marks.append((t._tape, t._node, producer, t, weakref.ref(t), since))
    _sources_changed(t, marks)
    if t._base is not None or len(t._vc) > 1:  # (not an optimizer's parameter, as a rule)
        for owner in _sharing_memory(t):
            if owner._tape is not None:
                producer = OPS[owner._tape.code(owner._node)].grad_fn
                # (no tensor: torch names the op the owner came from, not its refreshed node)
                marks.append((owner._tape, owner._node, producer, owner, _no_tensor, None))
            else:
                _sources_changed(owner, marks)
        for entry in t._vc[1:]:
            if type(entry) is WriteThrough:
                entry.write()
    for tp, node, producer, x, named, exempt in marks:
        prev = tp.dirty.get(node)
        expected = prev[3] if prev else t._vc[0] - 1
        exempt = prev[5] if prev else DIRTY_FOR_ALL if exempt is None else exempt
        # the counter itself, not its value: later bumps (the source link is gone after the
        # first) must still show in the message, as torch reports the current version; the
        # tensor's description is formatted only if that message is ever raised (an
        # optimizer step bumps every parameter, and almost never sees the message); the
        # tensor itself, weakly, for the node it is the output of when the message is made
        tp.mark_dirty(node, ((x.dtype, x._data.shape), t._vc, producer, expected, named,
                             exempt))


def _sources_changed(t, marks):
    """A leaf or constant ``t`` changed: the tapes that captured it forget its node (later
    uses record the new value), which is marked for the savers."""
    for ref in getattr(t, "_captured_by", None) or ():
        tp = ref()
        if tp is not None and id(t) in tp.sources:
            marks.append((tp, tp.sources.pop(id(t)), None, t, weakref.ref(t), None))
    t._captured_by = None


def _sharing_memory(t):
    """The tensors other than ``t`` whose values ``t``'s memory is: the base of a view, and
    those an alias was taken of (registered on the shared counter by Tensor.detach, .data)."""
    out = [] if t._base is None else [t._base]
    for ref in t._vc[1:]:
        if type(ref) is WriteThrough:  # (a .data alias: written through, in _bump_version)
            continue
        owner = ref()
        if owner is not None and owner is not t and owner is not t._base and owner._requires_grad:
            out.append(owner)
    return out


def _no_tensor():
    return None

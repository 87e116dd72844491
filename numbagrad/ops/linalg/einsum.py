"""torch.einsum as torch computes it: per operand, diagonals of repeated labels and sums of
labels nobody else needs; then the operands contracted pairwise, left to right, each pair as
one permute + reshape + bmm (mm without batch labels) + reshape; a last permute to the output
order. The result's grad_fn is what the last of those ops records (ViewBackward0, SumBackward1,
PermuteBackward0), as torch's."""

import numpy as np

from ..reduce.reductions import sum as _sum
from ..shape.movement import expand, permute, reshape
from .common import const
from .matmul import bmm, mm

_ELLIPSIS_BASE = 0x2460  # labels standing for the dims an ellipsis covers (never typed)


def _parse(equation, operands):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        more = "more" if len(operands) > len(terms) else "fewer"
        raise RuntimeError(f"einsum(): {more} operands were provided than specified in the "
                         "equation")
    labels_of, ell_ndim = [], 0
    for k, (term, op) in enumerate(zip(terms, operands)):
        letters = term.replace("...", "")
        if any(not c.isalpha() for c in letters):
            bad = next(c for c in letters if not c.isalpha())
            raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(bad)} in "
                             f"the equation string, subscripts must be in [a-zA-Z]")
        if "..." in term:
            covered = op.ndim - len(letters)
            if covered < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({len(letters)}) is more than the number of dimensions "
                                   f"({op.ndim}) for operand {k}")
            ell_ndim = max(ell_ndim, covered)
            head, _, tail = term.partition("...")
            labels_of.append((list(head), covered, list(tail)))
        else:
            if len(letters) != op.ndim:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({len(letters)}) does not match the number of dimensions "
                                   f"({op.ndim}) for operand {k} and no ellipsis was given")
            labels_of.append((list(term), 0, []))
    # an ellipsis' dims align to the right across operands (broadcast), labelled by position
    ell_labels = [chr(_ELLIPSIS_BASE + i) for i in range(ell_ndim)]
    per_operand = []
    for head, covered, tail in labels_of:
        per_operand.append(head + ell_labels[ell_ndim - covered:] + tail)
    if arrow:
        if rhs.count("...") and not ell_ndim and not any("..." in t for t in terms):
            raise RuntimeError("einsum(): ellipsis in the output without one in the inputs")
        head, dots, tail = rhs.partition("...")
        out = list(head) + (ell_labels if dots else []) + list(tail)
        for c in out:
            if not any(c in labs for labs in per_operand):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                 "equation for any input operand")
    else:
        counts = {}
        for labs in per_operand:
            for c in labs:
                counts[c] = counts.get(c, 0) + 1
        out = ell_labels + sorted(c for c, n in counts.items()
                                  if n == 1 and ord(c) < _ELLIPSIS_BASE)
    return per_operand, out


def _check_sizes(per_operand, operands):
    """Each letter one size across the operands (1 broadcasts), as torch checks."""
    seen = {}
    for k, (labels, op) in enumerate(zip(per_operand, operands)):
        for c, s in zip(labels, op.shape):
            if ord(c) >= _ELLIPSIS_BASE:
                continue
            before = seen.get(c)
            if before is not None and s != before and 1 not in (s, before):
                raise RuntimeError(f"einsum(): subscript {c} has size {s} for operand {k} which "
                                   f"does not broadcast with previously seen size {before}")
            if before is None or before == 1:
                seen[c] = s


def _take_diagonals(x, labels):
    """Repeated labels of one operand: their diagonal, kept at the first occurrence."""
    while len(set(labels)) != len(labels):
        seen = {}
        for j, c in enumerate(labels):
            if c in seen:
                i = seen[c]
                break
            seen[c] = j
        n = x.shape[i]
        shape = [1] * x.ndim
        shape[i], shape[j] = n, n
        x = _sum(x * const(np.eye(n).reshape(shape), x._data.dtype), j)
        labels = labels[:j] + labels[j + 1:]
    return x, labels


def einsum(equation, *operands):
    """Products of the operands summed over the indices an Einstein-notation ``equation`` names.

    Same as ``torch.einsum``.
    """
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    per_operand, out = _parse(equation, operands)
    _check_sizes(per_operand, operands)
    items = []
    for x, labels in zip(operands, per_operand):
        x, labels = _take_diagonals(x, labels)
        items.append([x, labels])
    for k, (x, labels) in enumerate(items):
        # labels no other operand and not the output need: summed now
        others = set(out).union(*(set(lab) for j, (_, lab) in enumerate(items) if j != k))
        gone = [d for d, c in enumerate(labels) if c not in others]
        if gone and len(items) > 1:
            items[k] = [_sum(x, tuple(gone)), [c for c in labels if c in others]]
    x, labels = items[0]
    for k in range(1, len(items)):
        later = set(out).union(*(set(lab) for _, lab in items[k + 1:]))
        x, labels = _contract(x, labels, items[k][0], items[k][1], later)
    gone = [d for d, c in enumerate(labels) if c not in out]
    if gone:
        x = _sum(x, tuple(gone))
        labels = [c for c in labels if c in out]
    if labels != out:
        x = permute(x, *[labels.index(c) for c in out])
    return x


def _contract(a, la, b, lb, keep):
    """``a`` (labels ``la``) times ``b`` summed over the shared labels ``keep`` does not hold,
    as one (batched) matrix product."""
    size = {}
    for x, labs in ((a, la), (b, lb)):
        for c, s in zip(labs, x.shape):
            if size.get(c, 1) != 1 and s != 1 and size[c] != s:
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes "
                                   f"(original->remapped): {list(a.shape)} and "
                                   f"{list(b.shape)}")
            size[c] = max(size.get(c, 1), s)
    shared = [c for c in la if c in lb]
    batch = [c for c in shared if c in keep]
    summed = [c for c in shared if c not in keep]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]
    if not summed:
        # nothing to sum: a broadcast product (MulBackward0, as torch's)
        a = _arranged(a, la, batch + left, size)
        b = _arranged(b, lb, batch + right, size)
        nbatch = [size[c] for c in batch]
        a = reshape(a, *nbatch, *[size[c] for c in left], *[1] * len(right))
        b = reshape(b, *nbatch, *[1] * len(left), *[size[c] for c in right])
        return a * b, batch + left + right
    a = _arranged(a, la, batch + left + summed, size)
    b = _arranged(b, lb, batch + summed + right, size)
    nb, nl, nk, nr = (int(np.prod([size[c] for c in group], dtype=np.int64))
                      for group in (batch, left, summed, right))
    if batch:
        prod = bmm(reshape(a, nb, nl, nk), reshape(b, nb, nk, nr))
    else:
        prod = mm(reshape(a, nl, nk), reshape(b, nk, nr))
    labels = batch + left + right
    return reshape(prod, *[size[c] for c in labels]), labels


def _arranged(x, labels, order, size):
    """``x`` permuted to ``order`` with its size-1 (broadcast) dims expanded."""
    if labels != order:
        x = permute(x, *[labels.index(c) for c in order])
    target = [size[c] for c in order]
    if list(x.shape) != target:
        x = expand(x, *target)
    return x

# Over 600 lines: torch's one module, ported in its order so that the two read side by side.
"""gradcheck and gradgradcheck: torch.autograd.gradcheck's checks for numbagrad tensors.

A port of ``torch/autograd/gradcheck.py`` (torch 2.13) for real, dense tensors:

* the numerical Jacobian by central differences, perturbing each element of the inputs' data
  in place (``(f(x + eps) - f(x - eps)) / (2 eps)``) and restoring it;
* the analytical Jacobian by ``numbagrad.autograd.grad`` with one-hot ``grad_outputs``, row
  by row, computed twice to check that backward is deterministic (``nondet_tol``);
* the comparison ``|a - n| <= atol + rtol * |n|`` (torch.allclose), failures raised as
  :class:`GradcheckError` with torch's messages, or ``False`` with ``raise_exception=False``;
* torch's side checks: backward multiplied by ``grad_output`` (zero seeds give zero
  gradients), "undefined" output gradients (numbagrad has no undefined gradients: a zero
  seed stands for one), the double-precision warning, stride-0 inputs, and ``fast_mode``
  (random projections ``v^T J u`` instead of whole Jacobians).

``check_forward_ad`` (and gradgradcheck's ``check_fwd_over_rev``) build the analytical
Jacobian by forward-mode AD instead (gradcheck_modes.py). vmap has no batching rules in
numbagrad: ``check_batched_grad`` and ``check_batched_forward_grad`` raise
NotImplementedError when set to True. There are no complex or
sparse tensors, so torch's real/imaginary split and ``masked`` densification have nothing to
do (``masked`` still selects allclose over exact zeros in the grad_output check).
"""

import contextlib
import warnings

import numpy as np

from ..core import tape as tape_mod
from ..core import torch_rng
from ..factories import _engine
from ..tensor import Tensor, _make
from . import gradcheck_modes
from .api import grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    r"""Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()

_NO_VMAP = ("numbagrad: {} checks vmap's batching rules for forward mode, which numbagrad "
            "does not have (its vmap calls the function once per row)")

# torch._make_vectors draws fast mode's random vectors from a new torch.Generator(), whose
# default seed is this. Its CPU engine is an MT19937 seeded with the low 32 bits, and
# torch.rand (float32) keeps the low 24 bits of each 32-bit draw: NumPy's MT19937 with the
# same seeding yields the very same vectors.
_FAST_MODE_SEED = 67280421310721


# ---- small helpers ------------------------------------------------------------------------
def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_float_tensor(x):
    return isinstance(x, Tensor) and x.dtype.is_floating_point


def _requires_grad(x):
    return isinstance(x, Tensor) and x._requires_grad


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if _requires_grad(o))


def _diff_inputs(inputs):
    return [x for x in inputs if _requires_grad(x)]


def _grad(outputs, inputs, grad_outputs, **kwargs):
    return grad(outputs, inputs, grad_outputs, **kwargs)


def _fmt(t):
    """What torch's f"{tensor}" gives: a 0-d tensor formats as its Python number."""
    if t.ndim == 0:
        return str(t.item())
    return repr(t)


def _allclose(a, b, rtol, atol):
    """torch.allclose after type promotion (_allclose_with_type_promotion)."""
    a, b = np.asarray(a._data), np.asarray(b._data)
    dt = np.result_type(a.dtype, b.dtype)
    return bool(np.allclose(a.astype(dt), b.astype(dt), rtol=rtol, atol=atol))


@contextlib.contextmanager
def _fresh_graph():
    """Record what runs inside on a tape of its own.

    A tape saves a leaf's value the first time the leaf is used on it and reuses that node
    afterwards (``Tape.source``). A perturbed evaluation recorded on the tape that already
    holds the unperturbed graph would therefore reuse the unperturbed value, which matters as
    soon as ``func`` differentiates its own graph (gradgradcheck's ``new_func``). On a fresh
    tape the leaf is captured anew with its perturbed value, and the graph of the
    unperturbed call, which the analytical Jacobian differentiates, is left untouched."""
    saved = tape_mod.install(None)
    try:
        yield
    finally:
        tape_mod.install(saved)


def _forget_dead_tapes(t):
    """Drop ``t``'s weak references to the perturbed evaluations' tapes, all dead by now."""
    refs = getattr(t, "_captured_by", None)
    if refs:
        refs[:] = [r for r in refs if r() is not None]


# ---- the numerical Jacobian ----------------------------------------------------------------
def _check_outputs_same_dtype_and_shape(output1, output2, eps, idx=None):
    # Check that the returned outputs don't have different dtype or shape when you
    # perturb the input
    on_index = f"on index {idx} " if idx is not None else ""
    if output1.shape != output2.shape:
        raise AssertionError(
            f"Expected `func` to return outputs with the same shape"
            f" when inputs are perturbed {on_index}by {eps}, but got:"
            f" shapes {output1.shape} and {output2.shape}."
        )
    if output1.dtype != output2.dtype:
        raise AssertionError(
            f"Expected `func` to return outputs with the same dtype"
            f" when inputs are perturbed {on_index}by {eps}, but got:"
            f" dtypes {output1.dtype} and {output2.dtype}."
        )


def _current_value(x):
    """``x`` as a perturbed evaluation must see it.

    A non-leaf input (a view of a leaf, or any op's output) is a node of the tape it was
    recorded on, and that node holds a copy of the value it had then: the in-place
    perturbation reaches its memory but not that copy. Ops on ``x`` are recorded onto its
    tape, so a ``func`` that differentiates its own graph (gradgradcheck's ``new_func``)
    would mix the copy with the perturbed memory. A leaf sharing ``x``'s memory is captured
    afresh on the fresh tape instead; the numerical Jacobian depends only on the values."""
    if not isinstance(x, Tensor) or x._tape is None:
        return x
    stand_in = _make(x._array())
    stand_in._requires_grad = x._requires_grad
    return stand_in


def _evaluate(func, inputs):
    """``func(*inputs)`` on a graph of its own, at the inputs' current values; the outputs'
    values, copied (None for outputs that are not tensors)."""
    with _fresh_graph():
        outs = _as_tuple(func(*(_current_value(x) for x in inputs)))
        return tuple(_make(np.array(o._data)) if isinstance(o, Tensor) else None
                     for o in outs)


def _central_difference(func, inputs, arr, idx, delta, eps, check):
    """``(f(x + delta) - f(x - delta)) / (2 eps)`` per output, flat, perturbing ``arr[idx]``
    (the data of an input, in place) and restoring it; None for non-tensor outputs."""
    orig = np.array(arr[idx])
    arr[idx] = orig - delta
    try:
        outa = _evaluate(func, inputs)
        arr[idx] = orig + delta
        outb = _evaluate(func, inputs)
    finally:
        arr[idx] = orig
    cols = []
    for a, b in zip(outa, outb):
        if a is None or b is None:
            cols.append(None)
            continue
        check(a, b)
        cols.append((np.asarray(b._data) - np.asarray(a._data)) / (2 * eps))
    return cols


def _numerical_jacobians(func, inputs, func_out, eps):
    """For each input requiring grad, a list with one Jacobian per output of ``func``:
    a (input numel, output numel) tensor in the output's dtype (None for outputs that are
    not floating-point tensors)."""
    outputs = _as_tuple(func_out)
    jacobians = []
    for x in inputs:
        if not _requires_grad(x):
            continue
        arr = x._array()
        per_output = [np.zeros((arr.size, o.numel()), o._data.dtype)
                      if _is_float_tensor(o) else None for o in outputs]
        for d_idx, idx in enumerate(np.ndindex(*arr.shape)):
            def check(a, b, idx=idx):
                _check_outputs_same_dtype_and_shape(a, b, eps=eps, idx=idx)
            cols = _central_difference(func, inputs, arr, idx, eps, eps, check)
            for jac, col in zip(per_output, cols):
                if jac is not None and col is not None:
                    jac[d_idx] = col.reshape(-1)
        _forget_dead_tapes(x)
        jacobians.append([None if j is None else _make(j) for j in per_output])
    return jacobians


# ---- the analytical Jacobian ---------------------------------------------------------------
def _jacobian_rows(vjp_fn, output):
    """rows[i][j]: the gradient of input i for the one-hot grad_output e_j (v^T J = row j)."""
    n = output.numel()
    rows = []
    for j in range(n):
        seed = np.zeros(n, output._data.dtype)
        seed[j] = 1.0
        grads = vjp_fn(_make(seed.reshape(output.shape)))
        for i, g in enumerate(grads):
            if j == 0:
                rows.append([])
            rows[i].append(None if g is None else np.array(g._data))
    return rows


def _stack_and_check(rows_per_input, diff_inputs, numel_output):
    """(n_in, numel_output) Jacobians in the inputs' dtypes, whether every gradient had its
    input's size, and whether every one had its input's dtype."""
    jacobians = []
    sizes_ok = types_ok = True
    for x, rows in zip(diff_inputs, rows_per_input):
        jac = np.zeros((x.numel(), numel_output), x._data.dtype)
        for j, g in enumerate(rows):
            if g is None:
                continue
            if g.shape != x._data.shape:
                sizes_ok = False
            elif g.dtype != x._data.dtype:
                types_ok = False
            if g.size != jac.shape[0]:
                raise AssertionError(f"Expected out_jacobian[:, j] to have {g.size} elements, "
                                     f"but got {jac.shape[0]}")
            jac[:, j] = g.reshape(-1)
        jacobians.append(jac)
    return jacobians, sizes_ok, types_ok


def _jacobians_equal(j1, j2, tol):
    for a, b in zip(j1, j2):
        if a.size and np.abs(a - b).max() > tol:
            return False
    return True


def _analytical_jacobians(inputs, output, nondet_tol, check_grad_dtypes, v=None):
    """The analytical Jacobian of ``output`` for each input requiring grad, computed twice
    to check reentrancy. With ``v`` (fast mode), the single row v^T J instead."""
    diff_inputs = _diff_inputs(inputs)

    def vjp_fn(grad_output):
        return _grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)

    def rows():
        if v is None:
            return _jacobian_rows(vjp_fn, output)
        grads = vjp_fn(_make(np.array(v.reshape(output.shape))))
        return [[None if g is None else np.array(g._data)] for g in grads]

    numel = output.numel() if v is None else 1
    jac1, sizes_ok, types_ok = _stack_and_check(rows(), diff_inputs, numel)
    jac2, _, _ = _stack_and_check(rows(), diff_inputs, numel)
    reentrant = _jacobians_equal(jac1, jac2, nondet_tol)
    # torch unpacks (sizes_ok, types_ok) in swapped order here; the intended checks are kept.
    # numbagrad's grad always returns gradients in their input's shape and dtype anyway.
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with "
            "same input and grad_output multiple times gives different values, "
            "although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG
        )
    return [_make(j) for j in jac1]


# ---- checks ------------------------------------------------------------------------------
def _check_inputs(tupled_inputs):
    any_input_requiring_grad = False
    for idx, inp in enumerate(tupled_inputs):
        if _requires_grad(inp):
            if inp._data.dtype != np.float64:
                warnings.warn(
                    f"Input #{idx} requires gradient and "
                    "is not a double precision floating point or complex. "
                    "This check will likely fail if all the inputs are "
                    "not of double precision floating point or complex. ",
                    stacklevel=4,
                )
            arr = np.asarray(inp._data)
            # (an empty array has no elements to overlap: NumPy may give it 0 strides)
            if arr.size and not all(st != 0 or sz <= 1
                                    for st, sz in zip(arr.strides, arr.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only "
                    "supports inputs that are non-overlapping to be able to "
                    "compute the numerical gradients correctly. You should call "
                    ".contiguous on the input before passing it to gradcheck."
                )
            any_input_requiring_grad = True
    if not any_input_requiring_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of them have requires_grad=True."
        )
    return True


def _get_notallclose_msg(analytical, numerical, output_idx, input_idx, is_forward_ad=False):
    mode = "computed with forward mode " if is_forward_ad else ""
    return (
        f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input "
        f"{input_idx:d},\n"
        f"numerical:{_fmt(numerical)}\nanalytical:{_fmt(analytical)}\n"
    )


def _check_no_differentiable_outputs(func, inputs, func_out, eps):
    # When there are no differentiable outputs, numerical gradient for a function is
    # expected to be zero.
    for per_output in _numerical_jacobians(func, inputs, func_out, eps):
        for jacobian in per_output:
            if jacobian is not None and np.any(np.asarray(jacobian._data) != 0):
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


def _slow_gradcheck(func, func_out, tupled_inputs, outputs, eps, rtol, atol,
                    check_grad_dtypes, nondet_tol, *, masked=False, use_forward_ad=False):
    func_out = _as_tuple(func_out)
    if not outputs:
        return _check_no_differentiable_outputs(func, tupled_inputs, func_out, eps)
    numerical = _numerical_jacobians(func, tupled_inputs, func_out, eps)
    # per differentiable output i, per input j requiring grad (torch's numbering)
    diff_positions = [k for k, o in enumerate(func_out) if _requires_grad(o)]
    if use_forward_ad:
        # (torch's indexing: the analytical side counts floating-point outputs)
        analytical = gradcheck_modes.analytical_jacobians(func, tupled_inputs, func_out)
        for i, k in enumerate(diff_positions):
            for j, n_per_output in enumerate(numerical):
                a, n = analytical[j][i], n_per_output[k]
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(_get_notallclose_msg(a, n, i, j, is_forward_ad=True))
        return True
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobians(tupled_inputs, o, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][diff_positions[i]]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_get_notallclose_msg(a, n, i, j))
    return True


# ---- fast mode ---------------------------------------------------------------------------
class _TorchCPUGenerator:
    """The numbers a fresh ``torch.Generator()`` gives ``torch.rand(n, generator=g)``."""

    def __init__(self, seed=_FAST_MODE_SEED):
        self._mt = np.random.RandomState(seed & 0xFFFFFFFF)

    def rand(self, n):
        raw = self._mt.randint(0, 2**32, size=n, dtype=np.uint32)
        return (raw & np.uint32((1 << 24) - 1)).astype(np.float32) * np.float32(2.0**-24)


def _vec_from_tensor(x, generator):
    # torch.rand(numel, generator=g).to(dtype), normalized
    vec = generator.rand(x.numel()).astype(x._data.dtype)
    return vec / np.linalg.norm(vec)


def _adjusted_atol(atol, u, v):
    # A check of v^T A u against v^T B u allows atol * sum(u) * sum(v) (see torch's note).
    sum_v = 1.0 if v is None else float(v.sum())
    return atol * float(u.sum()) * sum_v


def _numerical_jvps(func, inputs, func_out, x, u, eps):
    """J u for each output of ``func`` (flat, None for non-tensor outputs), by central
    differences along ``u`` (the whole input moved at once)."""
    arr = x._array()

    def check(a, b):
        _check_outputs_same_dtype_and_shape(a, b, eps=eps)
    jvps = _central_difference(func, inputs, arr, Ellipsis, u.reshape(arr.shape) * eps, eps,
                               check)
    _forget_dead_tapes(x)
    return [None if j is None else j.reshape(-1) for j in jvps]


def _run_slow_mode_and_get_error(func, tupled_inputs, func_out, outputs, input_idx,
                                 output_idx, rtol, atol, eps, is_forward_ad=False):
    # Compute jacobians in slow mode for better error message
    func_out = _as_tuple(func_out)
    test = _is_float_tensor if is_forward_ad else _requires_grad
    positions = [k for k, o in enumerate(func_out) if test(o)]
    slow_numerical = _numerical_jacobians(func, tupled_inputs, func_out, eps)[input_idx][
        positions[output_idx]]
    if is_forward_ad:  # the forward-mode Jacobian of that output on that input alone
        at = [k for k, x in enumerate(tupled_inputs) if _requires_grad(x)][input_idx]

        def new_fn(inp):
            new_inputs = list(tupled_inputs)
            new_inputs[at] = inp
            return _as_tuple(func(*new_inputs))[positions[output_idx]]
        slow_analytical = gradcheck_modes.analytical_jacobians(
            new_fn, (tupled_inputs[at],), (func_out[positions[output_idx]],))[0][0]
    else:
        slow_analytical = _analytical_jacobians(tupled_inputs, outputs[output_idx],
                                                float("inf"), False)[input_idx]
    n, a = np.asarray(slow_numerical._data), np.asarray(slow_analytical._data)
    slow_max_diff = _make(np.abs(n - a).max()) if n.size else _make(np.float64(0.0))
    slow_allclose = _allclose(slow_analytical, slow_numerical, rtol, atol)
    msg = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
        "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
        f"Numerical:\n {_fmt(slow_numerical)}\n"
        f"Analytical:\n{_fmt(slow_analytical)}\n\n"
        f"The max per-element difference (slow mode) is: {_fmt(slow_max_diff)}.\n"
    )
    if slow_allclose:
        # Slow gradcheck would've passed!
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


def _fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, *, masked=False, use_forward_ad=False):
    # See https://github.com/pytorch/pytorch/issues/53876: compare v^T (J u) computed by
    # finite differences with (v^T J) u computed by backward, for random unit u and v.
    func_out = _as_tuple(func_out)
    diff_inputs = _diff_inputs(inputs)
    generator = _TorchCPUGenerator()
    all_u = [_vec_from_tensor(x, generator) for x in diff_inputs]
    if use_forward_ad:  # J u by forward mode against J u by finite differences
        return _fast_forward_check(func, func_out, inputs, outputs, eps, rtol, atol,
                                   diff_inputs, all_u)
    all_v = [_vec_from_tensor(o, generator) for o in outputs]
    diff_positions = [k for k, o in enumerate(func_out) if _requires_grad(o)]

    all_ju = [_numerical_jvps(func, inputs, func_out, x, u, eps)
              for x, u in zip(diff_inputs, all_u)]
    if not outputs:
        for jvps in all_ju:
            for jvp in jvps:
                if jvp is not None and jvp.size and np.abs(jvp).max() > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
    # numerical[i][j] = v_j . (J_ji u_i); analytical[j][i] = (v_j^T J_ji) . u_i
    numerical = [[_make((v * jvps[k]).sum()) for v, k in zip(all_v, diff_positions)]
                 for jvps in all_ju]
    analytical = []
    for o, v in zip(outputs, all_v):
        vj = _analytical_jacobians(inputs, o, nondet_tol, check_grad_dtypes, v=v)
        analytical.append([_make(np.asarray(r._data)[:, 0].dot(u)) for r, u in zip(vj, all_u)])

    for i, per_output in enumerate(numerical):
        for j, n in enumerate(per_output):
            a = analytical[j][i]
            updated_atol = _adjusted_atol(atol, all_u[i], all_v[j])
            if not _allclose(a, n, rtol, updated_atol):
                jacobians_str = _run_slow_mode_and_get_error(
                    func, inputs, func_out, outputs, i, j, rtol, atol, eps)
                raise GradcheckError(_get_notallclose_msg(a, n, j, i) + jacobians_str)
    return True


def _fast_forward_check(func, func_out, inputs, outputs, eps, rtol, atol, diff_inputs, all_u):
    floats = [k for k, o in enumerate(func_out) if _is_float_tensor(o)]
    analytical = gradcheck_modes.analytical_jacobians(func, inputs, func_out, all_u=all_u)
    for i, (x, u) in enumerate(zip(diff_inputs, all_u)):
        jvps = _numerical_jvps(func, inputs, func_out, x, u, eps)
        for j, k in enumerate(floats):
            a, n = _make(np.asarray(analytical[i][j]._data)[0]), _make(jvps[k])
            if not _allclose(a, n, rtol, _adjusted_atol(atol, u, None)):
                jacobians_str = _run_slow_mode_and_get_error(
                    func, inputs, func_out, outputs, i, j, rtol, atol, eps, is_forward_ad=True)
                raise GradcheckError(_get_notallclose_msg(a, n, j, i, is_forward_ad=True) +
                                     jacobians_str)
    return True


def _test_batched_grad(inputs, output, output_idx):
    try:
        found = gradcheck_modes.batched_grad_mismatch(inputs, output)
    except RuntimeError as ex:
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n"
                             f"{gradcheck_modes.FAILED_BATCHED_GRAD_MSG}") from ex
    if found is not None:
        input_idx, res, exp = found
        raise GradcheckError(f"""
For output {output_idx} and input {input_idx}:

{gradcheck_modes.FAILED_BATCHED_GRAD_MSG}

Got:
{_fmt(res)}

Expected:
{_fmt(exp)}
""".strip())
    return True


def _test_undefined_forward_mode(func, inputs):
    generator = _TorchCPUGenerator()  # torch's _make_vectors: a fresh generator
    all_u = [_vec_from_tensor(x, generator) for x in _diff_inputs(inputs)]
    found = gradcheck_modes.undefined_tangent_mismatch(func, inputs, all_u)
    if found is not None:
        index_o, inp, res1, res2 = found
        raise GradcheckError("Mismatch in tangent values for output with index: ", index_o,
                             " when input: ", inp, " has an undefined tangent value. ",
                             " Got: ", res1, " but expected: ", res2)
    return True


# ---- checks after the Jacobians ----------------------------------------------------------
def _test_backward_mul_by_grad_output(outputs, inputs, masked):
    # Tests that backward is multiplied by grad_output
    diff_input_list = _diff_inputs(inputs)
    if not diff_input_list:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads_input = _grad(outputs, diff_input_list,
                        [_make(np.zeros(o._data.shape, o._data.dtype)) for o in outputs],
                        allow_unused=True)
    for gi, di in zip(grads_input, diff_input_list):
        if gi is None:
            continue
        g = np.asarray(gi._data)
        if masked:
            if not np.allclose(g, 0):
                raise GradcheckError("backward not multiplied by grad_output")
        elif not np.all(g == 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")
    return True


def _test_undefined_backward_mode(func, outputs, inputs):
    # torch passes undefined output gradients (UndefinedGrad); numbagrad has no undefined
    # gradients, an output nobody seeds gets zeros, so the zero seed plays that part here.
    diff_input_list = _diff_inputs(inputs)
    if not diff_input_list:
        raise GradcheckError("no Tensors requiring grad found in input")

    def warn_bc_breaking():
        warnings.warn(
            "Backwards compatibility: New undefined gradient support checking "
            "feature is enabled by default, but it may break existing callers "
            "of this function. If this is true for you, you can call this "
            'function with "check_undefined_grad=False" to disable the feature',
            stacklevel=2,
        )

    def check_undefined_grad_support(output_to_check):
        grads_output = [_make(np.zeros(o._data.shape, o._data.dtype)) for o in output_to_check]
        try:
            grads_input = _grad(output_to_check, diff_input_list, grads_output,
                                allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. "
                'Please look at "Notes about undefined output gradients" in '
                '"tools/autograd/derivatives.yaml"'
            ) from e
        for gi in grads_input:
            if gi is not None and not np.all(np.asarray(gi._data) == 0):
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads "
                    'are undefined or zero. Please look at "Notes about undefined output '
                    'gradients" in "tools/autograd/derivatives.yaml"'
                )
        return True

    # All backward functions must work properly if all output grads are undefined
    outputs_to_check = [list(_differentiable_outputs(func(*inputs)))]
    # If there are multiple output grads, we should be able to undef one at a time
    if len(outputs_to_check[0]) > 1:
        for _ in range(len(outputs)):
            outputs_to_check.append(list(_differentiable_outputs(func(*inputs))))
    return all(check_undefined_grad_support(output) for output in outputs_to_check)


# ---- the entry points --------------------------------------------------------------------
def gradcheck(func, inputs, *, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    r"""Check the gradients computed by backward against finite differences, for the inputs
    that are floating-point tensors with ``requires_grad=True`` (torch.autograd.gradcheck).

    ``func`` takes the inputs (non-tensor inputs are passed through unchanged) and returns a
    tensor or a tuple of tensors. Each element of each input is moved by ``eps`` either way
    (in place, then restored) to build the numerical Jacobian; the analytical one is built
    row by row with ``numbagrad.autograd.grad``. They must satisfy
    ``|analytical - numerical| <= atol + rtol * |numerical|``. The defaults are meant for
    float64 inputs; other dtypes draw torch's warning.

    Returns True if every check passes. A failed check raises :class:`GradcheckError`, or
    returns False if ``raise_exception=False``. ``fast_mode=True`` compares random
    projections ``v^T J u`` instead of whole Jacobians. ``check_forward_ad=True`` checks the
    Jacobian computed by forward-mode AD too (``J u`` in fast mode), ``check_batched_grad``
    the gradients of ``autograd.grad(..., is_grads_batched=True)``;
    ``check_batched_forward_grad`` is not available (NotImplementedError: vmap has no
    batching rules here).

    Examples:
        >>> import numbagrad as torch
        >>> x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
        >>> torch.autograd.gradcheck(torch.sin, (x,))
        True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True"
        )
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True"
        )
    if check_batched_forward_grad:
        raise NotImplementedError(_NO_VMAP.format("gradcheck(check_batched_forward_grad=True)"))
    args = dict(func=func, inputs=inputs, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol,
                check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                fast_mode=fast_mode, masked=masked, check_forward_ad=check_forward_ad,
                check_backward_ad=check_backward_ad, check_batched_grad=check_batched_grad)
    if not raise_exception:
        try:
            return _gradcheck_helper(**args)
        except GradcheckError:
            return False
    return _gradcheck_helper(**args)


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                      check_grad_dtypes, fast_mode, masked, check_forward_ad, check_backward_ad,
                      check_batched_grad):
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)

    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)

    gradcheck_fn = _fast_gradcheck if fast_mode else _slow_gradcheck
    if check_backward_ad:
        gradcheck_fn(func, func_out, tupled_inputs, outputs, eps, rtol, atol,
                     check_grad_dtypes, nondet_tol, masked=masked)
    if check_forward_ad:
        gradcheck_fn(func, func_out, tupled_inputs, outputs, eps, rtol, atol,
                     check_grad_dtypes, nondet_tol, masked=masked, use_forward_ad=True)
        if check_undefined_grad:
            _test_undefined_forward_mode(func, tupled_inputs)
    if not check_backward_ad:  # the remaining checks are backward's
        return True
    if check_batched_grad:
        for i, o in enumerate(outputs):
            _test_batched_grad(tupled_inputs, o, i)

    _test_backward_mul_by_grad_output(outputs, tupled_inputs, masked)

    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def _make_grad_output(x, noncontiguous):
    """torch.testing.make_tensor(x.shape, dtype, low=-1, high=1, requires_grad=True,
    noncontiguous=...): uniform in [-1, 1), from the global generator as torch draws it
    (numbagrad.manual_seed makes it reproducible)."""
    dtype = x._data.dtype if x.dtype.is_floating_point else np.dtype(np.float64)
    shape = tuple(x.shape)
    noncontiguous = noncontiguous and int(np.prod(shape)) > 1
    if noncontiguous:
        # doubled last dimension, every other element: non-contiguous, offset by one
        shape = (*shape[:-1], 2 * shape[-1])
    data = torch_rng.uniform(_engine(), int(np.prod(shape)), dtype, -1.0, 1.0).reshape(shape)
    if noncontiguous:
        data = data[..., 1::2]
    t = _make(data)
    t.requires_grad = True
    return t


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-06, atol=1e-05, rtol=0.001,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    r"""Check second derivatives (torch.autograd.gradgradcheck): gradcheck the function
    mapping (inputs, grad_outputs) to the gradients of ``func``'s outputs, computed with
    ``create_graph=True``, with respect to its inputs.

    Without ``grad_outputs``, random ones are drawn uniformly in [-1, 1) with the global
    generator, as torch does (seed it with ``numbagrad.manual_seed``); they require grad and
    are checked too. ``gen_non_contig_grad_outputs=True`` makes them non-contiguous.
    ``check_fwd_over_rev=True`` checks them by forward mode over the reverse-mode gradients
    too, ``check_batched_grad`` their batched computation.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True"
        )
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True"
        )
    tupled_inputs = _as_tuple(inputs)

    if grad_outputs is None:
        # random tensors of the shape and dtype of the differentiable outputs
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(_make_grad_output(x, gen_non_contig_grad_outputs)
                                    for x in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)

    num_outputs = len(tupled_grad_outputs)

    # the requires_grad information of the inputs, restored in new_func
    diff_input_args_indices = {i for i, x in enumerate(tupled_inputs) if _requires_grad(x)}
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs)
                                if _requires_grad(x)}

    def new_func(*args):
        # Restore the requires_grad information
        input_args = tuple(
            x.requires_grad_() if i in diff_input_args_indices else x
            for i, x in enumerate(args[:-num_outputs])
        )
        outputs = _differentiable_outputs(func(*input_args))
        grad_outputs = tuple(
            x.requires_grad_() if i in diff_grad_output_indices else x
            for i, x in enumerate(args[-num_outputs:])
        )
        diff_input_args = tuple(
            x for i, x in enumerate(input_args) if i in diff_input_args_indices
        )
        grad_inputs = _grad(outputs, diff_input_args, grad_outputs, create_graph=True,
                            allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(
        new_func,
        tupled_inputs + tupled_grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        fast_mode=fast_mode,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        masked=masked,
    )

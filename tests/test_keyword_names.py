"""numbagrad's top-level functions take torch's keyword names: `torch.matmul(input=a,
other=b)`, `torch.sum(input=x, dim=0)` run under `import numbagrad as torch`.

torch's names come from the lambdas of `torch.overrides.get_testing_overrides()`; a few of
those lambdas name parameters torch does not accept (`isfinite(tensor)`, `polygamma(input,
n)`), so a lambda's name counts only if the op's ATen schema has it too (`self` is spelled
`input` in Python). Functions written in Python (torch.functional) give their own signature.
"""

import inspect
import warnings

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")

# namespaces checked: torch's module -> numbagrad's, and the ATen prefix of their ops
NAMESPACES = {"torch": (torch, numbagrad), "torch.linalg": (torch.linalg, numbagrad.linalg),
              "torch.special": (torch.special, numbagrad.special)}

# out='s behaviour is tested by the calls of test_out_keyword*, below, and by
# tests/test_out_linalg_special.py; its name is checked here like any other
IGNORED = set()

# (function, torch's parameter) numbagrad does not take yet -> why
ALLOWED = {
    ("torch.mm", "out_dtype"): "torch 2.13 runs mm's out_dtype on CUDA only",
    ("torch.bmm", "out_dtype"): "torch 2.13 runs bmm's out_dtype on CUDA only",
    ("torch.div", "rounding_mode"): "no rounding_mode: trunc/floor of the quotient instead",
    ("torch.divide", "rounding_mode"): "no rounding_mode: trunc/floor of the quotient instead",
    ("torch.gather", "sparse_grad"): "sparse gradients: numbagrad has no sparse layouts",
    ("torch.linalg.vector_norm", "input"): "torch takes x= as well as input=; numbagrad keeps "
                                           "the x its docs name",
    ("torch.diag_embed", "out"): "torch's Python binding takes no out= (only its schema has "
                                 "an out variant)",
    ("torch.full_like", "out"): "torch's Python binding takes no out= (only its schema has "
                                "an out variant)",
}


def _aten_names(name):
    """The parameter names of an ATen op over its overloads, None when it has no schema
    (`torch.linalg.det.__name__` is its op's, linalg_det)."""
    schemas = torch._C._jit_get_schemas_for_operator(f"aten::{name}")
    if not schemas:
        return None
    return {"input" if a.name == "self" else a.name for s in schemas for a in s.arguments}


def _torch_params(fn, lam):
    """torch's keyword-able parameter names of one function, in order."""
    try:  # a Python function's own signature is torch's
        sig = inspect.signature(fn)
        aten = None
    except (TypeError, ValueError):
        sig = inspect.signature(lam)
        aten = _aten_names(fn.__name__)
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in sig.parameters.values() if p.kind in kinds and
            not p.name.startswith("_") and (aten is None or p.name in aten)]


def _functions():
    """(qualified name, torch function, its lambda, numbagrad's function) for the torch
    functions numbagrad has."""
    overrides = torch.overrides.get_testing_overrides()
    out = []
    for ns, (tmod, nmod) in NAMESPACES.items():
        for name in sorted(dir(tmod)):
            fn = getattr(tmod, name)
            if (name.startswith("_") or not callable(fn) or not hasattr(nmod, name)
                    or fn not in overrides):
                continue
            mine = getattr(nmod, name)
            if callable(mine) and not isinstance(mine, type):
                out.append((f"{ns}.{name}", fn, overrides[fn], mine))
    return out


FUNCTIONS = _functions()


def mismatches():
    """{qualified name: [torch parameter numbagrad's function cannot take by keyword]}."""
    found = {}
    for qual, fn, lam, mine in FUNCTIONS:
        try:
            sig = inspect.signature(mine)
        except (TypeError, ValueError):
            found[qual] = ["<no signature>"]
            continue
        params = sig.parameters
        var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
        ok = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        # a name that is not a keyword parameter is taken to go through **kwargs, if any
        miss = [p for p in _torch_params(fn, lam)
                if p not in IGNORED and not (p in params and params[p].kind in ok)
                and not var_kw]
        if miss:
            found[qual] = miss
    return found


def test_keywords_run_as_torchs():
    # a few calls as torch code writes them, compared with torch's results
    a, b = np.arange(6.0).reshape(2, 3), np.linspace(-1, 1, 6).reshape(3, 2)
    sq = np.array([[2.0, 1.0], [1.0, 3.0]])
    for lib in (torch, numbagrad):
        t = lib.tensor
        got = [lib.matmul(input=t(a), other=t(b)), lib.add(input=t(a), other=t(a), alpha=2),
               lib.sum(input=t(a), dim=0), lib.pow(input=t(a), exponent=2),
               lib.det(input=t(sq)), lib.linalg.det(A=t(sq)), lib.prod(input=t(a), dtype=lib.float64),
               lib.transpose(input=t(a), dim0=0, dim1=1), lib.clamp(input=t(a), min=1.0)]
        if lib is torch:
            want = [g.numpy() for g in got]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == getattr(numbagrad, str(w.dtype))
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)


def test_checks_the_functions_numbagrad_has():
    names = {q for q, *_ in FUNCTIONS}
    assert {"torch.matmul", "torch.add", "torch.sum", "torch.linalg.solve",
            "torch.special.erf"} <= names


def test_keyword_names_are_torchs():
    found = mismatches()
    new = {q: [p for p in ps if (q, p) not in ALLOWED] for q, ps in found.items()}
    new = {q: ps for q, ps in new.items() if ps}
    assert not new, f"numbagrad's functions lack torch's keyword names: {new}"


def test_allowed_mismatches_are_still_mismatches():
    # an entry fixed in numbagrad leaves the list, so that it cannot hide a later regression
    found = mismatches()
    stale = [k for k in ALLOWED if k[1] not in found.get(k[0], ())]
    assert not stale, f"no longer mismatched, remove from ALLOWED: {stale}"
    assert all(why.strip() for why in ALLOWED.values())


def _out_cases(lib):
    """What torch's out= does, call by call: the result, the warning, the error."""
    a = lib.tensor([[0.5, 1.0, 2.0], [3.0, 4.0, 5.0]])
    b = lib.tensor([1.0, 2.0, 3.0])
    seen = []
    calls = [lambda o: lib.exp(a, out=o), lambda o: lib.add(a, b, alpha=2, out=o),
             lambda o: lib.mul(a, b, out=o), lambda o: lib.sin(input=a, out=o),
             lambda o: lib.asin(a / 10, out=o), lambda o: lib.hypot(a, b, out=o),
             lambda o: lib.sub(a, 2, out=o)]
    for call in calls:
        # empty, same shape, another shape (resized, with a warning), wider and narrower dtypes
        for o in [lib.empty(0), lib.zeros(2, 3), lib.zeros(5), lib.zeros(2, 3, dtype=lib.float64),
                  lib.zeros(2, 3, dtype=lib.int64)]:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    r = call(o)
                    seen.append((r is o, str(o.dtype), tuple(o.shape), o._version,
                                 np.round(o.numpy(), 5).tolist()))
                except (RuntimeError, TypeError) as e:
                    seen.append((type(e).__name__, str(e)))
            # torch adds where in its C++ sources it warned
            seen.append([str(x.message).split(" (Triggered internally")[0] for x in w])
    leaf = lib.ones(2, 3, requires_grad=True)
    for call in [lambda: lib.add(leaf, b, out=lib.empty(0)), lambda: lib.exp(leaf, out=lib.empty(0)),
                 lambda: lib.exp(a, out=lib.zeros(2, 3, requires_grad=True)),
                 lambda: lib.exp(a, out=3)]:
        with pytest.raises((RuntimeError, TypeError)) as err:
            call()
        seen.append((err.type.__name__, str(err.value)))
    with lib.no_grad():
        o = lib.empty(0)
        lib.exp(leaf, out=o)
        seen.append((o.requires_grad, o.grad_fn is None))
    o = lib.zeros(2, 3)
    lib.exp(a[0], out=o[1])  # into a view: written through to its base
    seen.append(np.round(o.numpy(), 4).tolist())
    return seen


def test_out_keyword():
    mine, torchs = _out_cases(numbagrad), _out_cases(torch)
    assert len(mine) == len(torchs)
    for m, t in zip(mine, torchs, strict=True):
        assert m == t


def _out_beyond_pointwise(lib):
    """out= of products, reductions, joins, selections and factories: the result, where it
    went, the resize warning; tuples of outs for functions of several results."""
    a = lib.tensor([[0.5, 1.0, 2.0], [3.0, 4.0, 5.0]])
    m = lib.tensor([[1.0, 0.0], [2.0, 1.0], [0.5, 3.0]])
    calls = [lambda o: lib.matmul(a, m, out=o), lambda o: lib.mm(a, m, out=o),
             lambda o: lib.sum(a, 0, out=o), lambda o: lib.mean(a, 1, out=o),
             lambda o: lib.cat([a, a], out=o), lambda o: lib.stack([a, a], 1, out=o),
             lambda o: lib.clamp(a, 1.0, 3.0, out=o), lambda o: lib.where(a > 2, a, -a, out=o),
             lambda o: lib.cumsum(a, 1, out=o), lambda o: lib.softmax(a, 1, out=o),
             lambda o: lib.zeros(2, 2, out=o), lambda o: lib.arange(5, out=o),
             lambda o: lib.full((2,), 7, out=o), lambda o: lib.linspace(0, 1, 3, out=o)]
    seen = []
    for call in calls:
        for o in [lib.empty(0), lib.zeros(4), lib.zeros(3, dtype=lib.float64),
                  lib.zeros(0, dtype=lib.int64)]:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    r = call(o)
                    seen.append((r is o, str(o.dtype), tuple(o.shape),
                                 np.round(o.numpy(), 5).tolist()))
                except (RuntimeError, TypeError) as e:
                    seen.append((type(e).__name__, str(e).splitlines()[0]))
            seen.append(len(w))
    lib.manual_seed(0)
    o = lib.empty(3, dtype=lib.float64)
    seen.append((lib.rand(3, out=o) is o, str(o.dtype), np.round(o.numpy(), 6).tolist()))
    v, i = lib.empty(0), lib.empty(0, dtype=lib.int64)
    r = lib.max(a, 1, out=(v, i))
    seen.append((r[0] is v, r[1] is i, v.tolist(), i.tolist()))
    r = lib.sort(-a, 1, out=(v, i))
    seen.append((r.values is v, v.tolist(), i.tolist()))
    leaf = lib.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError) as err:
        lib.matmul(leaf, m, out=lib.empty(0))
    seen.append(str(err.value))
    for o in [lib.empty(0, dtype=lib.bool), lib.empty(0), lib.zeros(3, dtype=lib.int64)]:
        for call in (lambda o: lib.any(a > 2, out=o), lambda o: lib.any(a, 1, out=o)):
            try:
                r = call(o)
                seen.append((r is o, str(o.dtype), o.tolist()))
            except RuntimeError as e:
                seen.append(str(e))
    # the deprecated torch.lu_solve: its out variant is linalg_lu_solve's, and so is its error
    spd = lib.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=lib.float64)
    lu, piv = lib.linalg.lu_factor(spd)
    b = lib.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]], dtype=lib.float64)
    for o in [lib.empty(0, dtype=lib.float64), lib.zeros(5, dtype=lib.float64), lib.empty(0)]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = lib.lu_solve(b, lu, piv, out=o)
                seen.append((r is o, tuple(o.shape), np.round(o.numpy(), 10).tolist()))
            except RuntimeError as e:
                seen.append(str(e))
        seen.append(len([x for x in w if "deprecated" not in str(x.message)]))
    with pytest.raises(RuntimeError) as err:
        lib.lu_solve(b.clone().requires_grad_(), lu, piv, out=lib.empty(0, dtype=lib.float64))
    seen.append(str(err.value))
    return seen


def test_out_keyword_beyond_pointwise():
    mine, torchs = _out_beyond_pointwise(numbagrad), _out_beyond_pointwise(torch)
    assert len(mine) == len(torchs)
    for m, t in zip(mine, torchs, strict=True):
        assert m == t

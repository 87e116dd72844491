"""out= on numbagrad.linalg and numbagrad.special, compared with torch call by call: what is
written, what is returned (out itself, or torch's <op>_out named tuple of the outs), the dtype
errors, the resize warning, the type errors of a wrong out, and autograd's refusal."""

import inspect
import warnings

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(0)
_M = _RNG.standard_normal((3, 3))
SPD = _M @ _M.T + 3 * np.eye(3)  # well conditioned: no ties among eigen/singular values
VECS = _RNG.standard_normal((2, 3))
POINTS = np.array([[0.2, 0.5, 0.9], [0.3, 0.7, 0.1]])


def _linalg_calls():
    """name -> call(lib, make) where make(array) is a tensor of the case's dtype."""
    calls = {
        "cholesky": lambda ns, m, o: ns.cholesky(m(SPD), out=o),
        "cholesky_ex": lambda ns, m, o: ns.cholesky_ex(m(SPD), out=o),
        "cross": lambda ns, m, o: ns.cross(m(VECS), m(VECS[::-1].copy()), out=o),
        "det": lambda ns, m, o: ns.det(m(SPD), out=o),
        "eigh": lambda ns, m, o: ns.eigh(m(SPD), out=o),
        "eigvalsh": lambda ns, m, o: ns.eigvalsh(m(SPD), UPLO="U", out=o),
        "inv": lambda ns, m, o: ns.inv(m(SPD), out=o),
        "inv_ex": lambda ns, m, o: ns.inv_ex(m(SPD), out=o),
        "ldl_solve": lambda ns, m, o: ns.ldl_solve(*ns.ldl_factor(m(SPD).detach()),
                                                   m(VECS.T.copy()), out=o),
        "lu_solve": lambda ns, m, o: ns.lu_solve(*ns.lu_factor(m(SPD)), m(VECS.T.copy()), out=o),
        "matmul": lambda ns, m, o: ns.matmul(m(SPD), m(VECS.T.copy()), out=o),
        "matrix_norm": lambda ns, m, o: ns.matrix_norm(m(SPD), "nuc", out=o),
        "matrix_power": lambda ns, m, o: ns.matrix_power(m(SPD), 3, out=o),
        "matrix_rank": lambda ns, m, o: ns.matrix_rank(m(SPD), out=o),
        "multi_dot": lambda ns, m, o: ns.multi_dot([m(VECS), m(SPD), m(SPD)], out=o),
        "norm": lambda ns, m, o: ns.norm(m(SPD), out=o),
        "pinv": lambda ns, m, o: ns.pinv(m(VECS), out=o),
        "qr": lambda ns, m, o: ns.qr(m(SPD), out=o),
        "slogdet": lambda ns, m, o: ns.slogdet(m(SPD), out=o),
        "solve": lambda ns, m, o: ns.solve(m(SPD), m(VECS.T.copy()), out=o),
        "solve_ex": lambda ns, m, o: ns.solve_ex(m(SPD), m(VECS.T.copy()), out=o),
        "solve_triangular": lambda ns, m, o: ns.solve_triangular(m(SPD), m(SPD), upper=True,
                                                               out=o),
        "svd": lambda ns, m, o: ns.svd(m(VECS), full_matrices=False, out=o),
        "svdvals": lambda ns, m, o: ns.svdvals(m(VECS), out=o),
        "vecdot": lambda ns, m, o: ns.vecdot(m(VECS), m(VECS[::-1].copy()), out=o),
        "vector_norm": lambda ns, m, o: ns.vector_norm(m(VECS), 3, dim=1, out=o),
    }
    return calls


def _special_calls():
    unary = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr",
             "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0",
             "i0e", "i1", "i1e", "log1p", "log_ndtr", "logit", "modified_bessel_i0",
             "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "ndtr", "ndtri",
             "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc",
             "spherical_bessel_j0"]
    polys = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
             "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
             "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
             "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
             "shifted_chebyshev_polynomial_w"]
    calls = {n: (lambda n: lambda ns, m, o: getattr(ns, n)(m(POINTS), out=o))(n) for n in unary}
    calls.update({n: (lambda n: lambda ns, m, o: getattr(ns, n)(m(POINTS), 3, out=o))(n)
                  for n in polys})
    calls.update({n: (lambda n: lambda ns, m, o: getattr(ns, n)(m(POINTS + 1), m(POINTS), out=o))(n)
                  for n in ("gammainc", "gammaincc", "xlog1py", "xlogy", "zeta")})
    calls["logsumexp"] = lambda ns, m, o: ns.logsumexp(m(POINTS), 1, out=o)
    calls["multigammaln"] = lambda ns, m, o: ns.multigammaln(m(POINTS + 2), 2, out=o)
    calls["polygamma"] = lambda ns, m, o: ns.polygamma(1, m(POINTS), out=o)
    return calls


CALLS = {f"linalg.{k}": v for k, v in _linalg_calls().items()}
CALLS.update({f"special.{k}": v for k, v in _special_calls().items()})
# torch's message for a tuple where these take one tensor lists their overloads: not matched
OVERLOADED = {"linalg.matrix_norm", "linalg.norm", "linalg.matrix_rank", "linalg.pinv",
              "special.xlog1py", "special.xlogy", "special.zeta"} | {
    f"special.{n}" for n in _special_calls() if "_polynomial_" in n}


def _namespace(lib, qual):
    return getattr(lib, qual.split(".")[0])


def _maker(lib, dtype, requires_grad=False):
    def make(a):
        return lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=requires_grad)
    return make


def _run(lib, qual, dtype, out, requires_grad=False):
    """What one call does: ('ok', returned is out, the tuple's type name and fields, the
    values written, out's dtypes/grad state) or (error type, first line of its message); and
    the warnings' messages."""
    call = CALLS[qual]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = call(_namespace(lib, qual), _maker(lib, dtype, requires_grad), out)
        except (RuntimeError, TypeError) as e:
            seen = (type(e).__name__, str(e).splitlines()[0])
        else:
            if isinstance(out, (tuple, list)):
                ident = type(r).__name__ != "tuple" and all(a is b for a, b in zip(r, out))
                kind = (type(r).__name__, [f for f in dir(r) if not f.startswith("_") and
                                           f not in dir(tuple) and not f.startswith("n_")])
                outs = list(out)
            else:
                ident, kind, outs = r is out, None, [out]
            seen = ("ok", ident, kind,
                    [(str(o.dtype), tuple(o.shape), o.requires_grad,
                      type(o.grad_fn).__name__ if o.grad_fn is not None else None)
                     for o in outs])
            values = [np.abs(o.detach().numpy().astype(np.float64)) for o in outs]
            seen = seen + (values,)
    # (a ResourceWarning is another test's object collected meanwhile, not the call's)
    return seen, [str(w.message).split(" (Triggered internally")[0] for w in caught
                  if not issubclass(w.category, ResourceWarning)]


def _same(mine, torchs, rtol=2e-4):
    """Observations equal, the values written (abs: decompositions' signs are the LAPACK's
    choice) within float32's precision."""
    (m, mw), (t, tw) = mine, torchs
    assert mw == tw
    assert m[:4] == t[:4] if m[0] == "ok" else m == t
    if m[0] == "ok":
        for a, b in zip(m[4], t[4], strict=True):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-5)


def _result(lib, qual, dtype):
    return CALLS[qual](_namespace(lib, qual), _maker(lib, dtype), None)


def _outs_like(lib, result, dtype=None, shape=(0,)):
    """Fresh outs for ``result`` (a tensor or a tuple), of its dtypes or ``dtype``."""
    def one(r):
        return lib.zeros(shape, dtype=dtype or r.dtype)
    return tuple(one(r) for r in result) if isinstance(result, tuple) else one(result)


def _both(qual, dtype, make_out, requires_grad=False):
    """The same call on numbagrad and torch, with outs made by make_out(lib, result)."""
    seen = []
    for lib in (numbagrad, torch):
        out = make_out(lib, _result(lib, qual, dtype))
        seen.append(_run(lib, qual, dtype, out, requires_grad))
    return seen


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("qual", sorted(CALLS))
def test_written_and_returned(qual, dtype):
    mine, torchs = _both(qual, dtype, lambda lib, r: _outs_like(lib, r))
    assert torchs[0][0] == "ok" and torchs[0][1]  # (the oracle's own premise)
    _same(mine, torchs)
    # what out holds is the function's own result
    r = _result(numbagrad, qual, dtype)
    out = _outs_like(numbagrad, r)
    CALLS[qual](_namespace(numbagrad, qual), _maker(numbagrad, dtype), out)
    for o, x in zip(out if isinstance(out, tuple) else (out,), r if isinstance(r, tuple) else (r,)):
        np.testing.assert_array_equal(o.numpy(), x.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("qual", sorted(CALLS))
def test_resize_warning(qual, dtype):
    # outs with elements and the wrong shape: resized, with one warning each
    mine, torchs = _both(qual, dtype, lambda lib, r: _outs_like(lib, r, shape=(7,)))
    assert torchs[1]
    _same(mine, torchs)


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int64", "int32", "bool",
                                       "float16"])
@pytest.mark.parametrize("qual", sorted(CALLS))
def test_out_dtypes(qual, out_dtype):
    # each result dtype against each out dtype: written with a cast, or torch's error
    for dtype in ("float32", "float64"):
        mine, torchs = _both(qual, dtype, lambda lib, r: _outs_like(
            lib, r, getattr(lib, out_dtype)))
        # (logsumexp reduces in out's dtype: numbagrad has no float16 kernels, an ulp apart)
        _same(mine, torchs, 1e-3 if out_dtype == "float16" else 2e-4)


@pytest.mark.parametrize("qual", sorted(CALLS))
def test_requires_grad(qual):
    # an input requiring grad: torch's error, or (composite ops, ops without a derivative) a
    # write, differentiable where torch's is (CopyBackwards)
    _same(*_both(qual, "float64", lambda lib, r: _outs_like(lib, r), requires_grad=True))
    # an out requiring grad
    def grad_outs(lib, r):
        outs = _outs_like(lib, r)
        for o in outs if isinstance(outs, tuple) else (outs,):
            if o.dtype.is_floating_point:
                o.requires_grad_()
        return outs
    _same(*_both(qual, "float64", grad_outs))
    # under no_grad neither is refused
    with numbagrad.no_grad(), torch.no_grad():
        _same(*_both(qual, "float64", lambda lib, r: _outs_like(lib, r), requires_grad=True))


def _wrong_outs(lib, r):
    """out= values torch refuses with a TypeError, for a function of result ``r``."""
    if isinstance(r, tuple):
        n = len(r)
        return [lib.empty(0), [lib.empty(0)] * (n - 1), (lib.empty(0),) * (n + 1),
                (1,) * n, 3]
    return [(lib.empty(0),), 3, [lib.empty(0)]]


@pytest.mark.parametrize("qual", sorted(CALLS))
def test_wrong_out_types(qual):
    outcomes = []
    for lib in (numbagrad, torch):
        r = _result(lib, qual, "float64")
        outcomes.append([_run(lib, qual, "float64", o) for o in _wrong_outs(lib, r)])
    for (m, _), (t, _) in zip(*outcomes, strict=True):
        assert m[0] == t[0] == "TypeError"
        if qual not in OVERLOADED:
            assert m == t


@pytest.mark.parametrize("n", [0, 1, -1, 2])
def test_matrix_power_casts_only_a_copy(n):
    # powers 0 and 1 are copies, cast into out's dtype; others' out must have their dtype
    seen = []
    for lib in (numbagrad, torch):
        for dtype in (lib.float32, lib.int64):
            out = lib.zeros(2, dtype=dtype)
            try:
                lib.linalg.matrix_power(lib.tensor(SPD), n, out=out)
                seen.append(np.round(out.numpy().astype(float), 4).tolist())
            except RuntimeError as e:
                seen.append(str(e))
    assert seen[:2] == seen[2:]


def test_tuple_out_from_a_list():
    # a list of outs is taken as a tuple: torch's named tuple of those very tensors
    for lib in (numbagrad, torch):
        outs = [lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.float64)]
        r = lib.linalg.eigh(lib.tensor(SPD), out=outs)
        assert type(r).__name__ == "linalg_eigh_out"
        assert r.eigenvalues is outs[0] and r.eigenvectors is outs[1]


def test_signatures_take_out():
    for qual in CALLS:
        params = inspect.signature(getattr(_namespace(numbagrad, qual), qual.split(".")[1]))
        out = params.parameters["out"]
        assert out.kind is out.KEYWORD_ONLY and out.default is None


def test_keyword_out_absent_is_unchanged():
    # without out= the functions return what they did (a fresh tensor, torch's tuple type)
    r = numbagrad.linalg.slogdet(numbagrad.tensor(SPD))
    assert type(r).__name__ == "linalg_slogdet"
    np.testing.assert_allclose(r.logabsdet.item(), torch.linalg.slogdet(torch.tensor(SPD))
                               .logabsdet.item())


SEVERAL = {
    "max": lambda lib, x, o: lib.max(x, 0, out=o), "min": lambda lib, x, o: lib.min(x, 1, out=o),
    "sort": lambda lib, x, o: lib.sort(x, 0, out=o), "topk": lambda lib, x, o: lib.topk(x, 2, out=o),
    "kthvalue": lambda lib, x, o: lib.kthvalue(x, 2, out=o),
    "mode": lambda lib, x, o: lib.mode(x, 0, out=o),
    "cummax": lambda lib, x, o: lib.cummax(x, 0, out=o),
    "cummin": lambda lib, x, o: lib.cummin(x, 1, out=o),
    "aminmax": lambda lib, x, o: lib.aminmax(x, dim=0, out=o),
    "svd": lambda lib, x, o: lib.svd(x, out=o),
}


@pytest.mark.parametrize("name", sorted(SEVERAL))
def test_top_level_tuple_outs_are_torchs_out_types(name):
    seen = []
    for lib in (numbagrad, torch):
        x = lib.tensor(VECS.T.copy())
        r = SEVERAL[name](lib, x, None)
        outs = tuple(lib.empty(0, dtype=t.dtype) for t in r)
        got = SEVERAL[name](lib, x, outs)
        fields = [f for f in dir(got) if not f.startswith("_") and f not in dir(tuple)
                  and not f.startswith("n_")]
        seen.append((type(got).__name__, fields, all(a is b for a, b in zip(got, outs)),
                     [[getattr(got, f) is o for o in outs] for f in fields]))
        assert repr(got).startswith(f"torch.return_types.{name}_out(")
    assert seen[0] == seen[1]


def test_ldl_solve_out_carries_the_node_without_a_derivative():
    """torch's out variant of an op without a derivative: out takes its NotImplemented node,
    and only a backward through it fails."""
    seen = []
    for lib in (numbagrad, torch):
        ld, piv = lib.linalg.ldl_factor(lib.tensor(SPD))
        b = lib.tensor(VECS.T.copy(), requires_grad=True)
        out = lib.empty(0, dtype=lib.float64)
        r = lib.linalg.ldl_solve(ld, piv, b, out=out)
        with pytest.raises(RuntimeError) as err:
            (out * 2).sum().backward()
        seen.append((r is out, out.requires_grad, type(out.grad_fn).__name__,
                     np.round(out.detach().numpy(), 10).tolist(), str(err.value)))
    assert seen[0] == seen[1]

"""The special functions' op records: lgamma, digamma, polygamma, erfinv, mvlgamma, and
torch.special's i0, i0e, i1, i1e, erfcx, ndtri, log_ndtr, sinc, entr, xlog1py.

Their kernels call the scalar functions of engine/scalar_special.py (torch's algorithms);
their second derivatives come from the formulas through the Tensor-level versions that
special_api.py registers in ``registry.FORMULA_FUNCTIONS``.
"""

import numpy as np

from ...engine.registry import Sample, defop

_SHAPES = [(), (4,), (2, 3), (0,)]


def _scipy(name):
    """A NumPy reference forward from scipy.special (imported on first use: it costs 0.3 s)."""
    def forward(a, *attrs):
        from scipy import special

        a = np.asarray(a)
        fn = getattr(special, name)
        out = fn(*[int(v) for v in attrs], a) if name == "polygamma" else (
            fn(a, int(attrs[0])) if name == "multigammaln" else fn(a, *attrs))
        return np.asarray(out, a.dtype)[()]
    forward.__name__ = name
    return forward


LGAMMA = defop("lgamma", "LgammaBackward0", 1, forward=_scipy("gammaln"),
               grads=("g * digamma(a)",), fwd="lgamma(a)", torch="lgamma", domain=(0.1, 4.0))
DIGAMMA = defop("digamma", "DigammaBackward0", 1, forward=_scipy("psi"),
                grads=("g * polygamma(1.0, a)",), fwd="digamma(a)", torch="digamma",
                domain=(0.1, 4.0))
# f0 is the order n
POLYGAMMA = defop("polygamma", "PolygammaBackward0", 1, forward=_scipy("polygamma"),
                  grads=("g * polygamma(f0 + 1.0, a)",), fwd="polygamma(f0, a)",
                  domain=(0.1, 4.0),
                  samples=[Sample((s,), {"n": n}, "lib.polygamma(kw['n'], x0)")
                           for s in [(), (5,)] for n in (0, 1, 2, 3)])
# d erfinv(y) / dy = sqrt(pi) / 2 * exp(erfinv(y)^2), read from the output
ERFINV = defop("erfinv", "ErfinvBackward0", 1, forward=_scipy("erfinv"),
               grads=("g * (0.8862269254527579 * exp(y * y))",), fwd="erfinv(a)",
               torch="erfinv", domain=(-0.95, 0.95))
# f0 is the dimension p
MVLGAMMA = defop("mvlgamma", "MvlgammaBackward0", 1, forward=_scipy("multigammaln"),
                 grads=("g * mvdigamma(a, f0)",), fwd="mvlgamma(a, f0)", domain=(1.6, 4.0),
                 samples=[Sample((s,), {"p": p}, "lib.mvlgamma(x0, p=kw['p'])")
                          for s in [(), (2, 3)] for p in (1, 2, 3)])


# ---- torch.special: the derivatives are torch's (derivatives.yaml), pinned at its kinks ------
def _special(name, torch_name=None):
    """Samples calling torch.special.<name> (numbagrad.special.<name>)."""
    return [Sample((s,), {}, f"lib.special.{torch_name or name}(x0)") for s in _SHAPES]


_EPS = "2.220446049250313e-16"  # torch's i1/i1e derivative is 0.5 for |x| <= eps
I0 = defop("i0", "I0Backward0", 1, forward=_scipy("i0"), grads=("g * i1(a)",), fwd="i0(a)",
           torch="i0", domain=(-4.0, 4.0), doc="Element-wise modified Bessel function of the "
           "first kind of order 0.")
I0E = defop("special_i0e", "SpecialI0EBackward0", 1, forward=_scipy("i0e"),
            grads=("g * (i1e(a) - sgn(a) * y)",), fwd="i0e(a)", torch="special.i0e",
            domain=(-4.0, 4.0), samples=_special("i0e"))
I1 = defop("special_i1", "SpecialI1Backward0", 1, forward=_scipy("i1"),
           grads=(f"g * (i0(a) - y / a) if abs(a) > {_EPS} else g * 0.5",), fwd="i1(a)",
           torch="special.i1", domain=(-4.0, 4.0), samples=_special("i1"),
           half_backward="i1_backward")
I1E = defop("special_i1e", "SpecialI1EBackward0", 1, forward=_scipy("i1e"),
            grads=(f"g * (i0e(a) - y * (sgn(a) + 1.0 / a)) if abs(a) > {_EPS} else g * 0.5",),
            fwd="i1e(a)", torch="special.i1e", domain=(-4.0, 4.0), samples=_special("i1e"),
            half_backward="i1e_backward")
ERFCX = defop("special_erfcx", "SpecialErfcxBackward0", 1, forward=_scipy("erfcx"),
              grads=("(2.0 * a * y - 1.1283791670955126) * g",), fwd="erfcx(a)",
              torch="special.erfcx", domain=(-3.0, 5.0), samples=_special("erfcx"),
              half="erfcx_cpu")
NDTRI = defop("special_ndtri", "SpecialNdtriBackward0", 1, forward=_scipy("ndtri"),
              grads=("g * 2.5066282746310002 * exp(y * y / 2.0)",), fwd="ndtri(a)",
              torch="special.ndtri", domain=(0.02, 0.98), samples=_special("ndtri"),
              half="ndtri_cpu")
LOG_NDTR = defop("special_log_ndtr", "SpecialLogNdtrBackward0", 1, forward=_scipy("log_ndtr"),
                 grads=("g / 2.5066282746310002 * exp(-(y + a * a / 2.0))",),
                 fwd="log_ndtr(a)", torch="special.log_ndtr", domain=(-6.0, 3.0),
                 samples=_special("log_ndtr"), half="log_ndtr_cpu")
# sinc's derivative is 0 where pi x^2 is 0 (torch masks its 0 / 0)
SINC = defop("sinc", "SincBackward0", 1, forward=lambda a: np.sinc(a),
             grads=("0.0 if a * a * 3.141592653589793 == 0.0 else g * ((a * 3.141592653589793) * "
                    "cos(a * 3.141592653589793) - sin(a * 3.141592653589793)) / "
                    "(a * a * 3.141592653589793)",),
             fwd="sinc(a)", torch="sinc", domain=(-3.0, 3.0),
             doc="Element-wise normalized sinc, ``sin(pi x) / (pi x)`` (1 at 0).")
ENTR = defop("special_entr", "SpecialEntrBackward0", 1, forward=_scipy("entr"),
             grads=("g * -(1.0 + log(a))",), fwd="entr(a)", torch="special.entr",
             domain=(0.05, 3.0), samples=_special("entr"))
# xlog1py's first operand gets no gradient where it is 0 and the second <= -1
XLOG1PY = defop("special_xlog1py", "SpecialXlog1PyBackward0", 2, forward=_scipy("xlog1py"),
                grads=("0.0 if (a == 0.0 and b <= -1.0) else xlog1py(g, b)",
                       "g * a / (b + 1.0)"),
                fwd="xlog1py(a, b)", torch="special.xlog1py", domain=(0.5, 2.0),
                samples=[Sample(s, {}, "lib.special.xlog1py(x0, x1)")
                         for s in [((), ()), ((4,), (4,)), ((2, 3), (3,)), ((2, 1), (1, 3))]])

"""The special functions' op records: lgamma, digamma, polygamma, erfinv, mvlgamma.

Their kernels call the scalar functions of ops/scalar_special.py (torch's algorithms);
their second derivatives come from the formulas through the Tensor-level versions that
special_api.py registers in ``registry.FORMULA_FUNCTIONS``.
"""

import numpy as np

from .registry import Sample, defop

_SHAPES = [(), (4,), (2, 3), (0,)]


def _scipy(name):
    """A NumPy reference forward from scipy.special (imported on first use: it costs 0.3 s)."""
    def forward(a, *attrs):
        from scipy import special

        fn = getattr(special, name)
        out = fn(*[int(v) for v in attrs], a) if name == "polygamma" else (
            fn(a, int(attrs[0])) if name == "multigammaln" else fn(a))
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

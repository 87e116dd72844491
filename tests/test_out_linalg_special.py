"""out= compared with torch call by call: the named tuples of tuple outs."""

import numpy as np
import pytest

import numbagrad

torch = pytest.importorskip("torch")

VECS = np.random.default_rng(0).standard_normal((2, 3))

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

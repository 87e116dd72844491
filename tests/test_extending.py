"""The tutorial examples/adding_an_op.py: two ops added to the table from outside the package
(an elementwise formula and an @njit kernel) run inside the compiled sweep, first and second
order, and agree with torch. Run in a subprocess: it extends the op table (and compiles the
extended sweep once, cached on disk), which must not leak into the other tests."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "adding_an_op.py"


def _torch_reference():
    x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]], dtype=torch.float64,
                     requires_grad=True)
    y = (torch.cumsum(torch.nn.functional.softsign(x), -1) ** 2).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (h,) = torch.autograd.grad((g * g).sum(), x)
    return {"value": y.item(), "grad": g.detach().numpy(),
            "grad with create_graph": g.detach().numpy(), "second derivative": h.numpy()}


def test_tutorial_ops_match_torch():
    out = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                         timeout=900, check=True).stdout
    results = {}
    for line in out.splitlines():
        key, value = line.split(" = ", 1)
        results[key] = eval(value)  # noqa: S307 - numbers and lists printed by the example
    for key, expected in _torch_reference().items():
        np.testing.assert_allclose(results[key], expected, rtol=1e-12, atol=1e-14)

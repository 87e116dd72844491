"""Torch-written scripts using create_graph, autograd.grad and autograd.functional run with
``import numbagrad as torch`` and print exactly what torch prints."""

import pytest

import numbagrad
from numbagrad.seed_examples import run_script

torch = pytest.importorskip("torch")

SCRIPTS = {
    "derivatives of a polynomial": """
x = torch.tensor(3.0, requires_grad=True)
y = x ** 4 - 2 * x ** 2
(dy,) = torch.autograd.grad(y, x, create_graph=True)
(d2y,) = torch.autograd.grad(dy, x, create_graph=True)
(d3y,) = torch.autograd.grad(d2y, x)
print(y, dy, d2y, d3y, sep="\\n")
""",
    "jacobian and hessian": """
J = torch.autograd.functional.jacobian
H = torch.autograd.functional.hessian
x = torch.tensor([0.5, 1.0, 2.0])
print(J(lambda v: v.exp() * v.sum(), x))
print(H(lambda v: (v ** 3).sum() + v.prod(), x))
print(torch.autograd.functional.hvp(lambda v: (v.sin() ** 2).sum(), x, torch.ones(3)))
""",
    "gradient penalty": """
torch.manual_seed(0)
w = torch.tensor([[0.3, -0.2], [0.1, 0.4]], requires_grad=True)
data = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.0, 1.5]], requires_grad=True)
for step in range(3):
    out = torch.tanh(data @ w).sum()
    (g,) = torch.autograd.grad(out, data, create_graph=True)
    loss = out + (g.norm() - 1) ** 2
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad.zero_()
    print(step, round(loss.item(), 4))
print(w)
""",
    "backward with create_graph": """
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x ** 3).sum()
y.backward(create_graph=True)
print(x.grad)
g = x.grad.sum()
x.grad = None
g.backward()
print(x.grad)
""",
}


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_prints_what_torch_prints(name):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = run_script(SCRIPTS[name], numbagrad)
        theirs = run_script(SCRIPTS[name], torch)
    assert ours == theirs

"""The seed documents' examples (shared/seeds/), with the output each seed shows.

Used by the tour (``python -m numbagrad``) and by tests/test_seeds.py, which checks that they
print exactly this, and exactly what torch prints.
"""

import builtins
import contextlib
import io
import textwrap

SEED_000_EXAMPLE_1 = """
x = torch.tensor(2., requires_grad = False)
w = torch.tensor(3., requires_grad = True)
b = torch.tensor(1., requires_grad = True)
print("x:", x)
print("w:", w)
print("b:", b)
y = w * x + b
print("y:", y)
print("x.grad:", x.grad)
print("w.grad:", w.grad)
print("b.grad:", b.grad)
"""
SEED_000_OUTPUT_1 = """x: tensor(2.)
w: tensor(3., requires_grad=True)
b: tensor(1., requires_grad=True)
y: tensor(7., grad_fn=<AddBackward0>)
x.grad: None
w.grad: None
b.grad: None
"""

SEED_000_EXAMPLE_2 = """
x = torch.tensor(2., requires_grad = False)
w = torch.tensor(3., requires_grad = True)
b = torch.tensor(1., requires_grad = True)
print("x:", x)
print("w:", w)
print("b:", b)
y = w * x + b
print("y:", y)
y.backward()
print("x.grad:", x.grad)
print("w.grad:", w.grad)
print("b.grad:", b.grad)
"""
SEED_000_OUTPUT_2 = """x: tensor(2.)
w: tensor(3., requires_grad=True)
b: tensor(1., requires_grad=True)
y: tensor(7., grad_fn=<AddBackward0>)
x.grad: None
w.grad: tensor(2.)
b.grad: tensor(1.)
"""

SEED_001_LOOP = """
X = torch.tensor([[2,4,6],[2,7,9],[2,4,5]], dtype=torch.float, requires_grad=True)
for i in range(2):
    for j in range(3):
        output = X[i,j] * X[i,j]
        output.backward()
print(X.grad)
"""

SEED_001_SIMPLE = """
A = torch.tensor(2.0, requires_grad = True)
B = A * 4
B.backward()
print(A.grad.data)
"""

SEED_002_POW = """
x = torch.tensor(2.0, requires_grad=True)
y = 3 * x ** 2
y.backward()
print(f"Gradient dy/dx at x=2: {x.grad.item()}")
"""
SEED_002_POW_OUTPUT = "Gradient dy/dx at x=2: 12.0\n"

SEED_002_NONSCALAR = """
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
try:
    y.backward()
except RuntimeError as e:
    print(f"Error: {e}")
y.backward(torch.tensor([1.0, 1.0, 1.0]))
print(f"Gradients: {x.grad}")
"""
SEED_002_NONSCALAR_OUTPUT = """Error: grad can be implicitly created only for scalar outputs
Gradients: tensor([2., 2., 2.])
"""

SEED_004_SAMPLE_MODEL = """
import torch
import torch.nn as nn
import torch.optim as optim

# Simple linear model
model = nn.Linear(1, 1)

# Sample input and target
x = torch.tensor([[1.0], [2.0], [3.0]])
y = torch.tensor([[2.0], [4.0], [6.0]])

# Mean squared error loss
criterion = nn.MSELoss()

# Optimizer
optimizer = optim.SGD(model.parameters(), lr=0.1)

# Forward pass
output = model(x)

# Compute loss
loss = criterion(output, y)
print(f"Loss before backward: {loss.item():.4f}")

# Backward pass to compute gradients
loss.backward()

# Print gradients of model parameters
for name, param in model.named_parameters():
    print(f"Gradients for {name}: {param.grad}")

# Update weights
optimizer.step()

# Forward pass after update
output2 = model(x)
loss2 = criterion(output2, y)
print(f"Loss after one update: {loss2.item():.4f}")
"""
# The model's initial weights are random: to compare with torch line by line, the tests fix
# them right after the model is made (the seed's own run prints whatever its draw gives).
SEED_004_FIXED_WEIGHTS = SEED_004_SAMPLE_MODEL.replace(
    "model = nn.Linear(1, 1)\n",
    "model = nn.Linear(1, 1)\nwith torch.no_grad():\n    model.weight.fill_(0.5)\n"
    "    model.bias.fill_(-0.3)\n")

SCRIPTS = {
    "000-example-1": (SEED_000_EXAMPLE_1, SEED_000_OUTPUT_1),
    "000-example-2": (SEED_000_EXAMPLE_2, SEED_000_OUTPUT_2),
    "001-loop": (SEED_001_LOOP, None),
    "001-simple": (SEED_001_SIMPLE, "tensor(4.)\n"),
    "002-pow": (SEED_002_POW, SEED_002_POW_OUTPUT),
    "002-nonscalar": (SEED_002_NONSCALAR, SEED_002_NONSCALAR_OUTPUT),
    "004-sample-model": (SEED_004_FIXED_WEIGHTS, None),
}


def run_script(source, lib):
    """Run an example with ``torch`` bound to ``lib`` (also for its ``import torch...``
    statements); return what it printed."""
    real_import = builtins.__import__

    def import_(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        if name == "torch" or name.startswith("torch."):
            module = lib
            for part in name.split(".")[1:]:
                module = getattr(module, part)
            # `import torch.nn as nn` binds the top module and reads the attribute path
            return module if fromlist else lib
        return real_import(name, globals, locals, fromlist, level)

    env = {"torch": lib, "__builtins__": {**vars(builtins), "__import__": import_}}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(textwrap.dedent(source), env)  # noqa: S102 - the seeds' own examples
    return out.getvalue()

"""A user's training script, for tests/test_typing.py: ``mypy --strict`` must find no error in it
and reveal, on each ``reveal_type`` line, the type its ``# revealed:`` comment names. The test
also runs the script and checks that each value revealed has the type mypy says."""

from typing import reveal_type

import numpy as np

import numbagrad
import numbagrad.nn as nn
import numbagrad.nn.functional as F  # noqa: N812 - torch's spelling
from numbagrad import Tensor
from numbagrad.utils.data import DataLoader, Dataset


class MLP(nn.Module):
    def __init__(self, sizes: list[int]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for a, b in zip(sizes, sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.net = nn.Sequential(*layers[:-1])

    def forward(self, x: Tensor) -> Tensor:
        out: Tensor = self.net(x)  # calling a Module gives Any, as in torch
        return out


class Points(Dataset[tuple[Tensor, Tensor]]):
    def __init__(self, x: Tensor, labels: Tensor) -> None:
        self.x, self.labels = x, labels

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> tuple[Tensor, Tensor]:
        return self.x[i], self.labels[i]


@numbagrad.no_grad()
def accuracy(model: nn.Module, x: Tensor, labels: Tensor) -> float:
    logits: Tensor = model(x)
    return (logits.argmax(dim=1) == labels).float().mean().item()


def tensors() -> None:
    x = numbagrad.randn(8, 4)
    reveal_type(x)  # revealed: numbagrad.tensor.Tensor
    reveal_type(numbagrad.tensor([1.0, 2.0]))  # revealed: numbagrad.tensor.Tensor
    reveal_type(numbagrad.zeros(2, 3))  # revealed: numbagrad.tensor.Tensor
    reveal_type(numbagrad.ones(3))  # revealed: numbagrad.tensor.Tensor
    reveal_type(numbagrad.arange(5))  # revealed: numbagrad.tensor.Tensor
    reveal_type(numbagrad.linspace(0, 1, 5))  # revealed: numbagrad.tensor.Tensor
    reveal_type(numbagrad.from_numpy(np.ones(3)))  # revealed: numbagrad.tensor.Tensor
    w = numbagrad.randn(4, 2, requires_grad=True)
    # operators
    reveal_type(x + 1)  # revealed: numbagrad.tensor.Tensor
    reveal_type(2.0 * x)  # revealed: numbagrad.tensor.Tensor
    reveal_type(x - x / 2)  # revealed: numbagrad.tensor.Tensor
    reveal_type(x @ w)  # revealed: numbagrad.tensor.Tensor
    reveal_type(x**2)  # revealed: numbagrad.tensor.Tensor
    reveal_type(-x)  # revealed: numbagrad.tensor.Tensor
    reveal_type(x < 0)  # revealed: numbagrad.tensor.Tensor
    reveal_type(x == x)  # revealed: numbagrad.tensor.Tensor
    reveal_type(x[0, 1:])  # revealed: numbagrad.tensor.Tensor
    # the methods a training loop uses
    reveal_type(x.view(32))  # revealed: numbagrad.tensor.Tensor
    reveal_type(x.reshape(2, -1))  # revealed: numbagrad.tensor.Tensor
    reveal_type(x.sum())  # revealed: numbagrad.tensor.Tensor
    reveal_type(x.mean(dim=0))  # revealed: numbagrad.tensor.Tensor
    reveal_type(x.matmul(w))  # revealed: numbagrad.tensor.Tensor
    reveal_type(x.softmax(dim=1))  # revealed: numbagrad.tensor.Tensor
    reveal_type(x.argmax(dim=1))  # revealed: numbagrad.tensor.Tensor
    reveal_type(x.detach())  # revealed: numbagrad.tensor.Tensor
    reveal_type(x.to(numbagrad.float64))  # revealed: numbagrad.tensor.Tensor
    reveal_type(x.float())  # revealed: numbagrad.tensor.Tensor
    reveal_type(x.clone().zero_())  # revealed: numbagrad.tensor.Tensor
    reveal_type(x.clone().requires_grad_())  # revealed: numbagrad.tensor.Tensor
    reveal_type(x.sum().item())  # revealed: float
    reveal_type(x.numpy())  # revealed: numpy.ndarray[...]
    reveal_type(x.tolist())  # revealed: list[Any]
    reveal_type(x.shape)  # revealed: numbagrad.size.Size
    reveal_type(x.shape[0])  # revealed: int
    reveal_type(x.size())  # revealed: numbagrad.size.Size
    reveal_type(x.size(1))  # revealed: int
    reveal_type(x.dtype)  # revealed: numbagrad.dtypes.dtype
    reveal_type(x.requires_grad)  # revealed: bool
    reveal_type(w.grad)  # revealed: numbagrad.tensor.Tensor | None
    reveal_type(x.T)  # revealed: numbagrad.tensor.Tensor
    for row in x:
        reveal_type(row)  # revealed: numbagrad.tensor.Tensor
    first, second = x.split(4)
    reveal_type(first)  # revealed: numbagrad.tensor.Tensor
    reveal_type(numbagrad.cat([first, second]))  # revealed: numbagrad.tensor.Tensor
    reveal_type(numbagrad.stack([x, x]))  # revealed: numbagrad.tensor.Tensor
    reveal_type(numbagrad.exp(x).log1p().clamp(min=0.0))  # revealed: numbagrad.tensor.Tensor
    reveal_type(F.relu(x))  # revealed: numbagrad.tensor.Tensor
    reveal_type(F.softmax(x, dim=1))  # revealed: numbagrad.tensor.Tensor
    x += 1
    x[0] = 0.0
    grad_of_square = numbagrad.func.grad(lambda t: (t**2).sum())
    reveal_type(grad_of_square)  # revealed: def (*Any, **Any) -> Any
    reveal_type(grad_of_square(x))  # revealed: Any


def train() -> float:
    numbagrad.manual_seed(0)
    x = numbagrad.randn(64, 4)
    labels = (x @ numbagrad.tensor([[1.0], [-2.0], [0.5], [3.0]])).view(-1).gt(0).long()
    targets = F.one_hot(labels, 3).float()
    model = MLP([4, 16, 3])
    reveal_type(model.parameters())  # revealed: typing.Iterator[numbagrad.nn.module.Parameter]
    weight = next(model.parameters())
    reveal_type(weight)  # revealed: numbagrad.nn.module.Parameter
    as_tensor: Tensor = weight  # a Parameter is a Tensor
    reveal_type(as_tensor.grad)  # revealed: numbagrad.tensor.Tensor | None
    reveal_type(model.train())  # revealed: train_model.MLP
    reveal_type(model(x))  # revealed: Any
    linear = nn.Linear(4, 3)
    reveal_type(linear.weight)  # revealed: numbagrad.tensor.Tensor
    reveal_type(linear.in_features)  # revealed: int
    opt = numbagrad.optim.Adam(model.parameters(), lr=1e-2)
    numbagrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    schedule = numbagrad.optim.lr_scheduler.StepLR(opt, step_size=20, gamma=0.5)
    reveal_type(opt.param_groups)  # revealed: list[dict[str, Any]]
    loss = numbagrad.zeros(())
    for _ in range(30):
        opt.zero_grad()
        logits: Tensor = model(x)
        loss = F.cross_entropy(logits, labels) + 0.1 * F.mse_loss(logits.softmax(dim=1), targets)
        loss.backward()
        opt.step()
        schedule.step()
    opt.param_groups[0]["lr"] = 1e-3
    data = Points(x, labels)
    reveal_type(data[0])  # revealed: tuple[numbagrad.tensor.Tensor, numbagrad.tensor.Tensor]
    for xb, yb in DataLoader(data, batch_size=16, shuffle=True):
        opt.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        opt.step()
    reveal_type(loss)  # revealed: numbagrad.tensor.Tensor
    reveal_type(loss.backward)  # revealed: def (gradient: Any =, retain_graph: Any =, create_graph: Any =, inputs: Any =)
    reveal_type(loss.item())  # revealed: float
    if weight.grad is not None:
        reveal_type(weight.grad.abs().sum())  # revealed: numbagrad.tensor.Tensor
    with numbagrad.no_grad():
        reveal_type(F.linear(x, linear.weight).detach())  # revealed: numbagrad.tensor.Tensor
    reveal_type(accuracy)  # revealed: def (model: numbagrad.nn.module.Module, x: numbagrad.tensor.Tensor, labels: numbagrad.tensor.Tensor) -> float
    return accuracy(model.eval(), x, labels)


if __name__ == "__main__":
    tensors()
    print(f"accuracy {train():.2f}")

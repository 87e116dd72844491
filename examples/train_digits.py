"""Train an MLP and a small CNN on scikit-learn's bundled digits (1,797 8x8 images, no
download) with numbagrad, or with torch: the script is written for torch's API.

Run:  python examples/train_digits.py            (numbagrad)
      python examples/train_digits.py --torch    (the same script on torch)
"""

import argparse
import time

import numpy as np
from sklearn.datasets import load_digits
from tqdm import tqdm


def data(torch, seed=0):
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]  # (N, 1, 8, 8) in [0, 1]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    cut = int(0.8 * len(x))
    train, test = order[:cut], order[cut:]
    return ((torch.tensor(x[train]), torch.tensor(y[train])),
            (torch.tensor(x[test]), torch.tensor(y[test])))


def models(torch):
    nn = torch.nn
    mlp = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    cnn = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(32 * 2 * 2, 10))
    return {"MLP": mlp, "CNN": cnn}


def accuracy(torch, model, x, y):
    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(1)
    model.train()
    return float((pred == y).float().mean())


def train(torch, name, model, train_set, test_set, epochs, progress=True):
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*train_set),
                                         batch_size=32, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    criterion = torch.nn.CrossEntropyLoss()
    bar = tqdm(range(epochs), desc=name, disable=not progress)
    for _ in bar:
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(yb)
        bar.set_postfix(loss=f"{total / len(train_set[1]):.4f}")
    return accuracy(torch, model, *test_set)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--torch", action="store_true", help="run on torch instead")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.torch:
        import torch
    else:
        import numbagrad as torch
    torch.manual_seed(0)
    train_set, test_set = data(torch)
    results = {}
    for name, model in models(torch).items():
        t0 = time.perf_counter()
        acc = train(torch, name, model, train_set, test_set, args.epochs, not args.quiet)
        results[name] = acc
        print(f"{name}: test accuracy {acc:.3f} ({time.perf_counter() - t0:.1f} s)")
    return results


if __name__ == "__main__":
    main()

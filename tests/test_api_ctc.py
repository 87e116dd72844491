"""F.ctc_loss and nn.CTCLoss against torch: losses, gradients, grad_fn names, errors."""

import numpy as np
import pytest
from torch_oracle import outcome, same_as_torch

import numbagrad as ng
from numbagrad.autograd.gradcheck import gradcheck

torch = pytest.importorskip("torch")


def functional(lib):
    return ng.nn.functional if lib is ng else torch.nn.functional


def arr(t):
    return np.asarray(t.detach().numpy(), np.float64)


RNG = np.random.default_rng(7)
T, N, C = 7, 3, 5
RAW = RNG.standard_normal((T, N, C))
PADDED = np.array([[1, 2, 2, 3], [4, 1, 0, 0], [3, 3, 3, 0]])  # repeats need blanks between
LENGTHS_IN, LENGTHS_TG = [7, 6, 7], [4, 2, 3]
CONCAT = np.concatenate([row[:n] for row, n in zip(PADDED, LENGTHS_TG)])

# name -> (log_probs raw values, targets, input_lengths, target_lengths, blank)
CASES = {
    "padded": (RAW, PADDED, LENGTHS_IN, LENGTHS_TG, 0),
    "concatenated": (RAW, CONCAT, LENGTHS_IN, LENGTHS_TG, 0),
    "tuple_lengths": (RAW, PADDED, tuple(LENGTHS_IN), tuple(LENGTHS_TG), 0),
    "blank_last": (RAW, PADDED % 4, LENGTHS_IN, [4, 2, 0], 4),
    "unbatched": (RAW[:, 0], PADDED[0], 7, 4, 0),
    # sample 1: 1 1 1 needs 5 frames but has 4; sample 2: 2 2 needs 3, has exactly 3;
    # sample 0's last label is the blank (torch accepts it)
    "impossible": (RAW[:, :3], np.array([[2, 2, 0], [1, 1, 1], [2, 2, 0]]), [7, 4, 3],
                   [3, 3, 2], 0),
}


def run(lib, name, dtype, reduction, zero_infinity, backward=True):
    raw, targets, in_lens, tg_lens, blank = CASES[name]
    x = lib.tensor(raw, dtype=getattr(lib, dtype), requires_grad=True)
    log_probs = x.log_softmax(-1)
    tensor_lengths = not isinstance(in_lens, tuple) and name != "unbatched"
    if tensor_lengths:
        in_lens, tg_lens = lib.tensor(in_lens), lib.tensor(tg_lens)
    elif name == "unbatched":
        in_lens, tg_lens = lib.tensor(in_lens), lib.tensor(tg_lens)
    loss = functional(lib).ctc_loss(log_probs, lib.tensor(targets), in_lens, tg_lens,
                                    blank=blank, reduction=reduction,
                                    zero_infinity=zero_infinity)
    grad = None
    if backward:
        seed = lib.tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape)),
                          dtype=loss.dtype)
        loss.backward(seed)
        grad = arr(x.grad)
    return arr(loss), loss.dtype, loss.grad_fn.name(), grad


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_and_gradient_match_torch(name, reduction, dtype):
    for zero_infinity in ((False, True) if name == "impossible" else (False,)):
        ours = run(ng, name, dtype, reduction, zero_infinity)
        theirs = run(torch, name, dtype, reduction, zero_infinity)
        tol = dict(rtol=1e-10, atol=1e-10) if dtype == "float64" else dict(rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(ours[0], theirs[0], equal_nan=True, **tol)
        assert str(ours[1]).split(".")[-1] == str(theirs[1]).split(".")[-1]
        assert ours[2] == theirs[2]
        np.testing.assert_allclose(ours[3], theirs[3], equal_nan=True, **tol)
        if name == "impossible" and reduction == "none":
            assert np.isinf(ours[0][1]) != zero_infinity
            if zero_infinity:
                assert not ours[3][:, 1].any()  # zero gradient for the impossible sample


def test_gradcheck_and_no_second_derivative():
    raw, targets, in_lens, tg_lens, _ = CASES["padded"]
    x = ng.tensor(raw[:5, :2], requires_grad=True)

    def f(a):
        return ng.nn.functional.ctc_loss(a.log_softmax(-1), ng.tensor(targets[:2, :2]),
                                         [5, 4], [2, 2], reduction="sum")
    assert gradcheck(f, (x,))

    def second(lib):
        lp = lib.tensor(raw, requires_grad=True).log_softmax(-1)
        loss = functional(lib).ctc_loss(lp, lib.tensor(targets), lib.tensor(in_lens),
                                        lib.tensor(tg_lens))
        (g,) = lib.autograd.grad(loss, lp, create_graph=True)
        assert g.requires_grad and g.grad_fn.name() == "torch::autograd::NotImplemented"
        g.sum().backward()
    assert same_as_torch(second) == ("RuntimeError", "derivative for aten::_ctc_loss_backward "
                                     "is not implemented")


def test_module_matches_functional():
    def fn(lib):
        mod = lib.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
        raw, targets, in_lens, tg_lens, _ = CASES["impossible"]
        lp = lib.tensor(raw).log_softmax(-1)
        return repr(mod), mod.reduction, mod.zero_infinity, mod(lp, lib.tensor(targets),
                                                                  in_lens, tg_lens)
    same_as_torch(fn)


def bad(lib, **change):
    args = dict(log_probs=lib.tensor(RAW).log_softmax(-1), targets=lib.tensor(PADDED),
                input_lengths=lib.tensor(LENGTHS_IN), target_lengths=lib.tensor(LENGTHS_TG))
    args.update({k: v(lib) if callable(v) else v for k, v in change.items()})
    return functional(lib).ctc_loss(**args)


ERRORS = {
    "input_too_long": dict(input_lengths=lambda lib: lib.tensor([8, 6, 7])),
    "target_too_long": dict(target_lengths=lambda lib: lib.tensor([5, 2, 3])),
    "blank_out_of_range": dict(blank=5),
    "negative_blank": dict(blank=-1),
    "input_lengths_size": dict(input_lengths=lambda lib: lib.tensor([7, 6])),
    "target_lengths_size": dict(input_lengths=[7, 6, 7], target_lengths=[4, 2]),
    "float_input_lengths": dict(input_lengths=lambda lib: lib.tensor([7.0, 6.0, 7.0])),
    "float_target_lengths": dict(target_lengths=lambda lib: lib.tensor([4.0, 2.0, 3.0])),
    "concatenated_size": dict(targets=lambda lib: lib.tensor(CONCAT[:-1])),
    "reduction": dict(reduction="bad"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    ours = outcome(ng, lambda lib: bad(lib, **ERRORS[name]), repr)
    theirs = outcome(torch, lambda lib: bad(lib, **ERRORS[name]), repr)
    assert ours == theirs
    assert ours[0] in ("RuntimeError", "ValueError")

"""Differential fuzzer: random programs of 5-30 ops, numbagrad against torch (the oracle).

Each example draws leaves (0-d, size-1 and empty dims, float32/float64, some holding NaN, inf
and ties) and a program of ops, executing each step with torch as it is drawn so that the
next step's arguments fit the shapes at hand. About one step in ten is drawn to be invalid
(mismatched broadcast, bad dim, out-of-range narrow/index, wrong dtype, ...). The program is
then run by numbagrad and compared step by step: the same exception type where torch raises,
no exception where torch does not, and the same values, dtypes, shapes and requires_grad.
A loss (most values times a random cotangent, summed) is differentiated by both, and
the leaves' .grad compared (None where torch leaves None). Where a value or gradient differs
from torch's, it may match torch's answer from numbagrad's own upstream values instead (a
last-bit difference amplified downstream is not a bug of the op that amplifies it; see
DELIBERATE_DIFFERENCES). float64 programs without errors
(data-dependent steps included) are also compiled, `numbagrad.compile(func.value_and_grad)`
or `func.grad`, traced on other inputs and replayed on the program's, against torch's
gradient of the same function.

Two tests:
* test_fuzz_matches_torch: CI. Its example count comes from the hypothesis profile in
  conftest.py ("ci": 40 derandomized examples); KNOWN_MISMATCHES are not generated.
* test_fuzz_long (marker `fuzz`): skipped unless selected with `-m fuzz` (or
  NUMBAGRAD_FUZZ=1); generates everything, known mismatches included, so that they are
  reported until fixed. NUMBAGRAD_FUZZ_SKIP_KNOWN=1 leaves them out to hunt for new ones:

      pytest tests/test_fuzz.py -m fuzz -p no:xdist --hypothesis-profile=long \\
          --hypothesis-seed=1

The number of programs tried is printed at the end of the session (conftest.py).
"""

import math
import os
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numbagrad as ng
import numbagrad.nn.functional as ng_functional
from numbagrad.core import tape as tape_mod

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# What is deliberately not compared, each with why.
DELIBERATE_DIFFERENCES = {
    "sign of zero": "README Limitations: gradients accumulate into zero-filled buffers, so "
                    "numbagrad may give 0. where torch gives -0. (compared with ==, sign-blind); "
                    "values too (a product with a zero: F.linear); what is computed from such "
                    "a zero (1 / -0. = -inf) may match torch applied to numbagrad's own values "
                    "(local_value, local_grads)",
    "float32 and transcendental last bits": "README Limitations: float32 is computed (small "
        "nodes differentiated) in float64 and rounded once, exp/log/tanh/sigmoid are within "
        "2 ulp of NumPy's: compared within RTOL, or with torch applied to numbagrad's own "
        "values (in float64 for float32), so that an ill-conditioned op downstream (sin of "
        "1e79, tan near a pole, cancellation) does not report the last bits it amplifies; a "
        "gradient summing terms of opposite signs (x / x) is within ATOL of the sum of their "
        "magnitudes (torch's float32 leaves such residues too, on other elements)",
    "error messages": "only the exception type must be torch's; the wording may differ",
    "compiled replay of float32": "README Limitations: a float32 replay is within 1 ulp of "
                                  "eager, not torch's float32 bits: float64 programs only",
    "torch's vectorized loops": "README Limitations: where torch's vectorized and scalar "
                                "loops disagree (hardtanh/elu gradients at NaN, float32 "
                                "gelu(inf)), numbagrad follows the scalar one: NOT_GENERATED",
    "torch's accidents": "README Limitations: a negative repeat count of an empty dim, whose "
                         "backward torch cannot run: NOT_GENERATED",
    "API numbagrad lacks": "not generated: tensor clamp bounds, movedim with "
                           "tuples, Tensor.broadcast_to (unsupported, not wrong)",
}

RTOL = {np.dtype(np.float64): 1e-6, np.dtype(np.float32): 1e-4}
# absolute tolerance, times (1 + the largest finite magnitude of the expected array): sums in
# another order cancel to another residue
ATOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}
MAX_NUMEL = 512  # a step making a bigger value is dropped: small programs, fast examples

# Mismatches found by this fuzzer and not fixed yet: name -> predicate on a drawn step (see
# Step: `s.x` are torch's arguments, `s.value` its result, `s.err` the name of its exception
# type or None, `s.p` the drawn parameters). The CI test does not generate them; the `fuzz`
# test does, and names the ones a failing program holds. Each has a reproducer (L is numbagrad
# or torch, F its nn.functional) and both answers. A fix removes its entry.
KNOWN_MISMATCHES = {}


# Where torch disagrees with itself, or its answer is an accident, so that no answer is
# torch's: never generated (README, Limitations). Each has its reproducer as above.
NOT_GENERATED = {
    # x = L.full((16,), nan, requires_grad=True); F.hardtanh(x * 1).sum().backward(); x.grad[0]
    #   numbagrad 1.; torch 0. (float64 elu: nan). torch's own answer depends on the element's
    #   place: its vectorized loop gives 0 (nan), its scalar tail passes the gradient, as
    #   numbagrad does everywhere; L.full((17,), nan) gets [0.] * 16 + [1.] from torch.
    "hardtanh/elu gradient at NaN (torch: vectorized loop)": lambda s: s.op in
        ("hardtanh", "elu") and bool(s.x[0].isnan().any()) and s.x[0].numel() >= 8,
    # F.gelu(L.full((16,), inf))[0]   numbagrad inf; torch nan (float32: its vectorized loop;
    #   F.gelu(L.tensor([inf])) is inf in torch too)
    "gelu(inf) in float32 (torch: vectorized loop)": lambda s: s.op == "gelu" and
        s.x[0].dtype == torch.float32 and bool(s.x[0].isinf().any()),
    # x = L.zeros(0, requires_grad=True); x.repeat(1, 1, -1).sum().backward()
    #   numbagrad x.grad tensor([]); torch RuntimeError from its backward's reshape (the
    #   forward accepts a negative count of an empty dim, the backward does not)
    "repeat with a negative count (torch: its backward fails)": lambda s: s.op == "repeat" and
        min(s.p["reps"]) < 0,
}

# ------------------------------------------------------------------------------- drawing
class HypothesisDraw:
    def __init__(self, data):
        self.data = data

    def int(self, lo, hi):
        return self.data.draw(st.integers(lo, hi))


class RandomDraw:
    """The same draws from a seeded generator, to run many programs outside hypothesis."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def int(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))


@dataclass
class Leaf:
    name: str
    array: np.ndarray
    requires_grad: bool


@dataclass
class Step:
    op: str
    code: str
    args: list
    p: dict
    dd: bool = False  # data-dependent: a mask or index computed from values
    out: str = ""
    x: list = field(default_factory=list)  # torch arguments (for KNOWN_MISMATCHES)
    err: str | None = None  # torch's exception type name
    value: np.ndarray | None = None
    requires_grad: bool = False
    strided: bool = False  # an argument is, or was computed from, a non-contiguous tensor
    big: bool = False
    known: tuple = ()


@dataclass
class Program:
    dtype_mode: str
    leaves: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    loss_terms: list = field(default_factory=list)  # (value name, cotangent index)
    cots: list = field(default_factory=list)
    big: bool = False
    compiled: str = ""  # "", "grad" or "value_and_grad"
    ng_values: dict = field(default_factory=dict)  # numbagrad's value of each step
    ng_loss: np.ndarray | None = None
    ng_grads: dict = field(default_factory=dict)
    local: int = 0  # comparisons that needed torch applied to numbagrad's own values
    loss_err: str | None = None
    loss_value: np.ndarray | None = None
    grads: dict = field(default_factory=dict)

    def has_float32(self):
        return any(leaf.array.dtype == np.float32 for leaf in self.leaves)

    def loss_code(self):
        terms = [f"({n} * L.tensor(C[{k}])).sum()" for n, k in self.loss_terms]
        return " + ".join(terms) if terms else "L.tensor(0.0)"

    def listing(self):
        lines = [f"# dtype mode {self.dtype_mode}, big nodes {self.big}"]
        with np.printoptions(precision=17, threshold=10_000):
            for leaf in self.leaves:
                lines.append(f"{leaf.name} = L.tensor(np.{leaf.array!r}, "
                             f"requires_grad={leaf.requires_grad})")
        for s in self.steps:
            note = f"  # torch: {s.err}" if s.err else ""
            note += f"  # known: {', '.join(s.known)}" if s.known else ""
            lines.append(f"{s.out} = {s.code}{note}")
        lines.append(f"loss = {self.loss_code()}  # C: random cotangents")
        return "\n".join(lines)


def kind(e):
    """The builtin exception class an exception is an instance of (torch's are builtins)."""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return type(e).__name__


def lit(a):
    """Python source of a small integer/bool/float constant tensor."""
    dt = {"b": "L.bool", "i": "L.int64", "f": "L.float64"}[a.dtype.kind]
    if a.size == 0:  # tolist() loses an empty array's shape
        return f"L.zeros({a.shape!r}, dtype={dt})"
    return f"L.tensor({a.tolist()!r}, dtype={dt})"


def numel(shape):
    return math.prod(shape)


def broadcastable(s, t):
    try:
        np.broadcast_shapes(s, t)
        return True
    except ValueError:
        return False


# ------------------------------------------------------------------------------- generator
class Gen:
    """Draws a program, running each step with torch as it goes."""

    def __init__(self, draw, skip_known):
        self.d = draw
        self.skip_known = skip_known
        mode = self.pick(["float64", "float32", "float64", "float32", "mixed"])
        self.prog = Program(mode)
        self.env = {"L": torch, "F": TF, "np": np, "math": math}
        self.pool = []  # names of the float values a step may take
        self.strided = set()  # values torch lays out with other strides than C order, and
        # those computed from them (numbagrad's layouts may differ: view() would too)
        self.bad = False

    # draws (each shrinks towards its first choice / False)
    def int(self, lo, hi):
        return self.d.int(lo, hi)

    def pick(self, seq):
        return seq[self.int(0, len(seq) - 1)]

    def chance(self, n):
        """True one time in n."""
        return self.int(0, n - 1) == n - 1

    def defect(self, n=1):
        """In a step drawn to be invalid: make this part invalid (one time in n)? At most one
        defect a step: which of two errors torch checks first is not what is compared."""
        if self.bad and (n == 1 or self.chance(n)):
            self.bad = False
            return True
        return False

    def seed(self):
        return np.random.default_rng(self.int(0, 2**32 - 1))

    # values
    def t(self, name):
        return self.env[name]

    def shape(self, name):
        return tuple(self.env[name].shape)

    def dtype(self):
        m = self.prog.dtype_mode
        if m == "mixed":
            return self.pick([np.float64, np.float32])
        return np.float64 if m == "float64" else np.float32

    def leaf(self, shape, dtype=None):
        dtype = dtype or self.dtype()
        rng = self.seed()
        a = rng.uniform(-2.0, 2.0, shape)
        style = self.pick(["plain", "plain", "ties", "special"])
        if style == "ties":  # exact ties and zeros: max/amax/maximum/relu/abs at a kink
            a = np.round(a * 2.0) / 2.0
        elif style == "special":
            mask = rng.random(shape) < 0.3
            a[mask] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], size=int(mask.sum()))
        a = np.asarray(a, dtype=dtype)
        name = f"x{len(self.prog.leaves)}"
        rg = not self.chance(6)
        self.prog.leaves.append(Leaf(name, a, rg))
        self.env[name] = torch.tensor(a, requires_grad=rg)
        self.pool.append(name)
        return name

    def rand_shape(self):
        nd = self.pick([1, 2, 0, 3, 2, 1, 4])
        return tuple(self.pick([2, 3, 1, 4, 2, 3, 1, 0]) for _ in range(nd))

    def operand(self, pred=None):
        """A pool value (most recent first) satisfying pred, or None."""
        cands = [n for n in reversed(self.pool) if pred is None or pred(self.t(n))]
        if not cands:
            return None
        return cands[self.int(0, len(cands) - 1)]

    def other(self, shape, dtype=None):
        """A value of this exact shape: from the pool sometimes, else a new leaf."""
        if self.chance(3):
            n = self.operand(lambda t: tuple(t.shape) == tuple(shape))
            if n is not None:
                return n
        return self.leaf(tuple(shape), dtype)

    # dims
    def dim(self, nd, extra=0):
        """A valid dim of an nd tensor (extra=1: an insertion point); invalid when bad."""
        n = max(nd + extra, 1)
        if self.defect(2):
            return self.pick([n, -n - 1, n + 1])
        return self.int(-n, n - 1)

    def bshape(self, s):
        """A shape broadcastable with s (or, when bad and possible, one that is not)."""
        s = tuple(s)
        cand = [i for i, n in enumerate(s) if n != 1]
        if cand and self.defect():
            i = self.pick(cand)
            out = list(s)
            out[i] = 2 if s[i] == 0 else s[i] + 1
            return tuple(out[self.int(0, i):])
        k = self.int(0, len(s))
        out = []
        for n in s[len(s) - k:]:
            if n == 1 and self.chance(4):
                out.append(self.pick([2, 3]))
            else:
                out.append(1 if self.chance(3) else n)
        if len(s) < 4 and self.chance(5):
            out.insert(0, self.pick([1, 2]))
        return tuple(out)

    # steps
    def emit(self, op, code, args, dd=False, **p):
        return Step(op, code, list(args), p, dd)

    def run_step(self, step):
        step.out = f"v{len(self.prog.steps)}"
        step.x = [self.t(a) for a in step.args]
        step.big = self.prog.big
        step.strided = bool(self.strided.intersection(step.args))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                v = eval(step.code, self.env)
        except Exception as e:  # noqa: BLE001 - any torch exception is the oracle's answer
            step.err = kind(e)
        else:
            if not isinstance(v, torch.Tensor) or not v.is_floating_point():
                return False  # a generator slip: not a step to compare
            if v.numel() > MAX_NUMEL:
                return False
            step.value = v.detach().numpy().copy()
            step.requires_grad = v.requires_grad
            self.env[step.out] = v
            if step.strided or not v.is_contiguous() or step.op == "int_index":
                self.strided.add(step.out)  # (NumPy lays out an index not on dim 0 otherwise)
        step.known = tuple(k for k, pred in KNOWN_MISMATCHES.items() if _safe(pred, step))
        if step.known and self.skip_known or \
                any(_safe(pred, step) for pred in NOT_GENERATED.values()):
            self.env.pop(step.out, None)
            return False
        if step.err is None:
            self.pool.append(step.out)
        self.prog.steps.append(step)
        return True

    def build(self):
        for _ in range(self.int(1, 3)):
            self.leaf(self.rand_shape())
        self.prog.big = self.chance(8)
        n = self.int(5, 30)
        tries = 0
        while len(self.prog.steps) < n and tries < 4 * n:
            tries += 1
            self.bad = self.chance(10)
            name = self.pick(OP_NAMES)
            step = OPS[name](self)
            if step is not None and None not in step.args:
                self.run_step(step)
        self.finish()
        return self.prog

    def finish(self):
        prog = self.prog
        rng = self.seed()
        outs = [s.out for s in prog.steps if s.err is None]
        for i, n in enumerate(outs):
            if i == len(outs) - 1 or not self.chance(4):
                v = self.env[n]
                prog.cots.append(rng.uniform(-1.0, 1.0, tuple(v.shape)).astype(
                    v.detach().numpy().dtype))
                prog.loss_terms.append((n, len(prog.cots) - 1))
        self.env["C"] = prog.cots
        try:
            loss = eval(prog.loss_code(), self.env)
            prog.loss_value = loss.detach().numpy().copy()
            loss.backward()
        except Exception as e:  # noqa: BLE001
            prog.loss_err = kind(e)
        for leaf in prog.leaves:
            g = self.env[leaf.name].grad
            prog.grads[leaf.name] = None if g is None else g.numpy().copy()
        # data-dependent steps (masks, indices) compile too: their reads are the trace's guards
        clean = all(s.err is None for s in prog.steps)
        if (prog.dtype_mode == "float64" and clean and prog.loss_err is None
                and any(leaf.requires_grad for leaf in prog.leaves)):
            prog.compiled = self.pick(["value_and_grad", "grad"])


def _safe(pred, step):
    try:
        return bool(pred(step))
    except Exception:  # noqa: BLE001 - a predicate that does not apply does not match
        return False


# ------------------------------------------------------------------------------- ops
OPS = {}
OP_NAMES = []  # weighted: a name appears `weight` times


def op(name, weight=1):
    def deco(fn):
        OPS[name] = fn
        OP_NAMES.extend([name] * weight)
        return fn
    return deco


UNARY = {
    "neg": "-{a}", "abs": "L.abs({a})", "exp": "L.exp({a})", "log": "L.log({a})",
    "log1p": "L.log1p({a})", "expm1": "L.expm1({a})", "sqrt": "L.sqrt({a})",
    "rsqrt": "L.rsqrt({a})", "sin": "L.sin({a})", "cos": "L.cos({a})", "tan": "L.tan({a})",
    "tanh": "L.tanh({a})", "sigmoid": "L.sigmoid({a})", "relu": "L.relu({a})",
    "sign": "L.sign({a})", "erf": "L.erf({a})", "floor": "{a}.floor()", "round": "{a}.round()",
    "silu": "F.silu({a})", "mish": "F.mish({a})", "gelu": "F.gelu({a})",
    "gelu_tanh": "F.gelu({a}, approximate='tanh')", "F.relu": "F.relu({a})",
    "F.tanh": "F.tanh({a})", "F.sigmoid": "F.sigmoid({a})", "clone": "{a}.clone()",
    "contiguous": "{a}.contiguous()", "exp_neg_sq": "L.exp(-{a} * {a})",
}
PARAM_UNARY = {
    "elu": ("F.elu({a}, alpha={p})", [1.0, 0.5, 2.0]),
    "softplus": ("F.softplus({a}, beta={p[0]}, threshold={p[1]})",
                 [(1.0, 20.0), (2.0, 20.0), (0.5, 1.0), (1.0, 1.0)]),
    "hardtanh": ("F.hardtanh({a}, {p[0]}, {p[1]})", [(-1.0, 1.0), (-0.5, 2.0), (0.0, 0.5)]),
    "leaky_relu": ("F.leaky_relu({a}, {p})", [0.01, 0.2, -0.5]),
    "pow_scalar": ("{a} ** {p}", [2, 3, 0.5, -1, -1.5, 0, 1, 2.5, 2.0, -0.5, 1.5]),
    "Tensor.pow": ("{a}.pow({p})", [2, 0.5, -2, -0.5]),
    "rpow": ("{p} ** {a}", [2.0, 0.5, 1.0]),
    "add_scalar": ("{a} + {p}", [0.5, -2.0, 0.0, 3]),
    "sub_scalar": ("{a} - {p}", [0.5, -2.0]),
    "rsub": ("{p} - {a}", [1.5, 0.0]),
    "mul_scalar": ("{a} * {p}", [-2.0, 0.5, 0.0, 3]),
    "div_scalar": ("{a} / {p}", [3.0, -0.5, 0.0]),
    "rdiv": ("{p} / {a}", [1.0, -2.0]),
    "clamp": ("L.clamp({a}, {p[0]}, {p[1]})", [(-0.8, 0.9), (-1.0, None), (None, 0.5),
                                               (0.5, -0.5), (0.0, 0.0)]),
    "clip": ("{a}.clip(min={p[0]}, max={p[1]})", [(-0.8, 0.9), (None, 0.5)]),
}


def _unary(name):
    def gen(g):
        a = g.operand()
        if name == "gelu" and g.defect():
            return g.emit("gelu", f"F.gelu({a}, approximate='bad')", [a])
        return g.emit(name, UNARY[name].format(a=a), [a])
    return gen


def _param_unary(name):
    template, params = PARAM_UNARY[name]

    def gen(g):
        a = g.operand()
        p = g.pick(params)
        if name == "clamp" and g.defect():
            p = (None, None)
        return g.emit(name, template.format(a=a, p=p), [a], p=p)
    return gen


for _n in UNARY:
    op(_n)(_unary(_n))
for _n in PARAM_UNARY:
    op(_n, 2 if _n in ("pow_scalar", "clamp") else 1)(_param_unary(_n))

BINARY = {
    "add": "{a} + {b}", "sub": "{a} - {b}", "mul": "{a} * {b}", "div": "{a} / {b}",
    "L.add": "L.add({a}, {b})", "L.mul": "L.mul({a}, {b})", "L.div": "L.div({a}, {b})",
    "L.add_alpha": "L.add({a}, {b}, alpha=-1.5)", "L.sub_alpha": "L.sub({a}, {b}, alpha=2)",
    "maximum": "L.maximum({a}, {b})", "minimum": "L.minimum({a}, {b})",
    "max_binary": "L.max({a}, {b})", "min_binary": "L.min({a}, {b})",
    "pow": "{a} ** {b}", "L.pow": "L.pow({a}, {b})", "safe_div": "{a} / ({b} * {b} + 1.0)",
}


def _binary(name):
    def gen(g):
        a = g.operand()
        shape = g.bshape(g.shape(a))
        b = None
        if not g.bad and g.chance(2):
            b = g.operand(lambda t: broadcastable(tuple(t.shape), g.shape(a)))
        if b is None:
            b = g.leaf(shape)
        if g.chance(2):
            a, b = b, a
        return g.emit(name, BINARY[name].format(a=a, b=b), [a, b])
    return gen


for _n in BINARY:
    op(_n, 3 if _n in ("add", "mul", "sub", "div") else 1)(_binary(_n))


def mask_code(g, shape):
    m = g.seed().random(shape) < 0.5
    if g.defect(2):
        return lit(m.astype(np.float64))  # wrong dtype: a float mask
    return lit(np.asarray(m))


@op("where", 3)
def _where(g):
    a = g.operand()
    sa = g.shape(a)
    b = g.other(g.bshape(sa)) if not g.chance(4) else None
    b_code = b if b is not None else g.pick(["0.0", "-1.0", "float('nan')"])
    if g.chance(3):  # condition from the values: data-dependent
        cond = f"{a} > {b}" if b is not None else f"{a} > 0"
        return g.emit("where", f"L.where({cond}, {a}, {b_code})",
                      [a] + ([b] if b else []), dd=True)
    cond = mask_code(g, g.bshape(sa))
    if g.chance(2):
        a_code, b_code = b_code, a
    else:
        a_code = a
    return g.emit("where", f"L.where({cond}, {a_code}, {b_code})", [a] + ([b] if b else []))


@op("masked_fill", 2)
def _masked_fill(g):
    a = g.operand()
    value = g.pick(["0.0", "-1.5", "float('inf')", "float('nan')"])
    if g.chance(3):
        return g.emit("masked_fill", f"{a}.masked_fill({a} > 0.5, {value})", [a], dd=True)
    s = g.shape(a)
    mshape = g.bshape(s) if g.bad else s[g.int(0, len(s)):]
    return g.emit("masked_fill", f"{a}.masked_fill({mask_code(g, mshape)}, {value})", [a])


@op("branch", 2)
def _branch(g):
    """Python reading values: an if on a comparison, item(), an index from argmax (under
    numbagrad.compile, each read is a guard: a replay must follow the call's own path)."""
    a = g.operand(lambda t: t.numel() > 0)
    if a is None:
        return None
    form = g.int(0, 2)
    if form == 0:
        code = f"({a} * 2.0 if bool({a}.sum() > 0) else {a} - 1.0)"
    elif form == 1:
        code = f"({a} * {a}.abs().max().item())"
    else:
        code = f"({a}.reshape(-1)[{a}.argmax()] * {a})"
    return g.emit("branch", code, [a], dd=True)


# reductions -------------------------------------------------------------------------------
def dims_code(g, nd, allow_tuple=True):
    """A dim, or a tuple of distinct dims (duplicates when bad)."""
    if allow_tuple and nd >= 2 and g.chance(3):
        ds = sorted({g.dim(nd) % nd for _ in range(g.int(1, nd))})
        if g.defect():
            ds = ds + [ds[0]]
        return str(tuple(ds))
    return str(g.dim(nd))


@op("sum", 3)
def _sum(g):
    a = g.operand()
    form = g.int(0, 2)
    if form == 0:
        return g.emit("sum", f"{a}.sum()", [a])
    dim = dims_code(g, g.t(a).ndim)
    keep = g.pick(["False", "True"])
    code = f"{a}.sum({dim}, keepdim={keep})" if form == 1 else \
        f"L.sum({a}, dim={dim}, keepdim={keep})"
    return g.emit("sum", code, [a], dim=dim, keepdim=keep)


@op("mean", 2)
def _mean(g):
    a = g.operand()
    if g.chance(3):
        return g.emit("mean", f"{a}.mean()", [a])
    dim = dims_code(g, g.t(a).ndim)
    return g.emit("mean", f"{a}.mean({dim}, keepdim={g.pick(['False', 'True'])})", [a],
                  dim=dim)


@op("prod", 2)
def _prod(g):
    a = g.operand()
    if g.chance(3):
        return g.emit("prod", f"{a}.prod()", [a])
    dim = g.dim(g.t(a).ndim)
    return g.emit("prod", f"{a}.prod({dim}, keepdim={g.pick(['False', 'True'])})", [a],
                  dim=dim)


def _amax(name):
    def gen(g):
        a = g.operand()
        if g.chance(4):
            return g.emit(name, f"{a}.{name}()", [a], dim=None)
        dim = dims_code(g, g.t(a).ndim)
        keep = g.pick(["False", "True"])
        return g.emit(name, f"{a}.{name}({dim}, keepdim={keep})", [a], dim=dim)
    return gen


def _max(name):
    def gen(g):
        a = g.operand()
        if g.chance(3):
            return g.emit(name, f"{a}.{name}()", [a], dim=None)
        dim = g.dim(g.t(a).ndim)
        keep = g.pick(["False", "True"])
        code = g.pick([f"{a}.{name}({dim}, keepdim={keep}).values",
                       f"L.{name}({a}, {dim})[0]", f"{a}.{name}(dim={dim})[0]"])
        return g.emit(name, code, [a], dim=dim)
    return gen


for _n in ("amax", "amin"):
    op(_n, 2)(_amax(_n))
for _n in ("max", "min"):
    op(_n, 2)(_max(_n))


def _var(name):
    def gen(g):
        a = g.operand()
        form = g.int(0, 3)
        if form == 0:
            return g.emit(name, f"{a}.{name}()", [a], correction=1)
        dim = dims_code(g, g.t(a).ndim)
        keep = g.pick(["False", "True"])
        if form == 1:
            return g.emit(name, f"{a}.{name}({dim}, keepdim={keep})", [a], dim=dim,
                          correction=1)
        if form == 2:
            c = g.pick([0, 1, 2])
            return g.emit(name, f"{a}.{name}({dim}, correction={c}, keepdim={keep})", [a],
                          dim=dim, correction=c)
        return g.emit(name, f"L.{name}({a}, {dim}, unbiased=False)", [a], dim=dim,
                      correction=0)
    return gen


for _n in ("var", "std"):
    op(_n, 2)(_var(_n))


@op("logsumexp", 2)
def _logsumexp(g):
    a = g.operand()
    dim = dims_code(g, g.t(a).ndim)
    return g.emit("logsumexp", f"{a}.logsumexp({dim}, keepdim={g.pick(['False', 'True'])})",
                  [a], dim=dim)


@op("softmax", 2)
def _softmax(g):
    a = g.operand()
    dim = g.dim(g.t(a).ndim)
    code = g.pick([f"{a}.softmax({dim})", f"F.softmax({a}, dim={dim})",
                   f"L.softmax({a}, {dim})"])
    return g.emit("softmax", code, [a], dim=dim)


@op("log_softmax", 2)
def _log_softmax(g):
    a = g.operand()
    dim = g.dim(g.t(a).ndim)
    code = g.pick([f"{a}.log_softmax({dim})", f"F.log_softmax({a}, dim={dim})"])
    return g.emit("log_softmax", code, [a], dim=dim)


@op("norm")
def _norm(g):
    a = g.operand()
    form = g.int(0, 2)
    if form == 0:
        return g.emit("norm", f"{a}.norm()", [a])
    if form == 1:
        return g.emit("norm", f"{a}.norm(p={g.pick([1, 2])})", [a])
    return g.emit("norm", f"{a}.norm(dim={dims_code(g, g.t(a).ndim)})", [a])


# shapes ---------------------------------------------------------------------------------
def factor_shape(g, n):
    """A shape of n elements (0 to 4 dims), with a -1 sometimes."""
    if n == 0:
        shape = [g.pick([2, 0, 1, 3]) for _ in range(g.int(1, 3))]
        shape[g.int(0, len(shape) - 1)] = 0
    else:
        primes, m, p = [], n, 2
        while m > 1:
            while m % p == 0:
                primes.append(p)
                m //= p
            p += 1
        nd = g.int(0 if n == 1 else 1, 4)
        shape = [1] * max(nd, 1 if primes else 0)
        for q in primes:
            shape[g.int(0, len(shape) - 1)] *= q
    if shape and g.chance(3):
        shape[g.int(0, len(shape) - 1)] = -1
    return tuple(shape)


@op("reshape", 3)
def _reshape(g):
    a = g.operand()
    n = numel(g.shape(a))
    shape = factor_shape(g, n + 1 if g.defect() else n)
    # (no argument-less reshape()/permute(): a Python signature error, not the op's semantics)
    code = g.pick([f"{a}.reshape({', '.join(map(str, shape))})" if shape else f"{a}.reshape(())",
                   f"{a}.reshape({list(shape)})", f"L.reshape({a}, {shape!r})"])
    return g.emit("reshape", code, [a], shape=shape)


@op("view", 2)
def _view(g):
    a = g.operand()
    n = numel(g.shape(a))
    shape = factor_shape(g, n + 1 if g.defect() else n)
    return g.emit("view", f"{a}.view({list(shape)})", [a], shape=shape)


@op("transpose", 2)
def _transpose(g):
    a = g.operand()
    nd = g.t(a).ndim
    d0, d1 = g.dim(nd), g.dim(nd)
    code = g.pick([f"{a}.transpose({d0}, {d1})", f"L.transpose({a}, {d0}, {d1})",
                   f"{a}.swapaxes({d0}, {d1})"])
    return g.emit("transpose", code, [a], dims=(d0, d1))


@op("t", 2)
def _t(g):
    a = g.operand(None if g.defect() else lambda t: t.ndim <= 2)
    return g.emit("t", g.pick([f"{a}.t()", f"L.t({a})", f"{a}.T", f"{a}.mT"]), [a])


@op("permute", 2)
def _permute(g):
    a = g.operand()
    nd = g.t(a).ndim
    perm = list(g.seed().permutation(nd))
    perm = [int(p) - (nd if g.chance(3) else 0) for p in perm]
    if g.defect():
        perm = perm[1:] + perm[:1] if nd >= 2 and g.chance(2) else perm + [0]
        if nd >= 2 and g.chance(2):
            perm[0] = perm[1]
    code = g.pick([f"{a}.permute({', '.join(map(str, perm))})" if perm else f"{a}.permute(())",
                   f"{a}.permute({tuple(perm)!r})", f"L.permute({a}, {tuple(perm)!r})"])
    return g.emit("permute", code, [a], perm=perm)


@op("narrow", 2)
def _narrow(g):
    a = g.operand(lambda t: t.ndim >= 1)
    if a is None:
        return None
    s = g.shape(a)
    dim = g.dim(len(s))
    size = s[dim] if -len(s) <= dim < len(s) else 2
    start = g.int(-size, size)
    length = g.int(0, size - (start % size if size and start < 0 else start))
    if g.defect():
        if g.chance(2):
            start = size + 1
        else:
            length = size + 1
    code = g.pick([f"{a}.narrow({dim}, {start}, {length})",
                   f"L.narrow({a}, {dim}, {start}, {length})"])
    return g.emit("narrow", code, [a], dim=dim, start=start, length=length)


def _slice_item(g, size):
    """A slice with a step, or an int, for a dim of this size."""
    if g.int(0, 3) < 3:
        start = g.pick([None, 1, -1, 0, -2, size + 1])
        stop = g.pick([None, -1, 2, 1, size + 2])
        step = g.pick([None, 2, 1, 3])
        if g.defect(2):
            step = g.pick([-1, 0])
        text = f"{'' if start is None else start}:{'' if stop is None else stop}"
        return text + ("" if step is None else f":{step}")
    if g.defect():
        return str(g.pick([size, -size - 1]))
    return str(g.int(-size, size - 1)) if size else ":"


@op("slice", 4)
def _slice(g):
    """a[i, j:k:l, ..., None, ...]: the items before an Ellipsis index the first dims, those
    after it the last ones."""
    a = g.operand()
    s = g.shape(a)
    nd = len(s)
    k = g.int(0, nd)
    p = g.int(0, k) if g.chance(3) else None  # where the Ellipsis goes
    before = k if p is None else p
    dims = list(range(before)) + list(range(nd - (k - before), nd))
    items = [_slice_item(g, s[d]) for d in dims]
    if p is not None:
        items.insert(p, "...")
    for _ in range(g.int(0, 1)):
        items.insert(g.int(0, len(items)), "None")
    if g.defect():
        items.append("0")  # one index too many
    if not items:
        items = ["..."]
    return g.emit("slice", f"{a}[{', '.join(items)}]", [a], items=items)


@op("cat", 3)
def _cat(g):
    a = g.operand()
    s = g.shape(a)
    nd = len(s)
    dim = g.dim(nd)
    others = []
    for _ in range(g.int(1, 2)):
        t = list(s)
        if nd:
            d = dim % nd if -nd <= dim < nd else 0
            t[d] = g.pick([1, 2, 0, 3])
            if nd >= 2 and g.defect(2):
                e = (d + 1) % nd
                t[e] = t[e] + 1
        others.append(g.other(t))
    vals = [a] + others
    k = g.int(0, len(vals) - 1)
    vals = vals[k:] + vals[:k]
    code = g.pick([f"L.cat([{', '.join(vals)}], dim={dim})",
                   f"L.cat(({', '.join(vals)},), {dim})"])
    return g.emit("cat", code, vals, dim=dim)


@op("stack", 2)
def _stack(g):
    a = g.operand()
    s = g.shape(a)
    dim = g.dim(len(s), extra=1)
    t = list(s)
    if t and g.defect():
        t[0] += 1
    b = g.other(t)
    return g.emit("stack", f"L.stack([{a}, {b}], {dim})", [a, b], dim=dim)


@op("expand", 2)
def _expand(g):
    a = g.operand()
    s = g.shape(a)
    new = []
    for n in s:
        if n == 1 and g.chance(2):
            new.append(g.pick([2, 3, 0]))
        else:
            new.append(g.pick([-1, n]))
    lead = [g.pick([2, 1, 0]) for _ in range(g.int(0, max(0, 3 - len(s))))]
    new = lead + new
    if g.defect():
        big = [i for i, n in enumerate(s) if n > 1]
        if big:
            new[len(lead) + big[0]] = s[big[0]] + 1
        elif s:
            new = new[len(lead) + 1:]  # fewer sizes than dims
        else:
            new = [-2]
    code = g.pick([f"{a}.expand({', '.join(map(str, new))})" if new else f"{a}.expand(())",
                   f"{a}.expand({tuple(new)!r})"])
    return g.emit("expand", code, [a], size=new)


@op("broadcast_to")
def _broadcast_to(g):
    a = g.operand()
    s = g.shape(a)
    new = [g.pick([2, 3]) if n == 1 and g.chance(2) else n for n in s]
    new = [g.pick([2, 1]) for _ in range(g.int(0, max(0, 2 - len(s))))] + new
    if new and g.defect():
        new[-1] += 1
    return g.emit("broadcast_to", f"L.broadcast_to({a}, {tuple(new)!r})", [a], size=new)


@op("squeeze", 2)
def _squeeze(g):
    a = g.operand()
    nd = g.t(a).ndim
    form = g.int(0, 2)
    if form == 0:
        return g.emit("squeeze", g.pick([f"{a}.squeeze()", f"L.squeeze({a})"]), [a])
    if form == 1 or nd < 2:
        return g.emit("squeeze", f"{a}.squeeze({g.dim(nd)})", [a])
    return g.emit("squeeze", f"{a}.squeeze({dims_code(g, nd)})", [a])


@op("unsqueeze", 2)
def _unsqueeze(g):
    a = g.operand()
    dim = g.dim(g.t(a).ndim, extra=1)
    return g.emit("unsqueeze", g.pick([f"{a}.unsqueeze({dim})", f"L.unsqueeze({a}, {dim})"]),
                  [a], dim=dim)


@op("flatten", 2)
def _flatten(g):
    a = g.operand()
    nd = g.t(a).ndim
    if g.chance(3):
        return g.emit("flatten", f"{a}.flatten()", [a])
    s, e = g.dim(nd), g.dim(nd)
    n = max(nd, 1)
    if (s % n) > (e % n) and not g.defect():
        s, e = e, s
    code = g.pick([f"{a}.flatten({s}, {e})", f"L.flatten({a}, {s}, {e})"])
    return g.emit("flatten", code, [a], start=s, end=e)


@op("unflatten")
def _unflatten(g):
    a = g.operand(lambda t: t.ndim >= 1)
    if a is None:
        return None
    s = g.shape(a)
    dim = g.dim(len(s))
    n = s[dim] if -len(s) <= dim < len(s) else 2
    sizes = factor_shape(g, n + 1 if g.defect() else n)
    if not sizes:
        sizes = (1,)
    return g.emit("unflatten", f"{a}.unflatten({dim}, {tuple(sizes)!r})", [a], dim=dim)


@op("movedim")
def _movedim(g):
    a = g.operand()
    nd = g.t(a).ndim
    return g.emit("movedim", f"{a}.movedim({g.dim(nd)}, {g.dim(nd)})", [a])


@op("repeat")
def _repeat(g):
    a = g.operand(lambda t: t.numel() <= 32)
    if a is None:
        return None
    nd = g.t(a).ndim
    reps = [g.pick([1, 2, 3, 0]) for _ in range(nd + g.int(0, 1))]
    if reps and g.defect():
        reps = reps[1:] if len(reps) == nd else reps + [-1]
    return g.emit("repeat", f"{a}.repeat({tuple(reps)!r})", [a], reps=reps)


@op("split", 2)
def _split(g):
    a = g.operand(lambda t: t.ndim >= 1)
    if a is None:
        return None
    s = g.shape(a)
    dim = g.dim(len(s))
    form = g.int(0, 2)
    size = s[dim] if -len(s) <= dim < len(s) else 1
    if form == 0:
        k = 0 if g.defect(2) else g.pick([1, 2, 3])
        nparts = max(1, -(-size // k)) if k else 1
        code = f"{a}.split({k}, {dim})[{g.int(0, nparts - 1)}]"
    elif form == 1:
        k = 0 if g.defect(2) else g.pick([1, 2, 3])
        nparts = min(k, size) if k and size else 1
        code = f"{a}.chunk({k}, {dim})[{g.int(-nparts, nparts - 1)}]"
    else:
        idx = g.int(-max(size, 1), max(size, 1) - 1)
        code = f"{a}.unbind({dim})[{idx}]"
    return g.emit("split", code, [a], dim=dim)


# indexing -----------------------------------------------------------------------------
@op("gather", 2)
def _gather(g):
    a = g.operand()
    s = g.shape(a)
    nd = len(s)
    dim = g.dim(nd)
    d = dim % max(nd, 1) if -max(nd, 1) <= dim < max(nd, 1) else 0
    if nd == 0:
        ishape = ()
        hi = 1
    else:
        ishape = tuple(g.int(0, 3) if j == d else g.int(0 if n else 0, n) for j, n in
                       enumerate(s))
        hi = s[d]
    rng = g.seed()
    idx = rng.integers(0, max(hi, 1), ishape) if hi else np.zeros(ishape, np.int64)
    if g.defect():
        form = g.int(0, 2)
        if form == 0 and idx.size:
            idx.flat[0] = g.pick([hi, -1])
        elif form == 1:
            idx = idx.astype(np.float64)
        else:
            idx = idx[None]
    code = g.pick([f"{a}.gather({dim}, {lit(idx)})", f"L.gather({a}, {dim}, {lit(idx)})"])
    return g.emit("gather", code, [a], dim=dim, index=idx)


@op("index_select", 2)
def _index_select(g):
    a = g.operand()
    s = g.shape(a)
    nd = len(s)
    dim = g.dim(nd)
    hi = s[dim] if nd and -nd <= dim < nd else 1
    idx = g.seed().integers(0, max(hi, 1), g.int(0, 4)) if hi else np.zeros(0, np.int64)
    if g.chance(6):
        idx = idx[:1].reshape(()) if idx.size else idx  # a 0-d index
    if g.defect():
        form = g.int(0, 1)
        if form == 0:
            idx = np.append(idx, g.pick([hi, -1]))
        else:
            idx = idx.astype(np.float64)
    code = g.pick([f"{a}.index_select({dim}, {lit(idx)})",
                   f"L.index_select({a}, {dim}, {lit(idx)})"])
    return g.emit("index_select", code, [a], dim=dim, index=idx)


@op("advanced_index", 2)
def _advanced_index(g):
    a = g.operand(lambda t: t.ndim >= 1)
    if a is None:
        return None
    s = g.shape(a)
    form = g.int(0, 3)
    if form == 3:  # boolean mask over leading dims
        k = g.int(1, len(s))
        if g.chance(3):
            return g.emit("bool_index", f"{a}[{a} > 0.0]", [a], dd=True)
        m = g.seed().random(s[:k]) < 0.5
        if g.defect():
            m = m[..., :0] if m.shape[-1] else np.ones(m.shape[:-1] + (2,), bool)
        return g.emit("bool_index", f"{a}[{lit(m)}]", [a])
    pos = g.int(0, len(s) - 1)
    size = s[pos]
    ishape = g.pick([(3,), (2,), (2, 2), (1,), (0,)])
    idx = g.seed().integers(-size, size, ishape) if size else np.zeros(ishape, np.int64)
    if g.defect():
        idx = np.append(idx.ravel(), size)
    prefix = ":, " * pos
    text = lit(idx) if form == 0 else repr(idx.tolist())
    return g.emit("int_index", f"{a}[{prefix}{text}]", [a], index=idx,
                  form="tensor" if form == 0 else "list")


# matrix products ------------------------------------------------------------------------
def _mat_other(g, shape, k_axis):
    """A second operand of `shape`, its k_axis size wrong when bad; maybe in the other
    dtype in mixed mode (a dtype error)."""
    shape = list(shape)
    if shape and g.defect():
        shape[k_axis] += 1
    return g.other(tuple(shape))


@op("matmul", 3)
def _matmul(g):
    a = g.operand(lambda t: t.ndim >= 1)
    if a is None:
        return None
    s = g.shape(a)
    k = s[-1]
    m = g.pick([2, 1, 3, 0])
    if len(s) == 1:
        bshape = g.pick([(k,), (k, m), (2, k, m)])
    else:
        bshape = g.pick([(k,), (k, m), s[:-2] + (k, m), (1,) + (k, m)]) if len(s) >= 2 \
            else (k, m)
    kax = 0 if len(bshape) == 1 else -2
    b = _mat_other(g, bshape, kax)
    code = g.pick([f"L.matmul({a}, {b})", f"{a} @ {b}", f"{a}.matmul({b})"])
    return g.emit("matmul", code, [a, b])


@op("mm")
def _mm(g):
    wrong = g.defect(2)
    a = g.operand(lambda t: t.ndim == 1 if wrong else t.ndim == 2)
    if a is None:
        return None
    s = g.shape(a)
    b = _mat_other(g, (s[-1], g.pick([2, 1, 3, 0])), 0)
    return g.emit("mm", g.pick([f"L.mm({a}, {b})", f"{a}.mm({b})"]), [a, b])


@op("mv")
def _mv(g):
    a = g.operand(lambda t: t.ndim == 2)
    if a is None:
        return None
    b = _mat_other(g, (g.shape(a)[1],), 0)
    return g.emit("mv", f"L.mv({a}, {b})", [a, b])


@op("dot")
def _dot(g):
    a = g.operand(lambda t: t.ndim == 1)
    if a is None:
        return None
    b = _mat_other(g, g.shape(a), 0)
    return g.emit("dot", g.pick([f"L.dot({a}, {b})", f"{a}.dot({b})"]), [a, b])


@op("outer")
def _outer(g):
    wrong = g.defect(2)
    a = g.operand(lambda t: t.ndim == 2 if wrong else t.ndim == 1)
    if a is None:
        return None
    b = g.other((g.pick([2, 3, 1, 0]),))
    return g.emit("outer", f"L.outer({a}, {b})", [a, b])


@op("bmm")
def _bmm(g):
    a = g.operand(lambda t: t.ndim == 3)
    if a is None:
        return None
    s = g.shape(a)
    b = _mat_other(g, (s[0], s[2], g.pick([2, 1, 3])), 1)
    return g.emit("bmm", f"L.bmm({a}, {b})", [a, b])


@op("addmm")
def _addmm(g):
    a = g.operand(lambda t: t.ndim == 2)
    if a is None:
        return None
    n, k = g.shape(a)
    m = g.pick([2, 1, 3])
    b = _mat_other(g, (k, m), 0)
    c = g.other(g.bshape((n, m)))
    return g.emit("addmm", f"L.addmm({c}, {a}, {b})", [c, a, b])


@op("linear")
def _linear(g):
    a = g.operand(lambda t: t.ndim >= 1)
    if a is None:
        return None
    k = g.shape(a)[-1]
    m = g.pick([2, 1, 3])
    w = _mat_other(g, (m, k), 1)
    if g.chance(2):
        bias = g.other((m,))
        return g.emit("linear", f"F.linear({a}, {w}, {bias})", [a, w, bias])
    return g.emit("linear", f"F.linear({a}, {w})", [a, w])


# ------------------------------------------------------------------------------- checking
class MismatchError(AssertionError):
    pass


def _fail(prog, where, msg):
    known = sorted({k for s in prog.steps for k in s.known})
    extra = f"\nknown mismatches in this program: {known}" if known else ""
    raise MismatchError(f"{where}: {msg}{extra}\n--- program ---\n{prog.listing()}")


def _agree(got, want, tol):
    """Elementwise: the same NaNs, the same infinities, finite values within tolerance."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    fin = np.isfinite(want)
    scale = 1.0 + (float(np.abs(want[fin]).max()) if fin.any() else 0.0)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: decided below
        close = np.abs(got - want) <= ATOL[tol] * scale + RTOL[tol] * np.abs(want)
    same = (np.isnan(got) & np.isnan(want)) | (np.isinf(want) & (got == want))
    return np.where(fin, close & np.isfinite(got), same)


def compare(prog, where, got, want, local=None, terms=None):
    """got (numbagrad) against want (torch's): shape, dtype, NaN and inf positions, values.
    Where they differ, local() may give torch's answer from numbagrad's own values (see
    local_value, local_grads), which those elements may match instead; and a gradient that
    sums terms of opposite signs (x / x) may differ by their last bits: terms() gives the
    sum of their magnitudes, which then scales the absolute tolerance."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        _fail(prog, where, f"shape {got.shape} != torch's {want.shape}")
    if got.dtype != want.dtype:
        _fail(prog, where, f"dtype {got.dtype} != torch's {want.dtype}")
    # a float64 value computed from float32 ones carries their rounding
    tol = np.dtype(np.float32) if prog.has_float32() else want.dtype
    ok = _agree(got, want, tol)
    also = ""
    if not ok.all() and local is not None:
        ref = local()
        if ref is not None and ref.shape == want.shape:
            ok |= _agree(got, ref.astype(want.dtype), tol)
            prog.local += 1
            also = f"\nlocal     {ref!r}"
    if not ok.all() and terms is not None:
        size = terms()
        if size is not None and size.shape == want.shape:
            with np.errstate(invalid="ignore"):
                ok |= np.isfinite(want) & (np.abs(got.astype(np.float64) - want) <=
                                           ATOL[tol] * (1.0 + size))
            also += f"\nterms     {size!r}"
    if not ok.all():
        i = tuple(int(k) for k in np.argwhere(~ok)[0])
        _fail(prog, where, f"values differ (rtol {RTOL[tol]}), first at {i}: {got[i]} vs "
                           f"torch's {want[i]}\nnumbagrad {got!r}\ntorch     {want!r}{also}")


def _torch_env(prog):
    return {"L": torch, "F": TF, "np": np, "math": math, "C": prog.cots}


def _as_reference(prog, array):
    """numbagrad's value as torch's input: in float64 for a float32 program, as numbagrad
    computes float32 (DELIBERATE_DIFFERENCES, float32 last bits)."""
    t = torch.tensor(array)
    return t.double() if prog.has_float32() else t


def local_value(prog, step):
    """torch's op applied to numbagrad's own arguments: last-bit differences upstream (and
    zeros of another sign) do not count against this step, however ill-conditioned it is
    (sin of 1e79, tan near a pole, 1 / -0.)."""
    env = _torch_env(prog)
    for leaf in prog.leaves:
        env[leaf.name] = _as_reference(prog, leaf.array)
    for a in step.args:
        if a in prog.ng_values:
            env[a] = _as_reference(prog, prog.ng_values[a])
    try:
        return eval(step.code, env).detach().numpy()
    except Exception:  # noqa: BLE001 - no local answer: the global one stands
        return None


class _Pin(torch.autograd.Function):
    """Forward: numbagrad's value; backward: the gradient as torch's op passes it."""

    @staticmethod
    def forward(ctx, v, value):
        return value.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def local_grads(prog):
    """torch's gradients with every step's value pinned to numbagrad's: torch's derivatives
    at numbagrad's forward values, so that only the backward is compared (in float64 for a
    float32 program, as numbagrad differentiates small nodes). Each use of a leaf is a leaf
    of its own here, so that the size of the terms a leaf's gradient sums is known too:
    returns {leaf: (gradient, sum of the terms' magnitudes)}."""
    env = _torch_env(prog)
    leaves = {leaf.name: leaf for leaf in prog.leaves}
    uses = {}  # leaf name -> its uses' tensors

    def use(match):
        name = match.group(0)
        if name not in leaves:
            return name
        k = len(uses.setdefault(name, []))
        t = _as_reference(prog, leaves[name].array).requires_grad_(leaves[name].requires_grad)
        uses[name].append(t)
        env[f"{name}__use{k}"] = t
        return f"{name}__use{k}"

    def split_uses(code):
        return _NAME.sub(use, code)
    try:
        for s in prog.steps:
            if s.err is None:
                v = eval(split_uses(s.code), env)
                value = _as_reference(prog, prog.ng_values[s.out]).to(v.dtype)
                env[s.out] = _Pin.apply(v, value)
        eval(split_uses(prog.loss_code()), env).backward()
    except Exception:  # noqa: BLE001 - no local answer: the global one stands
        return {}
    out = {}
    for leaf in prog.leaves:
        grads = [u.grad.numpy() for u in uses.get(leaf.name, ()) if u.grad is not None]
        out[leaf.name] = None if not grads else \
            (sum(grads), sum(np.abs(g) for g in grads))
    return out


_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def run_numbagrad(prog):
    """Runs the program with numbagrad, comparing each step, the loss and the leaves' .grad
    with torch's."""
    env = {"L": ng, "F": ng_functional, "np": np, "math": math, "C": prog.cots}
    leaves = {}
    for leaf in prog.leaves:
        leaves[leaf.name] = env[leaf.name] = ng.tensor(leaf.array.copy(),
                                                       requires_grad=leaf.requires_grad)
    for i, s in enumerate(prog.steps):
        where = f"step {i} ({s.out} = {s.code})"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                v = eval(s.code, env)
        except Exception as e:  # noqa: BLE001 - compared with torch's
            if s.err is None:
                _fail(prog, where, f"numbagrad raises {type(e).__name__}: {e}; torch does not")
            if kind(e) != s.err:
                _fail(prog, where, f"numbagrad raises {type(e).__name__}: {e}; "
                                   f"torch raises {s.err}")
            continue
        if s.err is not None:
            _fail(prog, where, f"torch raises {s.err}; numbagrad does not")
        if not isinstance(v, ng.Tensor):
            _fail(prog, where, f"numbagrad returns a {type(v).__name__}")
        env[s.out] = v
        prog.ng_values[s.out] = v.detach().numpy().copy()
        compare(prog, where, prog.ng_values[s.out], s.value,
                local=lambda s=s: local_value(prog, s))
        if v.requires_grad != s.requires_grad:
            _fail(prog, where, f"requires_grad {v.requires_grad}, torch's {s.requires_grad}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loss = eval(prog.loss_code(), env)
            loss.backward()
    except Exception as e:  # noqa: BLE001
        if kind(e) != prog.loss_err:
            _fail(prog, "loss/backward", f"numbagrad raises {type(e).__name__}: {e}; "
                                         f"torch: {prog.loss_err}")
        return
    if prog.loss_err is not None:
        _fail(prog, "loss/backward", f"torch raises {prog.loss_err}; numbagrad does not")
    prog.ng_loss = loss.detach().numpy().copy()
    compare(prog, "loss", prog.ng_loss, prog.loss_value, local=lambda: local_loss(prog))
    local = {}  # torch's gradients at numbagrad's values, made when first needed

    def local_grad(name):
        if not local:
            local.update(local_grads(prog) or {None: None})
        return local.get(name)

    for name, t in leaves.items():
        want = prog.grads[name]
        if (t.grad is None) != (want is None):
            _fail(prog, f"{name}.grad", f"numbagrad {'None' if t.grad is None else 'a tensor'}"
                                        f", torch {'None' if want is None else 'a tensor'}")
        if want is not None:
            prog.ng_grads[name] = t.grad.numpy().copy()
            compare(prog, f"{name}.grad", prog.ng_grads[name], want,
                    local=lambda name=name: (local_grad(name) or (None, None))[0],
                    terms=lambda name=name: (local_grad(name) or (None, None))[1])


def local_loss(prog):
    env = _torch_env(prog)
    for name, value in prog.ng_values.items():
        env[name] = _as_reference(prog, value)
    return eval(prog.loss_code(), env).numpy()


def program_function(prog):
    """The program as a Python function of its leaves returning the loss (numbagrad ops)."""
    lines = [f"def program({', '.join(leaf.name for leaf in prog.leaves)}):"]
    lines += [f"    {s.out} = {s.code}" for s in prog.steps]
    lines.append(f"    return {prog.loss_code()}")
    env = {"L": ng, "F": ng_functional, "np": np, "math": math, "C": prog.cots}
    exec("\n".join(lines), env)
    return env["program"]


def run_compiled(prog):
    argnums = tuple(i for i, leaf in enumerate(prog.leaves) if leaf.requires_grad)
    f = program_function(prog)
    transform = getattr(ng.func, prog.compiled)(f, argnums=argnums)
    c = ng.compile(transform)
    # trace on other values (special values kept) so that the replay is what is checked
    others = [leaf.array * 0.75 + 0.125 for leaf in prog.leaves]
    try:
        c(*others)
    except Exception as e:  # noqa: BLE001 - a data-dependent shape may not fit other values:
        with pytest.raises(type(e)):  # then the function itself fails on them, eagerly too
            transform(*others)
    out = c(*[leaf.array.copy() for leaf in prog.leaves])
    grads = out[1] if prog.compiled == "value_and_grad" else out
    # the replay computes what eager does: eager's answers (compared with torch's above) are
    # this one's local references
    if prog.compiled == "value_and_grad":  # a Python float for NumPy inputs
        compare(prog, "compiled value", np.float64(out[0]), prog.loss_value.astype(np.float64),
                local=lambda: prog.ng_loss.astype(np.float64))
    for i, gr in zip(argnums, grads):
        leaf = prog.leaves[i]
        want = prog.grads[leaf.name]
        if want is None:  # torch.func.grad gives zeros for an input the loss does not use
            want = np.zeros_like(leaf.array)
        compare(prog, f"compiled {prog.compiled} d/d{leaf.name}", gr, want,
                local=lambda name=leaf.name: prog.ng_grads.get(name))


def check_program(draw, skip_known, stats=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 1 / 0 and friends, on both sides
        prog = Gen(draw, skip_known).build()
        old = tape_mod.BIG
        tape_mod.BIG = 0 if prog.big else old  # the big-node (parallel kernel) path too
        try:
            run_numbagrad(prog)
        finally:
            tape_mod.BIG = old
        if prog.compiled:
            run_compiled(prog)
    if stats is not None:
        stats["programs"] = stats.get("programs", 0) + 1
        stats["steps"] = stats.get("steps", 0) + len(prog.steps)
        stats["error steps"] = stats.get("error steps", 0) + sum(
            s.err is not None for s in prog.steps)
        stats["compiled"] = stats.get("compiled", 0) + bool(prog.compiled)
        stats["local comparisons"] = stats.get("local comparisons", 0) + prog.local
        arrays = [leaf.array for leaf in prog.leaves]
        for key, n in (("float32 programs", prog.has_float32()),
                       ("with NaN/inf", any(not np.isfinite(a).all() for a in arrays)),
                       ("with an empty leaf", any(a.size == 0 for a in arrays)),
                       ("with a 0-d leaf", any(a.ndim == 0 for a in arrays))):
            stats[key] = stats.get(key, 0) + bool(n)
    return prog


# 20 programs in the default run (about 100 s, most of one CI worker's share); the long
# run (-m fuzz) draws thousands, and the cases it found stay in test_fuzz_regressions.py
@settings(max_examples=20)
@given(data=st.data())
def test_fuzz_matches_torch(data, fuzz_stats):
    check_program(HypothesisDraw(data), skip_known=True, stats=fuzz_stats)


@pytest.mark.fuzz
@given(data=st.data())
def test_fuzz_long(data, fuzz_stats):
    skip = os.environ.get("NUMBAGRAD_FUZZ_SKIP_KNOWN", "") not in ("", "0")
    check_program(HypothesisDraw(data), skip_known=skip, stats=fuzz_stats)

"""nn.RNN / nn.LSTM / nn.GRU and nn.utils.rnn against torch 2.13 with weights copied from
torch's module: outputs, final states and the gradients of inputs, states and parameters in
float64; a character-level LSTM language model trained side by side in float32."""

import warnings

import numpy as np
import pytest
from torch_oracle import same_as_torch

import numbagrad as ng

torch = pytest.importorskip("torch")

T, B, I, H = 5, 3, 4, 6
RNG = np.random.default_rng(7)
X = RNG.standard_normal((T, B, I))
LENGTHS = [3, 5, 2]  # unsorted: packed with enforce_sorted=False


def _pair(cls, **kw):
    """torch's module and ours (float64) with torch's weights loaded through state_dict."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, cls)(**kw).double()
    ours = getattr(ng.nn, cls)(**kw, dtype=ng.float64)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    ours.load_state_dict(state)
    return theirs, ours


def _run(lib, module, x, hx=None, packed=None, batch_first=False):
    x = lib.tensor(x, requires_grad=True)
    inp = x
    if packed is not None:
        inp = lib.nn.utils.rnn.pack_padded_sequence(x, packed, batch_first=batch_first,
                                                    enforce_sorted=False)
    if hx is not None:
        hx = tuple(lib.tensor(h, requires_grad=True) for h in hx)
        states = hx
        hx = hx if isinstance(module, lib.nn.LSTM) else hx[0]
    else:
        states = ()
    out, hn = module(inp, hx)
    if packed is not None:
        assert isinstance(out, lib.nn.utils.rnn.PackedSequence)
        out = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)[0]
    finals = hn if isinstance(hn, tuple) else (hn,)
    weight = lib.tensor(np.cos(np.arange(out.numel())).reshape(out.shape))
    loss = (out * weight).sum() + sum((h * h).sum() for h in finals)
    loss.backward()
    return ([out.detach().numpy()] + [h.detach().numpy() for h in finals]
            + [x.grad.numpy()] + [s.grad.numpy() for s in states]
            + [p.grad.numpy() for p in module.parameters()])


def _check(cls, x=X, hx=None, packed=None, **kw):
    theirs, ours = _pair(cls, **kw)
    expected = _run(torch, theirs, x, hx, packed, kw.get("batch_first", False))
    got = _run(ng, ours, x, hx, packed, kw.get("batch_first", False))
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _states(cls, layers, directions, hidden=H, proj=0):
    h = RNG.standard_normal((layers * directions, B, proj or hidden))
    if cls == "LSTM":
        return h, RNG.standard_normal((layers * directions, B, hidden))
    return (h,)


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("layers,bidirectional,bias", [(1, False, True), (2, True, False)])
def test_values_and_gradients(cls, layers, bidirectional, bias):
    kw = dict(input_size=I, hidden_size=H, num_layers=layers, bidirectional=bidirectional,
              bias=bias)
    _check(cls, **kw)
    _check(cls, hx=_states(cls, layers, 2 if bidirectional else 1), **kw)


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
def test_packed_input_with_initial_state(cls):
    kw = dict(input_size=I, hidden_size=H, num_layers=2, bidirectional=True)
    _check(cls, hx=_states(cls, 2, 2), packed=LENGTHS, **kw)
    _check(cls, packed=[T] * B, input_size=I, hidden_size=H)  # no sequence ends early


@pytest.mark.parametrize("cls", ["GRU", "LSTM"])
def test_batch_first_unbatched_and_packed_batch_first(cls):
    xb = X.transpose(1, 0, 2).copy()
    _check(cls, x=xb, input_size=I, hidden_size=H, batch_first=True)
    _check(cls, x=xb, packed=[4, 5, 2], input_size=I, hidden_size=H, batch_first=True,
           bidirectional=True)
    _check(cls, x=X[:, 0], input_size=I, hidden_size=H, num_layers=2)


def test_relu_rnn_and_lstm_projections():
    _check("RNN", input_size=I, hidden_size=H, nonlinearity="relu", num_layers=2)
    kw = dict(input_size=I, hidden_size=H, proj_size=3, num_layers=2, bidirectional=True)
    _check("LSTM", hx=_states("LSTM", 2, 2, proj=3), **kw)
    _check("LSTM", packed=LENGTHS, **kw)


@pytest.mark.parametrize("cls", ["GRU", "LSTM"])
def test_gradcheck_and_gradgradcheck(cls):
    ng.manual_seed(0)
    m = getattr(ng.nn, cls)(2, 3, dtype=ng.float64)
    x = ng.tensor(X[:3, :2, :2], requires_grad=True)
    assert ng.autograd.gradcheck(lambda x: m(x)[0], (x,))
    assert ng.autograd.gradgradcheck(lambda x: m(x)[0], (x,))


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
def test_grad_fn_names(cls):
    def names(lib):
        torch.manual_seed(0)
        result = []
        for kw in (dict(), dict(bidirectional=True, num_layers=2)):
            m = getattr(lib.nn, cls)(I, H, dtype=lib.float64, **kw)
            out, h = m(lib.tensor(X))
            unbatched, _ = m(lib.tensor(X[:, 0]))
            packed, _ = m(lib.nn.utils.rnn.pack_sequence([lib.tensor(X[:3, 0]),
                                                          lib.tensor(X[:2, 1])]))
            states = h if isinstance(h, tuple) else (h,)
            result += [t.grad_fn.name() for t in (out, *states, unbatched, packed.data)]
        return result
    same_as_torch(names)


@pytest.mark.parametrize("kw", [dict(), dict(num_layers=2, bidirectional=True, bias=False),
                                dict(proj_size=2, batch_first=True, dropout=0.5, num_layers=3)])
def test_parameter_names_shapes_repr_and_init(kw):
    for cls in (["LSTM"] if "proj_size" in kw else ["RNN", "GRU", "LSTM"]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = getattr(torch.nn, cls)(I, H, **kw)
            ours = getattr(ng.nn, cls)(I, H, **kw)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
        assert repr(ours) == repr(theirs)
        bound = 1 / np.sqrt(H)
        values = np.concatenate([p.detach().numpy().ravel() for p in ours.parameters()])
        assert np.abs(values).max() <= bound and np.abs(values).max() > 0.8 * bound
        assert values.std() == pytest.approx(bound / np.sqrt(3), rel=0.2)  # U(-b, b)


def test_dropout_between_layers_only_in_training():
    torch.manual_seed(0)
    ng.manual_seed(0)
    m = ng.nn.GRU(I, H, num_layers=2, dropout=0.5).requires_grad_(False)
    x = ng.tensor(X, dtype=ng.float32)
    m.eval()
    first, _ = m(x)
    again, _ = m(x)
    assert np.array_equal(first.numpy(), again.numpy())
    m.train()
    trained, _ = m(x)
    assert not np.allclose(trained.numpy(), first.numpy())
    m.dropout = 1.0  # every input of layer 2 dropped: its output is that of a zero input
    dropped, _ = m(x)
    zero_in = ng.nn.GRU(H, H).requires_grad_(False)
    w = {k.replace("_l1", "_l0"): v for k, v in m.state_dict().items() if "_l1" in k}
    zero_in.load_state_dict(w)
    expected, _ = zero_in(ng.zeros(T, B, H))
    np.testing.assert_allclose(dropped.numpy(), expected.numpy(), rtol=1e-6)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        ng.nn.LSTM(I, H, dropout=0.2)


def test_errors_match_torch():
    x = np.zeros((T, B, I))

    def make(lib, cls="LSTM"):
        torch.manual_seed(0)
        return getattr(lib.nn, cls)(I, H, dtype=lib.float64)

    same_as_torch(lambda lib: make(lib)(lib.tensor(np.zeros((T, B, I + 1))))[0])
    same_as_torch(lambda lib: make(lib, "GRU")(lib.tensor(x), lib.tensor(np.zeros((2, B, H))))[0])
    same_as_torch(lambda lib: make(lib, "GRU")(lib.tensor(x), lib.tensor(np.zeros((B, H))))[0])
    same_as_torch(lambda lib: make(lib, "RNN")(lib.tensor(np.zeros((1, T, B, I))))[0])
    same_as_torch(lambda lib: make(lib)(lib.tensor(x), (lib.tensor(np.zeros((1, B, H))),
                                                        lib.tensor(np.zeros((1, B, 2)))))[0])
    same_as_torch(lambda lib: make(lib)(lib.tensor(x), (lib.tensor(np.zeros((1, B, 2))),
                                                        lib.tensor(np.zeros((1, B, H)))))[0])
    same_as_torch(lambda lib: make(lib)(lib.tensor(x).float())[0])
    same_as_torch(lambda lib: make(lib, "GRU")(lib.tensor(np.zeros((0, B, I))))[0])
    same_as_torch(lambda lib: lib.nn.LSTM(I, H, proj_size=H))
    same_as_torch(lambda lib: lib.nn.RNN(I, H, nonlinearity="sigmoid"))


# ---- nn.utils.rnn -----------------------------------------------------------------------------

def _seqs(lib):
    return [lib.tensor(RNG_SEQ[n], requires_grad=True) for n in range(3)]


RNG_SEQ = [np.random.default_rng(n).standard_normal((length, 2)) for n, length in
           enumerate((3, 5, 2))]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    def fn(lib):
        seqs = _seqs(lib)
        out = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=-2.5,
                                            padding_side=side)
        (out * lib.arange(out.numel()).reshape(out.shape).double()).sum().backward()
        return [out, *(s.grad for s in seqs)]
    same_as_torch(fn)


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad_packed(batch_first):
    def fn(lib):
        R = lib.nn.utils.rnn  # noqa: N806 - torch's idiom
        seqs = _seqs(lib)
        padded = R.pad_sequence(seqs, batch_first=batch_first)
        packed = R.pack_padded_sequence(padded, lib.tensor(LENGTHS), batch_first=batch_first,
                                        enforce_sorted=False)
        out, lengths = R.pad_packed_sequence(packed, batch_first=batch_first,
                                             padding_value=9.0, total_length=6)
        (out * out).sum().backward()
        return [packed.data, packed.batch_sizes, packed.sorted_indices,
                packed.unsorted_indices, out, lengths, *(s.grad for s in seqs)]
    same_as_torch(fn)

    def sorted_fn(lib):
        seqs = _seqs(lib)
        packed = lib.nn.utils.rnn.pack_sequence([seqs[1], seqs[0], seqs[2]])
        back = lib.nn.utils.rnn.unpack_sequence(packed)
        return [packed.data, packed.batch_sizes, packed.sorted_indices, *back]
    same_as_torch(sorted_fn)


def test_packing_errors():
    same_as_torch(lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(2, 3),
                                                            lib.zeros(3, 2)]))
    same_as_torch(lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(2, 3),
                                                            lib.ones(3, 3).double()]))
    same_as_torch(lambda lib: lib.nn.utils.rnn.pad_sequence(lib.zeros(2, 3),
                                                            padding_side="middle"))
    same_as_torch(lambda lib: lib.nn.utils.rnn.pack_sequence(_seqs(lib)))
    same_as_torch(lambda lib: lib.nn.utils.rnn.pack_padded_sequence(
        lib.zeros(5, 3, 2), [5, 0, 0]))
    same_as_torch(lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_sequence(_seqs(lib), enforce_sorted=False), total_length=2))


# ---- acceptance: a character-level LSTM language model, trained side by side --------------------

def test_char_lstm_language_model_trains_like_torch():
    text = "hello numbagrad, hello torch; the quick brown fox"
    vocab = sorted(set(text))
    ids = np.array([vocab.index(c) for c in text], np.int64)
    seq, batch, emb, hidden = 7, 4, 8, 16
    starts = np.arange(batch) * 9
    xs = np.stack([ids[s:s + seq] for s in starts], 1)  # (seq, batch)
    ys = np.stack([ids[s + 1:s + seq + 1] for s in starts], 1)

    def model(lib):
        class CharLM(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = lib.nn.Embedding(len(vocab), emb)
                self.lstm = lib.nn.LSTM(emb, hidden, num_layers=2)
                self.head = lib.nn.Linear(hidden, len(vocab))

            def forward(self, x):
                out, _ = self.lstm(self.embed(x))
                return self.head(out)
        return CharLM()

    torch.manual_seed(0)
    theirs, ours = model(torch), model(ng)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    runs = []
    for lib, m in ((torch, theirs), (ng, ours)):
        opt = lib.optim.Adam(m.parameters(), lr=0.01)
        x, y = lib.tensor(xs), lib.tensor(ys)
        losses, params = [], []
        for _ in range(5):
            opt.zero_grad()
            logits = m(x)
            loss = lib.nn.functional.cross_entropy(logits.reshape(-1, len(vocab)),
                                                   y.reshape(-1))
            loss.backward()
            opt.step()
            losses.append(loss.item())
            params.append([p.detach().numpy().copy() for p in m.parameters()])
        runs.append((losses, params))
    (t_losses, t_params), (n_losses, n_params) = runs
    np.testing.assert_allclose(n_losses, t_losses, rtol=1e-5)
    assert n_losses[-1] < n_losses[0]
    for step_t, step_n in zip(t_params, n_params):
        for a, b in zip(step_n, step_t):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)

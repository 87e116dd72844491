"""F.scaled_dot_product_attention, F.multi_head_attention_forward, nn.MultiheadAttention and
the Transformer layers against torch 2.13 with weights copied from torch's modules: values and
gradients in float64; a small TransformerEncoder trained side by side in float32."""

import warnings

import numpy as np
import pytest
from torch_oracle import same_as_torch

import numbagrad as ng

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
E, HEADS, FF = 8, 2, 16
CAUSAL5 = np.triu(np.full((5, 5), -np.inf), 1)
PADDING = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [0, 1, 0, 0, 0]], bool)


def _close(got, expected, rtol=1e-10):
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-11)


def _weights_like(lib, out):
    return lib.tensor(np.cos(np.arange(out.numel())).reshape(out.shape))


def _convert(lib, kw):
    return {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}


# ---- scaled_dot_product_attention --------------------------------------------------------------

Q, K, V = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 5, 4)), \
    RNG.standard_normal((2, 5, 6))
BOOL_MASK = RNG.random((3, 5)) > 0.3
BOOL_MASK[1] = False  # a row that attends to nothing: 0 output, 0 gradient (safe softmax)


@pytest.mark.parametrize("kw", [{}, {"scale": 0.3}, {"attn_mask": BOOL_MASK},
                                {"attn_mask": RNG.standard_normal((2, 3, 5))},
                                {"is_causal": True}], ids=str)
def test_sdpa_values_and_gradients(kw):
    runs = []
    for lib in (torch, ng):
        q, k, v = (lib.tensor(a, requires_grad=True) for a in (Q, K, V))
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **_convert(lib, kw))
        (out * _weights_like(lib, out)).sum().backward()
        runs.append([out.detach().numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy()])
    _close(runs[1], runs[0])


def test_sdpa_grouped_query_attention_and_gradcheck():
    q, k = RNG.standard_normal((1, 4, 3, 2)), RNG.standard_normal((1, 2, 5, 2))
    same_as_torch(lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.tensor(q), lib.tensor(k), lib.tensor(k), enable_gqa=True))
    args = tuple(ng.tensor(a[0], requires_grad=True) for a in (Q, K, V))
    mask = ng.tensor(BOOL_MASK)
    def attend(*t):
        return ng.nn.functional.scaled_dot_product_attention(*t, attn_mask=mask)
    assert ng.autograd.gradcheck(attend, args)
    small = tuple(ng.tensor(a[0][:, :2], requires_grad=True) for a in (Q, K, V))
    assert ng.autograd.gradgradcheck(attend, small)


def test_sdpa_dropout_and_errors():
    q = ng.tensor(Q)
    ng.manual_seed(0)
    dropped = ng.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    plain = ng.nn.functional.scaled_dot_product_attention(q, q, q)
    assert not np.allclose(dropped.numpy(), plain.numpy())
    mask = np.ones((3, 5), bool)
    same_as_torch(lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.tensor(Q), lib.tensor(K), lib.tensor(V), attn_mask=lib.tensor(mask),
        is_causal=True))
    same_as_torch(lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.tensor(Q), lib.tensor(K).float(), lib.tensor(V)))
    same_as_torch(lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.zeros(4), lib.zeros(4), lib.zeros(4)))
    for mask_dtype in ("int64", "float32"):
        same_as_torch(lambda lib: lib.nn.functional.scaled_dot_product_attention(
            lib.tensor(Q), lib.tensor(K), lib.tensor(V),
            attn_mask=lib.zeros(3, 5, dtype=getattr(lib, mask_dtype))))


# ---- MultiheadAttention and multi_head_attention_forward --------------------------------------

def _mha_pair(**kw):
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(**kw).double()
    ours = ng.nn.MultiheadAttention(**kw, dtype=ng.float64)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return theirs, ours


MHA_CASES = [
    (dict(), [(5, 3, E)], {}),
    (dict(), [(5, 3, E)], {"need_weights": False, "attn_mask": CAUSAL5, "is_causal": True}),
    (dict(batch_first=True), [(3, 5, E)], {"average_attn_weights": False,
                                           "attn_mask": CAUSAL5 > -1}),
    (dict(), [(4, 3, E), (5, 3, E), (5, 3, E)], {"key_padding_mask": PADDING}),
    (dict(), [(4, 3, E), (5, 3, E), (5, 3, E)], {"key_padding_mask": PADDING,
                                                 "need_weights": False}),
    (dict(), [(5, 3, E)], {"attn_mask": RNG.standard_normal((6, 5, 5)), "need_weights": False}),
    (dict(kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True),
     [(4, 3, E), (6, 3, 3), (6, 3, 5)], {}),
    (dict(bias=False), [(4, E), (6, E), (6, E)], {}),
]


@pytest.mark.parametrize("kw,shapes,call", MHA_CASES)
def test_multihead_attention(kw, shapes, call):
    theirs, ours = _mha_pair(embed_dim=E, num_heads=HEADS, **kw)
    arrays = [RNG.standard_normal(s) for s in shapes]
    runs = []
    for lib, m in ((torch, theirs), (ng, ours)):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out, weights = m(*(xs * 3 if len(xs) == 1 else xs), **_convert(lib, call))
        loss = (out * _weights_like(lib, out)).sum()
        results = [out.detach().numpy()]
        if weights is not None:
            loss = loss + (weights * weights).sum()
            results.append(weights.detach().numpy())
        loss.backward()
        runs.append(results + [x.grad.numpy() for x in xs]
                    + [p.grad.numpy() for p in m.parameters()])
    _close(runs[1], runs[0])


def test_multi_head_attention_forward_functional():
    theirs, _ = _mha_pair(embed_dim=E, num_heads=HEADS)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    q, k = RNG.standard_normal((4, 2, E)), RNG.standard_normal((6, 2, E))

    def fn(lib):
        w = {n: lib.tensor(v) for n, v in state.items()}
        return lib.nn.functional.multi_head_attention_forward(
            lib.tensor(q), lib.tensor(k), lib.tensor(k), E, HEADS, w["in_proj_weight"],
            w["in_proj_bias"], None, None, False, 0.0, w["out_proj.weight"],
            w["out_proj.bias"], training=False,
            key_padding_mask=lib.tensor(np.array([[0, 0, 0, 0, 1, 1], [0, 1, 0, 0, 0, 0]], bool)))
    same_as_torch(fn, decimals=10)


def test_multihead_attention_errors():
    same_as_torch(lambda lib: lib.nn.MultiheadAttention(6, 4))
    same_as_torch(lambda lib: lib.nn.MultiheadAttention(E, HEADS)(
        lib.zeros(4, 3, E), lib.zeros(5, 3, E), lib.zeros(5, 3, E),
        attn_mask=lib.zeros(4, 4))[0])
    same_as_torch(lambda lib: lib.nn.MultiheadAttention(E, HEADS)(
        lib.zeros(4, 3, E), lib.zeros(4, 3, E), lib.zeros(4, 3, E), is_causal=True)[0])
    for shape in ((3, 4), (2, 5)):
        same_as_torch(lambda lib: lib.nn.MultiheadAttention(E, HEADS)(
            lib.zeros(4, 3, E), lib.zeros(5, 3, E), lib.zeros(5, 3, E),
            key_padding_mask=lib.zeros(*shape, dtype=lib.bool))[0])
    same_as_torch(lambda lib: lib.nn.MultiheadAttention(E, HEADS)(
        lib.zeros(4, 3, E), lib.zeros(5, 3, E), lib.zeros(5, 2, E))[0])


# ---- Transformer layers -----------------------------------------------------------------------

def _check_module(build, arrays, call=None):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's nested-tensor notes
        theirs = build(torch).double()
        ours = build(ng).double()
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    runs = []
    for lib, m in ((torch, theirs), (ng, ours)):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = m(*xs, **_convert(lib, call or {}))
        (out * _weights_like(lib, out)).sum().backward()
        runs.append([out.detach().numpy()] + [x.grad.numpy() for x in xs]
                    + [p.grad.numpy() for p in m.parameters()])
    _close(runs[1], runs[0])


SRC, TGT = RNG.standard_normal((5, 3, E)), RNG.standard_normal((4, 3, E))


@pytest.mark.parametrize("norm_first,activation", [(False, "relu"), (True, "gelu")])
def test_encoder_and_decoder_layers(norm_first, activation):
    kw = dict(dropout=0.0, activation=activation, norm_first=norm_first)
    _check_module(lambda lib: lib.nn.TransformerEncoderLayer(E, HEADS, FF, **kw), [SRC],
                  {"src_key_padding_mask": PADDING})
    _check_module(lambda lib: lib.nn.TransformerDecoderLayer(E, HEADS, FF, **kw), [TGT, SRC],
                  {"tgt_mask": CAUSAL5[:4, :4], "memory_key_padding_mask": PADDING})


def test_encoder_decoder_stacks_and_transformer():
    _check_module(lambda lib: lib.nn.TransformerEncoder(
        lib.nn.TransformerEncoderLayer(E, HEADS, FF, dropout=0.0, batch_first=True), 2,
        norm=lib.nn.LayerNorm(E)), [SRC.transpose(1, 0, 2).copy()], {"mask": CAUSAL5})
    _check_module(lambda lib: lib.nn.TransformerDecoder(
        lib.nn.TransformerDecoderLayer(E, HEADS, FF, dropout=0.0), 2), [TGT, SRC])
    _check_module(lambda lib: lib.nn.Transformer(E, HEADS, 1, 1, FF, dropout=0.0, bias=False,
                                             activation=lib.nn.functional.gelu), [SRC, TGT],
                  {"tgt_mask": CAUSAL5[:4, :4], "src_key_padding_mask": PADDING})


def test_encoder_inference_pads_with_zeros_as_torch():
    """torch's eval path (nested tensors) zeroes the padded positions; ours does the same."""
    x = RNG.standard_normal((3, 5, E))
    padding = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]], bool)

    def fn(lib):
        torch.manual_seed(0)
        m = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(
            E, HEADS, FF, batch_first=True, dtype=lib.float64), 2)
        if lib is ng:
            m.load_state_dict(state)
        m.eval()
        with lib.no_grad():
            return m(lib.tensor(x), src_key_padding_mask=lib.tensor(padding))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        state = {k: v.numpy() for k, v in torch.nn.TransformerEncoder(
            torch.nn.TransformerEncoderLayer(E, HEADS, FF, batch_first=True,
                                             dtype=torch.float64), 2).state_dict().items()}
        out = same_as_torch(fn, decimals=10)
    assert out[3][0][3] == [0.0] * E
    with pytest.warns(UserWarning, match="use_nested_tensor is False because encoder_layer"):
        ng.nn.TransformerEncoder(ng.nn.TransformerEncoderLayer(E, HEADS, FF), 1)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_transformer_helpers_and_errors():
    same_as_torch(lambda lib: lib.nn.Transformer.generate_square_subsequent_mask(4))
    same_as_torch(lambda lib: lib.nn.Transformer.generate_square_subsequent_mask(
        3, dtype=lib.float64))
    same_as_torch(lambda lib: lib.nn.Transformer(E, HEADS, 1, 1, FF)(
        lib.zeros(5, 3, E), lib.zeros(4, 2, E)))
    same_as_torch(lambda lib: lib.nn.Transformer(E, HEADS, 1, 1, FF)(
        lib.zeros(5, 3, E), lib.zeros(4, 3, 4)))
    same_as_torch(lambda lib: lib.nn.TransformerEncoderLayer(E, HEADS, activation="tanh"))
    model = ng.nn.Transformer(E, HEADS, 1, 1, FF)
    big = [p for p in model.parameters() if p.ndim > 1]
    assert all(abs(p.detach().numpy()).max() > 0 for p in big)  # xavier_uniform_ everywhere


# ---- acceptance: a small TransformerEncoder trained side by side --------------------------------

def test_transformer_encoder_trains_like_torch():
    seq, batch, classes = 6, 4, 5
    x_np = RNG.standard_normal((batch, seq, E)).astype(np.float32)
    y_np = RNG.integers(0, classes, (batch, seq))

    def model(lib):
        layer = lib.nn.TransformerEncoderLayer(E, HEADS, FF, dropout=0.0, batch_first=True)
        return lib.nn.Sequential(lib.nn.TransformerEncoder(layer, 2),
                                 lib.nn.Linear(E, classes))

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = model(torch)
    ours = model(ng)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    mask = np.triu(np.full((seq, seq), -np.inf, np.float32), 1)
    runs = []
    for lib, m in ((torch, theirs), (ng, ours)):
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        x, y, causal = lib.tensor(x_np), lib.tensor(y_np), lib.tensor(mask)
        losses, params = [], []
        for _ in range(5):
            opt.zero_grad()
            logits = m[1](m[0](x, mask=causal))
            loss = lib.nn.functional.cross_entropy(logits.reshape(-1, classes), y.reshape(-1))
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

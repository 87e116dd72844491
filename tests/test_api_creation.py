"""The creation area against torch: devices, the smaller dtypes, finfo/iinfo, promotion,
random sampling (shapes, dtypes, nodes and errors; test_torch_rng checks the numbers), meshgrid,
the triangle indices, new_*, casts, layout queries and the in-place random fills."""

import copy
import warnings

import numpy as np
import pytest

import numbagrad as ng
from tests.torch_oracle import outcome, same_as_torch, same_type_as_torch

torch = pytest.importorskip("torch")


def _describe(v):
    """What must agree for a random result: shape, dtype, requires_grad and node name."""
    if isinstance(v, (tuple, list)):
        return [_describe(u) for u in v]
    if hasattr(v, "detach"):
        node = v.grad_fn.name() if v.grad_fn is not None else None
        return ("tensor", tuple(v.shape), str(v.dtype), v.requires_grad, node)
    return repr(v)


def same_kind_as_torch(expr):
    def fn(lib):
        return eval(expr, {"torch": lib, "np": np})  # noqa: S307 - the test's own expressions
    ours, theirs = outcome(ng, fn, _describe), outcome(torch, fn, _describe)
    assert ours == theirs, f"{expr}\nnumbagrad: {ours}\ntorch:     {theirs}"


def same_values_as_torch(expr):
    same_as_torch(lambda lib: eval(expr, {"torch": lib, "np": np}))  # noqa: S307


# ---- random functions: shapes, dtypes, nodes, errors ------------------------------------------
RANDOM = """
torch.randperm(5)
torch.randperm(5, dtype=torch.float32)
torch.randperm(-1)
torch.randperm(0)
torch.randperm(5, requires_grad=True)
torch.randperm(5, dtype=torch.float64, requires_grad=True)
torch.randperm(2.5)
torch.randperm(300, dtype=torch.int8)
torch.randperm(5, dtype=torch.bool)
torch.multinomial(torch.tensor([0.2, 0.8]), 3)
torch.multinomial(torch.tensor([0.2, 0.8]), 3, True)
torch.multinomial(torch.tensor([[0.2, 0.8], [1., 1.]]), 2)
torch.multinomial(torch.tensor([0.2, -0.8]), 1)
torch.multinomial(torch.tensor([0., 0.]), 1)
torch.multinomial(torch.tensor([1, 2]), 1)
torch.multinomial(torch.tensor([0.2, 0.8]), 0)
torch.multinomial(torch.ones(2, 2, 2), 1)
torch.multinomial(torch.tensor([0.2, float('nan')]), 1)
torch.multinomial(torch.tensor([0.2, 0.8], requires_grad=True), 1)
torch.multinomial(torch.tensor([0., 1., 1.]), 3)
torch.bernoulli(torch.tensor([0.2, 0.8]))
torch.bernoulli(torch.tensor([0.2, 0.8], dtype=torch.float64))
torch.bernoulli(torch.tensor([0.2, 1.8]))
torch.bernoulli(torch.tensor([1, 0]))
torch.bernoulli(torch.tensor([0.2, 0.8]), p=1.5)
torch.bernoulli(torch.tensor([0.2, 0.8], requires_grad=True))
torch.normal(torch.zeros(3), torch.ones(3))
torch.normal(torch.zeros(3), 1.)
torch.normal(0., torch.ones(3))
torch.normal(0., 1., (2, 3))
torch.normal(0., 1., size=(2, 3), dtype=torch.float64)
torch.normal(0., 1., (2,), requires_grad=True)
torch.normal(torch.zeros(3), -1.)
torch.normal(torch.zeros(3), -torch.ones(3))
torch.normal(0., -1., (2,))
torch.normal(torch.zeros(3, requires_grad=True), torch.ones(3))
torch.normal(torch.zeros(3, requires_grad=True), 1.)
torch.normal(0., torch.ones(3, requires_grad=True))
torch.normal(torch.zeros(2, 3), torch.ones(3))
torch.normal(torch.zeros(2, 3), torch.ones(4))
torch.normal(torch.zeros(3, dtype=torch.float64), torch.ones(3))
torch.normal(torch.zeros(3, dtype=torch.int64), 1.)
torch.poisson(torch.tensor([1., 2.]))
torch.poisson(torch.tensor([1., -2.]))
torch.poisson(torch.tensor([1, 2]))
torch.poisson(torch.tensor([1., 2.], requires_grad=True))
torch.randint_like(torch.zeros(2, 3), 5)
torch.randint_like(torch.zeros(2, 3), 2, 5)
torch.randint_like(torch.zeros(2, 3, dtype=torch.int32), 5)
torch.randint_like(torch.zeros(2, 3), 5, 2)
torch.rand(2, generator=torch.Generator())
torch.randn(2, 3, generator=torch.Generator(), dtype=torch.float64)
torch.randint(0, 5, (2,), generator=torch.Generator())
torch.randperm(4, generator=torch.Generator())
torch.rand_like(torch.zeros(2), generator=torch.Generator(), device='cpu')
torch.randn_like(torch.zeros(2, dtype=torch.float64), generator=torch.Generator())
torch.zeros_like(torch.zeros(2), layout=None, memory_format=None)
torch.normal(torch.zeros(3), 1., generator=torch.Generator())
torch.Generator().get_state().dtype
torch.set_rng_state(torch.zeros(3))
torch.set_rng_state([1, 2])
torch.manual_seed(2 ** 64)
torch.zeros(3).uniform_(0, 1)
torch.zeros(3).uniform_(1., 0.)
torch.zeros(3, dtype=torch.int64).uniform_()
torch.zeros(3).normal_(0., -1.)
torch.zeros(3, dtype=torch.int64).normal_()
torch.zeros(3).bernoulli_(1.5)
torch.zeros(3, dtype=torch.int64).bernoulli_(0.5)
torch.zeros(3).bernoulli_(torch.tensor([0., 1.]))
torch.zeros(3).exponential_(0.)
torch.zeros(3, dtype=torch.int64).exponential_()
torch.zeros(3).random_(5, 1)
torch.zeros(3, dtype=torch.bool).random_()
torch.zeros(3).requires_grad_().mul(1).random_(3)
torch.zeros(3).requires_grad_().mul(1).random_(1, 3)
torch.zeros(3).requires_grad_().mul(1).random_()
torch.zeros(3).requires_grad_().mul(1).bernoulli_(torch.zeros(3))
torch.zeros(3).requires_grad_().mul(1).bernoulli_()
torch.zeros(3).requires_grad_().mul(1).exponential_()
torch.zeros(3).requires_grad_().mul(1).uniform_()
torch.zeros(3).requires_grad_().mul(1).normal_()
torch.zeros(3).requires_grad_().uniform_()
torch.zeros(3).requires_grad_().mul(1).apply_(lambda x: x)
torch.zeros(3).apply_(lambda x: 'a')
"""


@pytest.mark.parametrize("expr", [e for e in RANDOM.strip().splitlines()])
def test_random_as_torch(expr):
    same_kind_as_torch(expr)


# ---- deterministic values and errors ----------------------------------------------------------
VALUES = """
torch.multinomial(torch.tensor([0., 1., 1.]), 2).sum()
torch.multinomial(torch.tensor([[0., 1.], [1., 0.]]), 4, True)
torch.bernoulli(torch.tensor([0., 1.]))
torch.normal(torch.tensor([1., 2.]), 0.)
torch.poisson(torch.tensor([0., 0.]))
torch.zeros(3).uniform_(2., 2.)
torch.zeros(3).bernoulli_(torch.tensor([0., 1., 1.]))
torch.zeros(3).exponential_(float('inf'))
torch.zeros(3).random_(0, 1)
torch.zeros(3).apply_(lambda x: x + 1)
torch.zeros(3, dtype=torch.int64).apply_(lambda x: x + 1.5)
torch.arange(6.).reshape(2, 3).t().apply_(lambda x: x * 2)
torch.logspace(0, 2, 3)
torch.logspace(0, 2, 3, base=2)
torch.logspace(0, 2, 3, dtype=torch.int64)
torch.logspace(-1, 1, 5, base=3, dtype=torch.float64)
torch.logspace(0, 2, -1)
torch.logspace(0., 2., 0)
torch.logspace(0, 2, 1)
torch.logspace(torch.tensor(0.), torch.tensor(2.), 3)
torch.logspace(0, 2, 3, requires_grad=True)
torch.meshgrid(torch.arange(2), torch.arange(3), indexing='ij')
torch.meshgrid(torch.arange(2), torch.arange(3), indexing='xy')
torch.meshgrid(torch.arange(2), torch.arange(3), torch.arange(4), indexing='xy')
torch.meshgrid([torch.arange(2.), torch.arange(3.)], indexing='ij')
torch.meshgrid(torch.tensor(1.), torch.arange(3.), indexing='ij')
torch.meshgrid(torch.arange(2), indexing='ij')
torch.meshgrid(torch.arange(2), torch.arange(3), indexing='foo')
torch.meshgrid(torch.arange(2), torch.arange(3.), indexing='ij')
torch.meshgrid(indexing='ij')
torch.tril_indices(3, 3)
torch.tril_indices(3, 4, 1)
torch.triu_indices(3, 4, -1)
torch.triu_indices(4, 3, 1)
torch.tril_indices(3, 3, dtype=torch.int32)
torch.tril_indices(3, 3, dtype=torch.float32)
torch.tril_indices(-1, 3)
torch.tril_indices(0, 3)
torch.triu_indices(3, 2, 5)
torch.zeros(2).new_zeros(2, 3)
torch.zeros(2).new_zeros((2, 3))
torch.zeros(2).new_zeros([2, 3], dtype=torch.int32)
torch.zeros(2).new_zeros(2, requires_grad=True)
torch.zeros(2, dtype=torch.int64).new_ones(2)
torch.zeros(2).new_full((2, 3), 7)
torch.zeros(2).new_full(2, 7)
torch.zeros(2, dtype=torch.int64).new_full((2,), 7.5)
torch.zeros(2).new_empty(2, 3).shape
torch.zeros(2).new_empty((2, 3), device='cuda')
torch.zeros(2).new_tensor([1, 2])
torch.zeros(2).new_tensor([1.5, 2], dtype=torch.float64)
torch.zeros(2, dtype=torch.int64).new_tensor([1.5, 2])
torch.zeros(2).new_tensor(torch.ones(2))
torch.zeros(2).new_tensor([1.], requires_grad=True)
torch.tensor([1.5, -2.7]).char()
torch.tensor([300, -1]).byte()
torch.tensor([1.5, 2.25]).half()
torch.tensor([1.5, 2.25]).half().float()
torch.tensor([1, 2]).short() + torch.tensor([1, 2]).char()
torch.tensor([1, 2]).byte() + torch.tensor([1, 2]).char()
torch.tensor([1.5, 2.25], dtype=torch.float16) * 2
torch.ones(2, 2, dtype=torch.int8) + 1
torch.zeros(2, 3).type(torch.int32)
torch.zeros(2, 3).type('torch.DoubleTensor')
torch.zeros(2, 3).type('torch.float64')
torch.zeros(2, 3, requires_grad=True).type(torch.float64)
[torch.zeros(1, dtype=d).type() for d in (torch.uint8, torch.int8, torch.int16, torch.half)]
torch.zeros(2, 3).stride()
torch.zeros(2, 3).t().stride()
torch.zeros(2, 3).stride(-1)
torch.zeros(2, 3).stride(2)
torch.zeros(2, 3)[1:].storage_offset()
torch.zeros(2, 3)[:, 1].storage_offset()
torch.zeros(2, 3)[:, 1].stride()
torch.zeros(2, 3).expand(4, 2, 3).stride()
torch.zeros(()).stride()
torch.zeros(2, 3).nbytes
torch.zeros(2, 3, dtype=torch.int8).nbytes
torch.zeros(2, 3).expand(4, 2, 3).nbytes
torch.zeros(2, 3).itemsize
torch.zeros(2, 3).ndimension()
torch.arange(6.).reshape(2, 3).H
torch.zeros(3).H
torch.zeros(2, 3, 4).H
torch.arange(24.).reshape(2, 3, 4).mH
torch.zeros(3).mH
2 in torch.tensor([1, 2])
2.0 in torch.tensor([1, 2])
5 in torch.tensor([1, 2])
torch.tensor([1, 3]) in torch.tensor([1, 2])
'a' in torch.tensor([1, 2])
torch.zeros(2).is_complex()
torch.is_complex(torch.zeros(2))
torch.is_floating_point(torch.zeros(2))
torch.is_floating_point(torch.zeros(2, dtype=torch.int16))
torch.is_floating_point(3.0)
torch.zeros(2).is_shared()
torch.zeros(2).is_pinned()
torch.zeros(2).share_memory_()
torch.zeros(2).pin_memory()
torch.arange(6.).reshape(2, 3).resize_(2, 2)
torch.zeros(2, 3).resize_(4, 4).shape
torch.zeros(2, 3, requires_grad=True).resize_(3, 2)
torch.zeros(2, 3).resize_(-1)
"""


@pytest.mark.parametrize("expr", [e for e in VALUES.strip().splitlines()])
def test_values_as_torch(expr):
    same_values_as_torch(expr)


# ---- devices --------------------------------------------------------------------------------
DEVICES = """
repr(torch.zeros(2).device)
str(torch.zeros(2).device)
torch.zeros(2).device == 'cpu'
torch.zeros(2).device == torch.device('cpu')
torch.zeros(2).device.type
torch.zeros(2).device.index
torch.zeros(2).is_cuda
torch.zeros(2).is_cpu
torch.zeros(2).get_device()
repr(torch.device('cpu', 0))
str(torch.device('cpu', index=0))
repr(torch.device('cuda:1'))
torch.device('cuda:1').index
repr(torch.device(torch.device('cpu')))
torch.device('cpu:0', 1)
torch.device('cpu:-1')
torch.device('cpu:a')
torch.device('')
torch.device('cpux')
torch.device(None)
torch.device(1)
torch.device('cpu', -1)
torch.device('cpu') == torch.device('cpu', 0)
{torch.device('cpu'): 1}[torch.device('cpu')]
torch.zeros(2).to('cpu', torch.float64).dtype
torch.zeros(2).to(torch.device('cpu')).dtype
torch.zeros(2).to(device='cpu', dtype=torch.int32)
torch.zeros(2).to(torch.zeros(1, dtype=torch.int32)).dtype
torch.zeros(2).to('cpu', non_blocking=True).dtype
torch.zeros(2).to(device=torch.device('cuda'))
torch.zeros(2).to('cuda')
torch.zeros(2).to('mps')
torch.zeros(2).to(3)
torch.zeros(2).to('cpux')
torch.zeros(2).to('float64')
repr(torch.zeros(2).cpu().device)
torch.zeros(2).cuda()
torch.zeros(2).cuda(0)
torch.zeros(2, device='cpu:1')
torch.zeros(2, device='cuda')
torch.ones(2, device=torch.device('cuda', 0))
torch.tensor([1.], device='cuda')
torch.full((2,), 1., device='cuda')
torch.arange(3, device='cuda')
torch.eye(3, device='cuda')
torch.rand(3, device='cuda')
torch.randn(3, device=torch.device('cpu'))
torch.zeros_like(torch.zeros(2), device='cuda')
torch.randperm(3, device='cuda')
torch.cuda.is_available()
torch.cuda.device_count()
torch.cuda.manual_seed(0)
torch.cuda.manual_seed_all(0)
torch.backends.mps.is_available()
"""


MISC = """
repr(torch.get_default_device())
torch.set_default_device('cpu')
torch.cuda.empty_cache()
torch.backends.cudnn.benchmark
torch.backends.cudnn.deterministic
torch.backends.cudnn.enabled
torch.backends.cudnn.is_available()
torch.backends.cudnn.version()
torch.are_deterministic_algorithms_enabled()
torch.is_deterministic_algorithms_warn_only_enabled()
torch.use_deterministic_algorithms(1)
torch.get_float32_matmul_precision()
torch.asarray([1, 2])
torch.asarray([1., 2.], dtype=torch.float64)
torch.asarray(np.arange(3))
torch.asarray(np.arange(3.), dtype=torch.float32)
torch.asarray(np.arange(3.), dtype=torch.float32, copy=False)
torch.asarray(torch.ones(2), dtype=torch.int64)
torch.asarray(3.5)
torch.asarray(torch.ones(2, requires_grad=True))
torch.asarray([1.], requires_grad=True)
torch.asarray([1.], device='cuda')
(lambda t: torch.asarray(t) is t)(torch.ones(2))
(lambda t: torch.asarray(t, requires_grad=False) is t)(torch.ones(2, requires_grad=True))
(lambda t: torch.asarray(t, copy=True) is t)(torch.ones(2))
(lambda t: torch.asarray(t, requires_grad=False))(torch.ones(2, requires_grad=True)*2)
(lambda t: torch.asarray(t))(torch.ones(2, requires_grad=True)*2)
(lambda t: torch.asarray(t, dtype=torch.float64))(torch.ones(2, requires_grad=True)*2)
(lambda t: torch.asarray(t, copy=True))(torch.ones(2, requires_grad=True)*2)
(lambda t: torch.asarray(t, copy=False, dtype=torch.float64))(torch.ones(2))
(lambda t: torch.asarray(t, requires_grad=True))(torch.ones(2))
(lambda t: torch.asarray(t, requires_grad=True) is t)(torch.ones(2))
(lambda t: torch.asarray(t, requires_grad=True))(torch.ones(2, dtype=torch.int64))
(lambda a: (torch.asarray(a).__setitem__(0, 5), a[0])[1])(np.zeros(2))
torch.scalar_tensor(3)
torch.scalar_tensor(3, dtype=torch.int64)
torch.scalar_tensor(True)
torch.scalar_tensor(2.5, requires_grad=True)
torch.scalar_tensor(torch.tensor(2.))
torch.scalar_tensor([1])
torch.scalar_tensor('a')
torch.ones(2).is_signed()
torch.ones(2, dtype=torch.uint8).is_signed()
torch.ones(2, dtype=torch.bool).is_signed()
torch.asarray([1], requires_grad=True)
"""


@pytest.mark.parametrize("expr", [e for e in MISC.strip().splitlines()])
def test_misc_as_torch(expr):
    same_kind_as_torch(expr)


LEGACY = """
torch.FloatTensor([1, 2])
torch.FloatTensor(2, 3)
torch.LongTensor([1.7, 2])
torch.LongTensor(3).shape
torch.FloatTensor()
torch.FloatTensor((2, 3))
torch.FloatTensor(torch.ones(2, dtype=torch.int64))
torch.FloatTensor(torch.Size([2, 3]))
torch.BoolTensor([1, 0])
torch.ByteTensor([1, 2])
torch.CharTensor([1, 2])
torch.ShortTensor([1, 2])
torch.IntTensor([1, 2])
torch.HalfTensor([1, 2])
torch.DoubleTensor([1, 2])
isinstance(torch.ones(2), torch.FloatTensor)
isinstance(torch.ones(2), torch.DoubleTensor)
isinstance(torch.ones(2, dtype=torch.int64), torch.LongTensor)
isinstance(3, torch.LongTensor)
torch.ones(2).type(torch.DoubleTensor)
torch.FloatTensor.dtype
repr(torch.FloatTensor)
torch.FloatTensor(np.zeros(2))
torch.FloatTensor(2.5)
torch.FloatTensor('a')
issubclass(torch.FloatTensor, torch.Tensor)
torch.FloatTensor([1.], device='cuda')
torch.ones(2).new(2, 3)
torch.ones(2).new([1, 2])
torch.ones(2, dtype=torch.int64).new([1.5, 2])
torch.ones(2).new()
torch.ones(2).new(torch.ones(2, dtype=torch.int64))
torch.ones(2).new(torch.Size([3]))
torch.Tensor([0])
torch.Tensor([[1, 2]])
torch.Tensor(2, 3)
torch.Tensor(2)
torch.Tensor(0)
torch.Tensor()
torch.Tensor(size=(2, 3))
torch.Tensor((1, 2))
torch.Tensor([True, False])
torch.Tensor(np.array([1, 2]))
torch.Tensor(np.array(2.0))
torch.Tensor(torch.ones(2, dtype=torch.int64))
torch.Tensor(torch.Size([2, 3]))
torch.Tensor(torch.ones(2, requires_grad=True))
torch.Tensor([1.], device='cpu')
torch.Tensor(2.5)
torch.Tensor('a')
torch.Tensor(-1)
torch.Tensor(None)
torch.Tensor(np.float64(2))
type(torch.Tensor([1])).__name__
"""

LEGACY_VALUES = """
torch.Tensor([0])
torch.Tensor([[1, 2], [3, 4]])
torch.Tensor([True, False])
torch.Tensor(np.array([1, 2]))
torch.Tensor(np.array(2.0))
torch.Tensor(torch.tensor([1, 2]))
(lambda a: (torch.Tensor(a).__setitem__(0, 5.), a[0])[1])(torch.zeros(2))
(lambda a: (torch.Tensor(a) * torch.tensor([2., 3.])).sum().backward() or a.grad)(torch.ones(2, requires_grad=True))
"""


@pytest.mark.parametrize("expr", [e for e in LEGACY.strip().splitlines()])
def test_legacy_tensor_types_as_torch(expr):
    same_kind_as_torch(expr)


@pytest.mark.parametrize("expr", [e for e in LEGACY_VALUES.strip().splitlines()])
def test_tensor_constructor_values_as_torch(expr):
    """torch.Tensor(data) converts to the default dtype (an int list too); Tensor(t) aliases t."""
    same_values_as_torch(expr)


def test_tensor_constructor_follows_the_default_dtype():
    def fn(lib):
        before = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            return str(lib.Tensor([1]).dtype), str(lib.Tensor(2).dtype), lib.Tensor(2).shape
        finally:
            lib.set_default_dtype(before)
    assert fn(ng) == fn(torch)


def test_legacy_constructor_takes_no_requires_grad():
    same_type_as_torch(lambda lib: lib.FloatTensor([1, 2], requires_grad=True))
    # (torch's message adds its argument parser's reasons per signature; the first line agrees)
    for fn in (lambda lib: lib.Tensor([1, 2], requires_grad=True),
               lambda lib: lib.Tensor(2, dtype=lib.float64), lambda lib: lib.Tensor(2.0, 3)):
        same_type_as_torch(fn)
        first_lines = []
        for lib in (ng, torch):
            with pytest.raises(TypeError) as err:
                fn(lib)
            first_lines.append(str(err.value).splitlines()[0])
        assert first_lines[0] == first_lines[1]


@pytest.mark.parametrize("expr", [e for e in DEVICES.strip().splitlines()])
def test_devices_as_torch(expr):
    same_kind_as_torch(expr)


# ---- dtypes ---------------------------------------------------------------------------------
_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
           "float64")

DTYPES = """
[(repr(d), d.is_signed, d.is_floating_point, d.itemsize, d.is_complex) for d in DTS]
[str(torch.promote_types(a, b)) for a in DTS for b in DTS]
[torch.can_cast(a, b) for a in DTS for b in DTS]
(repr(torch.half), repr(torch.short))
torch.promote_types(1, torch.float32)
torch.can_cast(torch.float32, 'a')
[repr(torch.finfo(d)) for d in DTS if d.is_floating_point]
[(f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution, f.dtype) for f in [torch.finfo(d) for d in DTS if d.is_floating_point]]
repr(torch.finfo())
[repr(torch.iinfo(d)) for d in DTS if not d.is_floating_point and d is not torch.bool]
[(i.bits, i.min, i.max, i.dtype) for i in [torch.iinfo(d) for d in DTS[1:6]]]
torch.finfo(torch.int32)
torch.iinfo(torch.float32)
torch.iinfo(torch.bool)
torch.finfo(torch.float32) == torch.finfo(torch.float32)
torch.from_numpy(np.arange(3, dtype=np.int16))
repr(torch.from_numpy(np.arange(3, dtype=np.uint8)).dtype)
torch.tensor(np.arange(3, dtype=np.float16))
torch.set_num_threads(0)
"""


@pytest.mark.parametrize("expr", [e for e in DTYPES.strip().splitlines()])
def test_dtypes_as_torch(expr):
    def fn(lib):
        dts = [getattr(lib, n) for n in _DTYPES]
        return eval(expr, {"torch": lib, "np": np, "DTS": dts})  # noqa: S307
    same_as_torch(fn)


def test_bfloat16_is_named_but_refused_clearly():
    assert repr(ng.bfloat16) == "torch.bfloat16" and ng.bfloat16.is_floating_point
    for make in (lambda: ng.zeros(2, dtype=ng.bfloat16), lambda: ng.zeros(2).bfloat16(),
                 lambda: ng.tensor([1.0]).to(ng.bfloat16)):
        with pytest.raises(TypeError, match="bfloat16 is not supported"):
            make()


def test_complex_constructors_name_the_limitation():
    for fn in (ng.complex, ng.polar):
        with pytest.raises(TypeError, match="no complex dtypes"):
            fn(ng.ones(2), ng.ones(2))


def test_meshgrid_warns_without_indexing_as_torch():
    for lib in (ng, torch):
        with pytest.warns(UserWarning, match="it will be required to pass the indexing"):
            out = lib.meshgrid(lib.arange(2), lib.arange(3))
        assert tuple(out[0].shape) == (2, 3)


def test_threads_map_to_numba():
    import numba
    before = ng.get_num_threads()
    assert before == numba.get_num_threads()
    try:
        ng.set_num_threads(1)
        assert ng.get_num_threads() == numba.get_num_threads() == 1
    finally:
        ng.set_num_threads(before)


# ---- generators -----------------------------------------------------------------------------
def test_generators_reproduce_and_restore():
    same_type_as_torch(lambda lib: lib.Generator(device="cuda"))
    same_kind_as_torch("torch.Generator(device=torch.device('cpu')).device")
    g = ng.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed()
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    state = g.get_state()
    first = ng.rand(4, generator=g)
    g.set_state(state)
    assert np.array_equal(ng.rand(4, generator=g).numpy(), first.numpy())
    assert np.array_equal(ng.rand(4, generator=ng.Generator().manual_seed(5)).numpy(),
                          first.numpy())
    ng.manual_seed(3)
    assert ng.initial_seed() == 3
    saved = ng.get_rng_state()
    a = ng.randn(3)
    ng.set_rng_state(saved)
    assert np.array_equal(ng.randn(3).numpy(), a.numpy())
    assert ng.manual_seed(-1).initial_seed() == torch.manual_seed(-1).initial_seed()
    s = ng.seed()
    assert isinstance(s, int) and ng.initial_seed() == s
    with pytest.raises(TypeError, match="torch.Generator"):
        ng.rand(2, generator=3)


def test_sampling_follows_the_probabilities():
    ng.manual_seed(0)
    draws = ng.multinomial(ng.tensor([0.1, 0.0, 0.9]), 2000, True).numpy()
    assert 1 not in draws and abs((draws == 2).mean() - 0.9) < 0.03
    rows = ng.multinomial(ng.tensor([[1.0, 0.0, 0.0, 2.0], [0.0, 3.0, 1.0, 0.0]]), 2).numpy()
    assert sorted(rows[0]) == [0, 3] and sorted(rows[1]) == [1, 2]
    perm = ng.randperm(50).numpy()
    assert sorted(perm) == list(range(50))
    n = ng.normal(ng.full((4000,), 3.0), ng.full((4000,), 2.0)).numpy()
    assert abs(n.mean() - 3) < 0.15 and abs(n.std() - 2) < 0.15
    b = ng.bernoulli(ng.full((4000,), 0.25)).numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.25) < 0.03
    p = ng.poisson(ng.full((4000,), 4.0)).numpy()
    assert abs(p.mean() - 4) < 0.2 and np.all(p == np.round(p))
    u = ng.zeros(4000).uniform_(-1, 3).numpy()
    assert u.min() >= -1 and u.max() < 3 and abs(u.mean() - 1) < 0.1
    e = ng.zeros(4000, dtype=ng.float64).exponential_(2.0).numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.05
    r = ng.zeros(4000, dtype=ng.int8).random_().numpy()
    assert r.min() >= 0 and r.max() <= 127 and r.max() > 100
    r = ng.zeros(2000, dtype=ng.int32).random_(-5, 5).numpy()
    assert r.min() == -5 and r.max() == 4
    assert ng.zeros(10).random_(3).numpy().max() <= 2
    ri = ng.randint_like(ng.zeros(2000, dtype=ng.int16), 3, 6).numpy()
    assert ri.dtype == np.int16 and ri.min() == 3 and ri.max() == 5


# ---- gradients: the samplers' derivative is zero, as torch's ------------------------------------
def test_sampling_nodes_pass_zero_gradients_as_torch():
    def run(lib):
        m = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        s = lib.ones(3, dtype=lib.float64, requires_grad=True)
        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        y = x * 2
        y.uniform_()
        total = lib.normal(m, s).sum() + (y * x).sum()
        total.backward()
        return m.grad, s.grad, y.grad_fn.name(), y._version
    ours, theirs = run(ng), run(torch)
    assert ours[2:] == theirs[2:]
    for a, b in zip(ours[:2], theirs[:2]):
        assert np.array_equal(a.numpy(), b.numpy())


def test_inplace_fill_under_no_grad_bumps_the_version():
    for lib in (ng, torch):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            x.normal_()
        assert x._version == 1 and x.is_leaf and x.requires_grad


# ---- deepcopy -------------------------------------------------------------------------------
def test_deepcopy_keeps_class_flag_and_grad_as_torch():
    for lib in (ng, torch):  # a Parameter's copy has no .grad (torch's Parameter.__deepcopy__)
        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.full((2,), 3.0)
        q = copy.deepcopy(p)
        assert type(q) is lib.nn.Parameter and q.requires_grad and q is not p
        assert q.grad is None
        t = lib.ones(2, requires_grad=True)  # a plain tensor's copy has a copy of its .grad
        t.grad = lib.full((2,), 3.0)
        u = copy.deepcopy(t)
        assert u.grad.tolist() == [3.0, 3.0] and u.grad is not t.grad
    p = ng.nn.Parameter(ng.ones(2))
    q = copy.deepcopy(p)
    q.data[0] = 5.0
    assert p.tolist() == [1.0, 1.0]
    shared = [p, p]
    a, b = copy.deepcopy(shared)
    assert a is b
    lin = ng.nn.Linear(2, 3)
    lin2 = copy.deepcopy(lin)
    assert type(lin2.weight) is ng.nn.Parameter and lin2.weight is not lin.weight
    assert np.array_equal(lin2.weight.detach().numpy(), lin.weight.detach().numpy())

    def nonleaf(lib):
        return copy.deepcopy(lib.ones(2, requires_grad=True) * 2)
    same_as_torch(nonleaf)


def test_data_ptr_and_storage_views():
    t = ng.zeros(2, 3)
    assert t.data_ptr() != 0 and ng.zeros(0).data_ptr() == 0
    assert t[1:].data_ptr() == t.data_ptr() + 3 * 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert t.share_memory_() is t


def test_dlpack_shares_memory_with_torch_and_numpy():
    t = ng.arange(6.0).reshape(2, 3)
    theirs = torch.from_dlpack(t)
    theirs[0, 0] = 9.0
    assert t.tolist()[0][0] == 9.0 and np.from_dlpack(t.t()).shape == (3, 2)
    assert tuple(t.__dlpack_device__()) == tuple(int(v) for v in
                                                 torch.ones(1).__dlpack_device__())
    same_as_torch(lambda lib: lib.ones(2, requires_grad=True).__dlpack__())


def test_device_context_is_cpu_only():
    with ng.device("cpu") as d:
        assert repr(d) == "device(type='cpu')" and repr(ng.zeros(1).device) == repr(d)
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        with ng.device("cuda"):
            pass


def test_switches_are_recorded():
    try:
        ng.use_deterministic_algorithms(True, warn_only=True)
        assert ng.are_deterministic_algorithms_enabled()
        assert ng.is_deterministic_algorithms_warn_only_enabled()
        ng.set_float32_matmul_precision("high")
        assert ng.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning, match="is not one of 'highest'"):
            ng.set_float32_matmul_precision("foo")
        assert ng.get_float32_matmul_precision() == "high"
    finally:
        ng.use_deterministic_algorithms(False)
        ng.set_float32_matmul_precision("highest")


def test_default_dtype_stays_float32_or_float64():
    with pytest.raises(TypeError, match="float16 as the default dtype is not supported"):
        ng.set_default_dtype(ng.float16)
    with pytest.raises(TypeError, match="bfloat16 is not supported"):
        ng.set_default_dtype(ng.bfloat16)
    assert ng.get_default_dtype() is ng.float32


def test_compile_refuses_the_samplers():
    for body in (lambda x: ng.bernoulli(x).sum(), lambda x: (x * 1).uniform_().sum(),
                 lambda x: ng.normal(x, 1.0).sum()):
        with pytest.raises(NotImplementedError, match="random ops"):
            ng.compile(body)(ng.full((3,), 0.5, requires_grad=True))


def test_module_to_cuda_and_cuda_raise_torchs_error():
    for lib in (torch, ng):
        m = lib.nn.Linear(2, 2)
        assert m.to("cpu") is m and m.to(lib.device("cpu")) is m
        for call in (lambda: m.to("cuda"), lambda: m.cuda(), lambda: m.to(device="cuda")):
            with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
                call()

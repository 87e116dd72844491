"""Interop with NumPy, torch and JAX: DLPack both ways (zero-copy where the peer shares
memory), ``__array__``'s NumPy 2 ``copy``, the dtype ``numbagrad.tensor`` keeps from other
libraries' arrays, torch's constructors on numbagrad tensors, pickle/deepcopy of parameters
and modules, and save/load in safetensors with the conversion to and from torch
state_dicts. torch and JAX parts skip when the library is absent."""

import copy
import io
import json
import operator
import pickle
import struct
import time
import tracemalloc
import warnings
import zlib

import numpy as np
import pytest

import numbagrad as ng

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason="torch is not installed (torch interop)")


@pytest.fixture
def jax():
    return pytest.importorskip("jax", reason="JAX is not installed (JAX interop)")


def _values(dtype, shape=(2, 3)):
    """Distinct values of ``dtype`` (a name), as a NumPy array."""
    a = np.arange(int(np.prod(shape))).reshape(shape)
    values = (a % 2 == 0) if dtype == "bool" else (a * 3 - 4 * (dtype != "uint8"))
    return np.asarray(values, dtype)


def _ng(dtype, shape=(2, 3)):
    return ng.tensor(_values(dtype, shape))


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e).__name__, str(e)
    return None


# ---- DLPack --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_reads_a_tensor_through_dlpack_sharing_its_memory(dtype):
    t = _ng(dtype)
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(dtype) and a.shape == (2, 3)
    assert np.array_equal(a, _values(dtype))
    a[1, 2] = a[0, 0]
    assert t[1, 2].item() == t[0, 0].item()


def test_a_tensor_reads_numpy_through_dlpack_sharing_its_memory():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = ng.from_dlpack(a)
    assert t.dtype is ng.int32 and t.shape == (2, 3) and t.tolist() == a.tolist()
    a[0, 0] = 40
    t[1, 1] = 50
    assert t[0, 0].item() == 40 and a[1, 1] == 50
    assert ng.from_dlpack(a, copy=True).data_ptr() != a.ctypes.data


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_and_numbagrad_share_memory_both_ways(torch, dtype):
    t = _ng(dtype)
    theirs = torch.from_dlpack(t)
    assert str(theirs.dtype) == f"torch.{dtype}" and tuple(theirs.shape) == (2, 3)
    assert theirs.tolist() == t.tolist()
    theirs[0, 1] = theirs[0, 0]
    assert t[0, 1].item() == t[0, 0].item()

    src = torch.from_numpy(_values(dtype))
    ours = ng.from_dlpack(src)
    assert str(ours.dtype) == str(src.dtype) and ours.tolist() == src.tolist()
    src[1, 2] = src[0, 0]
    assert ours[1, 2].item() == ours[0, 0].item()
    ours[0, 2] = ours[0, 1]
    assert src[0, 2].item() == src[0, 1].item()


def test_dlpack_with_torch_on_views_scalars_and_capsules(torch):
    base = ng.arange(12.0).reshape(3, 4)
    for t in (base.t(), base[:, 1:3], base[::2], ng.tensor(2.5), base.sum()):
        theirs = torch.from_dlpack(t)
        assert theirs.tolist() == t.tolist() and tuple(theirs.stride()) == t.stride()
    # negative strides (a NumPy view) go out as a copy: torch.from_dlpack cannot take them
    flipped = ng.from_numpy(np.arange(4.0)[::-1])
    assert torch.from_dlpack(flipped).tolist() == [3.0, 2.0, 1.0, 0.0]
    with pytest.raises(BufferError, match="negative strides"):
        flipped.__dlpack__(copy=False)
    # the legacy capsules of torch.utils.dlpack / numbagrad.utils.dlpack
    capsule = ng.utils.dlpack.to_dlpack(ng.arange(3))
    assert torch.utils.dlpack.from_dlpack(capsule).tolist() == [0, 1, 2]
    src = torch.arange(3, dtype=torch.int16)
    ours = ng.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(src))
    src[0] = 7
    assert ours.dtype is ng.int16 and ours.tolist() == [7, 1, 2]


def test_dlpack_refuses_what_torch_refuses(torch):
    for lib in (ng, torch):  # the same error, type and words, from both
        assert _raised(lambda: lib.ones(2, requires_grad=True).__dlpack__()) == (
            "BufferError", "Can't export tensors that require gradient, use tensor.detach()")
        assert _raised(lambda: torch.from_dlpack(lib.ones(2, requires_grad=True)))[0] == \
            "BufferError"
        assert _raised(lambda: lib.ones(2).__dlpack__(stream=3)) == \
            ("AssertionError", "stream should be None on cpu.")
        assert _raised(lambda: lib.ones(2).__dlpack__(stream="s")) == \
            ("TypeError", "stream must be ``int`` or ``none``")
        assert torch.from_dlpack(lib.ones(2, requires_grad=True).detach()).tolist() == [1, 1]
    assert ng.from_dlpack(torch.ones(2).__dlpack__(stream=-1)).tolist() == [1.0, 1.0]
    assert tuple(ng.ones(1).__dlpack_device__()) == tuple(torch.ones(1).__dlpack_device__())
    with pytest.raises(TypeError, match="bfloat16 is not supported"):
        ng.from_dlpack(torch.ones(2, dtype=torch.bfloat16))


class _NoDevice:
    """A producer with ``__dlpack__`` but no ``__dlpack_device__``."""

    def __dlpack__(self, **kwargs):
        return np.arange(3).__dlpack__(**kwargs)


def test_dlpack_misuse_raises_torchs_errors(torch):
    """A consumed capsule, a non-capsule, a producer that returns no capsule: torch's one
    RuntimeError, not CPython's PyCapsule_GetPointer ValueError."""

    class ReturnsInt:
        def __dlpack__(self, **kwargs):
            return 5

        def __dlpack_device__(self):
            return (1, 0)

    used = torch.utils.dlpack.to_dlpack(torch.ones(1))
    torch.utils.dlpack.from_dlpack(used)
    expected = _raised(lambda: torch.utils.dlpack.from_dlpack(used))
    assert expected[0] == "RuntimeError" and "consumed only once" in expected[1]
    for lib in (torch, ng):
        for reuse in (lib.from_dlpack, lib.utils.dlpack.from_dlpack):
            for make in (lambda: lib.utils.dlpack.to_dlpack(lib.arange(3)),
                         lambda: torch.arange(3).__dlpack__(),
                         lambda: np.arange(3).__dlpack__(),
                         lambda: torch.arange(3).__dlpack__(max_version=(1, 0))):
                capsule = make()
                assert lib.from_dlpack(capsule).tolist() == [0, 1, 2]
                assert _raised(lambda: reuse(capsule)) == expected, (lib, reuse)
    for bad in ([1, 2], 3, None, "abc", object(), ReturnsInt()):
        for lib in (torch, ng):
            assert _raised(lambda: lib.from_dlpack(bad)) == expected, (lib, bad)
            assert _raised(lambda: lib.utils.dlpack.from_dlpack(bad)) == expected, (lib, bad)
    for lib in (torch, ng):
        assert _raised(lambda: lib.from_dlpack(_NoDevice())) == (
            "AttributeError", "'_NoDevice' object has no attribute '__dlpack_device__'")
        assert _raised(lambda: lib.from_dlpack([1, 2], device="cpu")) == _raised(
            lambda: torch.from_dlpack([1, 2], device="cpu"))


def test_dlpack_copy_true_gives_separate_memory(torch):
    t = ng.zeros(3)
    theirs = torch.from_dlpack(t, copy=True)
    theirs[0] = 1.0
    assert t.tolist() == [0.0, 0.0, 0.0]
    mine = ng.from_dlpack(torch.zeros(2), copy=True)
    assert mine.data_ptr() != 0 and mine.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "uint8", "int8", "float16"])
def test_jax_reads_a_tensor_and_a_tensor_reads_jax(jax, dtype):
    import jax.numpy as jnp

    t = _ng(dtype)
    for theirs in (jnp.from_dlpack(t), jnp.asarray(t), jax.dlpack.from_dlpack(t)):
        assert theirs.dtype == np.dtype(dtype) and theirs.shape == (2, 3)
        assert np.array_equal(np.asarray(theirs), _values(dtype))
    src = jnp.asarray(_values(dtype))
    ours = ng.from_dlpack(src)
    assert ours.dtype.name == dtype and np.array_equal(ours.numpy(), _values(dtype))
    # zero-copy: the tensor views JAX's buffer (read-only: JAX never changes an array)
    assert ours.data_ptr() == src.unsafe_buffer_pointer()
    assert not np.asarray(ours).flags.writeable


def test_jax_float64_and_int64_survive_both_ways_under_x64(jax):
    import jax.numpy as jnp

    with jax.enable_x64(True):
        for dtype in ("float64", "int64"):
            src = jnp.asarray(_values(dtype))
            assert ng.from_dlpack(src).dtype.name == dtype
            assert ng.tensor(src).dtype.name == dtype
            assert jnp.from_dlpack(_ng(dtype)).dtype == np.dtype(dtype)
            assert jnp.asarray(_ng(dtype)).dtype == np.dtype(dtype)


# ---- __array__ ------------------------------------------------------------------------------
def test_array_follows_numpy2_copy_semantics():
    t = ng.arange(4.0)
    copied = np.array(t, copy=True)
    shared = np.asarray(t)
    also_shared = np.array(t, copy=False)
    t.add_(1.0)
    assert copied.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert shared.tolist() == also_shared.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert np.array(t).tolist() == [1.0, 2.0, 3.0, 4.0] and not np.shares_memory(np.array(t), shared)
    converted = np.asarray(t, dtype=np.float64)  # a dtype change copies (copy=None)
    assert converted.dtype == np.float64 and not np.shares_memory(converted, shared)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        np.array(t, dtype=np.float64, copy=False)
    assert np.shares_memory(np.array(t, dtype=np.float32, copy=False), shared)
    assert not np.shares_memory(t.__array__(copy=True), shared)


def test_array_of_a_scalar_result_is_0d():
    s = ng.arange(4.0).sum()
    for a in (np.asarray(s), np.array(s, copy=True), np.array(s, copy=False)):
        assert a.shape == () and a.dtype == np.float32 and a.item() == 6.0


# ---- numbagrad.tensor / as_tensor / asarray keep other libraries' dtypes -------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_keeps_a_torch_tensors_dtype(torch, dtype):
    src = torch.from_numpy(_values(dtype))
    for make in (ng.tensor, ng.as_tensor, ng.asarray):
        ours = make(src)
        assert ours.dtype.name == str(src.dtype).removeprefix("torch.")
        assert ours.tolist() == src.tolist()
    copied, shared, also_shared = ng.tensor(src), ng.as_tensor(src), ng.asarray(src)
    src[0, 0] = src[0, 1]
    assert copied[0, 0].item() != src[0, 0].item()
    assert shared[0, 0].item() == also_shared[0, 0].item() == src[0, 0].item()
    assert ng.asarray(src, copy=True).data_ptr() != src.data_ptr()


def test_tensor_takes_the_value_of_a_torch_tensor_that_requires_grad(torch):
    src = torch.ones(2, dtype=torch.float64, requires_grad=True)
    ours = ng.tensor(src)  # as torch.tensor(src): the value, detached
    assert ours.dtype is ng.float64 and ours.tolist() == [1.0, 1.0] and not ours.requires_grad


def test_tensor_refuses_bfloat16_by_name(torch):
    with pytest.raises(TypeError, match="bfloat16 is not supported"):
        ng.tensor(torch.ones(2, dtype=torch.bfloat16))


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "int8", "float16", "uint8"])
def test_tensor_keeps_a_jax_arrays_dtype(jax, dtype):
    import jax.numpy as jnp

    src = jnp.asarray(_values(dtype))
    for make in (ng.tensor, ng.as_tensor, ng.asarray):
        ours = make(src)
        assert ours.dtype.name == dtype and np.array_equal(ours.numpy(), _values(dtype))


class _OnlyArray:
    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return self.a


class _OnlyDLPack:
    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@pytest.mark.parametrize("wrap", [_OnlyArray, _OnlyDLPack, lambda a: a])
def test_tensor_keeps_the_dtype_of_any_array_like(wrap):
    for dtype in ("float64", "int32", "bool", "int16"):
        a = _values(dtype)
        assert ng.tensor(wrap(a)).dtype.name == dtype
        assert ng.as_tensor(wrap(a)).tolist() == a.tolist()


@pytest.mark.filterwarnings("ignore:Creating a tensor from a list of numpy.ndarrays")
def test_lists_infer_dtypes_as_torch(torch):
    def cases(lib):
        return [[1, 2], [1.5, 2], [True, False], [True, 2], [[1.0], [2.0]], [],
                [np.float64(1.0), 2.0], [np.int32(1), np.int32(2)], [np.int32(1), 2],
                [np.float16(1.0), 1.0], [np.array([1, 2], np.int8), np.array([3, 4], np.int8)],
                [lib.tensor(1.0, dtype=lib.float64), 2.0], [lib.tensor(1, dtype=lib.int32)],
                [lib.tensor(2.0), lib.tensor(3.0)],
                (1, 2.0)]
    for ours, theirs in zip(cases(ng), cases(torch)):
        t, tt = ng.tensor(ours), torch.tensor(theirs)
        assert (str(t.dtype), t.tolist()) == (str(tt.dtype), tt.tolist()), theirs
    old = ng.get_default_dtype()
    ng.set_default_dtype(ng.float64)
    try:
        assert ng.tensor([1.0, 2]).dtype is ng.float64
        assert ng.tensor([np.float32(1.0), 2.0]).dtype is ng.float64
    finally:
        ng.set_default_dtype(old)


def test_lists_of_other_libraries_tensors_keep_their_dtype(torch):
    # torch.tensor itself refuses a list of 1-d tensors; numbagrad takes it as it takes arrays
    parts = [torch.tensor([1, 2], dtype=torch.int32), torch.tensor([3, 4], dtype=torch.int32)]
    t = ng.tensor(parts)
    assert t.dtype is ng.int32 and t.tolist() == [[1, 2], [3, 4]]


# ---- torch's and JAX's constructors on numbagrad tensors ------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_torch_constructors_take_a_tensor(torch, dtype, shape):
    t = _ng(dtype, shape)
    for make in (torch.tensor, torch.as_tensor, torch.asarray):
        theirs = make(t)
        assert str(theirs.dtype) == f"torch.{dtype}" and tuple(theirs.shape) == shape
        assert theirs.tolist() == t.tolist()
    copied, shared = torch.tensor(t), torch.as_tensor(t)
    from_numpy = torch.from_numpy(t.numpy())
    t.fill_(1)
    assert copied.tolist() == torch.from_numpy(_values(dtype, shape)).tolist()
    assert shared.tolist() == from_numpy.tolist() == t.tolist()


def test_torch_tensor_of_a_scalar_result_and_of_a_tensor_that_requires_grad(torch):
    x = ng.arange(4.0, requires_grad=True)
    loss = (x * 2).sum()
    assert torch.tensor(loss.detach()).item() == 12.0
    assert torch.tensor(loss.item()).item() == 12.0
    # torch's own refusal of a DLPack export that would drop the graph, word for word
    assert _raised(lambda: torch.tensor(loss)) == _raised(
        lambda: torch.from_dlpack(torch.ones(2, requires_grad=True)))


def test_jnp_asarray_takes_a_tensor(jax):
    import jax.numpy as jnp

    for t in (ng.tensor(2.5), ng.arange(6.0).reshape(2, 3).t(), ng.tensor([True, False])):
        theirs = jnp.asarray(t)
        assert theirs.shape == tuple(t.shape) and np.array_equal(np.asarray(theirs), t.numpy())


# ---- pickle and deepcopy -----------------------------------------------------------------
def _roundtrips():
    return {"pickle": lambda obj: pickle.loads(pickle.dumps(obj)), "deepcopy": copy.deepcopy}


def _parameter_facts(lib, how):
    p = lib.nn.Parameter(lib.arange(3.0))
    frozen = lib.nn.Parameter(lib.arange(3), requires_grad=False)
    p.grad = lib.ones(3)
    a, b, c = _roundtrips()[how]([p, p, frozen])
    return (type(a).__name__, a.requires_grad, a is b, a.tolist(), type(c).__name__,
            c.requires_grad, str(c.dtype), a.grad is None, a.is_leaf)


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_parameter_stays_a_parameter(torch, how):
    assert _parameter_facts(ng, how) == _parameter_facts(torch, how)


def _net(lib, dtype=None, tied=True):
    nn = lib.nn
    lib.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4, dtype=dtype), nn.BatchNorm1d(4, dtype=dtype),
                        nn.ReLU(), nn.Linear(4, 4, dtype=dtype))
    net.head = nn.Linear(4, 4, dtype=dtype)
    if tied:
        net.head.weight = net[3].weight
    return net


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_module_keeps_its_parameters_buffers_and_ties(how):
    net = _net(ng)
    net[1](ng.randn(5, 4))  # running statistics and num_batches_tracked move
    net.eval()
    copied = _roundtrips()[how](net)
    assert copied.head.weight is copied[3].weight and copied[3].weight is not net[3].weight
    for (n1, p1), (n2, p2) in zip(net.named_parameters(), copied.named_parameters()):
        assert n1 == n2 and type(p2) is ng.nn.Parameter and p2.requires_grad
        assert p1.tolist() == p2.tolist()
    for (n1, b1), (n2, b2) in zip(net.named_buffers(), copied.named_buffers()):
        assert n1 == n2 and b1.dtype is b2.dtype and b1.tolist() == b2.tolist()
    x = ng.randn(2, 3)
    assert copied(x).tolist() == net(x).tolist()


def test_deepcopy_and_pickle_of_a_non_leaf_as_torch(torch):
    for lib in (ng, torch):
        y = lib.ones(2, requires_grad=True) * 2
        assert _raised(lambda: copy.deepcopy(y)) == _raised(
            lambda: copy.deepcopy(torch.ones(2, requires_grad=True) * 2))
    ours = pickle.loads(pickle.dumps(ng.ones(2, requires_grad=True) * 2))
    theirs = pickle.loads(pickle.dumps(torch.ones(2, requires_grad=True) * 2))
    assert (ours.is_leaf, ours.requires_grad, ours.tolist()) == \
        (theirs.is_leaf, theirs.requires_grad, theirs.tolist())


def test_pickles_from_before_the_class_was_recorded_still_load():
    from numbagrad.tensor import _rebuild

    t = _rebuild(np.arange(3.0), True)
    assert type(t) is ng.Tensor and t.requires_grad and t.tolist() == [0.0, 1.0, 2.0]


# ---- save / load: safetensors, npz, torch checkpoints ------------------------------------
def _state(dtypes=DTYPES):
    sd = {f"w_{d}": _ng(d) for d in dtypes}
    sd["scalar"] = ng.tensor(3.5)
    sd["transposed"] = ng.arange(6.0).reshape(2, 3).t()
    sd["empty"] = ng.zeros(0, 4)
    return sd


def _same_state(a, b):
    assert sorted(a) == sorted(b)
    for k in a:
        x, y = a[k], b[k]
        assert str(x.dtype) == str(y.dtype), k
        assert tuple(x.shape) == tuple(y.shape) and x.tolist() == y.tolist(), k


def test_safetensors_round_trip(tmp_path):
    from safetensors.numpy import load_file, save_file

    sd = _state()
    path = str(tmp_path / "model.safetensors")
    ng.save(sd, path)
    assert open(path, "rb").read(9)[8:9] == b"{"  # the safetensors layout, not a zip
    back = ng.load(path)
    _same_state(sd, back)
    assert not any(t.requires_grad for t in back.values())
    back["w_float32"].add_(1)  # loaded tensors are writable
    assert {k: (v.dtype, v.shape) for k, v in load_file(path).items()} == \
        {k: (np.dtype(v.dtype.np), tuple(v.shape)) for k, v in sd.items()}
    # another writer's file, whatever it is called, and from an open file
    save_file({k: v.numpy().copy() for k, v in sd.items()}, str(tmp_path / "weights.bin"))
    _same_state(ng.load(str(tmp_path / "weights.bin")), sd)
    with open(tmp_path / "weights.bin", "rb") as fh:
        loaded = ng.load(io.BytesIO(fh.read()))
    _same_state(loaded, sd)
    loaded["w_int32"].add_(1)


def test_torch_reads_and_writes_the_safetensors_files(tmp_path, torch):
    from safetensors.torch import load_file, save_file

    sd = _state()
    path = str(tmp_path / "model.safetensors")
    ng.save(sd, path)
    _same_state(sd, load_file(path))
    theirs = {k: torch.from_numpy(v.numpy().copy()) for k, v in sd.items()}
    for name in ("from_torch.safetensors", "from_torch.pt"):
        save_file(theirs, str(tmp_path / name))
        _same_state(ng.load(str(tmp_path / name)), theirs)


def test_safetensors_are_read_by_jax(tmp_path, jax):
    from safetensors.flax import load_file

    sd = _state(["float32", "int32", "bool"])
    ng.save(sd, str(tmp_path / "m.safetensors"))
    loaded = load_file(str(tmp_path / "m.safetensors"))
    for k, v in sd.items():
        assert loaded[k].dtype == v.numpy().dtype and np.array_equal(loaded[k], v.numpy())


def test_safetensors_take_a_flat_dict_of_tensors_only(tmp_path):
    for obj in ({"a": {"b": ng.ones(1)}}, {"a": 1.0}, {1: ng.ones(1)}, [ng.ones(1)]):
        with pytest.raises(TypeError, match="holds a flat dict of str -> Tensor only"):
            ng.save(obj, str(tmp_path / "x.safetensors"))


def test_safetensors_of_dtypes_numbagrad_cannot_hold(tmp_path, torch):
    from safetensors.torch import save_file

    path = str(tmp_path / "bf16.safetensors")
    save_file({"ok": torch.ones(2), "half_brain": torch.ones(2, dtype=torch.bfloat16)}, path)
    with pytest.raises(RuntimeError, match=r"half_brain \(BF16\).*\.float\(\)"):
        ng.load(path)


def test_optimizer_state_stays_in_the_npz_archive(tmp_path):
    p = ng.nn.Parameter(ng.ones(3))
    opt = ng.optim.Adam([p], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    path = str(tmp_path / "opt.ckpt")
    ng.save(opt.state_dict(), path)
    back = ng.load(path)
    assert open(path, "rb").read(2) == b"PK"
    assert back["param_groups"] == opt.state_dict()["param_groups"]
    fresh = ng.optim.Adam([ng.nn.Parameter(ng.ones(3))], lr=0.1)
    fresh.load_state_dict(back)
    ours, theirs = fresh.state_dict()["state"][0], opt.state_dict()["state"][0]
    assert {k: np.asarray(v).tolist() for k, v in ours.items()} == \
        {k: np.asarray(v).tolist() for k, v in theirs.items()}


def test_saving_to_a_torch_suffix_warns_and_loads_back(tmp_path):
    for name in ("m.pt", "m.pth"):
        with pytest.warns(UserWarning, match="which torch.load cannot read"):
            ng.save(_state(["float32"]), str(tmp_path / name))
        _same_state(ng.load(str(tmp_path / name)), _state(["float32"]))


def test_torch_checkpoints_are_refused_with_a_way_to_convert(tmp_path, torch):
    sd = {"w": torch.ones(2)}
    torch.save(sd, str(tmp_path / "model.pt"))
    torch.save(sd, str(tmp_path / "renamed.npz"))  # the name does not decide
    torch.save(sd, str(tmp_path / "legacy.pth"), _use_new_zipfile_serialization=False)
    for name in ("model.pt", "renamed.npz", "legacy.pth"):
        with pytest.raises(RuntimeError, match=r"does not unpickle.*safetensors.torch.save_file"):
            ng.load(str(tmp_path / name))
    with open(tmp_path / "model.pt", "rb") as fh, pytest.raises(RuntimeError,
                                                               match="PyTorch checkpoint"):
        ng.load(fh)


class _Planted:
    """What unpickling would run: it leaves a file behind."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_load_never_unpickles(tmp_path):
    planted = tmp_path / "ran"
    for name, protocol in (("evil.pt", 0), ("evil.pth", 2), ("evil.npz", 4),
                           ("evil.safetensors", 5)):
        (tmp_path / name).write_bytes(pickle.dumps(_Planted(str(planted)), protocol=protocol))
        with pytest.raises(RuntimeError, match="numbagrad does not unpickle"):
            ng.load(str(tmp_path / name))
    assert not planted.exists()


# ---- bounded loads: sizes a file declares -----------------------------------------------
def _npy_header(shape, descr="<f4"):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False,
                                               "shape": shape})
    return buf.getvalue()


def _structure_npy(node):
    text = json.dumps(node).encode()
    return _npy_header((len(text),), "|u1") + text


def _zip(path, members):
    """A zip written by hand, of (name, stored bytes) or (name, (deflate stream, size, crc))
    members: a deflated member is given compressed, so a bomb takes no time to make."""
    out, directory = bytearray(), bytearray()
    for name, data in members:
        name = name.encode()
        method, (raw, size, crc) = (8, data) if isinstance(data, tuple) else \
            (0, (data, len(data), zlib.crc32(data)))
        fields = (20, 0, method, 0, 0, crc, len(raw), size, len(name), 0)
        directory += struct.pack("<IH", 0x02014B50, 20) + struct.pack("<HHHHHIIIHH", *fields) \
            + struct.pack("<HHHII", 0, 0, 0, 0, len(out)) + name
        out += struct.pack("<I", 0x04034B50) + struct.pack("<HHHHHIIIHH", *fields) + name + raw
    out += directory + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                                   len(directory), len(out), 0)
    path.write_bytes(bytes(out))
    return str(path)


def _zeros_npy_deflated(mib):
    """A .npy of ``mib`` MiB of float32 zeros as a deflate stream of about 1 KB per MiB: one
    fully flushed 1 MiB block (it refers to nothing before it), repeated."""
    header = _npy_header(((mib << 20) // 4,))
    head = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = zlib.compressobj(9, zlib.DEFLATED, -15)
    zero = bytes(1 << 20)
    stream = head.compress(header) + head.flush(zlib.Z_FULL_FLUSH) + \
        (block.compress(zero) + block.flush(zlib.Z_FULL_FLUSH)) * mib + \
        zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    crc = zlib.crc32(header)
    for _ in range(mib):
        crc = zlib.crc32(zero, crc)
    return stream, len(header) + (mib << 20), crc


def _bomb(path, mib):
    """The path of an archive of ``mib`` MiB of zeros, and their deflated size."""
    zeros = _zeros_npy_deflated(mib)
    return _zip(path, [("a0.npy", zeros), ("__numbagrad_structure__.npy",
                                           _structure_npy({"t": "tensor", "i": 0}))]), \
        len(zeros[0])


def test_a_zip_bomb_is_refused_before_it_is_decompressed(tmp_path):
    path, deflated = _bomb(tmp_path / "bomb.npz", 256)  # 256 MiB in a file of 266 KB
    size = (tmp_path / "bomb.npz").stat().st_size
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(RuntimeError) as e:
            ng.load(path)
        elapsed, peak = time.perf_counter() - start, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(e.value) == (
        f"numbagrad.load: {path}: entry a0.npy declares 268,435,584 bytes once decompressed "
        f"({deflated:,} bytes in the file), more than max_bytes={(64 << 20) + 32 * size:,} "
        f"allows (the default: 64 MiB plus 32 times the file's {size:,} bytes). Pass a "
        "larger max_bytes= to load it from a trusted source")
    assert elapsed < 2 and peak < 8 << 20


def test_a_structure_that_expands_past_the_limit_is_refused(tmp_path):
    # 3 MB of JSON, which Python holds in ~40 MB, deflated into 8 KB
    text = json.dumps({"t": "list", "items": [{"t": "list", "items": []}] * 120_000},
                      separators=(",", ":"))
    path = str(tmp_path / "structure.npz")
    np.savez_compressed(path, __numbagrad_structure__=np.frombuffer(text.encode(), np.uint8))
    with pytest.raises(RuntimeError, match=r"structure.npz: entry __numbagrad_structure__.npy "
                                           r"declares 2,\d{3},\d{3} bytes once decompressed "
                                           r"\([\d,]+ bytes in the file\), which Python holds in "
                                           r"about 9\d,\d{3},\d{3}, more than max_bytes="):
        ng.load(path)
    assert ng.load(path, max_bytes=1 << 30) == [[]] * 120_000


def test_sizes_a_file_declares_must_be_backed_by_it(tmp_path):
    def stored(path, header, data):
        return _zip(tmp_path / path, [("a0.npy", header + data), (
            "__numbagrad_structure__.npy", _structure_npy({"t": "tensor", "i": 0}))])

    # 10^12 elements declared in a .npy header: refused before allocating (was MemoryError)
    path = stored("huge.npz", _npy_header((10**12,)), bytes(16))
    with pytest.raises(RuntimeError, match=r"huge.npz is not a file numbagrad.save wrote: entry "
                                           r"a0.npy declares shape \(1000000000000,\) of float32 "
                                           r"\(4,000,000,000,000 bytes\) but holds 16 bytes"):
        ng.load(path)
    # a zip entry declaring more bytes than the file holds
    raw = bytearray((tmp_path / stored("long.npz", _npy_header((4,)), bytes(16))).read_bytes())
    at = raw.index(b"PK\x01\x02")
    raw[at + 20:at + 28] = struct.pack("<II", 1 << 31, 1 << 31)
    (tmp_path / "long.npz").write_bytes(bytes(raw))
    with pytest.raises(RuntimeError, match=r"entry a0.npy declares 2,147,483,648 bytes at "
                                           r"offset 0, past the file's end \(\d{3} bytes\)"):
        ng.load(str(tmp_path / "long.npz"), max_bytes=1 << 40)
    # views must lie in their bytes and be of a tensor's dtype
    span = np.zeros(16, np.uint8)
    for view, why in ((dict(dtype="<f4", shape=[100], strides=[4]),
                       r"spans bytes \[0, 400\) of array a0, which holds 16"),
                      (dict(dtype="<f4", shape=[2], strides=[-8]),
                       r"spans bytes \[-8, 4\)"),
                      (dict(dtype="|O", shape=[2], strides=[8]), "dtype |O, which no tensor"),
                      (dict(dtype="<f4", shape=[10**12], strides=[0]),
                       r"a view in its structure declares shape \(1000000000000,\)")):
        path = _zip(tmp_path / "view.npz", [
            ("a0.npy", _npy_header((16,), "|u1") + span.tobytes()),
            ("__numbagrad_structure__.npy", _structure_npy({"t": "view", "i": 0, "offset": 0,
                                                            **view}))])
        with pytest.raises(RuntimeError, match=why):
            ng.load(path)


def test_max_bytes_raises_or_lowers_the_limit(tmp_path):
    path, _ = _bomb(tmp_path / "zeros.npz", 96)  # 96 MiB of zeros in 100 KB
    with pytest.raises(RuntimeError, match="more than max_bytes="):
        ng.load(path)
    zeros = ng.load(path, max_bytes=128 << 20)
    assert zeros.shape == (24 << 20,) and not zeros.numpy().any()
    # a file save wrote loads by default; a lower max_bytes refuses it, whatever its format
    sd = {"w": ng.arange(1000.0), "b": ng.ones(3)}
    for name in ("m.npz", "m.safetensors"):
        ng.save(sd, str(tmp_path / name))
        _same_state(ng.load(str(tmp_path / name)), sd)
        _same_state(ng.load(str(tmp_path / name), max_bytes=20_000), sd)
        with pytest.raises(RuntimeError, match=r"4,\d{3} bytes.*more than max_bytes=1,000 "
                                               r"allows\. Pass a larger"):
            ng.load(str(tmp_path / name), max_bytes=1000)
    with pytest.raises(TypeError, match="max_bytes must be"):
        ng.load(str(tmp_path / "m.npz"), max_bytes=-1)


# ---- tensors saved twice, and tensors sharing memory -------------------------------------
def _shared_round_trip(lib, save, load, path):
    w = lib.arange(12.0).reshape(3, 4)
    p = lib.nn.Parameter(lib.ones(3))
    save({"a": w, "b": w, "row": w[1], "t": w.t(), "d": w.detach(), "p": [p, p],
          "alone": lib.ones(2)}, path)
    x = load(path)
    x["a"].add_(100)
    return (x["a"] is x["b"], x["a"] is x["d"], x["p"][0] is x["p"][1],
            type(x["p"][0]).__name__, x["p"][0].requires_grad, x["row"].tolist(),
            x["t"].tolist(), x["d"].tolist(), x["alone"].tolist())


def test_a_tensor_saved_twice_loads_as_one_and_views_share_memory_as_in_torch(tmp_path, torch):
    ours = _shared_round_trip(ng, ng.save, ng.load, str(tmp_path / "ours.npz"))
    theirs = _shared_round_trip(torch, torch.save, lambda f: torch.load(f, weights_only=True),
                                str(tmp_path / "theirs.pt"))
    assert ours == theirs
    assert ours[:5] == (True, False, True, "Parameter", True)
    assert ours[5] == [104.0, 105.0, 106.0, 107.0]


def test_tied_weights_of_a_state_dict_load_sharing_memory(tmp_path, torch):
    def tied(lib, save, load, path):
        net = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Linear(3, 3))
        net[1].weight = net[0].weight
        save(net.state_dict(), path)
        x = load(path)
        x["0.weight"].zero_()
        return x["1.weight"].abs().sum().item(), x["0.bias"].abs().sum().item() > 0

    assert tied(ng, ng.save, ng.load, str(tmp_path / "ours.npz")) == \
        tied(torch, torch.save, torch.load, str(tmp_path / "theirs.pt")) == (0.0, True)


# ---- state_dicts to and from torch ------------------------------------------------------
def _outputs(net, x):
    net.eval()
    return net(x).detach().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_state_dicts_move_between_numbagrad_and_torch(torch, dtype):
    from numbagrad.utils.convert import from_torch_state_dict, to_torch_state_dict

    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 0}
    ours, theirs = _net(ng, getattr(ng, dtype)), _net(torch, getattr(torch, dtype))
    ours[1](ng.randn(6, 4, dtype=getattr(ng, dtype)) * 3 + 1)  # move the running statistics
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(dtype)

    converted = to_torch_state_dict(ours.state_dict())
    assert {k: str(v.dtype) for k, v in converted.items()} == \
        {k: str(v.dtype) for k, v in theirs.state_dict().items()}
    assert converted["1.num_batches_tracked"].dtype == torch.int64
    assert repr(theirs.load_state_dict(converted)) == "<All keys matched successfully>"
    np.testing.assert_allclose(_outputs(theirs, torch.from_numpy(x)),
                               _outputs(ours, ng.tensor(x)), **tol)

    other_ng, other_torch = _net(ng, getattr(ng, dtype)), _net(torch, getattr(torch, dtype))
    with torch.no_grad():
        for p in other_torch.parameters():
            p.mul_(-0.5)
    other_torch[1](torch.randn(6, 4, dtype=getattr(torch, dtype)))
    back = from_torch_state_dict(other_torch.state_dict())
    assert all(isinstance(v, ng.Tensor) for v in back.values())
    assert back["1.num_batches_tracked"].dtype is ng.int64
    assert repr(other_ng.load_state_dict(back)) == "<All keys matched successfully>"
    np.testing.assert_allclose(_outputs(other_ng, ng.tensor(x)),
                               _outputs(other_torch, torch.from_numpy(x)), **tol)


def test_conversion_walks_nested_checkpoints_and_copies(torch):
    from collections import OrderedDict

    from numbagrad.utils.convert import from_torch_state_dict, to_torch_state_dict

    w = ng.arange(3, dtype=ng.int32)
    ckpt = {"model": OrderedDict(w=w), "epoch": 3, "history": [ng.tensor(0.5), "note"],
            "pair": (ng.tensor([True]), None)}
    theirs = to_torch_state_dict(ckpt)
    assert isinstance(theirs["model"], OrderedDict) and theirs["epoch"] == 3
    assert theirs["model"]["w"].dtype == torch.int32 and theirs["history"][1] == "note"
    assert theirs["pair"][0].dtype == torch.bool and theirs["pair"][1] is None
    w.add_(1)
    assert theirs["model"]["w"].tolist() == [0, 1, 2]  # a copy
    again = from_torch_state_dict(theirs)
    assert again["model"]["w"].dtype is ng.int32 and isinstance(again["pair"], tuple)
    assert again["history"][0].tolist() == 0.5 and again["history"][0].shape == ()
    with pytest.raises(TypeError, match="bfloat16"):
        from_torch_state_dict({"x": torch.ones(1, dtype=torch.bfloat16)})


def test_a_torch_checkpoint_converted_once_then_loads(tmp_path, torch):
    """The conversion the refusal message gives, done as it says."""
    from safetensors.torch import save_file

    theirs = _net(torch, tied=False)
    torch.save(theirs.state_dict(), str(tmp_path / "model.pt"))
    save_file(torch.load(str(tmp_path / "model.pt"), weights_only=True),
              str(tmp_path / "model.safetensors"))
    ours = _net(ng, tied=False)
    assert repr(ours.load_state_dict(ng.load(str(tmp_path / "model.safetensors")))) == \
        "<All keys matched successfully>"
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(_outputs(ours, ng.tensor(x)),
                               _outputs(theirs, torch.from_numpy(x)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("op", ["mul", "add", "sub", "matmul"])
def test_an_ndarray_on_the_left_fails_as_in_torch(op, requires_grad):
    torch = pytest.importorskip("torch")
    errors = []
    for lib in (torch, ng):
        with pytest.raises(TypeError) as e:
            getattr(operator, op)(np.ones((2, 3)), lib.ones(3, requires_grad=requires_grad))
        errors.append(str(e.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("left, right", [
    ("np.ones(3)", "lib.ones(3)"),
    ("np.arange(1.0, 4.0)", "lib.tensor([2.0, 4.0, 8.0], dtype=lib.float32)"),
    ("np.arange(1.0, 4.0, dtype=np.float32)", "lib.tensor([2.0, 4.0, 8.0])"),
    ("np.array(2.0)", "lib.tensor([2.0, 4.0])"),
    ("np.arange(1, 4)", "lib.tensor([2, 4, 8])"),
    ("np.ones((2, 3))", "lib.ones(3)"),
    ("np.ones(2)", "lib.ones(3)"),
    ("np.ones(3)", "lib.ones(3, requires_grad=True)")])
def test_an_ndarray_divided_by_a_tensor_as_in_torch(left, right):
    """torch divides an ndarray by a tensor (NumPy computes reciprocal * ndarray and the
    result is wrapped as a Tensor), unlike its other operators with an ndarray on the left."""
    torch = pytest.importorskip("torch")

    def run(lib):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # torch's __array_wrap__
                r = eval(f"{left} / {right}", {"np": np, "lib": lib})
        except (TypeError, ValueError, RuntimeError) as e:
            return type(e), str(e)
        return type(r).__name__, str(r.dtype), r.requires_grad, r.numpy().tolist()
    assert run(ng) == run(torch)


@pytest.mark.parametrize("expr", [
    "t ** np.array([1.0, 3.0])", "t ** np.array(2.0)", "t ** np.array([1, 2], np.int32)",
    "t.double() ** np.array([1.0, 2.0], np.float32)", "tr ** np.array([1.0, 3.0])",
    "np.array([1.0, 3.0]) ** t", "np.array(2.0) ** t", "np.float64(2.0) ** t",
    "t < np.array([1.0, 3.0])", "np.array([1.0, 3.0]) >= t", "t <= np.array(1.0)",
    "tr > np.array([1.0, 3.0])", "t != np.array([1.0, 3.0])", "np.array([1.0, 3.0]) != t",
    "t == np.array([1.0, 2.0])", "np.array([1.0, 2.0]) == t", "t < np.float64(3.0)",
    "t.lt(t + 1)"])
def test_powers_and_comparisons_with_an_ndarray_as_in_torch(expr):
    """torch raises a tensor to an ndarray's powers through NumPy (its promotion, a Tensor
    result; a tensor requiring grad cannot go to NumPy), refuses an ndarray base and the
    ordering comparisons with an ndarray (Python's TypeError; ``!=`` falls back to
    identity), and compares ``==`` element by element."""
    torch = pytest.importorskip("torch")

    def run(lib):
        t, tr = lib.tensor([2.0, 2.0]), lib.tensor([2.0, 2.0], requires_grad=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # torch's __array_wrap__
                r = eval(expr, {"np": np, "t": t, "tr": tr})  # noqa: S307 - the test's own
        except (TypeError, RuntimeError) as e:
            return type(e), str(e)
        if not hasattr(r, "numpy"):
            return type(r).__name__, r
        return type(r).__name__, str(r.dtype), r.requires_grad, r.numpy().tolist()
    assert run(ng) == run(torch)

"""numbagrad.utils.data against torch.utils.data: datasets, random_split sizes, samplers,
DataLoader batches (shapes, dtypes, values when the order is deterministic, drop_last, len),
default_collate's structure, torch's error messages; shuffling checked as permutations and
for reproducibility; the TensorDataset array fast path against the per-sample path."""

import collections
import time
import warnings

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.utils import data as ng_data

torch = pytest.importorskip("torch")
from torch.utils import data as torch_data  # noqa: E402

LIBS = ((ng, ng_data), (torch, torch_data))
Point = collections.namedtuple("Point", ["x", "y"])


def both(fn):
    """``fn(lib, data)`` for numbagrad and torch; an exception becomes 'Type: message'."""
    out = []
    for lib, data in LIBS:
        try:
            out.append(fn(lib, data))
        except Exception as e:  # noqa: BLE001 - the error itself is the result compared
            out.append(f"{type(e).__name__}: {e}")
    return out


def same(fn):
    ours, theirs = both(fn)
    assert ours == theirs
    return ours


def sig(x):
    """A library-independent picture of a (collated) value: structure, types, dtypes, values."""
    if isinstance(x, (ng.Tensor, torch.Tensor)):
        return ("Tensor", tuple(x.shape), str(x.dtype), x.tolist(), x.requires_grad)
    if isinstance(x, dict):
        return (type(x).__name__, {k: sig(v) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, tuple(sig(v) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [sig(v) for v in x])
    return (type(x).__name__, x)


def _xy(lib, n=10, d=3):
    x = lib.arange(n * d, dtype=lib.float32).reshape(n, d)
    y = lib.arange(n) % 3
    return x, y


# ---- datasets --------------------------------------------------------------------------------
def test_tensor_dataset():
    def run(lib, data):
        x, y = _xy(lib)
        ds = data.TensorDataset(x, y)
        return len(ds), sig(ds[3]), sig(ds[-1]), sig(ds[2:4]), sig(ds[[0, 5]])
    same(run)
    msg = same(lambda lib, data: data.TensorDataset(lib.zeros(3, 2), lib.zeros(4)))
    assert msg == "AssertionError: Size mismatch between tensors"


def test_subset_concat_stack_datasets():
    def run(lib, data):
        x, y = _xy(lib)
        ds = data.TensorDataset(x, y)
        sub = data.Subset(ds, [7, 2, 5])
        cat = data.ConcatDataset([ds, sub, [100, 101]])
        cat2 = ds + sub
        st = data.StackDataset(a=sub, b=[1, 2, 3])
        st2 = data.StackDataset(sub, [1, 2, 3])
        out = [len(sub), sig(sub[1]), sig(sub[-1]), len(cat), sig(cat[12]), cat[-1], cat[-2],
               cat.cumulative_sizes, len(cat2), sig(cat2[11]), len(st), sig(st[2]),
               sig(st2[0]), sig(st2.__getitems__([0, 2])), sig(st.__getitems__([1]))]
        return out
    same(run)
    assert "should not exceed" in same(lambda lib, data: data.ConcatDataset([[1, 2]])[-3])
    assert "empty" in same(lambda lib, data: data.ConcatDataset([]))
    same(lambda lib, data: data.StackDataset([1, 2], [1]))
    same(lambda lib, data: data.StackDataset())
    same(lambda lib, data: data.StackDataset([1], a=[1]))
    same(lambda lib, data: data.Dataset()[0])

    def iterable_in_concat(lib, data):
        class It(data.IterableDataset):
            def __iter__(self):
                return iter([1, 2])
        return data.ConcatDataset([[1], It()])
    assert "IterableDataset" in same(iterable_in_concat)


def test_subset_subclass_must_override_getitems():
    def run(lib, data):
        class Bad(data.Subset):
            def __getitem__(self, idx):
                return 0
        Bad([1, 2], [0])
    assert same(run).startswith("NotImplementedError: Bad overrides __getitem__")


RANDOM_SPLIT_CASES = [
    (10, [3, 7]), (10, [0.3, 0.7]), (11, [0.5, 0.5]), (10, [0.1, 0.1, 0.8]), (7, [1 / 3] * 3),
    (100, [0.6, 0.2, 0.2]), (5, [0.0, 1.0]), (3, [0.25, 0.25, 0.25, 0.25]), (10, [3, 6]),
    (10, [0.5, 0.6]), (10, [-0.1, 1.1]), (10, [0.5, 0.4]), (0, [0, 0]), (10, [10]),
]


@pytest.mark.parametrize("n,lengths", RANDOM_SPLIT_CASES)
def test_random_split_sizes_match_torch(n, lengths):
    def run(lib, data):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            parts = data.random_split(list(range(n)), lengths)
        everything = sorted(i for p in parts for i in p.indices)
        assert everything == list(range(n))
        return ([len(p) for p in parts], [type(p).__name__ for p in parts],
                [(str(x.message), x.filename == __file__) for x in w])
    same(run)


def test_random_split_generator():
    ds = list(range(50))
    a = ng_data.random_split(ds, [0.5, 0.5], generator=np.random.default_rng(1))
    b = ng_data.random_split(ds, [0.5, 0.5], generator=np.random.default_rng(1))
    c = ng_data.random_split(ds, [0.5, 0.5], generator=np.random.default_rng(2))
    assert a[0].indices == b[0].indices and a[0].indices != c[0].indices
    ng.manual_seed(5)
    d = ng_data.random_split(ds, [25, 25])
    ng.manual_seed(5)
    assert ng_data.random_split(ds, [25, 25])[1].indices == d[1].indices
    assert d[0].indices != list(range(25))  # shuffled
    assert [d[0][i] for i in range(3)] == d[0].indices[:3]


# ---- DataLoader over TensorDataset -----------------------------------------------------------
@pytest.mark.parametrize("n,batch_size,drop_last", [(10, 1, False), (10, 3, False),
                                                    (10, 3, True), (10, 5, True),
                                                    (10, 10, False), (10, 11, False),
                                                    (10, 11, True), (1, 4, False)])
def test_loader_batches_match_torch(n, batch_size, drop_last):
    def run(lib, data):
        x, y = _xy(lib, n)
        dl = data.DataLoader(data.TensorDataset(x, y, x.double()), batch_size=batch_size,
                             drop_last=drop_last)
        batches = [sig(b) for b in dl]
        return len(dl), len(batches), batches, len(iter(dl))
    same(run)


def test_loader_over_subset_and_concat_match_torch():
    def run(lib, data):
        x, y = _xy(lib, 20)
        ds = data.TensorDataset(x, y)
        sub = data.Subset(data.Subset(ds, list(range(19, -1, -1))), [0, 3, 5, -1, 2, 7, 8])
        out = [sig(b) for b in data.DataLoader(sub, batch_size=3)]
        out += [sig(b) for b in data.DataLoader(data.Subset(ds, lib.tensor([4, 1, 9])),
                                                batch_size=2)]
        out += [sig(b) for b in data.DataLoader(ds + sub, batch_size=8, drop_last=True)]
        return out
    same(run)


def test_loader_subset_index_error_matches_torch_kind():
    def run(lib, data):
        x, y = _xy(lib, 5)
        return [b for b in data.DataLoader(data.Subset(data.TensorDataset(x, y), [0, 9]))]
    ours, theirs = both(run)
    assert ours.startswith("IndexError") and theirs.startswith("IndexError")


def test_shuffle_is_a_fresh_permutation_each_epoch():
    x = ng.arange(100).reshape(100, 1)
    dl = ng_data.DataLoader(ng_data.TensorDataset(x), batch_size=7, shuffle=True)
    epochs = []
    for _ in range(3):
        batches = [b[0] for b in dl]
        assert [tuple(b.shape) for b in batches] == [(7, 1)] * 14 + [(2, 1)]
        order = np.concatenate([b.numpy().ravel() for b in batches])
        assert sorted(order.tolist()) == list(range(100))
        epochs.append(order)
    assert not np.array_equal(epochs[0], epochs[1]) and not np.array_equal(epochs[1], epochs[2])
    assert not np.array_equal(epochs[0], np.arange(100))

    dl = ng_data.DataLoader(ng_data.TensorDataset(x), batch_size=7, shuffle=True, drop_last=True)
    order = np.concatenate([b[0].numpy().ravel() for b in dl])
    assert len(dl) == 14 and len(order) == 98 and len(set(order.tolist())) == 98


def test_shuffle_generators_reproduce():
    x = ng.arange(50)

    def epoch(**kw):
        dl = ng_data.DataLoader(ng_data.TensorDataset(x), batch_size=8, shuffle=True, **kw)
        return np.concatenate([b[0].numpy() for b in dl])

    assert np.array_equal(epoch(generator=np.random.default_rng(3)),
                          epoch(generator=np.random.default_rng(3)))
    assert not np.array_equal(epoch(generator=np.random.default_rng(3)),
                              epoch(generator=np.random.default_rng(4)))
    ng.manual_seed(11)
    a = epoch()
    ng.manual_seed(11)
    assert np.array_equal(a, epoch())
    g = np.random.default_rng(0)
    dl = ng_data.DataLoader(ng_data.TensorDataset(x), batch_size=50, shuffle=True, generator=g)
    assert not np.array_equal(next(iter(dl))[0].numpy(), next(iter(dl))[0].numpy())
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        list(ng_data.DataLoader([1, 2], shuffle=True, generator=3))


def test_fast_path_indexes_arrays_once_and_equals_per_sample_path(monkeypatch):
    x = ng.randn(40, 2, 3)
    y = ng.randint(0, 5, (40,))
    ds = ng_data.Subset(ng_data.TensorDataset(x, y), list(range(39, 4, -1)))
    calls = []
    orig = ng_data.TensorDataset.__getitem__
    monkeypatch.setattr(ng_data.TensorDataset, "__getitem__",
                        lambda self, i: calls.append(i) or orig(self, i))
    for shuffle in (False, True):
        fast = ng_data.DataLoader(ds, batch_size=6, shuffle=shuffle,
                                  generator=np.random.default_rng(9))
        slow = ng_data.DataLoader(ds, batch_size=6, shuffle=shuffle,
                                  generator=np.random.default_rng(9),
                                  collate_fn=lambda b: ng_data.default_collate(b))
        fast_batches = list(fast)
        assert calls == []
        slow_batches = list(slow)
        assert len(calls) == 35
        calls.clear()
        assert [sig(b) for b in fast_batches] == [sig(b) for b in slow_batches]
        xb = fast_batches[0][0]
        xb._array()[...] = 0  # batches are copies, not views of the dataset
        assert not np.all(x.numpy() == 0)


def test_requires_grad_dataset_uses_stack_like_torch():
    def run(lib, data):
        x = lib.ones(4, 2, requires_grad=True)
        xb, = next(iter(data.DataLoader(data.TensorDataset(x), batch_size=3)))
        xb.sum().backward()
        return xb.grad_fn.name(), x.grad.tolist()
    same(run)


# ---- default_collate structure -----------------------------------------------------------------
def _samples(lib, i):
    arr32 = np.full((2,), i, np.float32)
    return {
        "tensor": lib.full((2, 2), float(i)),
        "int_tensor": lib.tensor([i, i + 1]),
        "scalar_tensor": lib.tensor(float(i)),
        "float": i + 0.5,
        "int": i,
        "bool": i % 2 == 0,
        "str": f"s{i}",
        "bytes": b"b",
        "np_f32": arr32,
        "np_f64": arr32.astype(np.float64),
        "np_i64": np.arange(3) + i,
        "np_scalar_f64": np.float64(i),
        "np_scalar_f32": np.float32(i),
        "np_scalar_i32": np.int32(i),
        "np_bool": np.bool_(i % 2),
        "tuple": (i, float(i), lib.tensor([i])),
        "list": [i, [i, i], {"k": i}],
        "namedtuple": Point(i, lib.tensor(float(i))),
        "dict": {"a": i, "b": {"c": (float(i), "x")}},
        "ordered": collections.OrderedDict(z=i, a=float(i)),
        "none_str_mix": ("a", 1),
    }


@pytest.mark.parametrize("key", list(_samples(ng, 0)))
def test_default_collate_structure_matches_torch(key):
    same(lambda lib, data: sig(data.default_collate([_samples(lib, i)[key] for i in range(3)])))
    same(lambda lib, data: [sig(b) for b in data.DataLoader(
        [_samples(lib, i)[key] for i in range(5)], batch_size=2)])


def test_default_collate_whole_samples_match_torch():
    same(lambda lib, data: sig(data.default_collate([_samples(lib, i) for i in range(4)])))
    same(lambda lib, data: [sig(b) for b in data.DataLoader(
        [_samples(lib, i) for i in range(5)], batch_size=2, drop_last=True)])


COLLATE_ERRORS = {
    "uneven": lambda lib, data: data.default_collate([[1, 2], [1]]),
    "object": lambda lib, data: data.default_collate([object(), object()]),
    "np_str": lambda lib, data: data.default_collate([np.array(["a"]), np.array(["b"])]),
    "np_obj": lambda lib, data: data.default_collate([np.array([{}], dtype=object)] * 2),
    "shapes": lambda lib, data: data.default_collate([lib.zeros(2), lib.zeros(3)]),
    "none": lambda lib, data: data.default_collate([None, None]),
}


@pytest.mark.parametrize("case", list(COLLATE_ERRORS))
def test_default_collate_errors_match_torch(case):
    assert "Error" in same(COLLATE_ERRORS[case])


def test_collate_dtype_promotion_and_unsupported_numpy_dtype():
    same(lambda lib, data: sig(data.default_collate([lib.zeros(2), lib.ones(2,
                                                                         dtype=lib.float64)])))
    same(lambda lib, data: sig(data.default_collate([lib.zeros(2, dtype=lib.int64),
                                                     lib.ones(2)])))
    with pytest.raises(TypeError, match="uint16"):  # numbagrad has no uint16 (torch has)
        ng_data.default_collate([np.zeros(2, np.uint16)] * 2)


def test_default_convert_matches_torch():
    items = lambda lib: [np.arange(3), np.float32(2), {"a": np.ones(2)}, (np.int64(1), "s"),  # noqa: E731
                         [np.zeros(1), 2], Point(np.ones(1), 3), np.array(["x"]), 1.5]
    same(lambda lib, data: [sig(data.default_convert(v)) for v in items(lib)])
    same(lambda lib, data: [sig(b) for b in data.DataLoader(items(lib), batch_size=None)])


# ---- samplers and DataLoader arguments -----------------------------------------------------------
def test_samplers_match_torch():
    def run(lib, data):
        ds = list(range(10))
        seq = data.SequentialSampler(ds)
        bs = data.BatchSampler(seq, 3, False)
        bs_drop = data.BatchSampler(seq, 3, True)
        bs_range = data.BatchSampler(range(5), 2, False)
        rs = data.RandomSampler(ds)
        rs_more = data.RandomSampler(ds, num_samples=25)
        rs_rep = data.RandomSampler(ds, replacement=True, num_samples=37)
        srs = data.SubsetRandomSampler([3, 5, 7])
        wrs = data.WeightedRandomSampler([0.1, 0, 0.9], 20)
        return (list(seq), len(seq), list(bs), len(bs), list(bs_drop), len(bs_drop),
                list(bs_range), len(rs), sorted(rs), len(rs_more), len(list(rs_more)),
                sorted(set(rs_more)), len(rs_rep), len(list(rs_rep)),
                all(0 <= i < 10 for i in rs_rep), len(srs), sorted(srs), len(wrs),
                1 not in list(wrs), len(list(wrs)))
    same(run)


SAMPLER_ERRORS = {
    "batch_size0": lambda lib, data: data.BatchSampler([1], 0, False),
    "batch_size_bool": lambda lib, data: data.BatchSampler([1], True, False),
    "batch_size_float": lambda lib, data: data.BatchSampler([1], 2.0, False),
    "drop_last": lambda lib, data: data.BatchSampler([1], 2, 1),
    "replacement": lambda lib, data: data.RandomSampler([1], replacement=1),
    "num_samples": lambda lib, data: data.RandomSampler([1], num_samples=0),
    "num_samples_empty": lambda lib, data: data.RandomSampler([]),
    "w_num_samples": lambda lib, data: data.WeightedRandomSampler([1.0], 0),
    "w_replacement": lambda lib, data: data.WeightedRandomSampler([1.0], 1, replacement=0),
    "w_shape": lambda lib, data: data.WeightedRandomSampler([[1.0]], 1),
}


@pytest.mark.parametrize("case", list(SAMPLER_ERRORS))
def test_sampler_errors_match_torch(case):
    assert "Error" in same(SAMPLER_ERRORS[case])


def test_loader_with_sampler_and_batch_sampler_args():
    def run(lib, data):
        x, y = _xy(lib, 11)
        ds = data.TensorDataset(x, y)
        seq = data.SequentialSampler(ds)
        a = data.DataLoader(ds, batch_size=4, sampler=seq)
        b = data.DataLoader(ds, batch_sampler=data.BatchSampler(seq, 5, True))
        c = data.DataLoader(ds, batch_sampler=[[3, 1], [0], [10, 2, 4]])
        d = data.DataLoader(ds, sampler=[5, 0, 2], batch_size=2)
        e = data.DataLoader(ds, batch_size=None)
        r = data.DataLoader(ds, sampler=data.RandomSampler(ds, num_samples=20), batch_size=6)
        return ([sig(v) for v in a], len(a), [sig(v) for v in b], len(b), b.batch_size,
                b.drop_last, [sig(v) for v in c], len(c), [sig(v) for v in d], len(d),
                sig(next(iter(e))), len(e), len(r), [len(v[0]) for v in r])
    same(run)


LOADER_ERRORS = {
    "num_workers": lambda lib, data: data.DataLoader([1], num_workers=-1),
    "timeout": lambda lib, data: data.DataLoader([1], timeout=-1),
    "prefetch": lambda lib, data: data.DataLoader([1], prefetch_factor=2),
    "persistent": lambda lib, data: data.DataLoader([1], persistent_workers=True),
    "sampler_shuffle": lambda lib, data: data.DataLoader([1], sampler=[0], shuffle=True),
    "batch_sampler_bs": lambda lib, data: data.DataLoader([1], batch_sampler=[[0]],
                                                          batch_size=2),
    "batch_sampler_drop": lambda lib, data: data.DataLoader([1], batch_sampler=[[0]],
                                                            drop_last=True),
    "none_drop_last": lambda lib, data: data.DataLoader([1], batch_size=None, drop_last=True),
    "bad_batch_size": lambda lib, data: data.DataLoader([1], batch_size=0),
    "mp_context": lambda lib, data: data.DataLoader([1], multiprocessing_context="spawn"),
    "set_batch_size": lambda lib, data: setattr(data.DataLoader([1]), "batch_size", 2),
    "set_dataset": lambda lib, data: setattr(data.DataLoader([1]), "dataset", [2]),
}


@pytest.mark.parametrize("case", list(LOADER_ERRORS))
def test_loader_errors_match_torch(case):
    assert "Error" in same(LOADER_ERRORS[case])


def test_loader_attributes_match_torch():
    def run(lib, data):
        dl = data.DataLoader([1, 2, 3], batch_size=2, shuffle=True)
        dl.num_workers = 0  # settable, unlike batch_size
        return (dl.batch_size, dl.drop_last, type(dl.sampler).__name__,
                type(dl.batch_sampler).__name__, dl.collate_fn.__name__, dl.num_workers,
                data.DataLoader([1], batch_size=None).collate_fn.__name__,
                data.get_worker_info())
    same(run)


def _iterable(data, n, with_len=True):
    class Numbers(data.IterableDataset):
        def __iter__(self):
            return iter(float(i) for i in range(n))

    class Sized(Numbers):
        def __len__(self):
            return n
    return Sized() if with_len else Numbers()


@pytest.mark.parametrize("batch_size,drop_last", [(3, False), (3, True), (None, False),
                                                  (10, False), (1, True)])
def test_iterable_dataset_matches_torch(batch_size, drop_last):
    def run(lib, data):
        dl = data.DataLoader(_iterable(data, 7), batch_size=batch_size, drop_last=drop_last)
        chained = data.DataLoader(_iterable(data, 2) + _iterable(data, 3), batch_size=batch_size)
        return len(dl), [sig(b) for b in dl], [sig(b) for b in chained], len(chained)
    same(run)
    assert "shuffle" in same(lambda lib, data: data.DataLoader(_iterable(data, 3), shuffle=True))
    assert "sampler" in same(lambda lib, data: data.DataLoader(_iterable(data, 3), sampler=[0]))
    same(lambda lib, data: len(data.DataLoader(_iterable(data, 3, with_len=False))))


def test_num_workers_runs_in_process():
    x, y = _xy(ng, 20)
    ds = ng_data.TensorDataset(x, y)
    a = ng_data.DataLoader(ds, batch_size=6, num_workers=2, prefetch_factor=4,
                           persistent_workers=True, worker_init_fn=lambda i: 1 / 0)
    b = ng_data.DataLoader(ds, batch_size=6)
    assert a.prefetch_factor == 4 and len(a) == len(b) == 4
    assert [sig(v) for v in a] == [sig(v) for v in b]
    assert ng_data.DataLoader(ds, num_workers=1).prefetch_factor == 2


def test_custom_dataset_and_getitems_match_torch():
    def run(lib, data):
        class Squares(data.Dataset):
            def __len__(self):
                return 6

            def __getitem__(self, i):
                return {"x": lib.tensor([float(i)]), "y": i * i}

        class Batched(Squares):
            def __getitems__(self, idx):
                return [{"x": lib.tensor([-1.0]), "y": i} for i in idx]

        out = [sig(b) for b in data.DataLoader(Squares(), batch_size=4)]
        out += [sig(b) for b in data.DataLoader(Batched(), batch_size=4)]
        out += [sig(b) for b in data.DataLoader(data.Subset(Batched(), [5, 4]), batch_size=4)]
        return out
    same(run)


def test_fast_path_is_fast():
    x = ng.randn(60_000, 784)
    y = ng.randint(0, 10, (60_000,))
    dl = ng_data.DataLoader(ng_data.TensorDataset(x, y), batch_size=64, shuffle=True)
    start = time.perf_counter()
    n = sum(1 for _ in dl)
    assert n == len(dl) == 938
    assert time.perf_counter() - start < 2.0  # about 0.05 s; per-sample stacking takes ~25 s

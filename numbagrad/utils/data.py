# Over 600 lines: torch.utils.data's public names in one module, which the API reference
# renders as one page (a package of re-exports would document each name twice).
"""numbagrad.utils.data: torch.utils.data's datasets, samplers, collation and DataLoader.

Differences from torch, named rather than hidden:

* No worker processes. ``num_workers > 0`` is accepted (with torch's argument checks) and
  loads in the calling process, in order; ``worker_init_fn`` is not called and
  ``get_worker_info()`` returns None, so an IterableDataset is not split across workers
  (it is read once, as with ``num_workers=0``). ``pin_memory``, ``timeout`` and
  ``multiprocessing_context`` are accepted and have no effect.
* Random order is torch's: shuffling, samplers and random_split draw from a
  ``numbagrad.Generator`` (``generator=``) or the default one (seeded by
  ``numbagrad.manual_seed``) as torch does, so a seed gives torch's order. A
  ``numpy.random.Generator`` is accepted too, and gives its own order.
* Batches are numbagrad Tensors, so NumPy dtypes numbagrad lacks (uint8, float16, ...) are
  refused by the default collate with numbagrad's conversion error.
* Fast path: with the default collate, a DataLoader over a TensorDataset (or Subsets of
  one) whose tensors do not require grad makes each batch by indexing the underlying
  NumPy arrays once (a slice copy for sequential batches, ``np.take`` for shuffled ones),
  not by stacking per-sample tensors. The result is what torch's default_collate gives.
"""

import bisect
import collections.abc
import copy
import itertools
import math
import re
import warnings

import numpy as np

from .. import dtypes
from ..core import torch_rng
from ..creation_random import multinomial
from ..factories import Generator, _engine, as_tensor, tensor
from ..ops.shape.join import stack
from ..tensor import Tensor, _make

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
    "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
    "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
    "default_collate", "default_convert", "get_worker_info", "random_split",
]


def _torch_engine(generator):
    """The torch_rng engine to draw from (``generator``'s or the default generator's, looked
    up at draw time so that ``manual_seed`` between epochs takes effect), or None for a
    NumPy generator."""
    if generator is None or isinstance(generator, Generator):
        return _engine(generator)
    _numpy_generator(generator)  # its type check
    return None


def _randperm(generator, n):
    eng = _torch_engine(generator)
    if eng is None:
        return _numpy_generator(generator).permutation(n)
    return torch_rng.randperm(eng, n)


def _numpy_generator(generator):
    """A NumPy generator given as ``generator`` (or the one a wrapper exposes)."""
    if isinstance(generator, np.random.Generator):
        return generator
    inner = getattr(generator, "_numpy_generator", None)  # a wrapper exposing its generator
    if isinstance(inner, np.random.Generator):
        return inner
    raise TypeError("generator must be a numpy.random.Generator or None, got "
                    f"{type(generator).__name__}")


def get_worker_info():
    """Always None: numbagrad's DataLoader loads in the calling process."""
    return None


# ---- datasets --------------------------------------------------------------------------------
class Dataset:
    """A map-style dataset: ``__getitem__`` (and usually ``__len__``)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])

    def __class_getitem__(cls, item):  # Dataset[int] in annotations, as torch's Generic
        return cls


class IterableDataset(Dataset):
    """An iterable-style dataset: ``__iter__``."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are tuples of the tensors' rows along dimension 0."""

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Samples are tuples (positional datasets) or dicts (keyword datasets) of the datasets'
    samples at the same index."""

    def __init__(self, *args, **kwargs):
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                                 "``kwargs``) like input/output, but both types are given.")
            self._length = len(args[0])
            if any(self._length != len(dataset) for dataset in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(dataset) for dataset in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices):
        items = self.datasets.items() if isinstance(self.datasets, dict) else \
            enumerate(self.datasets)
        columns = {}
        for k, dataset in items:
            if callable(getattr(dataset, "__getitems__", None)):
                col = dataset.__getitems__(indices)
                if len(col) != len(indices):
                    raise ValueError("Nested dataset's output size mismatch. Expected "
                                     f"{len(indices)}, got {len(col)}")
            else:
                col = [dataset[idx] for idx in indices]
            columns[k] = col
        if isinstance(self.datasets, dict):
            return [{k: col[i] for k, col in columns.items()} for i in range(len(indices))]
        return [tuple(col[i] for col in columns.values()) for i in range(len(indices))]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The concatenation of map-style datasets."""

    @staticmethod
    def cumsum(sequence):
        """The running totals of the datasets' lengths (where each one's indices end).

        Args:
            sequence: the datasets (anything with a length), in order.

        Returns:
            A list of ints, one per dataset.
        """
        r, s = [], 0
        for e in sequence:
            n = len(e)
            r.append(n + s)
            s += n
        return r

    def __init__(self, datasets):
        super().__init__()
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        if dataset_idx == 0:
            sample_idx = idx
        else:
            sample_idx = idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """The chaining of iterable-style datasets."""

    def __init__(self, datasets):
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        if (type(self).__getitem__ is not Subset.__getitem__
                and type(self).__getitems__ is Subset.__getitems__):
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. When "
                "subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\ndef __getitems__(self, indices):\n    return "
                "[self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping Subsets of the given lengths, or fractions of
    its length (torch's rounding: floors, then one more each round-robin)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _randperm(generator, sum(lengths)).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]


# ---- samplers --------------------------------------------------------------------------------
class Sampler:
    """Iterates over indices (or lists of indices) of a dataset."""

    def __iter__(self):
        raise NotImplementedError

    def __class_getitem__(cls, item):
        return cls


class SequentialSampler(Sampler):
    """The indices 0, 1, ..., len(data_source) - 1, in order.

    Same as ``torch.utils.data.SequentialSampler``.

    Args:
        data_source: the dataset (anything with a length).
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation (or ``num_samples`` draws with replacement) of the indices."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        """How many indices one pass yields: ``num_samples`` if given, else the dataset's length."""
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def _index_array(self):
        """This epoch's indices as one int64 array (what __iter__ yields)."""
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            # torch seeds a new generator from one int64 draw of the default one per epoch
            seed = int(torch_rng.random_default(_engine(), 1, np.int64)[0])
            generator = Generator().manual_seed(seed)
        eng = _torch_engine(generator)
        if eng is None:
            gen = _numpy_generator(generator)
            if self.replacement:
                return gen.integers(0, n, self.num_samples, dtype=np.int64)
            parts = [gen.permutation(n) for _ in range(self.num_samples // n)]
            parts.append(gen.permutation(n)[:self.num_samples % n])
            return np.concatenate(parts).astype(np.int64, copy=False)
        if self.replacement:  # torch's randint(n) in blocks of 32: the same stream
            return torch_rng.random_from_to(eng, self.num_samples, 0, n)
        parts = [torch_rng.randperm(eng, n) for _ in range(self.num_samples // n)]
        parts.append(torch_rng.randperm(eng, n)[:self.num_samples % n])
        return np.concatenate(parts)

    def __iter__(self):
        yield from self._index_array().tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _randperm(self.generator, len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = np.asarray(weights._data if isinstance(weights, Tensor) else weights,
                       dtype=np.float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = _make(w)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        w = self.weights._array()
        if not self.replacement and self.num_samples > np.count_nonzero(w):
            raise RuntimeError("invalid multinomial distribution (with replacement=False, "
                               "not enough non-negative category to sample)")
        if _torch_engine(self.generator) is not None:
            yield from multinomial(self.weights, self.num_samples, self.replacement,
                                   generator=self.generator).tolist()
            return
        gen = _numpy_generator(self.generator)
        yield from gen.choice(len(w), self.num_samples, replace=self.replacement,
                              p=w / w.sum()).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            args = [sampler_iter] * self.batch_size
            for batch_droplast in zip(*args):
                yield [*batch_droplast]
        else:
            batch = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size

    def _fast_batches(self):
        """The batches as slices / int64 arrays, for the DataLoader's array path; None when
        this sampler (or its sampler) is a subclass or another kind."""
        if type(self) is not BatchSampler:
            return None
        kind = type(self.sampler)
        if kind is SequentialSampler:
            n, order = len(self.sampler), None
        elif kind is RandomSampler:
            order = self.sampler._index_array()
            n = len(order)
        else:
            return None
        bs = self.batch_size
        stop = n - n % bs if self.drop_last else n

        def batches():
            for i in range(0, stop, bs):
                j = min(i + bs, n)
                yield slice(i, j) if order is None else order[i:j]
        return batches()


class _InfiniteConstantSampler(Sampler):
    def __iter__(self):
        while True:
            yield None


# ---- collation -------------------------------------------------------------------------------
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, "
                                  "numbers, dicts or lists; found {}")


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    return as_tensor(x)


def default_convert(data):
    """Convert NumPy arrays and scalars (also inside mappings and sequences) to Tensors."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    elif (elem_type.__module__ == "numpy" and elem_type.__name__ != "str_"
          and elem_type.__name__ != "string_"):
        if (elem_type.__name__ == "ndarray"
                and np_str_obj_array_pattern.search(data.dtype.str) is not None):
            return data
        return _as_tensor(data)
    elif isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    elif isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    elif isinstance(data, tuple):
        return [default_convert(d) for d in data]
    elif isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """torch's generic collate: ``collate_fn_map`` handles leaf types (exact type first, then
    isinstance in insertion order); mappings, namedtuples and sequences recurse."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: collate([d[key] for d in batch],
                                           collate_fn_map=collate_fn_map) for key in elem})
                return clone
            return elem_type({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                              for key in elem})
        except TypeError:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem}
    elif isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    elif isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map)
                              for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    dt, shape = elem.dtype, np.shape(elem._data)
    if all(isinstance(t, Tensor) and not t._requires_grad and t.dtype is dt
           and np.shape(t._data) == shape for t in batch):
        return _make(np.stack([t._data for t in batch]))  # one copy, no graph to record
    return stack(list(batch), 0)  # records StackBackward0; torch's errors and promotion


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([_as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    arr = np.array(batch)
    dtypes.from_numpy_dtype(arr.dtype)  # numbagrad's error for dtypes it lacks
    return _make(arr)


def collate_float_fn(batch, *, collate_fn_map=None):
    return tensor(batch, dtype=dtypes.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {Tensor: collate_tensor_fn}
default_collate_fn_map[np.ndarray] = collate_numpy_array_fn
default_collate_fn_map[np.bool_, np.number, np.object_] = collate_numpy_scalar_fn
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[str] = collate_str_fn
default_collate_fn_map[bytes] = collate_str_fn


def default_collate(batch):
    """Stack a list of samples into a batch as torch's default_collate does: Tensors and
    NumPy arrays stacked (a new leading dimension), Python floats to float64 and ints to
    int64 tensors, str/bytes kept as lists, mappings / namedtuples / sequences collated
    field by field (tuples become lists)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)


# ---- the array fast path ---------------------------------------------------------------------
def _array_plan(dataset):
    """For a TensorDataset, or Subsets of one, whose tensors do not require grad: a function
    from a batch (slice or int64 array of positions) to the collated batch, made by indexing
    the arrays once. None when the dataset is anything else."""
    index_map = None
    ds = dataset
    while True:
        cls = type(ds)
        if (isinstance(ds, Subset) and cls.__getitem__ is Subset.__getitem__
                and cls.__getitems__ is Subset.__getitems__):
            idx = ds.indices
            idx = np.asarray(idx._data if isinstance(idx, Tensor) else idx)
            if idx.ndim != 1 or (idx.dtype.kind not in "iu" and idx.size):
                return None
            idx = idx.astype(np.int64, copy=False)
            index_map = idx if index_map is None else idx[index_map]
            ds = ds.dataset
            continue
        if (isinstance(ds, TensorDataset) and cls.__getitem__ is TensorDataset.__getitem__
                and getattr(cls, "__getitems__", None) is None):
            tensors = ds.tensors
            if not all(type(t) is Tensor and not t._requires_grad and np.ndim(t._data) >= 1
                       for t in tensors):
                return None
            arrays = [t._array() for t in tensors]
            break
        return None

    if index_map is None:
        def take(b):
            if isinstance(b, slice):
                return [_make(a[b].copy()) for a in arrays]
            return [_make(np.take(a, b, axis=0)) for a in arrays]
    else:
        n = len(arrays[0])
        if index_map.size and (index_map.max() >= n or index_map.min() < -n):
            return None  # the per-sample path raises torch's IndexError at that sample

        def take(b):
            rows = index_map[b]
            return [_make(np.take(a, rows, axis=0)) for a in arrays]
    return take


# ---- DataLoader ------------------------------------------------------------------------------
class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems:
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = (auto_collation, collate_fn,
                                                                drop_last)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class _DataLoaderIter:
    """One pass over a DataLoader (torch's _SingleProcessDataLoaderIter)."""

    def __init__(self, loader):
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._index_sampler = loader._index_sampler
        self._len_called = loader._IterableDataset_len_called
        self._num_yielded = 0
        self._fetch = None
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        # torch draws the workers' base seed (an int64) as each pass starts, even with none
        gen = loader.generator
        if _torch_engine(gen) is not None:
            self._base_seed = int(torch_rng.random_default(_engine(gen), 1, np.int64)[0])
        plan = None
        if (not self._iterable and loader._auto_collation
                and loader.collate_fn is default_collate
                and isinstance(self._index_sampler, BatchSampler)):
            plan = _array_plan(self._dataset)
        batches = self._index_sampler._fast_batches() if plan is not None else None
        if batches is not None:
            self._sampler_iter, self._fetch = batches, plan
        else:
            self._sampler_iter = iter(self._index_sampler)
            kind = _IterableFetcher if self._iterable else _MapFetcher
            self._fetch = kind(self._dataset, loader._auto_collation, loader.collate_fn,
                               loader.drop_last).fetch

    def __iter__(self):
        return self

    def __next__(self):
        data = self._fetch(next(self._sampler_iter))
        self._num_yielded += 1
        if (self._iterable and self._len_called is not None
                and self._num_yielded > self._len_called):
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be "
                          f"{self._len_called}(when accessing len(dataloader)), but "
                          f"{self._num_yielded} samples have been fetched. ", stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)


class DataLoader:
    """Iterates over batches of a dataset, as torch.utils.data.DataLoader (in-process only:
    see the module docstring).

    Examples:
        >>> import numbagrad as torch
        >>> from numbagrad.utils.data import DataLoader, TensorDataset
        >>> data = TensorDataset(torch.arange(6.), torch.arange(6))
        >>> [y.tolist() for _, y in DataLoader(data, batch_size=4)]
        [[0, 1, 2, 3], [4, 5]]
    """

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with multi-process "
                             "loading (num_workers > 0), but got "
                             f"num_workers={num_workers}")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            elif batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError("batch_size=None option disables auto-batching and is mutually "
                                 "exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                           "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        return _DataLoaderIter(self)

    def __len__(self):
        if self._iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

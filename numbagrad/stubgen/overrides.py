"""Types written by hand, where torch's annotations are missing (its Python ``backward`` has
none), overloaded in a way the runtime signature cannot carry (``size``), or say less than a
user needs (``item``). Keys are public paths; a value is the result type, or the member
written out in full with its types in braces."""

from numbagrad import creation_legacy

TENSOR = "numbagrad.tensor.Tensor"

TYPES = {
    # torch says Number (int | float | bool); what a loss gives, and as usable (an int tensor's
    # item used as an index needs int(...) either way)
    "Tensor.item": "float",
    "Tensor.backward": "None",
    "Tensor.__iter__": f"Iterator[{TENSOR}]",
    "Tensor.__len__": "int",
    "Tensor.__pos__": TENSOR,  # torch assigns these in its class body, without a type
    "Tensor.__itruediv__": TENSOR,
    "Tensor.__array__": "NDArray[Any]",
    "Tensor.__eq__": TENSOR,  # torch's overloads add `other: object -> bool`
    "Tensor.__ne__": TENSOR,
    "Tensor.size": [
        "@{overload}",
        "def size(self, dim: {None} = ...) -> {numbagrad.size.Size}: ...",
        "@{overload}",
        "def size(self, dim: {int}) -> {int}: ...",
    ],
    "Size.__getitem__": [
        "@{overload}",
        "def __getitem__(self, item: {SupportsIndex}) -> {int}: ...",
        "@{overload}",
        "def __getitem__(self, item: {slice}) -> {numbagrad.size.Size}: ...",
    ],
}

# a class's bases where the runtime's say too little: a Size is a tuple of ints; a buffer and a
# legacy type (FloatTensor) are classes whose instances, by their isinstance checks, are tensors
BASES = {"Size": "tuple[int, ...]", "nn.Buffer": TENSOR,
         **dict.fromkeys(creation_legacy.__all__, TENSOR)}

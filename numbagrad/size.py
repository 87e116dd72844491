"""torch.Size: a tuple that prints as torch does."""


class Size(tuple):
    """The shape of a tensor: a tuple of ints.

    Same as ``torch.Size``.
    """

    __slots__ = ()

    def __repr__(self):
        return f"torch.Size([{', '.join(str(int(d)) for d in self)}])"

    __str__ = __repr__

    def numel(self):
        """The number of elements a tensor of this size holds (the product of the sizes)."""
        n = 1
        for d in self:
            n *= d
        return n

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

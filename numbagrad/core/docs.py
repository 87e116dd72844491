"""The docstrings of functions made by factories and loops, in the package's one style: a line
saying what the function does, then the torch (or NumPy) function it matches."""


def torch_doc(summary, torch_name, note=None):
    """A docstring: ``summary``, "Same as ``torch_name``." and an optional ``note``."""
    doc = f"{summary}\n\nSame as ``{torch_name}``."
    return f"{doc}\n\n{note}" if note else doc


def inplace_doc(name):
    """The docstring of the in-place method form of the method ``name`` (``x.sin_()``)."""
    return f"In-place version of :meth:`~Tensor.{name}`."


def documented(fn, doc, name=None):
    """``fn`` (a function made by a factory, or a lambda) with docstring ``doc`` and, if given,
    ``name``; returns ``fn``."""
    fn.__doc__ = doc
    if name is not None:
        fn.__name__ = name
    return fn

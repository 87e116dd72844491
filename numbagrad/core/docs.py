"""The docstrings of functions made by factories and loops, in the package's one style: a line
saying what the function does, then the torch (or NumPy) function it matches."""

import inspect


def torch_doc(summary, torch_name, note=None):
    """A docstring: ``summary``, "Same as ``torch_name``." and an optional ``note``."""
    doc = f"{summary}\n\nSame as ``{torch_name}``."
    return f"{doc}\n\n{note}" if note else doc


def inplace_doc(name, forwards=None):
    """The docstring of the in-place method form of the method ``name`` (``x.sin_()``); with
    ``forwards``, the function a form taking ``*args, **kw`` passes them on to, an "Args:"
    section saying so (``forwarded_args``)."""
    doc = f"In-place version of :meth:`~Tensor.{name}`."
    if forwards is not None:
        doc += "\n\n" + forwarded_args(forwards)
    return doc


def forwarded_args(fn, kw_name="kw"):
    """An "Args:" section for a method taking ``*args`` (and ``**<kw_name>``, unless None) that
    it passes on to ``fn(self, *args, **kw)``: the parameters of ``fn`` after its first."""
    try:
        params = list(inspect.signature(fn).parameters.values())[1:]
    except (TypeError, ValueError):
        params = None
    if params is None:
        lines = ["*args: passed on after the tensor itself."]
        if kw_name:
            lines.append(f"**{kw_name}: passed on as keyword arguments.")
        return "Args:\n" + "".join(f"    {line}\n" for line in lines).rstrip("\n")
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keywords = [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.name != "out"]

    def names(ns):
        return ", ".join(f"``{n}``" for n in ns)
    order = ", in order," if len(positional) > 1 else ","
    lines = [f"*args: {names(positional)}{order} passed on after the tensor itself."
             if positional else "*args: unused: nothing is taken besides the tensor."]
    if kw_name:
        if keywords:
            by_name = ", or the above by name" if positional else ""
            lines.append(f"**{kw_name}: {names(keywords)}{by_name}.")
        else:
            lines.append(f"**{kw_name}: the above by name." if positional else
                         f"**{kw_name}: unused.")
    return "Args:\n" + "".join(f"    {line}\n" for line in lines).rstrip("\n")


def documented(fn, doc, name=None):
    """``fn`` (a function made by a factory, or a lambda) with docstring ``doc`` and, if given,
    ``name``; returns ``fn``."""
    fn.__doc__ = doc
    if name is not None:
        fn.__name__ = name
    return fn

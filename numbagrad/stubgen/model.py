"""What a stub file declares: the plan that stubgen.walk builds and stubgen.emit prints."""

import inspect
from dataclasses import dataclass, field


@dataclass
class Function:
    """A function or method: the runtime's signature, the result's type."""

    name: str
    signature: inspect.Signature | None  # the runtime's (None: not introspectable)
    returns: str = "Any"
    kind: str = "function"  # or "method", "staticmethod", "classmethod"
    passthrough: str | None = None  # the parameter whose type is the result (decorators)
    text: list[str] | None = None  # written out in full (overrides)
    param_types: dict = field(default_factory=dict)  # parameter -> type, where not Any


@dataclass
class Property:
    """A property; ``settable`` if the runtime's has a setter."""

    name: str
    type: str
    settable: bool


@dataclass
class Variable:
    """A module variable or a class's attribute, and its type."""

    name: str
    type: str


@dataclass
class Class:
    """A class: its bases as types, its members."""

    name: str
    bases: list[str]
    members: list = field(default_factory=list)  # Function, Property, Variable
    typevars: list = field(default_factory=list)  # [(name, variance)] of a generic class


@dataclass
class Stub:
    """One ``.pyi`` file: submodules and classes it re-exports, and what it defines."""

    module: str
    submodules: list[str] = field(default_factory=list)  # names of child modules
    reexports: list[tuple[str, str, str]] = field(default_factory=list)  # (module, name, as)
    classes: list[Class] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)

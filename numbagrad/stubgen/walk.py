"""The public API as the runtime has it: every name of the public modules, every method the
Tensor class was given (most are bound with setattr), with the runtime's parameters and torch's
result types (or ours, from overrides.py, where torch's say too little)."""

import ast
import builtins
import importlib
import inspect
import textwrap

from ..distributions import submodules as _dist_modules
from . import overrides
from .model import Class, Function, Property, Stub, Variable

# the modules a user imports, relative to numbagrad ("" is numbagrad itself); the others are
# the implementation, which the stubs leave out
NAMESPACES = [
    "", "accelerator", "autograd", "autograd.forward_ad", "autograd.functional",
    "autograd.graph", "autograd.profiler", "autograd.profiler_util", "backends",
    "backends.cudnn", "backends.mps", "cuda", "distributed", "distributions",
    "distributions.constraint_registry", "distributions.constraints", "distributions.exp_family",
    "distributions.kl", "distributions.transforms", "func",
    "functional", "linalg", "nn", "nn.functional", "nn.init", "nn.modules", "nn.utils",
    "nn.utils.parametrize", "nn.utils.prune", "nn.utils.rnn", "onnx", "optim",
    "optim.lr_scheduler", "optim.swa_utils", "optimize", "profiler", "testing", "utils",
    "utils.benchmark", "utils.checkpoint", "utils.data", "viz",
] + [f"nn.modules.{m}" for m in (
    "activation", "adaptive", "batchnorm", "channelshuffle", "container", "conv", "distance",
    "dropout", "flatten", "fold", "instancenorm", "linear", "loss", "module", "normalization",
    "padding", "pixelshuffle", "pooling", "rnn", "sparse", "transformer", "upsampling")] + [
    # torch.distributions.normal ...: module objects, whose stubs are the only files they have
    f"distributions.{m}" for m in _dist_modules.INSTALLED]
_OPERATORS = {f"__{n}__" for n in (
    "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift divmod".split())}
DUNDERS = ({"__init__", "__call__", "__getattr__", "__setattr__", "__delattr__", "__getitem__",
            "__setitem__", "__delitem__", "__len__", "__iter__", "__next__", "__contains__",
            "__reversed__", "__enter__", "__exit__", "__bool__", "__float__", "__int__",
            "__index__", "__complex__", "__array__", "__neg__", "__pos__", "__abs__",
            "__invert__", "__lt__", "__le__", "__gt__", "__ge__"}
           | _OPERATORS | {"__r" + n[2:] for n in _OPERATORS} | {"__i" + n[2:] for n in _OPERATORS})
_BUILTIN_GENERIC = {tuple: "tuple[Any, ...]", list: "list[Any]", dict: "dict[Any, Any]",
                    set: "set[Any]", frozenset: "frozenset[Any]"}


def _full(module):
    return "numbagrad" + (f".{module}" if module else "")


def _ours(obj):
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "numbagrad"


def _public(module):
    """A namespace's public names but its modules: its ``__all__``, else its names without an
    underscore that are numbagrad's own (not the helpers it imports)."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_") and
                 (_ours(getattr(module, n)) or not callable(getattr(module, n)))]
    return [n for n in names if not inspect.ismodule(getattr(module, n))]


class Walker:
    """Builds the Stubs of the public API from the runtime; ``run()`` returns them."""

    def __init__(self, torch_types):
        self.torch = torch_types
        self.stubs = {}  # module name -> Stub
        self.classes = {}  # class -> public path ("nn.Linear")
        self.token = {}  # class -> its token ("numbagrad.nn.layers.Linear")
        self.declared = {}  # class -> the instance attributes its stub declares
        self.paths = {}  # id of a function -> its public paths
        self.arity = {}  # class -> the number of its type parameters (torch's twin's)
        self.tvars = {}  # the TypeVars of the generic class being walked, spelt

    def stub(self, module):
        """The Stub of a module, made on first use."""
        if module not in self.stubs:
            self.stubs[module] = Stub(module)
        return self.stubs[module]

    # ---- the walk ---------------------------------------------------------------------------
    def run(self):
        """{module name: Stub} for the public modules and those their classes live in."""
        modules = {ns: importlib.import_module(_full(ns)) for ns in NAMESPACES}
        for ns, module in modules.items():  # every public class first: bases and types name them
            for name in _public(module):
                obj = getattr(module, name)
                if inspect.isclass(obj) and _ours(obj) and obj not in self.classes:
                    self.classes[obj] = f"{ns}.{name}".lstrip(".")
                    self.token[obj] = f"{obj.__module__}.{obj.__name__}"
        for ns, module in modules.items():  # the public paths of each function, for _returns
            for name in _public(module):
                self.paths.setdefault(id(getattr(module, name)), []).append(f"{ns}.{name}"
                                                                              .lstrip("."))
        for cls, path in self.classes.items():
            for name, raw in vars(cls).items():
                self.paths.setdefault(id(raw), []).append(f"{path}.{name}")
            # generic as torch's twin where numbagrad's can be subscripted too (Dataset[T])
            self.arity[cls] = len(self.torch.generic(path)) * hasattr(cls, "__class_getitem__")
            if self.arity[cls]:  # torch's annotations name it with its parameters
                self.torch.twins[cls.__name__] = (self.token[cls], self.arity[cls])
        for ns, module in modules.items():
            stub = self.stub(module.__name__)
            stub.submodules = [c.rsplit(".", 1)[-1] for c in NAMESPACES
                               if c and c.rpartition(".")[0] == ns]
            for name in _public(module):
                self._name(stub, ns, name, getattr(module, name))
        for cls, path in self.classes.items():
            self.stub(cls.__module__).classes.append(self._class(cls, path))
        return self.stubs

    def _name(self, stub, ns, name, obj):
        path = f"{ns}.{name}".lstrip(".")
        if obj in self.classes:
            if obj.__module__ != stub.module or obj.__name__ != name:
                stub.reexports.append((obj.__module__, obj.__name__, name))
        elif callable(obj) and type(obj) not in self.token:  # not a callable instance
            stub.functions.append(self._function(name, obj, path, "function"))
        else:
            stub.variables.append(Variable(name, self._type_of(obj)))

    def _type_of(self, value):
        if type(value) in self.token:
            return self.token[type(value)]
        if type(value) in (bool, int, float, str, bytes, complex):
            return type(value).__name__
        return "Any"

    # ---- functions and classes ------------------------------------------------------------
    def _function(self, name, fn, path, kind):
        override = overrides.TYPES.get(path)
        if isinstance(override, list):
            return Function(name, None, kind=kind, text=override)
        try:
            sig = inspect.signature(fn, follow_wrapped=False)
        except (TypeError, ValueError):
            sig = None
        if name == "__init__":  # a generic class's: the parameters that give its type
            names = list(sig.parameters)[1:] if sig is not None else []
            types = {p if p in names else names[i] if i < len(names) else None: t
                     for p, i, t in self.torch.init_params(path.rsplit(".", 1)[0], self.tvars)}
            return Function(name, sig, "None", kind, param_types=types)
        if override is not None:
            return Function(name, sig, override, kind)
        returns, through = None, None
        # torch's type under any of its names, or of the function an out= wrapper wraps
        # (numbagrad/_out_forms.py: linalg.det wraps the function that is Tensor.det too)
        wrapped = getattr(fn, "__wrapped__", None)
        names = self.paths.get(id(fn), []) + (self.paths.get(id(wrapped), []) if wrapped else [])
        for where in [path] + names:
            returns, through = self.torch.returns(self.torch.lookup(where), tvars=self.tvars)
            if returns is not None:
                break
        if through is not None:  # the parameter of that name, else at that position
            names = list(sig.parameters) if sig is not None else []
            through = through[0] if through[0] in names else \
                names[through[1]] if through[1] < len(names) else None
            returns = returns if through is not None else "Any"
        return Function(name, sig, returns or "Any", kind, through)

    def _class(self, cls, path):
        bases, flat = [], [cls]
        pending = list(cls.__bases__)
        while pending:  # private numbagrad bases are folded into the class
            base = pending.pop(0)
            if base in self.classes:
                bases.append(self.token[base])
            elif _ours(base):
                flat.append(base)
                pending[:0] = base.__bases__
            elif base is not object:
                bases.append(_BUILTIN_GENERIC.get(base) or (
                    base.__name__ if getattr(builtins, base.__name__, None) is base else "Any"))
        if path in overrides.BASES:
            bases = [overrides.BASES[path]]
        params = self.torch.generic(path) if self.arity[cls] else []
        self.tvars = {n: "_" + n.lstrip("_") for n, _ in params}
        bases = self._parameterized([b for b in bases if b != "Any"], path)
        out, seen = Class(cls.__name__, bases, typevars=[(self.tvars[n], v) for n, v in params]), \
            set()
        meta, new = type(cls), vars(cls).get("__new__")
        if _ours(meta) and "__call__" in vars(meta):  # the class is called through its metaclass
            new = meta.__call__
        if new is not None and "__init__" not in vars(cls):  # the arguments __new__ takes
            out.members.append(self._function("__init__", getattr(new, "__func__", new), path,
                                              "method"))
            seen.add("__init__")
        for klass in flat:
            for name, raw in vars(klass).items():
                if name in seen or (name.startswith("_") and name not in DUNDERS
                                    and f"{path}.{name}" not in overrides.TYPES):
                    continue
                seen.add(name)
                member = self._member(path, name, raw)
                if member is not None:
                    out.members.append(member)
        out.members += self._declared(cls, path, seen)
        out.members.sort(key=lambda m: (m.name != "__init__", m.name))
        self.tvars = {}
        return out

    def _parameterized(self, bases, path):
        """The bases with their type parameters: as torch's class gives them (Sampler[int]),
        else Any; and Generic[...] for a generic class no base makes generic."""
        given, arity = self.torch.bases(path, self.tvars), {self.token[c]: n
                                                             for c, n in self.arity.items()}
        out = []
        for b in bases:
            name = b.rsplit(".", 1)[-1]
            if name in given and len(given[name]) == arity.get(b):
                out.append(f"{b}[{', '.join(given[name])}]")
            else:
                out.append(f"{b}[{', '.join(['Any'] * arity[b])}]" if arity.get(b) else b)
        mine = list(self.tvars.values())
        if mine and not any(all(t in b for t in mine) for b in out):
            out.append(f"Generic[{', '.join(mine)}]")
        return out

    def _member(self, path, name, raw):
        key = f"{path}.{name}"
        if isinstance(raw, property):
            kind = overrides.TYPES.get(key)
            if kind is None:
                kind, _ = self.torch.returns(self.torch.lookup(key), attribute=True,
                                             tvars=self.tvars)
            return Property(name, kind or "Any", raw.fset is not None)
        if isinstance(raw, staticmethod | classmethod):
            return self._function(name, raw.__func__, key, type(raw).__name__)
        if inspect.isclass(raw):
            return None
        if inspect.isroutine(raw):
            return self._function(name, raw, key, "method")
        if callable(raw):  # a callable object is not bound: called without self
            kind = overrides.TYPES.get(key) or \
                self.torch.returns(self.torch.lookup(key), tvars=self.tvars)[0]
            return Variable(name, f"Callable[..., {kind or 'Any'}]")
        return None if name.startswith("_") else Variable(name, self._type_of(raw))

    def _declared(self, cls, path, seen):
        """The instance attributes: those numbagrad's ``__init__`` sets, and those torch's
        class declares that numbagrad's code names (``Linear.weight: Tensor``); typed as
        torch types them, else Any; less those the stubs of its bases declare."""
        stub_bases = [c for c, t in self.token.items() if t == overrides.BASES.get(path)]
        ours = [k for k in cls.__mro__ if _ours(k)]
        torch_types = self.torch.attributes(path, self.tvars)
        named = set().union(*map(_names_in, ours)) if torch_types else set()
        names = set().union(*map(_init_assigned, ours)) | (torch_types.keys() & named)
        inherited = set().union(*(self._declared_names(b) for b in cls.__mro__[1:]
                                  if b in self.classes))
        out = [Variable(n, torch_types.get(n, "Any")) for n in sorted(names)
               if not n.startswith("_") and n not in seen | inherited
               and not any(hasattr(c, n) for c in [cls, *stub_bases])]
        self.declared[cls] = {v.name for v in out}
        return out

    def _declared_names(self, cls):
        if cls not in self.declared:
            self._declared(cls, self.classes[cls], set())
        return self.declared.get(cls, set())


def _init_assigned(cls):
    """The names ``cls.__init__`` (its own) assigns as ``self.name = ...``."""
    init = vars(cls).get("__init__")
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
    except (OSError, TypeError, SyntaxError):
        return set()
    return {t.attr for n in ast.walk(tree) if isinstance(n, ast.Assign | ast.AnnAssign)
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
            and t.value.id == "self"}


def _names_in(cls):
    """The names and strings the code of ``cls``'s own functions uses (``self.weight = ...``
    names weight)."""
    out, codes = set(), []
    for value in vars(cls).values():
        value = getattr(value, "__func__", getattr(value, "fget", value))
        codes += [getattr(value, "__code__", None)]
    while codes:
        code = codes.pop()
        if code is not None:
            out.update(code.co_names)
            out.update(c for c in code.co_consts if isinstance(c, str))
            codes += [c for c in code.co_consts if hasattr(c, "co_names")]
    return out

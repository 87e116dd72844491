"""torch's own annotations for a name, read from the files mypy reads for torch (its ``.pyi``
stubs where it has them, else its sources), and spelt in numbagrad's types.

A type is a string in stub syntax over a small vocabulary (see ``emit.IMPORTS``): builtins,
typing and collections.abc names, ``NDArray`` and, by their full names, the numbagrad classes
torch's annotations can name (``Tensor``, ``Parameter``, ``Module``, ``Size``, ``dtype``,
``Optimizer``). A torch type outside it (``torch.device``, a ``return_types`` named tuple, a
Node...) becomes ``Any``: the stub then promises nothing rather than something numbagrad may
not do.
"""

import ast
import importlib.util
import inspect
import pathlib
from dataclasses import dataclass

TENSOR = "numbagrad.tensor.Tensor"
# torch's names -> ours. torch's classes map to numbagrad's twin only where numbagrad's is the
# same thing (torch.device is not: numbagrad's Tensor.device is the string "cpu").
NAMES = {
    "int": "int", "float": "float", "bool": "bool", "str": "str", "bytes": "bytes",
    "complex": "complex", "object": "object", "None": "None",
    "_int": "int", "_float": "float", "_bool": "bool", "_complex": "complex",
    "SymInt": "int", "SymFloat": "float", "SymBool": "bool",
    "IntLikeType": "int", "FloatLikeType": "float", "BoolLikeType": "bool",
    "Number": "int | float | bool", "_number": "int | float | bool",
    "Any": "Any", "Self": "Self", "NoReturn": "NoReturn", "Never": "NoReturn",
    "Tensor": TENSOR, "TensorBase": TENSOR, "_TensorBase": TENSOR,
    "Parameter": "numbagrad.nn.module.Parameter", "Module": "numbagrad.nn.module.Module",
    "Size": "numbagrad.size.Size", "dtype": "numbagrad.dtypes.dtype",
    "_dtype": "numbagrad.dtypes.dtype", "Optimizer": "numbagrad.optim.optimizer.Optimizer",
    "Generator": "numbagrad.factories.Generator",  # torch.Generator (typing's: see convert)
    "ndarray": "NDArray[Any]",
}
# generic heads: name -> (our head, number of parameters a bare use gets as Any; -1: tuple)
GENERICS = {
    "list": ("list", 1), "List": ("list", 1), "dict": ("dict", 2), "Dict": ("dict", 2),
    "set": ("set", 1), "Set": ("set", 1), "frozenset": ("frozenset", 1),
    "tuple": ("tuple", -1), "Tuple": ("tuple", -1), "type": ("type", 1), "Type": ("type", 1),
    "Sequence": ("Sequence", 1), "Iterator": ("Iterator", 1), "Iterable": ("Iterable", 1),
    "Mapping": ("Mapping", 2), "OrderedDict": ("dict", 2), "defaultdict": ("dict", 2),
    "Callable": ("Callable", 0),
    "Generator": ("Iterator", 1), "Optional": None, "Union": None, "Literal": None,
    "Annotated": None,
}
C_STUBS = ("torch._C._VariableFunctions", "torch._C", "torch._C._nn")
ROOTS = ("torch", "builtins", "typing", "typing_extensions", "collections", "numpy", "np")


def _dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


class _Source:
    """One parsed torch file: its top-level definitions and the names it imports."""

    def __init__(self, path, module):
        self.module = module
        self.tree = ast.parse(pathlib.Path(path).read_text())
        self.top, self.imports = {}, {}
        self._index(self.tree.body)

    def _index(self, body):
        for node in body:
            if isinstance(node, ast.If | ast.Try):  # `if TYPE_CHECKING:` and try/except blocks
                self._index(node.body + getattr(node, "orelse", []))
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    self.imports[a.asname or a.name] = (node.module, a.name)
            elif isinstance(node, ast.FunctionDef | ast.ClassDef):
                self.top.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name):
                self.top.setdefault(node.targets[0].id, []).append(node)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                self.top.setdefault(node.target.id, []).append(node)

    def typevar(self, name):
        """Whether ``name`` is a TypeVar defined in this file."""
        for node in self.top.get(name, ()):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    _dotted(node.value.func) in ("TypeVar", "typing.TypeVar"):
                return True
        return False

    def alias(self, name):
        """The type a module-level ``name = <type>`` (or ``name: TypeAlias = <type>``) is."""
        for node in self.top.get(name, ()):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None and \
                    not isinstance(node.value, ast.Call | ast.Tuple | ast.Constant) and \
                    (isinstance(node, ast.Assign) or _dotted(node.annotation) in
                     ("TypeAlias", "typing.TypeAlias", "typing_extensions.TypeAlias")):
                return node.value
        return None


@dataclass
class Found:
    """A torch definition: the annotations of its overloads, and where they are spelt."""

    source: _Source
    returns: list  # one annotation node per overload (None: not annotated)
    params: list  # per overload: [(parameter name, annotation node)]
    self_typevar: str | None = None
    kind: str = "function"  # or "property", "attribute" (a declared type, no def)


class TorchTypes:
    """Looks up torch's definition of a public name and spells its types as ours."""

    def __init__(self):
        import torch  # the generator's only use of torch: imported when stubs are generated

        self.torch = torch
        self.root = pathlib.Path(torch.__file__).parent
        self._sources, self._classes = {}, {}
        self.twins = {}  # torch's name of a generic class -> (our token, its arity)

    # ---- files ---------------------------------------------------------------------------
    def _source(self, module):
        """The file mypy reads for a torch module: ``.pyi`` when there is one."""
        if module not in self._sources:
            self._sources[module] = None
            if module == "torch._C" or module.startswith("torch._C."):
                path = self.root / "_C" / (module[9:] + ".pyi" if module != "torch._C"
                                           else "__init__.pyi")
            else:
                try:
                    spec = importlib.util.find_spec(module)
                except (ImportError, ValueError):
                    spec = None
                origin = spec and spec.origin and pathlib.Path(spec.origin)
                path = origin and (origin.with_suffix(".pyi") if
                                   origin.with_suffix(".pyi").exists() else origin)
            if path and path.exists() and path.suffix in (".py", ".pyi"):
                self._sources[module] = _Source(path, module)
        return self._sources[module]

    def _module_of_file(self, filename):
        rel = pathlib.Path(filename).resolve().relative_to(self.root.parent)
        parts = list(rel.with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    # ---- lookups -------------------------------------------------------------------------
    def lookup(self, path):
        """torch's definition of the public ``path`` ("nn.functional.relu", "Tensor.sum",
        "nn.Module.parameters"), or None."""
        obj, parts = self.torch, path.split(".")
        for i, part in enumerate(parts):
            found = getattr(obj, part, None)
            if found is None and inspect.ismodule(obj):
                # a submodule torch does not import itself (torch.nn.utils.prune): whether
                # another import loaded it must not change the stubs
                found = _submodule(f"{obj.__name__}.{part}")
            obj = found
            if obj is None:
                return None
            if inspect.isclass(obj) and i < len(parts) - 1:
                return self._member(obj, parts[i + 1]) if i == len(parts) - 2 else None
        if inspect.isclass(obj):
            return None
        module = ".".join(["torch", *parts[:-1]])
        src = self._source(module)  # the public module first: what mypy sees at that path
        found = src and self._function(src, parts[-1])
        if found:
            return found
        mod, name = getattr(obj, "__module__", None), getattr(obj, "__name__", parts[-1])
        qual = getattr(obj, "__qualname__", name)
        code = getattr(inspect.unwrap(obj), "__code__", None)
        if code is not None and code.co_filename.startswith(str(self.root)):
            mod = self._module_of_file(code.co_filename)  # torch sets __module__ to its
        elif mod == "torch" and qual.startswith("_VariableFunctionsClass."):  # public path
            mod = "torch._C._VariableFunctions"
        for module in (mod, *C_STUBS):  # a builtin says it is in torch: its C module's stub
            src = module and module.startswith("torch") and self._source(module)
            found = src and self._function(src, name)
            if found:
                return found
        return None

    def _function(self, src, name):
        nodes = [n for n in src.top.get(name, ()) if isinstance(n, ast.FunctionDef)]
        return self._overloads(src, nodes) if nodes else None

    def _class_sources(self, cls):
        """(source, ClassDef) for ``cls``: from its functions' file, else its module's."""
        if cls not in self._classes:
            self._classes[cls] = self._find_class(cls)
        return self._classes[cls]

    def _find_class(self, cls):
        modules = []
        for v in vars(cls).values():
            code = getattr(getattr(v, "fget", v), "__code__", None)
            if code is not None and code.co_filename.startswith(str(self.root)):
                modules.append(self._module_of_file(code.co_filename))
                break
        modules += [cls.__module__, "torch._C"]
        for module in modules:
            src = self._source(module)
            for node in (src.top.get(cls.__name__, ()) if src else ()):
                if isinstance(node, ast.ClassDef):
                    return src, node
        return None, None

    def _member(self, cls, name):
        """The first annotated definition of ``cls.name`` along torch's MRO."""
        for klass in cls.__mro__[:-1]:
            src, node = self._class_sources(klass)
            if node is None:
                continue
            defs = [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == name
                    and not any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter")
                                for d in n.decorator_list)]
            found = self._overloads(src, defs) if defs else None
            if found is None:
                for n in node.body:
                    if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and \
                            n.target.id == name:
                        found = Found(src, [n.annotation], [[]], kind="attribute")
            if found is not None and all(r is not None for r in found.returns):
                return found
        return None

    def attributes(self, path, tvars=None):
        """{name: type} of the attributes torch's class at ``path`` declares: in its body,
        and as ``self.name: T = ...`` in ``__init__`` (``self.name = ...``: Any); along its
        MRO, the first declaration of a name winning."""
        cls = self.torch
        for part in path.split("."):
            cls = getattr(cls, part, None)
        out = {}
        for klass in cls.__mro__[:-1] if inspect.isclass(cls) else ():
            src, node = self._class_sources(klass)
            for n in node.body if node is not None else ():
                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
                    out.setdefault(n.target.id, self.convert(n.annotation, src, tvars) or "Any")
                elif isinstance(n, ast.FunctionDef) and n.name == "__init__":
                    for name, kind in _self_assigned(n).items():
                        out.setdefault(name, kind and self.convert(kind, src, tvars) or "Any")
        return out

    def _class(self, path):
        cls = self.torch
        for part in path.split("."):
            cls = getattr(cls, part, None)
        return cls if inspect.isclass(cls) else None

    def generic(self, path):
        """The TypeVars [(name, variance)] of torch's class at ``path`` (none: not generic)."""
        return [(p.__name__, "covariant" if p.__covariant__ else "contravariant"
                 if p.__contravariant__ else "")
                for p in getattr(self._class(path), "__parameters__", ())]

    def bases(self, path, tvars):
        """{name of a base: its parameters} for the subscripted bases of torch's class at
        ``path`` (``Dataset[tuple[Tensor, ...]]``), spelt with ``tvars``."""
        cls = self._class(path)
        src, node = self._class_sources(cls) if cls is not None else (None, None)
        out = {}
        for b in node.bases if node is not None else ():
            head = _dotted(b.value) if isinstance(b, ast.Subscript) else None
            if head:
                args = list(b.slice.elts) if isinstance(b.slice, ast.Tuple) else [b.slice]
                out[head.rsplit(".", 1)[-1]] = [
                    "..." if isinstance(a, ast.Constant) and a.value is Ellipsis else
                    self.convert(a, src, tvars) or "Any" for a in args]
        return out

    def init_params(self, path, tvars):
        """[(name, position, type)] of the parameters of torch's ``__init__`` at ``path``
        whose types name the class's TypeVars (``DataLoader(dataset: Dataset[T])``)."""
        found = self.lookup(f"{path}.__init__")
        if found is None or len(found.params) != 1:
            return []
        out = []
        for i, (name, node) in enumerate(found.params[0][1:]):
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if node else set()
            kind = names & tvars.keys() and self.convert(node, found.source, tvars)
            if kind:
                out.append((name, i, kind))
        return out

    def _overloads(self, src, defs):
        overloads = [d for d in defs if any(_dotted(x) in ("overload", "typing.overload")
                                            for x in d.decorator_list)]
        defs = overloads or defs[-1:]
        params, self_tv = [], None
        for d in defs:
            args = d.args.posonlyargs + d.args.args + d.args.kwonlyargs
            params.append([(a.arg, a.annotation) for a in args])
            first = args[0] if args else None
            if first is not None and first.arg in ("self", "cls") and \
                    isinstance(first.annotation, ast.Name) and \
                    self._typevar(src, first.annotation.id):
                self_tv = first.annotation.id
        prop = any(_dotted(x) in ("property", "functools.cached_property")
                   for x in defs[0].decorator_list)
        return Found(src, [d.returns for d in defs], params, self_tv,
                     "property" if prop else "function")

    def _typevar(self, src, name, depth=0):
        """Whether ``name`` in ``src`` is a TypeVar (defined there or imported from torch)."""
        if src.typevar(name):
            return True
        module, orig = src.imports.get(name, ("", ""))
        other = depth < 4 and module.startswith("torch") and self._source(module)
        return bool(other) and self._typevar(other, orig, depth + 1)

    # ---- torch's types in ours -------------------------------------------------------------
    def returns(self, found, attribute=False, tvars=None):
        """(type, parameter) for a definition: the type of its result (of the attribute, for
        ``attribute``) in our spelling, None when torch gives none; and, for a decorator typed
        ``(f: F) -> F``, the name and position of that parameter (else None). ``tvars``: the
        TypeVars of the generic class it is in, spelt."""
        if found is None or any(r is None for r in found.returns):
            return None, None
        if found.kind == "attribute" and not attribute:  # a method declared as an attribute
            result = _callable_result(found.returns[0])
            if result is None:
                return None, None
            found = Found(found.source, [result], [[]], found.self_typevar)
        elif attribute and found.kind == "function":  # a method in torch, a property in ours
            return None, None
        tvars = {**(tvars or {}), **({found.self_typevar: "Self"} if found.self_typevar else {})}
        first = found.returns[0]
        if len(found.returns) == 1 and isinstance(first, ast.Name) and \
                first.id not in tvars and self._typevar(found.source, first.id):
            same = [(p, i) for i, (p, a) in enumerate(found.params[0])
                    if isinstance(a, ast.Name) and a.id == first.id]
            return ("_T", same[0]) if len(same) == 1 else ("Any", None)
        types = {self.convert(r, found.source, tvars) or "Any" for r in found.returns}
        return (types.pop() if len(types) == 1 else "Any"), None

    def convert(self, node, src, tvars=None, depth=0):
        """An annotation of torch's file ``src`` in our spelling, or None; ``tvars`` spells
        the TypeVars it may name (a method's self type: Self; a generic class's own)."""
        if depth > 8:
            return None
        tvars = tvars or {}
        conv = lambda n: self.convert(n, src, tvars, depth + 1)  # noqa: E731
        if isinstance(node, ast.Constant):
            if node.value is None:
                return "None"
            if isinstance(node.value, str):  # a forward reference
                try:
                    return conv(ast.parse(node.value, mode="eval").body)
                except SyntaxError:
                    return None
            return None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return _union([conv(node.left), conv(node.right)])
        if isinstance(node, ast.Subscript):
            return self._subscript(node, conv)
        name = _dotted(node)
        if name is None:
            return None
        if "." in name:
            head, last = name.split(".", 1)[0], name.rsplit(".", 1)[1]
            if head not in ROOTS or ".return_types." in name:
                return None
            return _bare(last, generic=head in ("typing", "collections"))
        if name in tvars:
            return tvars[name]
        if self._typevar(src, name):
            return None
        if name in self.twins:
            token, arity = self.twins[name]
            return f"{token}[{', '.join(['Any'] * arity)}]"
        if src.imports.get(name, ("",))[0] in ("typing", "collections.abc") and \
                name in GENERICS:  # typing's Generator, not torch's
            return _bare(name, generic=True)
        if name in NAMES or name in GENERICS:
            return _bare(name)
        value = src.alias(name)
        if value is not None:
            return conv(value)
        if name in src.imports:
            module, orig = src.imports[name]
            other = module.startswith("torch") and self._source(module)
            if other:
                return self.convert(ast.Name(orig), other, None, depth + 1)
        return None

    def _subscript(self, node, conv):
        head = _dotted(node.value)
        head = head and head.rsplit(".", 1)[-1]
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Optional":
            return _union([conv(args[0]), "None"])
        if head == "Union":
            return _union([conv(a) for a in args])
        if head == "Annotated":
            return conv(args[0])
        if head in ("TypeIs", "_TypeIs", "TypeGuard"):  # is_tensor(obj) -> TypeIs[Tensor]
            inner = conv(args[0])
            return inner and f"{head.lstrip('_')}[{inner}]"
        if head == "Literal":
            return f"Literal[{', '.join(ast.unparse(a) for a in args)}]"
        if head in self.twins:
            return f"{self.twins[head][0]}[{', '.join(conv(a) or 'Any' for a in args)}]"
        if head not in GENERICS:
            return None
        ours = GENERICS[head][0]
        if ours == "Callable":
            result = conv(args[-1]) or "Any"
            return f"Callable[..., {result}]"
        if head == "Generator":
            args = args[:1]
        parts = ["..." if isinstance(a, ast.Constant) and a.value is Ellipsis else
                 (conv(a) or "Any") for a in args]
        if ours == "tuple" and parts == []:
            return "tuple[()]"
        return f"{ours}[{', '.join(parts)}]"


def _bare(name, generic=False):
    if name in NAMES and not generic:
        return NAMES[name]
    spec = GENERICS.get(name)
    if not spec:
        return None
    ours, n = spec
    if ours == "Callable":
        return "Callable[..., Any]"
    return f"{ours}[Any, ...]" if n < 0 else f"{ours}[{', '.join(['Any'] * n)}]"


def _union(parts):
    if any(p is None for p in parts):
        return None
    out = []
    for p in parts:
        for q in split_union(p):
            if q not in out:
                out.append(q)
    if "Any" in out:
        return "Any"
    none = "None" in out
    out = [p for p in out if p != "None"] + (["None"] if none else [])
    return " | ".join(out)


def _self_assigned(function):
    """{name: annotation or None} of the ``self.name = ...`` in a function's body."""
    out = {}
    for n in ast.walk(function):
        targets = n.targets if isinstance(n, ast.Assign) else \
            [n.target] if isinstance(n, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and \
                    t.value.id == "self" and (out.get(t.attr) is None):
                out[t.attr] = getattr(n, "annotation", None)
    return out


def split_union(type_):
    """The members of a union type ("tuple[A, B] | None" -> ["tuple[A, B]", "None"])."""
    depth, parts, start = 0, [], 0
    for i, c in enumerate(type_):
        depth += (c in "[(") - (c in "])")
        if depth == 0 and type_.startswith(" | ", i):
            parts.append(type_[start:i])
            start = i + 3
    return parts + [type_[start:]]


def _callable_result(annotation):
    """R of an attribute declared ``Callable[..., R]`` (torch's Module.__call__), else None."""
    if isinstance(annotation, ast.Subscript) and (_dotted(annotation.value) or "").endswith(
            "Callable") and isinstance(annotation.slice, ast.Tuple):
        return annotation.slice.elts[-1]
    return None


def _submodule(name):
    """The module ``name``, imported, or None where there is none."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None

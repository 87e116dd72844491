"""Griffe extension for the API reference: numbagrad's names as Python sees them once imported.

Much of numbagrad's API is bound at import time (Tensor methods set by ``setattr``, functions
made by factories, star-imports), so griffe, even inspecting the package, leaves many public
names as aliases to a factory's local function (``_unary_fn.<locals>.fn``) or to a module that
does not hold them, which cannot be rendered. This extension reads the public names of each
documented namespace from the imported object (``__all__``, else ``dir`` without modules or
``_`` names) and makes each one that griffe did not resolve an object inspected from the
runtime value, with its runtime docstring; the same for the members of the classes there.
It also marks which members are public (the runtime's names, nothing a module merely
imports) and drops classes' underscore members, and appends to an entry that says "Same as
``torch.x``", or else has a namesake in torch (``torch.nn.Linear``), the "Args:" and
"Returns:" sections of torch's documentation, from tools/torch_doc_sections.json (written by
tools/torch_doc_sections.py, so that building the docs needs no torch). mkdocs.yml loads it
in mkdocstrings' python handler (``extensions``).
"""

import importlib
import inspect
import json
import re
import types
from pathlib import Path

import griffe

# what docs/api/ renders (a new page's namespace goes here too), and the names documented on a
# page of their own rather than among their module's
OWN_PAGE = {"numbagrad": {"Tensor"}}
NAMESPACES = ("numbagrad", "numbagrad.Tensor", "numbagrad.nn", "numbagrad.nn.functional",
              "numbagrad.nn.init", "numbagrad.nn.utils", "numbagrad.optim",
              "numbagrad.optim.lr_scheduler", "numbagrad.func", "numbagrad.autograd",
              "numbagrad.autograd.functional", "numbagrad.autograd.forward_ad",
              "numbagrad.autograd.graph", "numbagrad.linalg", "numbagrad.utils.data",
              "numbagrad.distributions", "numbagrad.distributed", "numbagrad.optimize",
              "numbagrad.viz", "numbagrad.extend", "numbagrad.testing")


def public_names(obj):
    """The names a user reaches on ``obj``: its ``__all__``, else its own public attributes."""
    names = getattr(obj, "__all__", None)
    if names is None:
        names = dir(obj) if isinstance(obj, types.ModuleType) else list(vars(obj))
        names = [n for n in names if not n.startswith("_")]
    return [n for n in names if hasattr(obj, n)
            and not isinstance(getattr(obj, n), types.ModuleType)]


def runtime_object(path):
    """The imported object at a dotted path (a module, or an attribute of one)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(path)


def resolved(member):
    """The object a griffe member stands for, or None for an alias griffe cannot follow."""
    if not member.is_alias:
        return member
    try:
        return member.final_target
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def _shorten_value(member):
    """Leave out an attribute's value when it is long (a table's repr): its name says enough."""
    if not member.is_alias and member.is_attribute and len(str(member.value or "")) > 80:
        member.value = None


def _name_first_parameter_self(method):
    if method.labels & {"staticmethod", "classmethod"} or not method.parameters:
        return
    first = next(iter(method.parameters))
    if first.kind in (griffe.ParameterKind.positional_only,
                      griffe.ParameterKind.positional_or_keyword):
        first.name = "self"


def _borrowed(member, value):
    """Whether an attribute's docstring is only its value's type's (``int([x]) -> integer``:
    griffe reads ``__doc__`` off the value), which says nothing of the attribute."""
    doc = member.docstring.value if member.docstring else ""
    if type(value).__module__ != "builtins":
        return not doc  # (a dtype object's class docstring does describe it)
    own = type(value).__doc__
    return not doc or (isinstance(own, str) and doc.strip() == inspect.cleandoc(own))


def _attribute_doc(cls, name):
    """``name``'s entry in the "Attributes:" section of a class's docstring along its MRO, or
    of a module's docstring (a constant, a class attribute, a dataclass field with a default
    has no docstring of its own)."""
    for base in getattr(cls, "__mro__", (cls,)):
        lines = (base.__doc__ or "").splitlines()
        if not any(line.strip() == "Attributes:" for line in lines):
            continue
        start = [line.strip() for line in lines].index("Attributes:") + 1
        entry = []
        for line in lines[start:]:
            text = line.strip()
            if entry and (not text or text.split(":")[0].isidentifier() and ":" in text):
                break
            if entry:
                entry.append(text)
            elif text.startswith(f"{name}:"):
                entry.append(text[len(name) + 1:].strip())
        if entry:
            doc = " ".join(entry)
            return doc[0].upper() + doc[1:]
    return None


def member_doc(cls, name):
    """The docstring ``cls.name`` shows: its own, or for an override without one
    (``forward``, a distribution's ``log_prob``) the one it overrides, as ``help()`` does;
    looked up along the MRO by name, since methods made by factories have qualified names
    getdoc cannot follow. None when there is none."""
    for base in cls.__mro__:
        value = vars(base).get(name)
        if isinstance(value, (types.FunctionType, property, staticmethod, classmethod,
                              types.MemberDescriptorType)):
            # (its own __doc__: inspect.getdoc would reach object.__init__'s; a slot's is
            # in the class's __slots__ dict, where pydoc reads it)
            doc = getattr(value, "__func__", value).__doc__
            if isinstance(value, types.MemberDescriptorType) and \
                    isinstance(vars(base).get("__slots__"), dict):
                doc = base.__slots__.get(name)
            if isinstance(doc, str) and doc:
                return inspect.cleandoc(doc)
    return None


_ARGS_ITEM = re.compile(r"^ {4}\*{0,2}(\w+)(?: \([^)]*\))?:")


def without_foreign_args(doc, parameters):
    """``doc`` (cleaned) without its "Args:" section when that section names a parameter not
    in ``parameters``: an override that shows its base's docstring (``Module.forward``'s
    ``*args`` for ``forward(input, hx)``) would otherwise list the base's arguments as its
    own."""
    lines = doc.split("\n")
    if "Args:" not in lines:
        return doc
    start = lines.index("Args:")
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t"):
        end += 1
    names = {m.group(1) for m in map(_ARGS_ITEM.match, lines[start + 1:end]) if m}
    if names <= set(parameters):
        return doc
    return "\n".join(lines[:start] + lines[end:]).strip()


TORCH_DOCS = "https://docs.pytorch.org/docs/2.13/"
# torch's pages that document a namespace's names on one page, by anchor
_ONE_PAGE = {"torch.nn.init.": "nn.init.html", "torch.special.": "special.html",
             "torch.utils.data.": "data.html", "torch.profiler.": "profiler.html",
             "torch.autograd.profiler.": "autograd.html", "torch.onnx.": "onnx.html",
             "torch.distributions.": "distributions.html", "torch.func.": "func.api.html",
             "torch.autograd.forward_ad.": "autograd.html",
             "torch.autograd.graph.": "autograd.html",
             "torch.utils.benchmark.": "benchmark_utils.html"}
_SAME_AS = re.compile(r"``(torch(?:\.[A-Za-z_][A-Za-z_0-9]*)+)``")
# a docstring's own parameter or return-value section (Google style, as griffe reads them)
OWN_SECTIONS = re.compile(r"^\s*(args|arguments|params|parameters|keyword args|"
                          r"keyword arguments|other parameters|returns|return):\s*$",
                          re.IGNORECASE | re.MULTILINE)


def torch_page(name):
    """The address of torch 2.13's documentation of ``name`` (``torch.nn.Linear``)."""
    for prefix, page in _ONE_PAGE.items():
        if name.startswith(prefix):
            return f"{TORCH_DOCS}{page}#{name}"
    if name in ("torch.dtype", "torch.device", "torch.layout", "torch.memory_format"):
        return f"{TORCH_DOCS}tensor_attributes.html#{name}"
    if name == "torch.Size":
        return f"{TORCH_DOCS}size.html#{name}"
    if re.fullmatch(r"torch\.[A-Z][A-Za-z0-9]*Tensor", name):  # the legacy tensor types
        return f"{TORCH_DOCS}tensors.html"
    return f"{TORCH_DOCS}generated/{name}.html"


def _link_torch_names(obj, seen):
    """Make "Same as ``torch.x``" in the docstrings under ``obj`` a link to torch's page."""
    if obj is None or obj.path in seen:
        return
    seen.add(obj.path)
    doc = obj.docstring
    if doc is not None and "Same as ``torch." in doc.value:
        head, sep, tail = doc.value.partition("Same as ``torch.")
        tail = _SAME_AS.sub(lambda m: f"[`{m.group(1)}`]({torch_page(m.group(1))})",
                            "``torch." + tail, count=1)
        doc.value = head + "Same as " + tail
    for member in obj.members.values():
        target = resolved(member)
        if target is not None and (target.is_class or target.is_function or
                                   target.is_attribute or target.is_module):
            _link_torch_names(target, seen)


# the arguments and return values of torch's docstrings, by the path the reference renders
TORCH_SECTIONS = Path(__file__).resolve().with_name("torch_doc_sections.json")
TORCH_SECTIONS_ORIGIN = "Arguments and return value: from torch 2.13's documentation."


def _section_item(text):
    """``text`` as one item of a Google-style section: its first line indented once, the rest
    twice (griffe reads a line indented once as the next item)."""
    first, *rest = text.split("\n")
    return "\n".join(["    " + first] + ["        " + line if line else "" for line in rest])


def torch_sections_text(entry, parameters=None):
    """An entry of torch_doc_sections.json as docstring text: "Args:" (of the ``parameters``
    named, when given), "Returns:" (each when torch has it) and the line saying where they
    come from; "" when nothing is left to show."""
    args = [arg for arg in entry["args"]
            if parameters is None or arg[0].lstrip("*") in parameters]
    parts = []
    if args:
        # (a zero-width space after the type keeps griffe from reading it as a Python name,
        # which it would link to numbagrad's namesake: torch's "bool" to the dtype)
        parts.append("\n".join(["Args:"] + [
            _section_item(f"{name} ({type_}\u200b): {text}" if type_ else f"{name}: {text}")
            for name, type_, text in args]))
    if entry["returns"]:
        # (after an empty name: griffe would read a leading "Tensor:" as the value's name)
        parts.append("Returns:\n" + _section_item(": " + entry["returns"]))
    return "\n\n".join(parts + [TORCH_SECTIONS_ORIGIN]) if parts else ""


def _add_torch_sections(path, namespace, sections):
    """Append torch's sections to the docstrings of the members of ``namespace`` (rendered as
    ``path.name``) and of its classes' members (``path.name.member``), where a docstring has
    none of its own."""
    for name, member in namespace.members.items():
        target = resolved(member)
        if target is None:
            continue
        _append_sections(target, sections.get(f"{path}.{name}"))
        if target.is_class:
            for child_name, child in target.members.items():
                child_target = resolved(child)
                if child_target is not None:
                    _append_sections(child_target, sections.get(f"{path}.{name}.{child_name}"))


def _append_sections(obj, entry):
    """Append ``entry``'s sections (torch_doc_sections.json) to ``obj``'s docstring."""
    doc = obj.docstring
    # (an object reached by two paths gets them once: the first makes them its own)
    if not entry or doc is None or OWN_SECTIONS.search(doc.value):
        return
    # the parameters the page shows, which can differ from the runtime signature the JSON
    # was made from (a wrapper's, where griffe read the wrapped function)
    try:
        parameters = {p.name.lstrip("*") for p in obj.parameters}
    except (AttributeError, KeyError):
        parameters = set()
    text = torch_sections_text(entry, parameters)
    if text:
        doc.value = doc.value.rstrip() + "\n\n" + text


class RuntimeNames(griffe.Extension):
    def on_package(self, *, pkg, loader, **kwargs):
        if pkg.name != "numbagrad":
            return
        self.inspector = griffe.Inspector(
            pkg.name, None, loader.extensions, docstring_parser=loader.docstring_parser,
            docstring_options=loader.docstring_options,
            modules_collection=loader.modules_collection)
        self.fixed_classes = set()
        for path in NAMESPACES:
            documented = resolved(loader.modules_collection[path])
            names = self.complete(documented, runtime_object(path))
            if documented.is_module:
                documented.exports = names
        sections = json.loads(TORCH_SECTIONS.read_text())
        for path in NAMESPACES:
            _add_torch_sections(path, resolved(loader.modules_collection[path]), sections)
        seen = set()
        for path in NAMESPACES:
            _link_torch_names(resolved(loader.modules_collection[path]), seen)

    def complete(self, documented, runtime):
        """Give every public runtime name of ``runtime`` a member griffe can render, and
        mark the members public exactly when the runtime has them public (the pages use
        mkdocstrings' ``filters: public``: a module's imported helpers and constants stay out)."""
        names = public_names(runtime)
        shown = set(names) - OWN_PAGE.get(documented.path, set())
        for name in names:
            value = getattr(runtime, name)
            member = documented.members.get(name)
            target = resolved(member) if member is not None else None
            if target is None:
                target = self.inspect_into(documented, runtime, name)
            if inspect.isclass(value) and target.is_class and target.path not in self.fixed_classes:
                self.fixed_classes.add(target.path)
                self.complete_class(target, value)
        for name, member in documented.members.items():
            member.public = name in shown
            if name in shown and not member.is_alias and member.is_attribute and \
                    _borrowed(member, getattr(runtime, name)):
                self.set_docstring(member, _attribute_doc(runtime, name))
            _shorten_value(member)
        return names

    def set_docstring(self, member, doc):
        member.docstring = None if not doc else griffe.Docstring(
            doc, parent=member, parser=self.inspector.docstring_parser,
            parser_options=self.inspector.docstring_options)

    def complete_class(self, documented, cls):
        """A class's own members: those griffe aliased to places it cannot follow, or to a
        module's function (a function bound to the class by assignment), are inspected as
        members of the class; a method's first parameter is named ``self``, as Python
        passes the instance there (mkdocstrings leaves ``self`` out of signatures). Members
        named with an underscore (``__doc__``, ``__add__``...) are dropped, as a class seen
        through an alias shows all its members whatever their ``public`` flag; ``__init__``
        stays, for mkdocstrings to merge its signature into the class's."""
        for name, member in list(documented.members.items()):
            if name.startswith("_") and name != "__init__":
                documented.del_member(name)
                continue
            if hasattr(cls, name):
                target = resolved(member)
                # (a class held as an attribute, a lazy module's cls_to_become, stays an
                # alias: inspected under the class, griffe finds no module for its members)
                if member.is_alias and (target is None or not target.parent.is_class) and \
                        not inspect.isclass(getattr(cls, name)):
                    member = self.inspect_into(documented, cls, name)
                if member.is_function and not member.is_alias:
                    _name_first_parameter_self(member)
                if not member.is_alias and name != "__init__" and (
                        not (member.docstring and member.docstring.value) or
                        member.is_attribute and _borrowed(member, getattr(cls, name))):
                    self.inherit_docstring(member, cls, name)
            _shorten_value(member)

    def inherit_docstring(self, member, cls, name):
        """An override without a docstring of its own shows the one it overrides
        (``member_doc``), less an "Args:" section naming parameters the override does not
        have; a constant or class attribute, its "Attributes:" entry."""
        doc = member_doc(cls, name)
        if doc and member.is_function:
            doc = without_foreign_args(doc, {p.name.lstrip("*") for p in member.parameters})
        if not doc and not callable(getattr(cls, name, None)):
            doc = _attribute_doc(cls, name)
        self.set_docstring(member, doc)

    def inspect_into(self, parent, runtime_parent, name):
        """Inspect ``runtime_parent.name`` into ``parent`` as griffe inspects a module."""
        if name in parent.members:
            parent.del_member(name)
        node = griffe.ObjectNode(getattr(runtime_parent, name), name,
                                 parent=griffe.ObjectNode(runtime_parent, parent.name))
        self.inspector.current = parent
        self.inspector.inspect(node)
        return parent.members[name]

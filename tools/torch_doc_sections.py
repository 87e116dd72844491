"""Write tools/torch_doc_sections.json: for each public numbagrad entry whose docstring says
"Same as ``torch.X``", the arguments and return value torch 2.13's docstring of ``torch.X``
documents, for the API reference to show (tools/griffe_runtime.py renders them). An entry
whose docstring says no such thing takes them from torch's object at its own path
(``numbagrad.nn.Linear`` from ``torch.nn.Linear``; a class's constructor arguments from the
class's docstring), when that is of its kind (both classes or both functions) and documents
one of the parameters numbagrad's has.

usage: python tools/torch_doc_sections.py   (torch 2.13 importable, from the repository root)

The JSON is committed, so building the docs needs no torch. An entry maps the dotted path
the reference renders (``numbagrad.add``, ``numbagrad.Tensor.add``, ``numbagrad.nn.Linear``)
to ``{"args": [[name, type, description], ...], "returns": text}``. Only the parameters
numbagrad's own signature has are kept, in its order, and only what torch writes: a
parameter torch does not document, or a section torch does not have, is left out. Entries
without a docstring, those whose docstring (for a method without one, the one it overrides,
which the reference shows) has Args or Returns of its own, and those whose signature cannot
be read, are skipped. The text is torch's with its reST made Markdown (roles as code,
directives such as ``.. note::`` dropped).
"""

import inspect
import json
import re
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from griffe_runtime import NAMESPACES, OWN_SECTIONS, member_doc, public_names, runtime_object  # noqa: E402

OUT = Path(__file__).resolve().with_name("torch_doc_sections.json")

_SAME_AS = re.compile(r"Same as ``(torch(?:\.[A-Za-z_]\w*)+)``")
# torch's section titles, by the part of the entry they fill
_TITLES = {"args": "args", "arguments": "args", "keyword args": "args",
           "keyword arguments": "args", "returns": "returns", "return": "returns"}
_TITLE = re.compile(r"^(\s*)([A-Za-z ]+):\s*$")
# a docstring with no sections of its own that is only a reference, "See :func:`torch.add`.",
# "In-place version of :meth:`~Tensor.add`.", is documented there (not when the reference
# names a class: a module's ``bias`` is a flag where the function's is a tensor; nor when it
# says more, "Alias for ... with defaults ...")
_SEE = re.compile(r"^\s*(?:See|Alias for|In-place version of|Out-of-place version of|"
                  r"Out-place version of) :(?:func|meth):`~?([\w.]+)`"
                  r"(?: for (?:more details|function description))?\.?\s*$", re.MULTILINE)
# "name (type): description", "name: description", "a, b (type): ..."; the type may nest
# parentheses once ("tuple (int, int)")
_ITEM = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*"
                   r"(?:\(((?:[^()]|\([^()]*\))*)\))?\s*:(.*)$")
_DIRECTIVE = re.compile(r"^(\s*)\.\. [\w:-]+::")
_ROLE = re.compile(r":(\w+)(?::\w+)?:`([^`]+)`")
_LINK = re.compile(r"(?<![`\w])`([^`<]+?)\s*(?:<[^>]*>)?`__?(?!\w)")
_CODE = re.compile(r"(``.*?``|`[^`]*`)")
_LIST_ITEM = re.compile(r"^(?:[-*+]|\d+\.)\s")


def entries():
    """(dotted path, object, whether a method, owner) for each public entry the reference
    renders: the names of each documented namespace (owned by it) and the own members of the
    classes there."""
    for space in NAMESPACES:
        runtime = runtime_object(space)
        method = inspect.isclass(runtime)
        for name in public_names(runtime):
            value = getattr(runtime, name)
            yield f"{space}.{name}", value, method and _is_method(runtime, name), runtime
            if inspect.isclass(value) and f"{space}.{name}" not in NAMESPACES:
                for member in vars(value):
                    if not member.startswith("_"):
                        yield (f"{space}.{name}.{member}", getattr(value, member, None),
                               _is_method(value, member), value)


def docstrings(obj, owner, name):
    """``obj``'s own docstring and the one the reference shows for it (for a method without
    one, the one it overrides), each None when there is none."""
    own = getattr(obj, "__doc__", None)
    own = own if isinstance(own, str) and own.strip() else None
    shown = own or (member_doc(owner, name) if inspect.isclass(owner) else None)
    return own, shown


def _is_method(cls, name):
    """Whether ``cls.name`` takes the instance first (a plain function in the class, whatever
    its first parameter's name: the reference calls it ``self`` and leaves it out)."""
    for base in cls.__mro__:
        if name in vars(base):
            return isinstance(vars(base)[name], types.FunctionType)
    return False


def torch_object(dotted):
    try:
        return runtime_object(dotted)
    except (ImportError, AttributeError):
        return None


def _role(match):
    role, text = match.groups()
    if role in ("ref", "doc"):  # a cross-reference's title reads as text
        return re.sub(r"\s*<[^>]*>$", "", text)
    if role != "math":
        text = re.sub(r"\s*<[^>]*>$", "", text)
        text = text[1:].rsplit(".", 1)[-1] if text.startswith("~") else text
    return f"`{text}`"


def inline(text):
    """One line of reST as Markdown: roles as code (``:class:`~torch.Tensor``` as `Tensor`,
    ``:math:`x^2``` as `x^2`), hyperlink references as their text, and outside code reST's
    escapes of letters and spaces undone (``NaN`\\s`` as ``NaN`s``; Markdown escapes
    punctuation as reST does)."""
    text = _LINK.sub(r"\1", _ROLE.sub(_role, text))
    parts = _CODE.split(text)
    parts[::2] = [re.sub(r"\\([\w ])", r"\1", part) for part in parts[::2]]
    return "".join(parts)


def without_directives(lines):
    """The lines without reST directives (``.. note::``, ``.. warning::``, ``.. math::``) and
    the block indented under each."""
    kept, depth = [], None
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if depth is not None and (not line.strip() or indent > depth):
            continue
        depth = None
        match = _DIRECTIVE.match(line)
        if match:
            depth = len(match.group(1))
            continue
        kept.append(line)
    return kept


def markdown(lines):
    """Lines of one description (dedented) as Markdown: a paragraph's lines joined into one,
    list items one a line with a blank line before the list, paragraphs apart."""
    blocks, current = [], None
    for line in lines:
        text = line.strip()
        if not text:
            current = None
        elif _LIST_ITEM.match(text):
            current = ["item", text]
            blocks.append(current)
        elif current is None or current[0] == "item" and not line[:1].isspace():
            current = ["text", text]
            blocks.append(current)
        else:
            current[1] += " " + text
    out = []
    for i, (kind, text) in enumerate(blocks):
        if out:
            out.append("\n" if kind == "item" and blocks[i - 1][0] == "item" else "\n\n")
        out.append(inline(text))
    return "".join(out)


def _dedent(lines):
    indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return [x[indent:] for x in lines]


def sections(doc):
    """The documented parameters ({name: (type, description)}, the first description of a
    name when overloads repeat it) and the return value's text ("" when none) of one of
    torch's docstrings."""
    lines = without_directives(inspect.cleandoc(doc).splitlines())
    params, returns = {}, ""
    i = 0
    while i < len(lines):
        match = _TITLE.match(lines[i])
        kind = match and _TITLES.get(match.group(2).strip().lower())
        i += 1
        if not kind:
            continue
        # the section: the lines below the title, up to one indented no deeper than it
        base, body = len(match.group(1)), []
        while i < len(lines) and (not lines[i].strip() or
                                  len(lines[i]) - len(lines[i].lstrip()) > base):
            body.append(lines[i])
            i += 1
        if kind == "returns":
            value = []
            for line in _dedent(body):
                if value and _ITEM.match(line):  # (one of several: "values (Tensor): ...")
                    value.append("")
                value.append(line)
            returns = returns or markdown(value)
            continue
        for names, type_, description in items(body):
            for name in names:
                params.setdefault(name.lstrip("*"), (type_, description))
    return params, returns


def items(body):
    """(names, type, description) for each "name (type): description" of a section's lines;
    a line not at the first item's indentation, or not of that form, continues the
    description above it."""
    found, indent = [], None
    for line in body:
        if not line.strip():
            if found:
                found[-1][2].append("")
            continue
        depth = len(line) - len(line.lstrip())
        indent = depth if indent is None else indent
        match = _ITEM.match(line.strip()) if depth == indent else None
        # (a "Default: x" line at the items' indentation belongs to the item above)
        if match and match.group(1) != "Default":
            names, type_, first = match.groups()
            found.append(([n.strip() for n in names.split(",")],
                          inline(type_ or "").replace("`", "").strip(), [first.strip()]))
        elif found:
            found[-1][2].append(line)
    return [(names, type_, markdown([lines[0]] + _dedent(lines[1:])))
            for names, type_, lines in found]


def parameters(obj, method):
    """numbagrad's parameter names for ``obj`` in its order, as the reference writes them
    (``*size``), without a method's first (the instance); None when the signature cannot be
    read."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    stars = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    names = [stars.get(p.kind, "") + p.name for p in signature.parameters.values()]
    return names[1:] if method and names and not names[0].startswith("*") else names


def torch_sections(name, hops=5):
    """``sections`` of the docstring of torch's ``name``, or when it has none, of the function
    it refers to (a few references deep: ``Tensor.add_`` to ``Tensor.add`` to ``torch.add``;
    only the arguments from an in-place version's out-of-place one).
    A function of ``torch`` without a docstring (``torch.masked_fill``) is documented as the
    Tensor method of its name."""
    doc = getattr(torch_object(name), "__doc__", None)
    if not isinstance(doc, str):
        method = "torch.Tensor." + name.removeprefix("torch.")
        if name.count(".") == 1 and hops and torch_object(method) is not None:
            return torch_sections(method, hops - 1)
        return {}, ""
    documented, returns = sections(doc)
    see = _SEE.search(doc)
    if documented or returns or not see or hops == 0:
        return documented, returns
    target = see.group(1)
    if target.startswith("Tensor."):
        target = f"torch.{target}"
    elif not target.startswith("torch."):  # (a name in the referring one's namespace)
        target = f"{name.rsplit('.', 1)[0]}.{target}"
    documented, returns = torch_sections(target, hops - 1)
    # (the out-of-place function's return value is not the in-place one's: ``eq`` gives a
    # boolean tensor, ``eq_`` its own tensor changed)
    if see.group(0).lstrip().startswith("In-place"):
        returns = ""
    return documented, returns


def entry(obj, method, torch_name):
    """The JSON entry for numbagrad's ``obj`` from the documentation of torch's
    ``torch_name``, or None."""
    names = parameters(obj, method)
    if names is None:
        return None
    documented, returns = torch_sections(torch_name)
    # (a parameter torch lists without a description, "type1 (torch.dtype)", says nothing)
    args = [[name, *documented[name.lstrip("*")]] for name in names
            if documented.get(name.lstrip("*"), ("", ""))[1]]
    if inspect.isclass(obj):
        returns = ""  # (a class's Returns would describe calling it, not the constructor)
    return {"args": args, "returns": returns} if args or returns else None


def namesake(path, obj):
    """The name of torch's object at numbagrad's ``path`` (``numbagrad.optim.SGD``:
    ``torch.optim.SGD``) when there is one of ``obj``'s kind, both classes or both functions;
    else None."""
    name = "torch" + path.removeprefix("numbagrad")
    theirs = torch_object(name)
    if not callable(theirs) or inspect.isclass(theirs) != inspect.isclass(obj):
        return None
    return name


def build():
    data = {}
    for path, obj, method, owner in entries():
        if not callable(obj):
            continue
        own, shown = docstrings(obj, owner, path.rsplit(".", 1)[1])
        # (without a docstring the reference has nothing to add torch's sections to)
        if shown is None or OWN_SECTIONS.search(shown):
            continue
        # (only an entry's own "Same as" names its torch function: an override's inherited
        # one, "Same as ``torch.nn.Module.forward``", names the base's, its namesake its own)
        same = _SAME_AS.search(own) if own else None
        if same:
            found = entry(obj, method, same.group(1))
        else:
            name = namesake(path, obj)
            found = entry(obj, method, name) if name else None
            # (a namesake documenting none of numbagrad's parameters may be another thing
            # of the same name: its return value is not taken either)
            found = found if found and found["args"] else None
        if found:
            data[path] = found
    return data


def main():
    data = build()
    # one entry a line, for diffs that show which entries changed
    lines = [f"{json.dumps(path)}: {json.dumps(data[path], ensure_ascii=False)}"
             for path in sorted(data)]
    OUT.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    with_args = sum(1 for e in data.values() if e["args"])
    with_returns = sum(1 for e in data.values() if e["returns"])
    print(f"{OUT.name}: {len(data)} entries, {with_args} with arguments, "
          f"{with_returns} with a return value")


if __name__ == "__main__":
    main()

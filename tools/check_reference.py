"""Check the built API reference: fail on an empty entry, and on an entry that should show
torch's arguments or return value (tools/torch_doc_sections.json) and does not; report how
many entries with parameters show them.

Empty: every function, class, method and attribute the reference renders must say something
beyond its signature, and more than the docstring of its value's built-in type (``int([x])
-> integer`` on a constant). Missing sections: an entry of the JSON whose rendered signature
has one of the parameters listed there must show a "Parameters" section, and one with a
return value a "Returns" section (tools/griffe_runtime.py adds them).

Run after ``mkdocs build``: ``python tools/check_reference.py site`` (exit status 1 and the
entries listed when there are any).
"""

import html
import json
import pathlib
import re
import sys

TORCH_SECTIONS = pathlib.Path(__file__).resolve().with_name("torch_doc_sections.json")

# one rendered object: mkdocstrings' "doc doc-object" block, its heading (with the object's
# id) and what follows up to the next object
_OBJECT = re.compile(r'<div class="doc doc-object doc-(\w+)">\s*<h\d[^>]*id="([^"]+)"([\s\S]*?)'
                     r'</h\d>([\s\S]*?)(?=<div class="doc doc-object|\Z)')
_CONTENTS = re.compile(r'<div class="doc doc-contents[^"]*">([\s\S]*)')
_SIGNATURE = re.compile(r'<div class="doc-signature[\s\S]*?</div>|<pre[\s\S]*?</pre>')
_HEADING_SIGNATURE = re.compile(r'<code class="highlight language-python">([\s\S]*?)</code>')
_SECTION_TITLE = re.compile(r'<span class="doc-section-title">([^<]*?):?</span>')
_TAG = re.compile(r"<[^>]+>")
# what griffe shows for an attribute documented nowhere: its value's type's docstring
_BUILTIN_DOCS = tuple(t.__doc__.strip().splitlines()[0] for t in
                      (int, float, bool, str, bytes, tuple, list, dict, set, frozenset))


def _text(fragment):
    return html.unescape(_TAG.sub("", fragment))


def rendered_objects(page):
    """(kind, id, heading, body) of each object rendered on a page."""
    return _OBJECT.findall(page)


def empty_entries(page):
    """The ids of the objects on a rendered page whose entry has no text of its own."""
    empty = []
    for _, ident, _, body in rendered_objects(page):
        contents = _CONTENTS.search(body)
        text = _SIGNATURE.sub("", contents.group(1)) if contents else ""
        text = _text(text).strip()
        if not text or text.startswith(_BUILTIN_DOCS):
            empty.append(ident)
    return empty


def signature_parameters(heading):
    """The parameter names of the signature in an entry's heading (``add(input, *, out=None)``
    gives input and out), or None when the heading shows no signature (an attribute)."""
    code = _HEADING_SIGNATURE.search(heading)
    text = _text(code.group(1)) if code else ""
    if "(" not in text:
        return None
    inside = text[text.index("(") + 1:text.rindex(")")]
    names, depth, part = [], 0, ""
    for char in inside + ",":
        depth += (char in "([{") - (char in ")]}")
        if char == "," and depth == 0:
            # (the name before any annotation or default; "*" and "/" mark kinds)
            name = re.split(r"[:=]", part)[0].strip().lstrip("*")
            if name and name != "/":
                names.append(name)
            part = ""
        else:
            part += char
    return names


def section_titles(body):
    """The titles of the docstring sections an entry shows ("Parameters", "Returns"...)."""
    return set(_SECTION_TITLE.findall(body))


def check_sections(page, sections):
    """(entries with parameters, those of them showing a Parameters section, ids of the
    entries missing a section ``sections`` (the JSON) gives them) on a rendered page; the
    counts by kind of entry ("function": functions and methods, "class")."""
    with_parameters, shown, missing = {}, {}, []
    for kind, ident, heading, body in rendered_objects(page):
        names = signature_parameters(heading)
        titles = section_titles(body)
        if kind in ("function", "class") and names:
            with_parameters[kind] = with_parameters.get(kind, 0) + 1
            shown[kind] = shown.get(kind, 0) + ("Parameters" in titles)
        entry = sections.get(ident)
        if entry is None:
            continue
        # (torch's parameters that the rendered signature has: griffe may show fewer than
        # the runtime signature the JSON was made from)
        expected = {name.lstrip("*") for name, _, _ in entry["args"]} & set(names or ())
        lacks_args = expected and "Parameters" not in titles
        lacks_returns = entry["returns"] and "Returns" not in titles
        if lacks_args or lacks_returns:
            missing.append(ident)
    return with_parameters, shown, missing


def main(site, sections_path=TORCH_SECTIONS):
    pages = sorted(pathlib.Path(site, "api").rglob("*.html"))
    if not pages:
        print(f"no API reference pages under {site}/api: build the site first")
        return 1
    sections = json.loads(pathlib.Path(sections_path).read_text())
    total = empty_total = missing_total = 0
    with_parameters, shown = {}, {}
    for path in pages:
        page, text = path.relative_to(site), path.read_text()
        empty = empty_entries(text)
        counts, shows, missing = check_sections(text, sections)
        for kind in counts:
            with_parameters[kind] = with_parameters.get(kind, 0) + counts[kind]
            shown[kind] = shown.get(kind, 0) + shows[kind]
        for ids, what in ((empty, "empty entries"),
                          (missing, "entries without torch's arguments or return value")):
            if ids:
                print(f"{page}: {len(ids)} {what}")
                print("".join(f"  {ident}\n" for ident in ids), end="")
        total += len(rendered_objects(text))
        empty_total += len(empty)
        missing_total += len(missing)
    print(f"{total} entries on {len(pages)} pages, {empty_total} empty, {missing_total} "
          "without torch's arguments or return value")
    for kind, label in (("function", "functions and methods"), ("class", "classes")):
        print(f"{label} with parameters: {shown.get(kind, 0)} of "
              f"{with_parameters.get(kind, 0)} show them (a Parameters section)")
    return 1 if empty_total or missing_total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "site"))

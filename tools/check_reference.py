"""Fail on an empty entry of the built API reference: every function, class, method and
attribute the reference renders must say something beyond its signature, and more than the
docstring of its value's built-in type (``int([x]) -> integer`` on a constant).

Run after ``mkdocs build``: ``python tools/check_reference.py site`` (exit status 1 and the
empty entries listed when there are any).
"""

import html
import pathlib
import re
import sys

# one rendered object: mkdocstrings' "doc doc-object" block, its heading (with the object's
# id) and what follows up to the next object
_OBJECT = re.compile(r'<div class="doc doc-object doc-(\w+)">\s*<h\d[^>]*id="([^"]+)"[\s\S]*?</h\d>'
                     r'([\s\S]*?)(?=<div class="doc doc-object|\Z)')
_CONTENTS = re.compile(r'<div class="doc doc-contents[^"]*">([\s\S]*)')
_SIGNATURE = re.compile(r'<div class="doc-signature[\s\S]*?</div>|<pre[\s\S]*?</pre>')
_TAG = re.compile(r"<[^>]+>")
# what griffe shows for an attribute documented nowhere: its value's type's docstring
_BUILTIN_DOCS = tuple(t.__doc__.strip().splitlines()[0] for t in
                      (int, float, bool, str, bytes, tuple, list, dict, set, frozenset))


def empty_entries(page):
    """The ids of the objects on a rendered page whose entry has no text of its own."""
    empty = []
    for match in _OBJECT.finditer(page):
        _, ident, body = match.groups()
        contents = _CONTENTS.search(body)
        text = _SIGNATURE.sub("", contents.group(1)) if contents else ""
        text = html.unescape(_TAG.sub("", text)).strip()
        if not text or text.startswith(_BUILTIN_DOCS):
            empty.append(ident)
    return empty


def main(site):
    pages = sorted(pathlib.Path(site, "api").rglob("*.html"))
    if not pages:
        print(f"no API reference pages under {site}/api: build the site first")
        return 1
    found = {str(p.relative_to(site)): empty_entries(p.read_text()) for p in pages}
    empty = {page: ids for page, ids in found.items() if ids}
    for page, ids in empty.items():
        print(f"{page}: {len(ids)} empty entries")
        for ident in ids:
            print(f"  {ident}")
    total = sum(len(_OBJECT.findall(p.read_text())) for p in pages)
    print(f"{total} entries on {len(pages)} pages, {sum(map(len, empty.values()))} empty")
    return 1 if empty else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "site"))

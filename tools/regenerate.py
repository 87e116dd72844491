"""Regenerate every file generated from the package: the op catalogue (docs/ops.md, from the
op table) and the type stubs (numbagrad/**/*.pyi, from the runtime and torch's
annotations). ``--check`` lists the stale ones instead and exits 1 if there are any.

Run: python tools/regenerate.py [--check]
"""

import argparse
import importlib.util
import pathlib
import sys

from numbagrad import catalogue, stubgen

ROOT = pathlib.Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "docs" / "ops.md"


def stale():
    """The generated files that differ from what the package generates now."""
    out = [] if CATALOGUE.read_text() == catalogue.markdown() else [str(CATALOGUE)]
    new, old = stubgen.generate(), stubgen.on_disk()
    return out + sorted(p for p in new.keys() | old.keys() if new.get(p) != old.get(p))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="list stale files, write nothing")
    args = parser.parse_args()
    if importlib.util.find_spec("torch") is None:
        sys.exit("the stubs are typed with torch's annotations: install torch (the test extra)")
    if args.check:
        files = stale()
        print("\n".join(files) or "every generated file is current")
        return 1 if files else 0
    CATALOGUE.write_text(catalogue.markdown())
    stubgen.write()
    print(f"wrote {CATALOGUE.relative_to(ROOT)} and the stubs")
    return 0


if __name__ == "__main__":
    sys.exit(main())

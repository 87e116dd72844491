"""``python -m numbagrad.stubgen``: write the stubs (``--check``: list the stale ones)."""

import sys

from . import generate, on_disk, write

if "--check" in sys.argv[1:]:
    new, old = generate(), on_disk()
    stale = sorted(p for p in new.keys() | old.keys() if new.get(p) != old.get(p))
    print("\n".join(stale) or "stubs are current")
    sys.exit(1 if stale else 0)
write()

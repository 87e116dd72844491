"""``python -m numbagrad.stubgen``: write the stubs (``--check``: list the stale ones)."""

import importlib.util
import sys

from . import generate, on_disk, write

if importlib.util.find_spec("torch") is None:
    sys.exit("numbagrad.stubgen types the stubs with torch's annotations: install torch")
if "--check" in sys.argv[1:]:
    new, old = generate(), on_disk()
    stale = sorted(p for p in new.keys() | old.keys() if new.get(p) != old.get(p))
    print("\n".join(stale) or "stubs are current")
    sys.exit(1 if stale else 0)
write()

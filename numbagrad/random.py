"""torch.random: the default generator's seed and state functions, and fork_rng."""

import contextlib

from .creation_random import get_rng_state, initial_seed, seed, set_rng_state
from .factories import default_generator, manual_seed

__all__ = ["default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed",
           "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Run the block on a copy of the CPU generator's state: draws inside do not move the
    stream outside. Same as ``torch.random.fork_rng`` (the CPU has no other devices)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)

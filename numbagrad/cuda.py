"""torch.cuda as a CPU-only build of torch answers it: no devices, seeding is a no-op."""


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Nothing to seed without CUDA devices (torch's call is a no-op then too)."""


def manual_seed_all(seed):
    """Nothing to seed without CUDA devices."""


def empty_cache():
    """Nothing cached without CUDA devices."""


def is_initialized():
    return False


def synchronize(device=None):
    raise AssertionError("Torch not compiled with CUDA enabled")


def current_device():
    raise AssertionError("Torch not compiled with CUDA enabled")

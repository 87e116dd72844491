"""torch.backends.mps: Apple's GPU backend, never available to numbagrad."""


def is_available():
    return False


def is_built():
    return False

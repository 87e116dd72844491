"""torch.backends.cudnn: the flags scripts set (benchmark, deterministic) are kept and have no
effect, as in a CPU-only build of torch; cuDNN itself is never available."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None

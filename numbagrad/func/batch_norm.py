"""torch.func.replace_all_batch_norm_modules_: batch norms without running statistics, so
that vmap over a model normalizes each sample's batch by its own statistics."""

# the module classes this applies to: torch.nn's _BatchNorm, which numbagrad.nn puts here
# when it defines it (func comes before nn in the package's layers)
BATCH_NORM_TYPES = []


def replace_all_batch_norm_modules_(root):
    """In place, every BatchNorm module in ``root`` (``root`` included) stops tracking running
    statistics: ``running_mean``, ``running_var`` and ``num_batches_tracked`` become None.
    Returns ``root``.

    Same as ``torch.func.replace_all_batch_norm_modules_``.

    Args:
        root: the module whose BatchNorm modules (its own ``modules()``) change.

    Returns:
        ``root`` itself.
    """
    for module in root.modules():
        if isinstance(module, tuple(BATCH_NORM_TYPES)) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root

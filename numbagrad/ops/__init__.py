"""The ops, by family (``ops/<family>/``): each family's records (defop), front ends, rules
and kernels (``kernels.py``: backward; ``replay_kernels.py``: forward for compiled replay);
``kernel_helpers.py`` what the kernels share, ``vjp.py`` the differentiable derivatives
(create_graph).

The kernel modules register with the kernel generator as they are imported, here, in one
order: a generated module star-imports them in it."""

from . import kernel_helpers  # noqa: F401
from .index import kernels as _index_kernels  # noqa: F401
from .index import replay_kernels as _index_replay_kernels  # noqa: F401
from .linalg import kernels as _linalg_kernels  # noqa: F401
from .linalg import replay_kernels as _linalg_replay_kernels  # noqa: F401
from .nn import replay_kernels as _nn_replay_kernels  # noqa: F401
from .reduce import kernels as _reduce_kernels  # noqa: F401
from .reduce import replay_kernels as _reduce_replay_kernels  # noqa: F401
from .shape import kernels as _shape_kernels  # noqa: F401
from .shape import replay_kernels as _shape_replay_kernels  # noqa: F401

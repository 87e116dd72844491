"""numbagrad.nn.modules has torch.nn.modules's package paths: each submodule exports the names
torch's exports but those numbagrad lacks (listed below), as the same classes as numbagrad.nn's,
and torch's private base classes where numbagrad's class tree is torch's."""

import importlib
import inspect
import pkgutil

import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

# torch's public names (its submodules' __all__) that numbagrad does not have
LACKS = {
    "activation": set(),
    "adaptive": set(),
    "channelshuffle": set(),
    "batchnorm": {"SyncBatchNorm"},
    "container": {"Container"},  # deprecated in torch
    "conv": set(),
    "distance": set(),
    "dropout": set(),
    "flatten": set(),
    "fold": set(),
    "instancenorm": set(),
    "linear": set(),
    "loss": set(),
    # torch's global hooks on every module
    "module": {"register_module_forward_pre_hook", "register_module_forward_hook",
               "register_module_full_backward_pre_hook", "register_module_backward_hook",
               "register_module_full_backward_hook", "register_module_buffer_registration_hook",
               "register_module_module_registration_hook",
               "register_module_parameter_registration_hook"},
    "normalization": set(),
    "padding": set(),
    "pixelshuffle": set(),
    "pooling": set(),
    "rnn": set(),
    "sparse": set(),
    "transformer": set(),
    "upsampling": set(),
}
# torch's submodules numbagrad has none of (or only helpers of): not provided
NOT_PROVIDED = {"_functions", "lazy", "linear_cross_entropy",
                "linear_cross_entropy_options", "utils"}
# torch's private base classes exported (torch's scripts subclass them or test isinstance)
BASES = {"batchnorm": {"_NormBase", "_BatchNorm"}, "conv": {"_ConvNd", "_ConvTransposeNd"},
         "instancenorm": {"_InstanceNorm"}, "loss": {"_Loss", "_WeightedLoss"},
         "padding": {"_ConstantPadNd"}, "pooling": {"_MaxUnpoolNd", "_LPPoolNd"}}
# numbagrad has these bases under torch's names but not torch's subclasses of them
# (nn.Dropout is not a _DropoutNd, nn.MaxPool2d not a _MaxPoolNd): not exported
DIFFERENT_BASES = {"dropout": "_DropoutNd", "pooling": "_MaxPoolNd"}


def test_torchs_submodules_are_all_accounted_for():
    import torch.nn.modules as tm  # noqa: PLC0415

    subs = {info.name for info in pkgutil.iter_modules(tm.__path__)}
    assert subs == set(LACKS) | NOT_PROVIDED
    for sub in NOT_PROVIDED:
        assert not hasattr(ng.nn.modules, sub)


@pytest.mark.parametrize("sub", sorted(LACKS))
def test_a_submodule_exports_torchs_names(sub):
    theirs = importlib.import_module(f"torch.nn.modules.{sub}")
    ours = importlib.import_module(f"numbagrad.nn.modules.{sub}")
    assert getattr(ng.nn.modules, sub) is ours  # reachable after `import numbagrad`
    assert LACKS[sub] <= set(theirs.__all__)  # the list names only what torch has
    assert ours.__all__ == [n for n in theirs.__all__ if n not in LACKS[sub]]
    for name in ours.__all__:
        # the very classes of numbagrad.nn, as torch.nn.modules.linear.Linear is nn.Linear
        assert getattr(ours, name) is getattr(ng.nn, name), name
        assert getattr(ng.nn.modules, name) is getattr(ng.nn, name), name
    for name in LACKS[sub]:
        assert not hasattr(ours, name) and not hasattr(ng.nn, name), name


def test_the_package_exports_torchs_names():
    import torch.nn.modules as tm  # noqa: PLC0415

    missing = set().union(*LACKS.values())
    for sub in NOT_PROVIDED:
        missing |= set(getattr(importlib.import_module(f"torch.nn.modules.{sub}"), "__all__", ()))
    assert sorted(ng.nn.modules.__all__) == sorted(set(tm.__all__) - missing)
    assert len(ng.nn.modules.__all__) == len(set(ng.nn.modules.__all__))


@pytest.mark.parametrize("sub", sorted(BASES))
def test_private_bases_have_torchs_subclasses(sub):
    theirs = importlib.import_module(f"torch.nn.modules.{sub}")
    ours = importlib.import_module(f"numbagrad.nn.modules.{sub}")
    for base in BASES[sub]:
        assert base not in ours.__all__
        ours_base, their_base = getattr(ours, base), getattr(theirs, base)
        assert inspect.isclass(ours_base) and issubclass(ours_base, ng.nn.Module)
        for name in ng.nn.modules.__all__:
            cls = getattr(ng.nn, name)
            if inspect.isclass(cls):
                assert issubclass(cls, ours_base) == issubclass(getattr(torch.nn, name),
                                                                their_base), (base, name)


@pytest.mark.parametrize(("sub", "base"), sorted(DIFFERENT_BASES.items()))
def test_bases_whose_trees_differ_are_not_exported(sub, base):
    assert not hasattr(importlib.import_module(f"numbagrad.nn.modules.{sub}"), base)


def test_the_paths_tutorials_use():
    import numbagrad.nn.modules.linear  # noqa: PLC0415
    from numbagrad.nn.modules.loss import _Loss, _WeightedLoss  # noqa: PLC0415

    nn = ng.nn
    assert numbagrad.nn.modules.linear.Linear is nn.Linear
    assert nn.modules.module.Module is nn.Module
    assert nn.modules.conv.Conv2d is nn.Conv2d and nn.modules.activation.ReLU is nn.ReLU
    assert nn.modules.container.ModuleDict is nn.ModuleDict
    assert nn.modules.sparse.Embedding is nn.Embedding
    assert nn.modules.rnn.LSTM is nn.LSTM and nn.modules.flatten.Flatten is nn.Flatten
    assert issubclass(nn.MSELoss, _Loss) and issubclass(nn.CrossEntropyLoss, _WeightedLoss)
    assert not issubclass(nn.MSELoss, _WeightedLoss)

    class Custom(nn.modules.loss._Loss):  # a user's loss on torch's base class
        def forward(self, a, b):
            return (a - b).abs().sum() if self.reduction == "sum" else (a - b).abs().mean()

    assert Custom(reduction="sum")(ng.ones(3), ng.zeros(3)).item() == 3.0
    assert Custom()(ng.ones(3), ng.zeros(3)).item() == 1.0

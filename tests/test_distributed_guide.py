"""The Python examples of the distributed guide (docs/guide/distributed.md) run as written,
in order in one namespace as a reader runs them, on a 2-process LocalCluster made the default
client; the scheduler address of the last example is replaced by that cluster's."""

import pathlib
import re

import pytest

pytest.importorskip("distributed")
from dask.distributed import Client, LocalCluster  # noqa: E402

GUIDE = pathlib.Path(__file__).parents[1] / "docs" / "guide" / "distributed.md"
PLACEHOLDER = '"tcp://scheduler-host:8786"'


def _examples():
    return re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)


@pytest.fixture(scope="module")
def cluster():
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    with Client(cluster):  # the default client: the examples use it
        yield cluster
    cluster.close()


def test_the_guide_has_its_four_examples():
    examples = _examples()
    assert len(examples) == 4
    assert PLACEHOLDER in examples[-1]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_guide_examples_run_as_written(cluster):
    namespace = {"__name__": "distributed_guide"}  # not importable: functions go by value
    for i, code in enumerate(_examples()):
        code = code.replace(PLACEHOLDER, repr(cluster.scheduler_address))
        exec(compile(code, f"{GUIDE.name} example {i + 1}", "exec"), namespace)  # noqa: S102
    # what the examples left behind, checked beyond their own asserts
    assert namespace["result"].success
    assert abs(namespace["result"].fun - namespace["again"].fun) < 1e-6 * namespace["result"].fun
    assert len(namespace["losses"]) == len(namespace["batches"])
    assert namespace["vg"].client.scheduler.address == cluster.scheduler_address

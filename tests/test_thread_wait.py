"""Numba's OpenMP threads start with a short spin (numbagrad/core/thread_wait.py), the
environment is put back afterwards, and a user's own setting is left alone."""

import os
import subprocess
import sys

import pytest

SCRIPT = """
import os
from numba.np.ufunc import parallel
real = parallel._launch_threads
seen = []
def spy():
    seen.append(os.environ.get("GOMP_SPINCOUNT"))
    return real()
parallel._launch_threads = spy
import numbagrad as ng
import numba
assert not parallel._is_initialized, "importing numbagrad started Numba's threads"
x = ng.ones(8, requires_grad=True)
(x * x).sum().backward()
numba.get_num_threads()
print(seen[:1], os.environ.get("GOMP_SPINCOUNT"), os.environ.get("OMP_WAIT_POLICY"))
"""


def _run(env):
    env = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")[-2]


@pytest.mark.parametrize("user", [{}, {"GOMP_SPINCOUNT": "5"}, {"OMP_WAIT_POLICY": "ACTIVE"}],
                         ids=["unset", "spincount", "wait_policy"])
def test_threads_start_with_a_short_spin_and_the_environment_is_put_back(user):
    env = {"GOMP_SPINCOUNT": None, "OMP_WAIT_POLICY": None, **user}
    line = _run(env)
    if not user:
        assert line == "['1000'] None None"
    elif "GOMP_SPINCOUNT" in user:
        assert line == "['5'] 5 None"  # the user's value, untouched
    else:
        assert line == "[None] None ACTIVE"

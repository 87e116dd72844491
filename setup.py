"""The one compiled part of the package, beside pyproject.toml (which holds the rest): the C
recorder of a small op's node (numbagrad/engine/fast_push.py). Optional: an install without
a C compiler warns and keeps the Python recorder."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("numbagrad.engine._fast_push", ["numbagrad/engine/_fast_push.c"],
                             optional=True)])

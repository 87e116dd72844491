"""The one compiled part of the package, beside pyproject.toml (which holds the rest): the C
recorder of a scalar graph's op (numbagrad/engine/scalar_push.py). Optional: an install
without a C compiler warns and keeps the Python recorder."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("numbagrad.engine._push0d", ["numbagrad/engine/_push0d.c"],
                             optional=True)])

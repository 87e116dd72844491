"""docs/ops.md is the op table's current catalogue (regenerate it with
``python tools/regenerate.py``, with the stubs)."""

import pathlib

from numbagrad import catalogue

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "ops.md"


def test_docs_ops_page_is_generated_from_the_table():
    assert DOC.read_text() == catalogue.markdown(), \
        "docs/ops.md is stale: python tools/regenerate.py"

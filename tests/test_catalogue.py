"""docs/ops.md is the op table's current catalogue (regenerate it with
``python -m numbagrad.catalogue > docs/ops.md``)."""

import pathlib

from numbagrad import catalogue

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "ops.md"


def test_docs_ops_page_is_generated_from_the_table():
    assert DOC.read_text() == catalogue.markdown(), \
        "docs/ops.md is stale: python -m numbagrad.catalogue > docs/ops.md"

"""tools/check_reference.py, the CI check on the built API reference, finds empty entries and
entries that show only their value's built-in type's docstring, and passes documented ones."""

import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parent.parent / "tools" / "check_reference.py"
_spec = importlib.util.spec_from_file_location("check_reference", TOOL)
check_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_reference)


def _entry(ident, body):
    return (f'<div class="doc doc-object doc-function">\n<h3 id="{ident}" class="doc doc-heading">'
            f'<code>{ident.rsplit(".", 1)[-1]}(x)</code></h3>\n'
            f'<div class="doc doc-contents ">{body}</div></div>\n')


def test_empty_and_borrowed_entries_are_found():
    page = (_entry("ng.documented", "<p>Adds one.</p>") + _entry("ng.empty", "\n  \n") +
            _entry("ng.constant", f"<p>{int.__doc__.splitlines()[0]}</p><p>more</p>") +
            _entry("ng.last", "<p>Says <code>x</code>.</p>"))
    assert check_reference.empty_entries(page) == ["ng.empty", "ng.constant"]


def test_the_check_fails_on_a_site_with_an_empty_entry(tmp_path, capsys):
    (tmp_path / "api" / "x").mkdir(parents=True)
    page = tmp_path / "api" / "x" / "index.html"
    page.write_text(_entry("ng.documented", "<p>Adds one.</p>"))
    assert check_reference.main(str(tmp_path)) == 0
    page.write_text(_entry("ng.documented", "<p>Adds one.</p>") + _entry("ng.empty", ""))
    assert check_reference.main(str(tmp_path)) == 1
    assert "ng.empty" in capsys.readouterr().out
    assert check_reference.main(str(tmp_path / "nothing")) == 1

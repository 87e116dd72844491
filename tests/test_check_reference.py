"""tools/check_reference.py, the CI check on the built API reference, finds empty entries and
entries that show only their value's built-in type's docstring, and passes documented ones;
it finds entries that render without the arguments or return value torch's documentation
gives them (tools/torch_doc_sections.json), and counts the entries that show parameters."""

import importlib.util
import json
from pathlib import Path

TOOL = Path(__file__).resolve().parent.parent / "tools" / "check_reference.py"
_spec = importlib.util.spec_from_file_location("check_reference", TOOL)
check_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_reference)

PARAMETERS = '<p><span class="doc-section-title">Parameters:</span></p><table></table>'
RETURNS = '<p><span class="doc-section-title">Returns:</span></p><table></table>'


def _entry(ident, body, params="x", kind="function"):
    """One object as mkdocstrings renders it: heading with the signature, then contents."""
    name = ident.rsplit(".", 1)[-1]
    spans = '<span class="p">,</span> '.join(f'<span class="n">{part}</span>'
                                             for part in params.split(", "))
    signature = f'{name}<span class="p">(</span>{spans}<span class="p">)</span>'
    return (f'<div class="doc doc-object doc-{kind}">\n<h3 id="{ident}" class="doc doc-heading">'
            f'<code class="highlight language-python">{signature}</code></h3>\n'
            f'<div class="doc doc-contents ">{body}</div></div>\n')


def _site(tmp_path, page, sections=None):
    (tmp_path / "api" / "x").mkdir(parents=True, exist_ok=True)
    (tmp_path / "api" / "x" / "index.html").write_text(page)
    path = tmp_path / "sections.json"
    path.write_text(json.dumps(sections or {}))
    return str(tmp_path), path


def test_empty_and_borrowed_entries_are_found():
    page = (_entry("ng.documented", "<p>Adds one.</p>") + _entry("ng.empty", "\n  \n") +
            _entry("ng.constant", f"<p>{int.__doc__.splitlines()[0]}</p><p>more</p>") +
            _entry("ng.last", "<p>Says <code>x</code>.</p>"))
    assert check_reference.empty_entries(page) == ["ng.empty", "ng.constant"]


def test_the_check_fails_on_a_site_with_an_empty_entry(tmp_path, capsys):
    site, sections = _site(tmp_path, _entry("ng.documented", "<p>Adds one.</p>"))
    assert check_reference.main(site, sections) == 0
    _site(tmp_path, _entry("ng.documented", "<p>Adds one.</p>") + _entry("ng.empty", ""))
    assert check_reference.main(site, sections) == 1
    assert "ng.empty" in capsys.readouterr().out
    assert check_reference.main(str(tmp_path / "nothing"), sections) == 1


def test_the_parameters_of_a_rendered_signature():
    names = check_reference.signature_parameters
    assert names(_entry("ng.f", "", "input, other, *, alpha=1, out=None")) == \
        ["input", "other", "alpha", "out"]
    # defaults with commas and brackets, var-positional and keyword, positional-only marker
    assert names(_entry("ng.f", "", "x, /, size=(1, 2), *args, key={'a': [1, 2]}, **kw")) == \
        ["x", "size", "args", "key", "kw"]
    assert names(_entry("ng.f", "", "")) == []
    attribute = '<h2 id="ng.T"><code class="highlight language-python">T</code></h2>'
    assert names(attribute) is None


SECTIONS = {"ng.add": {"args": [["input", "Tensor", "the input."]], "returns": ""},
            "ng.sub": {"args": [["other", "Tensor", "subtracted."]], "returns": ""},
            "ng.view": {"args": [["shape", "int...", "the size."]], "returns": ""},
            "ng.svd": {"args": [["A", "Tensor", "a matrix."]], "returns": "(U, S, Vh)"},
            "ng.Linear": {"args": [["in_features", "int", "size in."]], "returns": ""}}


def test_entries_without_the_torch_sections_they_should_show_are_found():
    page = (_entry("ng.add", "<p>Adds.</p>" + PARAMETERS, "input, other") +
            _entry("ng.sub", "<p>Subtracts.</p>", "input, other") +
            # torch documents no parameter the rendered signature has: nothing to show
            _entry("ng.view", "<p>A view.</p>", "*args") +
            _entry("ng.svd", "<p>SVD.</p>" + PARAMETERS, "A") +
            _entry("ng.mul", "<p>Multiplies.</p>", "input, other") +
            _entry("ng.Linear", "<p>A layer.</p>", "in_features, out_features", "class") +
            _entry("ng.t", "<p>Transposes.</p>", ""))
    with_parameters, shown, missing = check_reference.check_sections(page, SECTIONS)
    assert missing == ["ng.sub", "ng.svd", "ng.Linear"]
    assert with_parameters == {"function": 5, "class": 1}
    assert shown == {"function": 2, "class": 0}


def test_the_check_fails_when_torch_arguments_go_missing(tmp_path, capsys):
    shown = _entry("ng.add", "<p>Adds.</p>" + PARAMETERS, "input, other")
    site, sections = _site(tmp_path, shown + _entry("ng.mul", "<p>Mul.</p>", "input"), SECTIONS)
    assert check_reference.main(site, sections) == 0
    out = capsys.readouterr().out
    assert "functions and methods with parameters: 1 of 2 show them" in out
    _site(tmp_path, _entry("ng.add", "<p>Adds.</p>", "input, other"), SECTIONS)
    assert check_reference.main(site, sections) == 1
    out = capsys.readouterr().out
    assert "1 entries without torch's arguments or return value" in out and "  ng.add\n" in out

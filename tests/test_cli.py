"""``python -m numbagrad``'s command line: --help lists the commands and exits 0 without
running any; an unknown command is refused on stderr with the usage and exit status 2.
(The plain command's tour runs in test_seeds.py.)"""

import subprocess
import sys

import pytest

from numbagrad import __main__ as cli


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["help"], ["warmup", "--help"]])
def test_help_lists_the_commands(argv, capsys):
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("usage: python -m numbagrad")
    for command in ("(none)", "warmup SCRIPT [ARGS...]", "warmup  ", "-h, --help"):
        assert command in out, command
    assert "numbagrad warmup: running" not in out  # listed, not run


def test_an_unknown_command_is_refused(capsys):
    assert cli.main(["wramup"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: python -m numbagrad")
    assert "unknown command 'wramup'" in err


def test_help_from_the_shell():
    run = subprocess.run([sys.executable, "-m", "numbagrad", "--help"], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == cli.HELP

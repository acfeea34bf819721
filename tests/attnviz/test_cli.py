"""The ``attnviz`` command: each subcommand runs the clone's entry point, ``serve`` is
``make run``'s ``python -m ui.launch`` (issue #48 item 1)."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from attnviz import cli
from tests.helpers import ROOT


def test_every_command_names_a_main_of_the_tree():
    for name, (module, _) in cli.COMMANDS.items():  # read, not imported (torch, the bench)
        tree = ast.parse(Path(importlib.util.find_spec(module).origin).read_text())
        mains = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "main"]
        assert [a.arg for a in mains[0].args.args] == ["argv"], name
    assert cli.root() == ROOT and (cli.root() / "app.py").is_file()


def test_help_lists_the_commands(capsys):
    cli.main(["--help"])
    out = capsys.readouterr().out
    assert "  convert          convert a checkpoint" in out and "(python -m upload.convert)" in out


def test_an_unknown_command_is_one_line():
    with pytest.raises(SystemExit, match="no command 'nope': one of serve, convert"):
        cli.main(["nope"])


def test_serve_passes_streamlit_options_and_absolute_model_folders(tmp_path):
    (tmp_path / "gpt2").mkdir()
    argv = cli.serve_argv(["--port", "8600", "--model", str(tmp_path / "gpt2"), "--context", "64",
                           "--server.address", "0.0.0.0"])  # fmt: skip
    assert argv == ["--server.address", "0.0.0.0", "--server.port", "8600", "--",
                    "--model", str(tmp_path / "gpt2"), "--context", "64"]  # fmt: skip
    assert cli.serve_argv([]) == []


def test_serve_refuses_a_missing_folder_in_one_line(tmp_path):
    with pytest.raises(SystemExit, match="--model .*nothing: not a folder"):
        cli.serve_argv(["--model", str(tmp_path / "nothing")])


def test_a_command_gets_the_rest_of_the_line_and_its_name(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["export", "--help"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("usage: attnviz export")
    assert sys.argv[0] != "attnviz export"  # given back


def test_python_m_attnviz_runs_the_command():
    done = subprocess.run([sys.executable, "-m", "attnviz", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0 and done.stdout.startswith("usage: attnviz COMMAND")

"""The checks CI runs besides the tests: ruff (lint, format) and mypy, configured in pyproject.

They run here, as tests, so that the README's one test command (``pip install '.[test]' &&
python -m pytest``) is all CI needs; the ``test`` extra installs both tools. Each check prints
the tool's own report when it fails.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from .conftest import REPO


def _run_tool(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed; pip install '.[test]' installs it")
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


def test_ruff_finds_nothing_to_report() -> None:
    result = _run_tool("ruff", "check", "--no-cache", ".")
    assert 0 == result.returncode, result.stdout + result.stderr


def test_ruff_format_would_change_no_file() -> None:
    result = _run_tool("ruff", "format", "--check", "--no-cache", ".")
    assert 0 == result.returncode, result.stdout + result.stderr


def test_mypy_strict_finds_no_type_error() -> None:
    # The files and the strict flag come from pyproject.toml: the package and the scenarios.
    result = _run_tool("mypy")
    assert 0 == result.returncode, result.stdout + result.stderr


def test_the_png_renderer_is_installed_so_its_tests_run() -> None:
    assert importlib.util.find_spec("PIL") is not None, "pip install '.[test]' installs Pillow"

"""The distributions a user installs: `python -m build` makes an sdist and a wheel that `twine
check` passes, the sdist holds what a user needs beside the package, and the wheel, installed in
a fresh virtualenv, runs a scenario from a directory outside the checkout.

One build serves every test of this module (a module-scoped fixture: building takes seconds).
`--no-isolation` builds with the setuptools of this environment (the `release` extra, which the
`test` extra includes), so no build dependency is downloaded here.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import warband

from .conftest import REPO, last_json_line


@dataclass(frozen=True)
class Distributions:
    sdist: Path
    wheel: Path


def _run(*command: str | Path, cwd: Path = REPO, timeout: float = 180) -> str:
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    assert 0 == done.returncode, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def distributions(tmp_path_factory: pytest.TempPathFactory) -> Distributions:
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, REPO)
    (sdist,) = out.glob("warband-*.tar.gz")
    (wheel,) = out.glob("warband-*.whl")
    return Distributions(sdist, wheel)


def test_the_version_of_both_distributions_is_the_package_version(
    distributions: Distributions,
) -> None:
    version = warband.__version__
    assert f"warband-{version}.tar.gz" == distributions.sdist.name
    assert f"warband-{version}-py3-none-any.whl" == distributions.wheel.name


def test_twine_check_passes_on_both_distributions(distributions: Distributions) -> None:
    output = _run(
        sys.executable, "-m", "twine", "check", "--strict", distributions.sdist, distributions.wheel
    )
    assert 2 == output.count("PASSED"), output


def test_the_wheel_metadata_has_the_licence_classifiers_extras_and_typed_marker(
    distributions: Distributions,
) -> None:
    with zipfile.ZipFile(distributions.wheel) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(f"warband-{warband.__version__}.dist-info/METADATA").decode()
    assert "warband/py.typed" in names
    assert "Classifier: Typing :: Typed" in metadata
    assert "License-Expression: MIT" in metadata
    assert "Provides-Extra: docs" in metadata


def test_the_wheel_holds_the_maps_domains_page_and_every_scenario(
    distributions: Distributions,
) -> None:
    with zipfile.ZipFile(distributions.wheel) as wheel:
        names = set(wheel.namelist())
    wanted = {
        *(f"warband/_scenarios/{file.name}" for file in (REPO / "scenarios").glob("*.py")),
        *(_package_files("warband/world/maps", "*.toml")),
        *(_package_files("warband/agents/domains", "*.htn")),
        *(_package_files("warband/planning/domains", "*.htn")),
        *(_package_files("warband/view/static", "*")),
    }
    assert set() == wanted - names


def test_the_sdist_holds_the_protocol_changelog_scenarios_docs_and_tests(
    distributions: Distributions,
) -> None:
    with tarfile.open(distributions.sdist) as sdist:
        root = f"warband-{warband.__version__}/"
        names = {name.removeprefix(root) for name in sdist.getnames()}
    wanted = {
        "PROTOCOL.md",
        "CHANGELOG.md",
        "README.md",
        "LICENSE",
        "mkdocs.yml",
        "setup.py",
        "warband/py.typed",
        *(f"scenarios/{file.name}" for file in (REPO / "scenarios").glob("*.py")),
        *(_package_files("warband/world/maps", "*.toml")),
        *(_package_files("warband/agents/domains", "*.htn")),
        *(str(file.relative_to(REPO)) for file in (REPO / "docs").rglob("*.md")),
        "tests/conftest.py",
        "examples/train_env.py",
    }
    assert set() == wanted - names
    assert [] == [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


@pytest.mark.processes
def test_the_wheel_installed_in_a_fresh_venv_runs_a_scenario_outside_the_checkout(
    distributions: Distributions, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    # The dependencies come from the package index pip is set up with (CI reaches it).
    _run(python, "-m", "pip", "install", "--quiet", distributions.wheel, timeout=600)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run(python, "-c", "import warband; print(warband.__file__)", cwd=elsewhere)
    assert Path(where.strip()).is_relative_to(venv), f"warband imported from {where}"

    command = venv / "bin" / "warband"
    copied = _run(command, "scenarios", "--copy", "scenarios", cwd=elsewhere).split()
    assert str(Path("scenarios") / "ping_pong.py") in copied
    by_path = last_json_line(
        _run(command, "run", "scenarios/ping_pong.py", "--json", cwd=elsewhere)
    )
    by_name = last_json_line(
        _run(command, "run", "ping_pong", "--processes", "--json", cwd=elsewhere)
    )
    assert ("success", "success") == (by_path["outcome"], by_name["outcome"])
    assert 5 == by_name["processes"]


def _package_files(folder: str, pattern: str) -> set[str]:
    return {str(file.relative_to(REPO)) for file in (REPO / folder).glob(pattern) if file.is_file()}

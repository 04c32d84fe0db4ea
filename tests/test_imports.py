"""Each package imports only what the layering in DESIGN.md allows, seen from a new interpreter.

``planning`` depends on nothing of warband's runtime (pure: no sockets, no asyncio); ``world``
on ``messaging`` only; ``messaging`` on nothing above it. ``warband.exceptions`` and
``warband.values`` are the shared leaves every layer may import. The root package must not
break this by importing the runtime eagerly (it did: ``import warband.planning`` loaded zmq).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import REPO

FORBIDDEN: dict[str, frozenset[str]] = {
    "warband": frozenset({"zmq", "asyncio", "structlog", "msgspec", "warband.messaging"}),
    "warband.exceptions": frozenset({"zmq", "asyncio", "warband.messaging"}),
    "warband.planning": frozenset(
        {
            "zmq",
            "asyncio",
            "structlog",
            "msgspec",
            "warband.messaging",
            "warband.world",
            "warband.scenario",
        }
    ),
    "warband.world": frozenset(
        {"warband.planning", "warband.scenario", "warband.launcher", "warband.cli"}
    ),
    "warband.messaging": frozenset({"warband.world", "warband.planning", "warband.scenario"}),
    "warband.scenario": frozenset({"warband.cli", "warband.launcher"}),
    # The environments sit on top of the runtime, and beside the command line, not on it.
    "warband.env": frozenset({"warband.cli", "warband.sweep", "warband.view"}),
}


def _modules_loaded_by(module: str) -> set[str]:
    """The names in ``sys.modules`` after ``import module`` in a new interpreter."""
    code = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert 0 == result.returncode, result.stderr
    loaded: list[str] = json.loads(result.stdout)
    return set(loaded)


def _hits(loaded: set[str], forbidden: frozenset[str]) -> list[str]:
    return sorted(
        name for name in loaded if any(name == f or name.startswith(f"{f}.") for f in forbidden)
    )


@pytest.mark.parametrize("module", sorted(FORBIDDEN))
def test_a_package_imports_only_what_the_layering_allows(module: str) -> None:
    assert [] == _hits(_modules_loaded_by(module), FORBIDDEN[module])


def test_the_root_package_imports_a_public_name_on_first_use() -> None:
    code = (
        "import sys, warband\n"
        "before = 'warband.messaging' in sys.modules\n"
        "actor = warband.Actor\n"
        "print(before, 'warband.messaging' in sys.modules, actor.__name__,\n"
        "      'Scenario' in dir(warband))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert 0 == result.returncode, result.stderr
    assert "False True Actor True" == result.stdout.strip()


def test_an_unknown_name_on_the_root_package_is_an_attribute_error() -> None:
    import warband

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        warband.Nope  # noqa: B018

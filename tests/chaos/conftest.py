"""The chaos tests drive the harness of ``warband bench chaos`` (bench/chaos.py), scaled down."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="session")
def chaos() -> ModuleType:
    """bench/chaos.py, loaded by path as ``warband bench chaos`` loads it."""
    path = REPO / "bench" / "chaos.py"
    spec = importlib.util.spec_from_file_location("warband_bench_chaos", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

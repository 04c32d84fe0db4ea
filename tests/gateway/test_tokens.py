"""Gateway tokens: `warband keys DIR --tokens` writes one per agent id, owner-only; the gateway
reads them and tells a right token from a wrong one; without tokens it listens on loopback only,
and bad flags get one line and exit 2."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from warband.exceptions import ConfigurationError
from warband.gateway import GatewayConfig, load_tokens, write_tokens


def _warband(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "warband", *argv], capture_output=True,
                          text=True, timeout=60, cwd=REPO)  # fmt: skip


def test_keys_writes_one_owner_only_token_per_agent_and_keeps_existing_ones(tmp_path: Path) -> None:
    made = _warband("keys", str(tmp_path), "--tokens", "red-1,blue-2")
    assert 0 == made.returncode, made.stderr
    assert {"red-1.token", "blue-2.token"} == {p.name for p in tmp_path.iterdir()}
    for path in tmp_path.iterdir():
        assert 0o600 == stat.S_IMODE(path.stat().st_mode)
    tokens = load_tokens(tmp_path)
    red = (tmp_path / "red-1.token").read_text().strip()
    assert 64 == len(red) and red != tokens.by_agent["blue-2"]
    assert tokens.refusal("red-1", red) is None
    assert "wrong token for agent 'red-1'" == tokens.refusal("red-1", tokens.by_agent["blue-2"])
    assert "no token was made for agent 'red-2'" in str(tokens.refusal("red-2", red))
    again = _warband("keys", str(tmp_path), "--tokens", "red-1")
    assert 2 == again.returncode and "red-1.token exists already; pass --force" in again.stderr
    assert red == (tmp_path / "red-1.token").read_text().strip()


def test_token_files_that_cannot_be_used_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"holds no ID\.token file"):
        load_tokens(tmp_path)
    (tmp_path / "red-1.token").write_text("short\n")
    with pytest.raises(ConfigurationError, match=r"red-1\.token holds no token"):
        load_tokens(tmp_path)
    with pytest.raises(ConfigurationError, match="invalid agent id 'broker'"):
        write_tokens(tmp_path, ["broker"])


def test_without_tokens_the_gateway_listens_on_loopback_only(tmp_path: Path) -> None:
    GatewayConfig(connect="tcp://127.0.0.1:5555", host="::1")
    with pytest.raises(ConfigurationError, match="listens on loopback only"):
        GatewayConfig(connect="tcp://127.0.0.1:5555", host="0.0.0.0")
    refused = _warband("gateway", "--connect", "tcp://127.0.0.1:5555", "--host", "0.0.0.0")
    assert 2 == refused.returncode
    assert 1 == len(refused.stderr.strip().splitlines())
    assert "--host 0.0.0.0: without --tokens" in refused.stderr
    write_tokens(tmp_path, ["red-1"])
    GatewayConfig(connect="tcp://127.0.0.1:5555", host="0.0.0.0", tokens=load_tokens(tmp_path))


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--queue", "0"], "--queue must be at least 1"),
        (["--tick-timeout", "0"], "--tick-timeout must be positive"),
        (["--clock", "#x"], "invalid agent id '#x'"),
        (["--tokens", "/nonexistent"], "--tokens '/nonexistent' is not a directory"),
    ],
)
def test_bad_gateway_flags_get_one_line_and_exit_2(argv: list[str], says: str) -> None:
    refused = _warband("gateway", "--connect", "tcp://127.0.0.1:5555", *argv)
    assert 2 == refused.returncode
    assert 1 == len(refused.stderr.strip().splitlines()), refused.stderr
    assert says in refused.stderr


def test_warzone_refuses_an_outside_player_that_is_no_bot_of_the_match() -> None:
    refused = _warband("run", "scenarios/warzone.py", "--param", "bots=2", "--param",
                       "outside=red-3")  # fmt: skip
    assert 2 == refused.returncode
    assert "red-3 is no bot of this match; bots are red-1..red-2 and blue-1..blue-2" in (
        refused.stderr
    )

"""Every command of the tutorial's pages runs as written, on the files the pages show
(docs/tutorial/files/), from a directory holding only those files, as a user following along
would; and the concept pages' programs print what their pages say they print.

The commands are read from the pages' ```sh blocks, so a page that changes is tested as it
reads. Two things a terminal does are done here by hand: a command ending in `&` runs in the
background (stopped at the end of its page), and `warband run ... --endpoint` (a run that waits
for a client the next block starts) runs in the background until that client has played.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import REPO, last_json_line
from .proc import free_tcp_port

DOCS = REPO / "docs"
FILES = DOCS / "tutorial" / "files"


def _commands(page: str) -> list[str]:
    """The command lines of the page's ```sh blocks, in order."""
    text = (DOCS / page).read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def _argv(line: str) -> list[str]:
    words = shlex.split(line.removesuffix("&"))
    if words[0] == "warband":
        return [sys.executable, "-m", "warband", *words[1:]]
    assert "python" == words[0], f"the tutorial runs only warband and python: {line}"
    return [sys.executable, *words[1:]]


class Terminal:
    """Runs a page's commands in one directory: foreground ones to the end, background ones
    until the page is done (then stopped and reaped, whatever happened)."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.port = port
        self.background: list[tuple[str, subprocess.Popen[str]]] = []

    def _line(self, line: str) -> str:
        return line.replace("127.0.0.1:5555", f"127.0.0.1:{self.port}")

    def run(self, line: str) -> subprocess.CompletedProcess[str]:
        if line.endswith("&") or ("warband run" in line and "--endpoint" in line):
            self.start(line)
            return subprocess.CompletedProcess(line, 0, "", "")
        done = subprocess.run(
            _argv(self._line(line)),
            cwd=self.folder,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        assert 0 == done.returncode, f"{line}\n{done.stdout}\n{done.stderr}"
        return done

    def start(self, line: str) -> None:
        process = subprocess.Popen(
            _argv(self._line(line)),
            cwd=self.folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        self.background.append((line, process))

    def finish(self, line: str) -> str:
        """Wait for the background command ``line`` to end by itself; its stdout."""
        process = next(process for started, process in self.background if started == line)
        out, err = process.communicate(timeout=120)
        assert 0 == process.returncode, f"{line}\n{out}\n{err}"
        return out

    def close(self) -> None:
        for _, process in self.background:
            if process.poll() is None:
                process.terminate()
            try:
                process.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    for file in FILES.iterdir():
        shutil.copyfile(file, tmp_path / file.name)
    shell = Terminal(tmp_path, free_tcp_port())
    try:
        yield shell
    finally:
        shell.close()


def test_the_first_scenario_runs_succeeds_and_its_test_passes(terminal: Terminal) -> None:
    lines = _commands("tutorial/first-scenario.md")
    assert 3 == len(lines)
    outputs = [terminal.run(line).stdout for line in lines]
    page = (DOCS / "tutorial" / "first-scenario.md").read_text(encoding="utf-8")
    summary = re.search(r"^scenario patrol: .*$", page, re.M)
    assert summary is not None
    assert summary.group(0) in outputs[0]
    assert "reached 5 of 5 waypoints" == last_json_line(outputs[1])["outcome_summary"]
    assert "1 passed" in outputs[2]


def test_the_own_role_page_plays_the_sentries_and_their_test_passes(terminal: Terminal) -> None:
    lines = _commands("tutorial/own-role.md")
    assert ["warband run sentries.py --ticks 60", "python -m pytest test_sentries.py"] == lines
    played, tested = (terminal.run(line).stdout for line in lines)
    assert "scenario sentries:" in played
    assert "1 passed" in tested


def test_the_own_map_page_draws_the_arena_and_plays_on_it(terminal: Terminal) -> None:
    lines = _commands("tutorial/own-map.md")
    assert 2 == len(lines)
    for line in lines:
        terminal.run(line)
    assert (terminal.folder / "arena.svg").read_text().startswith("<svg")


@pytest.mark.processes
def test_the_processes_page_runs_traces_kills_and_plays_across_hosts(
    terminal: Terminal,
) -> None:
    lines = _commands("tutorial/processes.md")
    outputs = {line: terminal.run(line).stdout for line in lines}
    trace = outputs["warband trace runs/patrol --agent scout"]
    assert "Order" in trace and "CompletionReport" in trace
    mermaid = outputs[
        "warband trace runs/patrol --format mermaid --type Order --type CompletionReport"
    ]
    assert mermaid.startswith("sequenceDiagram")
    killed = outputs["warband run patrol.py --kill scout@5"]
    assert "FAILURE - reached 1 of 3 waypoints" in killed
    assert re.search(r"ticks [56] \(no report for wp-2\)", killed), killed
    assert "left the run: scout (left: killed at tick 5)" in killed
    clock = next(line for line in lines if "--id clock" in line)
    assert "SUCCESS - reached 3 of 3 waypoints" in outputs[clock]
    for line, process in terminal.background:
        if "warband agent" in line:  # the agents end with the run; the broker serves on
            assert 0 == process.wait(timeout=60), line


@pytest.mark.processes
def test_nora_in_another_language_answers_the_base(terminal: Terminal) -> None:
    lines = _commands("tutorial/other-language.md")
    assert 3 == len(lines)
    for line in lines:
        terminal.run(line)
    run = next(line for line in lines if line.startswith("warband run"))
    assert "SUCCESS - the base heard ['nora: loud and clear']" in terminal.finish(run)
    trace = terminal.run("warband trace runs/radio").stdout
    assert "nora" in trace


@pytest.mark.parametrize("program", ["concepts/files/guard_htn.py", "concepts/files/cell_goap.py"])
def test_a_concept_program_prints_what_its_page_shows(program: str) -> None:
    page_name = {"guard_htn.py": "htn.md", "cell_goap.py": "goap.md"}[Path(program).name]
    page = (DOCS / "concepts" / page_name).read_text(encoding="utf-8")
    after = page[page.index(f'--8<-- "docs/{program}"') :]
    shown = re.search(r"```text\n(.*?)```", after, re.S)
    assert shown is not None
    done = subprocess.run(
        [sys.executable, str(DOCS / program)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert 0 == done.returncode, done.stderr
    assert shown.group(1).rstrip() == done.stdout.rstrip()

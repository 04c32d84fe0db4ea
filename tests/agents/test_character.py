"""The GOAP character's contracts that need no run: its role carries a working memory."""

from __future__ import annotations

import pytest

from warband.agents import Agent, Role
from warband.agents.character import Character, Recollection, WorkingMemory, character_role
from warband.agents.execute import TaskHandler, TaskStatus
from warband.exceptions import ConfigurationError
from warband.planning import Task
from warband.planning.domains import fear


def _done(agent: Agent, task: Task) -> TaskStatus:
    return "done"


def _tasks() -> dict[str, TaskHandler]:
    return {action.name: _done for action in fear.brain("rat").actions}


def test_a_character_refuses_a_role_without_a_working_memory_daemon() -> None:
    role = Role("rat", fear.brain("rat"), tasks=_tasks())
    with pytest.raises(ConfigurationError, match="character_role"):
        Character("rat", role)


def test_a_character_notes_failures_in_the_working_memory_its_role_was_given() -> None:
    working = WorkingMemory(failure_ticks=5)
    role = character_role("rat", fear.brain("rat"), _tasks(), working_memory=working)
    rat = Character("rat", role)
    rat.component(Recollection).working.note_failure("Patrol", tick=0)
    assert frozenset({"Patrol"}) == working.failed()


def test_working_memory_refuses_a_negative_failure_memory() -> None:
    with pytest.raises(ConfigurationError, match="failure_ticks"):
        WorkingMemory(failure_ticks=-1)

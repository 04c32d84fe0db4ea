"""A cooperation responder in its own process, for the delivery fault tests.

    python -m tests.messaging.delivery_peer ENDPOINT AGENT_ID JOURNAL

It accepts a RequestTalk (refusing requesters whose id ends in ``-7`` or ``-14``...: every
seventh), accepts the RequestCooperation, and a second after the EndTalk sends a CooperationResult.
It writes one JSON line per event to JOURNAL, flushed at once (the test may ``kill -9`` it):
``{"conversation": null, "event": "ready"}`` once registered,
``{"conversation": ..., "event": "open"}`` when it accepts a talk, then exactly one terminal
event, ``done`` (result sent), ``refused`` or ``timed out`` (the requester went silent).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import IO

from warband.messaging import (
    Actor,
    CooperationReply,
    CooperationResult,
    EndTalk,
    RequestCooperation,
    RequestTalk,
    TalkReply,
    handles,
)

WORK_S = 1.0
"""How long achieving the conditions takes, between the EndTalk and the CooperationResult."""
SILENT_AFTER_S = 8.0
"""A conversation whose requester says nothing more for this long ends ``timed out``."""


class Responder(Actor):
    def __init__(self, actor_id: str, journal: IO[str]) -> None:
        super().__init__(actor_id)
        self.journal = journal
        self.open: dict[str, float] = {}

    async def on_start(self) -> None:
        self.every(1.0, self._drop_silent)
        self._write(None, "ready")

    def _write(self, conversation: str | None, event: str) -> None:
        self.journal.write(json.dumps({"conversation": conversation, "event": event}) + "\n")
        self.journal.flush()

    def _end(self, conversation: str, event: str) -> None:
        if self.open.pop(conversation, None) is not None:
            self._write(conversation, event)

    @handles(RequestTalk)
    def on_talk(self, request: RequestTalk) -> None:
        if int(request.sender.rsplit("-", 1)[1]) % 7 == 0:
            self._write(request.conversation, "open")
            self._write(request.conversation, "refused")
            self.reply(request, TalkReply(accepted=False, reason="dislike"))
            return
        assert request.conversation is not None
        self.open[request.conversation] = asyncio.get_running_loop().time()
        self._write(request.conversation, "open")
        self.reply(request, TalkReply(accepted=True))

    @handles(RequestCooperation)
    def on_cooperation(self, request: RequestCooperation) -> None:
        if request.conversation in self.open:
            self.open[request.conversation] = asyncio.get_running_loop().time()
        self.reply(request, CooperationReply(accepted=True, cost=1.0))

    @handles(EndTalk)
    def on_end(self, end: EndTalk) -> None:
        conversation = end.conversation
        if conversation is None or conversation not in self.open:
            return
        if end.reason == "timeout":
            self._end(conversation, "timed out")
            return
        self.open[conversation] = asyncio.get_running_loop().time()
        self.call_later(WORK_S, lambda: self._report(end.sender, conversation))

    def _report(self, requester: str, conversation: str) -> None:
        self.send(CooperationResult(recipient=requester, conversation=conversation, success=True))
        self._end(conversation, "done")

    def _drop_silent(self) -> None:
        now = asyncio.get_running_loop().time()
        for conversation, last in list(self.open.items()):
            if now - last > SILENT_AFTER_S:
                self._end(conversation, "timed out")


def main() -> None:
    endpoint, agent_id, journal_path = sys.argv[1:4]
    with open(journal_path, "a") as journal:
        responder = Responder(agent_id, journal)
        asyncio.run(responder.run(endpoint, mode="realtime", heartbeat_interval=3600))


if __name__ == "__main__":
    main()

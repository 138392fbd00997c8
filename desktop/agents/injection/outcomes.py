"""What the warnings Engram's own agent heard did (issue 25), in the same records as the hooks'.

A hook records each warning it says, marks it ``repeated`` when its failure comes back later in the
session and ``avoided`` when the session ends without it (``triggers/warn.Outcomes``). Engram's own
agent hears its lessons with a call's result; the same three steps happen here, through the same
core calls, so ``engram report`` and the Agents tab count every door.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from desktop.memory.triggers.model import shape_of
from desktop.memory.triggers.warn import Outcomes

if TYPE_CHECKING:
    from desktop.memory.project import Project

log = logging.getLogger("engram.agents.outcomes")

#: How long a session waits for one outcome write (the writer thread is shared).
WRITE_WAIT_S = 10


class AgentWarnings:
    """The warning outcomes of one session of Engram's own agent."""

    def __init__(self, project: Project, session_id: str, agent: str) -> None:
        """``project`` is the open project (its database, memories and root)."""
        self.project = project
        self.session_id = session_id
        self.agent = agent
        self.outcomes = Outcomes(project.db)

    def after_call(self, call_id: str, tool: str, args: dict[str, Any], files: list[str], output: str, *,
                   failed: bool, raw_tool: str = "") -> None:
        """A call just ran: when it failed, a lesson this session heard earlier did not help."""
        if not failed:
            return
        marked = self.outcomes.failed_again(self.project.memories, shape_of(tool, args, files, raw_tool=raw_tool),
                                            self.project.info.root, output, self.session_id, call_id)
        if marked is not None:
            marked.result(WRITE_WAIT_S)

    def warned(self, call_id: str, memory_ids: Iterable[int], call: str) -> None:
        """Lessons said with the result of call ``call_id``."""
        ids = list(memory_ids)
        if ids:
            self.outcomes.warned(self.session_id, self.agent, ids, call_id, call).result(WRITE_WAIT_S)

    def close(self) -> None:
        """The session ended: what it was warned about and did not repeat was avoided."""
        try:
            self.outcomes.close(self.session_id).result(WRITE_WAIT_S)
        except Exception:  # the session's result stands without it
            log.exception("closing the warnings of session %s failed", self.session_id)

"""How large is what model synthesis sends? Evidence of every BookMinder session, measured.

Each finished session's evidence (``desktop.memory.observer.evidence``) is the only
input of the per-session synthesis call; this prints its size in characters and
WordPiece tokens, and how often the caps are reached, so a user can judge what a
local model's context window must hold. No model is called.

Run: .venv/bin/python bench/bench_synthesis.py [--data ../shared/data/transcripts/bookminder]
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bookminder_parser import folder_from_args, parse_all  # noqa: E402
from desktop.memory.observer.evidence import MAX_COMMANDS, MAX_USER_MESSAGES  # noqa: E402
from desktop.memory.observer.observer import Observer  # noqa: E402
from desktop.memory.text.tokens import count_tokens  # noqa: E402


def main() -> None:
    """Print the evidence-size table."""
    folder = folder_from_args()
    if folder is None:
        return
    chars, tokens, users, commands = [], [], [], []
    for s in parse_all(folder):
        obs = Observer(s.session_id)
        for e in s.events:
            obs.observe(e)
        ev = obs.finalize().evidence
        if ev is None:
            continue
        text = ev.to_json()
        chars.append(len(text))
        tokens.append(count_tokens(text))
        users.append(len(ev.user_messages))
        commands.append(len(ev.commands))
    n = len(tokens)
    p90 = sorted(tokens)[int(0.9 * n)]
    print(f"### Session evidence sent to a synthesis model (BookMinder, {n} sessions)\n")
    print("| measure | median | p90 | max |\n|---|---|---|---|")
    print(f"| evidence JSON, characters | {statistics.median(chars):.0f} | {sorted(chars)[int(0.9 * n)]} | "
          f"{max(chars)} |")
    print(f"| evidence JSON, WordPiece tokens | {statistics.median(tokens):.0f} | {p90} | {max(tokens)} |")
    print(f"| user messages (cap {MAX_USER_MESSAGES}) | {statistics.median(users):.0f} | "
          f"{sorted(users)[int(0.9 * n)]} | {max(users)} |")
    print(f"| commands with outcome (cap {MAX_COMMANDS}) | {statistics.median(commands):.0f} | "
          f"{sorted(commands)[int(0.9 * n)]} | {max(commands)} |")
    print(f"\nsessions at the user-message cap: {sum(u >= MAX_USER_MESSAGES for u in users)}/{n}; "
          f"at the command cap: {sum(c >= MAX_COMMANDS for c in commands)}/{n}; "
          f"with no evidence: {sum(1 for u, c in zip(users, commands, strict=True) if not u and not c)}/{n}")


if __name__ == "__main__":
    main()

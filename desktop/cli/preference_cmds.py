"""`engram preferences`: the project's trust level, write policy, auto-memory and promotion preset.

The same audited setter the app's Trust dialog calls (``Project.preferences``): each change
is in the audit log with who made it, from what value, to what value.
"""

from __future__ import annotations

import argparse

from desktop.cli.common import add_common, emit, open_project
from desktop.memory.preferences import PRESET_NAMES, WRITE_POLICIES


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `engram preferences`."""
    p = sub.add_parser("preferences", help="show or change the project's trust level, write policy, auto-memory "
                                           "and promotion preset")
    add_common(p)
    p.add_argument("--trust-level", type=int, choices=[1, 2, 3, 4], default=None,
                   help="1 Cautious, 2 Standard, 3 Confident, 4 Autonomous")
    p.add_argument("--write-policy", choices=WRITE_POLICIES, default=None)
    p.add_argument("--auto-memory", choices=["on", "off"], default=None)
    p.add_argument("--promotion-preset", choices=PRESET_NAMES, default=None)
    p.set_defaults(func=cmd_preferences)


def cmd_preferences(args: argparse.Namespace) -> int:
    """engram preferences [--trust-level N] [--write-policy P] [--auto-memory on|off] [--promotion-preset P]."""
    changes: dict[str, object] = {}
    if args.trust_level is not None:
        changes["trust_level"] = args.trust_level
    if args.write_policy is not None:
        changes["write_policy"] = args.write_policy
    if args.auto_memory is not None:
        changes["auto_memory"] = args.auto_memory == "on"
    if args.promotion_preset is not None:
        changes["promotion_preset"] = args.promotion_preset
    with open_project(args, read_only=not changes) as project:
        changed = project.preferences.set(actor="cli", **changes) if changes else []
        prefs = project.preferences.load()
    data = {"trust_level": prefs.trust_level, "write_policy": prefs.write_policy,
            "auto_memory": "on" if prefs.auto_memory else "off", "promotion_preset": prefs.promotion_preset,
            "changed": changed}
    emit(args, data, lambda: "\n".join(f"{k.replace('_', ' ')}: {v}" for k, v in data.items() if k != "changed")
         + (f"\n(changed: {', '.join(changed)})" if changed else ""))
    return 0

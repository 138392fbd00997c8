"""The browser's detail pane: provenance (always shown), why it was retrieved, history, supersession."""

from __future__ import annotations

import html
import json
from typing import Any

from PySide6.QtCore import QCoreApplication

from desktop.memory.types import Memory
from desktop.ui.adapters.retrieval import Hit
from desktop.ui.labels import action_label, scope_label, score_label, source_label, status_label, type_label
from desktop.ui.theme import accent, css


def _tr(text: str) -> str:
    return QCoreApplication.translate("MemoryDetail", text)


def _bar(value: float, top: float) -> str:
    width = int(160 * (value / top if top else 0))
    colour = css(accent("amber"))
    return (f"<table cellspacing=0 cellpadding=0><tr><td style='background:{colour}' width={max(2, width)}>"
            f"&nbsp;</td><td>&nbsp;{value:.2f}</td></tr></table>")


def render_detail(m: Memory, history: list[dict[str, Any]], hit: Hit | None, query: str,
                  chain: list[Memory]) -> str:
    """HTML for one memory."""
    e = html.escape
    rows = [
        (_tr("Type"), type_label(m.type)), (_tr("Status"), status_label(m.status.value)),
        (_tr("Confidence"), f"{m.confidence:.2f}" + (" · " + _tr("verified by you") if m.user_verified else "")),
        (_tr("Source"), source_label(m.source)), (_tr("Scope"), scope_label(m.scope)),
        (_tr("Files"), ", ".join(m.related_files) or "—"), (_tr("Modules"), ", ".join(m.related_modules) or "—"),
        (_tr("Tags"), ", ".join(m.tags) or "—"), (_tr("Created"), m.created_at[:19].replace("T", " ")),
        (_tr("Used"), QCoreApplication.translate("MemoryDetail", "%n time(s)", "", m.access_count)),
        (_tr("Sessions"), ", ".join(m.provenance_session_ids) or (m.session_id or "—")),
        (_tr("Commit"), m.commit_sha or "—"),
    ]
    parts = [f"<h3>{e(m.citation())}</h3><p>{e(m.content).replace(chr(10), '<br>')}</p>",
             f"<h4>{e(_tr('Provenance'))}</h4><table>"]
    parts += [f"<tr><td><b>{e(k)}</b>&nbsp;&nbsp;</td><td>{e(str(v))}</td></tr>" for k, v in rows]
    parts.append("</table>")
    if m.provenance:
        parts.append(f"<p><b>{e(_tr('Why this exists'))}</b></p><ul>")
        for p in m.provenance[:10]:
            parts.append(f"<li>{e(json.dumps(p, ensure_ascii=False)[:300])}</li>")
        parts.append("</ul>")
    if query:
        parts.append(f"<h4>{e(_tr('Why was this retrieved for “%1”?').replace('%1', query))}</h4>")
        if hit is None:
            parts.append(f"<p>{e(_tr('It matches the filters but would not rank among the top results.'))}</p>")
        else:
            top = max(hit.parts.values(), default=1.0) or 1.0
            parts.append("<table>")
            for k, v in sorted(hit.parts.items(), key=lambda kv: -kv[1]):
                parts.append(f"<tr><td>{e(score_label(k))}&nbsp;&nbsp;</td><td>{_bar(v, top)}</td></tr>")
            parts.append(f"<tr><td><b>{e(_tr('Total'))}</b></td><td><b>{hit.score:.2f}</b></td></tr></table>")
    if len(chain) > 1:
        parts.append(f"<h4>{e(_tr('Superseded by'))}</h4><p>")
        parts.append(" → ".join(f"<a href='memory:{c.id}'>#{c.id}</a>" for c in chain))
        parts.append("</p>")
    parts.append(f"<h4>{e(_tr('History'))}</h4><ul>")
    for h in history:
        reason = f" — {h['reason']}" if h.get("reason") else ""
        who = {"user": _tr("you"), "agent": _tr("an agent"), "import": _tr("an import")}.get(h["actor"], h["actor"])
        parts.append(f"<li>{e(h['at'][:19].replace('T', ' '))}: <b>{e(action_label(h['action']))}</b> "
                     f"({e(who)}){e(reason)}")
        changes = (h.get("detail") or {}).get("changes") or {}
        if "content" in changes:
            old, new = changes["content"]
            parts.append(f"<br><s>{e(str(old)[:200])}</s><br>{e(str(new)[:200])}")
        parts.append("</li>")
    parts.append("</ul>")
    return "".join(parts)

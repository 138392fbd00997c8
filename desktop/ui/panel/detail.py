"""The browser's detail pane: provenance (always shown), why it was retrieved, history, supersession."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QCoreApplication

from desktop.agents.ask import Hit
from desktop.memory.evidence_view import SessionContribution
from desktop.memory.observer.contradictions import DECLINED_CODE
from desktop.memory.observer.promotion import LEARNED_REASON
from desktop.memory.types import Memory
from desktop.ui.labels import (
    action_label,
    lesson_label,
    scope_label,
    score_label,
    source_label,
    status_label,
    type_label,
)
from desktop.ui.theme import accent, css


def _bar(value: float, top: float) -> str:
    # Rich text has no reliable fixed-width boxes; a run of tinted spaces draws the bar.
    cells = max(1, round(24 * (value / top if top else 0)))
    colour = css(accent("amber"))
    return f"<span style='background:{colour}'>{'&nbsp;' * cells}</span>&nbsp;{value:.2f}"


def _evidence_html(evidence: list[SessionContribution]) -> str:
    """The sessions a learned memory came from, with what each showed (newest last)."""
    e = html.escape
    title = QCoreApplication.translate("MemoryDetail", "Evidence")
    # lupdate does not extract QCoreApplication.translate's plural form: numbers go in as %1.
    learned = QCoreApplication.translate("MemoryDetail", "Sessions it was learned from: %1").replace(
        "%1", str(len(evidence)))
    parts = [f"<h4>{e(title)}</h4>", f"<p>{e(learned)}</p><ul>"]
    for item in evidence[:20]:
        head = [f"<b>{e(item.session_id[:24])}</b>"]
        if item.agent:
            head.append(e(item.agent))
        if item.signal:
            head.append(e(lesson_label(item.signal)))
        if item.events:
            head.append(e(QCoreApplication.translate("MemoryDetail", "linked events: %1").replace(
                "%1", str(item.events))))
        if item.first_linked:
            head.append(e(item.first_linked[:16].replace("T", " ")))
        quotes = "".join(f"<br><span style='color:gray'>“{e(x[:300])}”</span>" for x in item.excerpts)
        parts.append(f"<li>{' · '.join(head)}{quotes}</li>")
    parts.append("</ul>")
    return "".join(parts)


def provenance_words(p: dict[str, Any]) -> str:
    """One provenance record in words ("Imported from CLAUDE.md, section Testing"), never raw JSON."""
    kind = str(p.get("kind", ""))
    if kind == "rule_file":
        text = QCoreApplication.translate("MemoryDetail", "Imported from %1").replace("%1", str(p.get("file", "")))
        if p.get("section"):
            text += ", " + QCoreApplication.translate("MemoryDetail", "section “%1”").replace("%1", str(p["section"]))
        return text
    if kind == "session":
        session = str(p.get("session", ""))[:16]
        text = QCoreApplication.translate("MemoryDetail", "Learned in session %1").replace("%1", session)
        return text + (": “" + str(p["prompt"])[:120] + "”" if p.get("prompt") else "")
    if kind == "remember_command":
        return QCoreApplication.translate("MemoryDetail", "Taught with /remember")
    shown = ", ".join(f"{k}: {v}" for k, v in p.items() if k != "kind" and isinstance(v, (str, int, float)))
    return (kind.replace("_", " ").capitalize() + (" — " if shown else "") + shown)[:300] or "—"


def render_detail(m: Memory, history: list[dict[str, Any]], hit: Hit | None, query: str, chain: list[Memory],
                  shared_by: str | None = None, evidence: list[SessionContribution] | None = None) -> str:
    """HTML for one memory (`shared_by`: the teammate it came from, for memories pulled from the team;
    `evidence`: what a learned memory was learned from, per session)."""
    e = html.escape
    words = {
        "provenance": QCoreApplication.translate("MemoryDetail", "Provenance"),
        "why": QCoreApplication.translate("MemoryDetail", "Why this exists"),
        "why_retrieved": QCoreApplication.translate("MemoryDetail", "Why was this retrieved for “%1”?"),
        "no_rank": QCoreApplication.translate(
            "MemoryDetail", "It matches the filters but would not rank among the top results."
        ),
        "total": QCoreApplication.translate("MemoryDetail", "Total"),
        "superseded": QCoreApplication.translate("MemoryDetail", "Superseded by"),
        "history": QCoreApplication.translate("MemoryDetail", "History"),
    }
    rows = [
        (QCoreApplication.translate("MemoryDetail", "Type"), type_label(m.type)),
        (QCoreApplication.translate("MemoryDetail", "Status"), status_label(m.status.value)),
        (
            QCoreApplication.translate("MemoryDetail", "Confidence"),
            f"{m.confidence:.2f}"
            + (" · " + QCoreApplication.translate("MemoryDetail", "verified by you") if m.user_verified else ""),
        ),
        (QCoreApplication.translate("MemoryDetail", "Source"), source_label(m.source)
         + (" · " + QCoreApplication.translate("MemoryDetail", "shared by %1").replace("%1", shared_by)
            if shared_by else "")),
        (QCoreApplication.translate("MemoryDetail", "Scope"), scope_label(m.scope)),
        (QCoreApplication.translate("MemoryDetail", "Files"), ", ".join(m.related_files) or "—"),
        (QCoreApplication.translate("MemoryDetail", "Modules"), ", ".join(m.related_modules) or "—"),
        (QCoreApplication.translate("MemoryDetail", "Tags"), ", ".join(m.tags) or "—"),
        (QCoreApplication.translate("MemoryDetail", "Created"), m.created_at[:19].replace("T", " ")),
        (QCoreApplication.translate("MemoryDetail", "Times used"), str(m.access_count)),
        (
            QCoreApplication.translate("MemoryDetail", "Sessions"),
            ", ".join(m.provenance_session_ids) or (m.session_id or "—"),
        ),
        (QCoreApplication.translate("MemoryDetail", "Commit"), m.commit_sha or "—"),
    ]
    parts = [
        f"<h3>{e(m.citation())}</h3><p>{e(m.content).replace(chr(10), '<br>')}</p>",
        f"<h4>{e(words['provenance'])}</h4><table>",
    ]
    parts += [f"<tr><td><b>{e(k)}</b>&nbsp;&nbsp;</td><td>{e(str(v))}</td></tr>" for k, v in rows]
    parts.append("</table>")
    if evidence:
        parts.append(_evidence_html(evidence))
    elif m.provenance:
        parts.append(f"<p><b>{e(words['why'])}</b></p><ul>")
        for p in m.provenance[:10]:
            parts.append(f"<li>{e(provenance_words(p))}</li>")
        parts.append("</ul>")
    if query:
        parts.append(f"<h4>{e(words['why_retrieved'].replace('%1', query))}</h4>")
        if hit is None:
            parts.append(f"<p>{e(words['no_rank'])}</p>")
        else:
            top = max(hit.parts.values(), default=1.0) or 1.0
            parts.append("<table>")
            for k, v in sorted(hit.parts.items(), key=lambda kv: -kv[1]):
                parts.append(f"<tr><td>{e(score_label(k))}&nbsp;&nbsp;</td><td>{_bar(v, top)}</td></tr>")
            for k, v in hit.multipliers.items():
                parts.append(f"<tr><td>{e(score_label(k))}&nbsp;&nbsp;</td><td>× {v:.2f}</td></tr>")
            parts.append(f"<tr><td><b>{e(words['total'])}</b></td><td><b>{hit.score:.2f}</b></td></tr></table>")
    if len(chain) > 1:
        parts.append(f"<h4>{e(words['superseded'])}</h4><p>")
        parts.append(" → ".join(f"<a href='memory:{c.id}'>#{c.id}</a>" for c in chain))
        parts.append("</p>")
    parts.append(f"<h4>{e(words['history'])}</h4><ul>")
    for h in history:
        worded = _worded_reason(h)
        reason = f" — {worded or h['reason']}" if worded or h.get("reason") else ""
        who = {
            "user": QCoreApplication.translate("MemoryDetail", "you"),
            "agent": QCoreApplication.translate("MemoryDetail", "an agent"),
            "import": QCoreApplication.translate("MemoryDetail", "an import"),
        }.get(h["actor"], h["actor"])
        parts.append(
            f"<li>{e(h['at'][:19].replace('T', ' '))}: <b>{e(action_label(h['action']))}</b> ({e(who)}){e(reason)}"
        )
        changes = (h.get("detail") or {}).get("changes") or {}
        if "content" in changes:
            old, new = changes["content"]
            parts.append(f"<br><s>{e(str(old)[:200])}</s><br>{e(str(new)[:200])}")
        parts.append("</li>")
    parts.append("</ul>")
    return "".join(parts)


def _worded_reason(entry: dict[str, Any]) -> str:
    """A history entry's reason from its code, in the app's language ('' when it has none: the stored
    reason is shown as it was written)."""
    if entry.get("reason") == LEARNED_REASON:
        return QCoreApplication.translate("MemoryDetail", "learned from a session")
    detail = entry.get("detail") or {}
    if detail.get("code") != DECLINED_CODE:
        return ""
    text = QCoreApplication.translate("MemoryDetail", "you declined `%1` in session %2")
    text = text.replace("%1", str(detail.get("command", ""))[:120]).replace("%2", str(detail.get("session", "")))
    words = str(detail.get("words") or "")
    return f"{text} (“{words}”)" if words else text

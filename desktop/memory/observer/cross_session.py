"""Cross-session state: what every finished session adds to the project's long-term picture.

Mode 1 of the design's synthesis (after every session, no LLM) is
:func:`apply_session`: it folds one session digest into the observer tables (file
nodes, weighted co-access edges, the error-pattern registry with how each error
was resolved, module session counts, searches, tool sequences, prompt-term to
file associations, per-signal session counts). It runs inside the promotion's
single write transaction, so it is O(size of the digest), never of the history.

Reads for the frequency filter and for threshold synthesis live here too; they
run on the caller's read connection before the write is queued.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, cast

from desktop.memory.observer.signals import module_of
from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.store.writer import Tx, iso

if TYPE_CHECKING:  # the observer (detectors, lessons) is heavy; prefetch only needs prompt_terms
    from desktop.memory.observer.observer import SessionDigest

logger = logging.getLogger("engram.observer")

SYNTHESIS_THRESHOLDS: Final = (5, 10, 20, 50, 100)
RECIPE_MIN_SESSIONS: Final = 3
RECIPE_MIN_STEPS: Final = 4
RECIPE_MIN_SUCCESS: Final = 0.8
PREFETCH_ALWAYS: Final = 0.8
PREFETCH_FREQUENT: Final = 0.5
EARLY_STEP: Final = 3
MAX_PAIRS_PER_SESSION: Final = 300
MAX_TERMS: Final = 24
MAX_TERM_FILES: Final = 40
_STOP: Final = frozenset([
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "do", "does", "for", "from",
    "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "let", "lets", "me", "my", "no",
    "not", "of", "on", "or", "our", "please", "so", "that", "the", "their", "then", "there", "these",
    "this", "to", "up", "us", "we", "what", "when", "where", "which", "who", "why", "will", "with", "would",
    "you", "your", "yes", "ok", "okay", "now", "just", "also", "need", "want", "like", "make", "sure",
    "some", "any", "all", "get", "got", "use", "using", "see", "look", "check", "run", "let's", "i'd",
    "i'm", "it's", "don't", "can't", "should", "new", "one", "time", "way", "thing", "things", "think",
    "know", "more", "about", "again", "still", "work", "working", "done", "good", "great", "thanks",
    "thank", "here", "them", "they", "was", "were", "been", "being", "did", "had", "than", "very", "much",
    "well", "really"
])
_WORD: Final = re.compile(r"[A-Za-z][A-Za-z0-9_]+")
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def prompt_terms(text: str, limit: int = MAX_TERMS) -> list[str]:
    """Content words of a prompt or path (snake/camel split, lowercased, stop words out)."""
    out: dict[str, None] = {}
    for word in _WORD.findall(text[:4000]):
        parts = {word.lower()}
        for piece in re.split(r"_+", _CAMEL.sub("_", word)):
            parts.add(piece.lower())
        for p in parts:
            if len(p) >= 3 and p not in _STOP and not p.isdigit():
                out.setdefault(p[:-1] if p.endswith("s") and len(p) > 4 else p, None)
        if len(out) >= limit:
            break
    return list(out)[:limit]


def path_terms(path: str) -> set[str]:
    """Terms of a file path (folders and stem, split like prompt terms)."""
    return set(prompt_terms(re.sub(r"[/\\.\-]", " ", path), 30))


def session_succeeded(digest: SessionDigest) -> bool:
    """Success when stated, else when every error seen was resolved by the end."""
    if digest.outcome == "success":
        return True
    if digest.outcome in ("failure", "abandoned"):
        return False
    return all(e.get("resolved_how") for e in digest.errors)


def ts_iso(seconds: float) -> str:
    """Epoch seconds to the store's ISO format."""
    return iso(datetime.fromtimestamp(seconds or 0.0, UTC))


@dataclass
class ApplyStats:
    """Row counts touched by one apply (for logs and tests)."""

    files: int = 0
    edges: int = 0
    errors: int = 0
    modules: int = 0


def apply_session(tx: Tx, digest: SessionDigest, *, signal_keys: Iterable[str] = (),
                  first_time: bool = True) -> ApplyStats:
    """Fold one session into the observer tables (inside the caller's transaction).

    ``first_time`` is False when this session id was learned before (a transcript
    that grew): access counts still add up, but session counts are not bumped twice.
    """
    pid, now = tx.project_id, ts_iso(digest.ended_at or digest.started_at)
    st = ApplyStats()
    inc = 1 if first_time else 0
    modules: set[str] = set()
    for path, f in digest.files.items():
        mod = module_of(path)
        modules.add(mod)
        early = 1 if first_time and f["first_step"] <= EARLY_STEP else 0
        tx.execute(
            "INSERT INTO observer_file_nodes(file_path, project_id, access_count, last_accessed_at,"
            " session_count, read_count, edit_count, early_session_count, module) VALUES (?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT(file_path) DO UPDATE SET access_count = access_count + excluded.access_count,"
            " last_accessed_at = max(last_accessed_at, excluded.last_accessed_at),"
            " session_count = session_count + excluded.session_count,"
            " read_count = read_count + excluded.read_count, edit_count = edit_count + excluded.edit_count,"
            " early_session_count = early_session_count + excluded.early_session_count,"
            " module = excluded.module, removed_at = NULL",
            (path, pid, f["reads"] + f["edits"], now, inc, f["reads"], f["edits"], early, mod))
        # Per-session membership: prefetch's session-counted recency and work state.
        tx.execute("INSERT INTO observer_session_files(session_id, file_path, edited) VALUES (?,?,?)"
                   " ON CONFLICT(session_id, file_path) DO UPDATE SET edited = max(edited, excluded.edited)",
                   (digest.session_id, path, 1 if f["edits"] or f["created"] else 0))
        st.files += 1
    _apply_file_ops(tx, digest, now)
    pairs = sorted(digest.pairs, key=lambda p: -p[2])[:MAX_PAIRS_PER_SESSION]
    for a, b, count, _step_delta, directional in pairs:
        # Weight saturates per session: one session hammering a pair must not outweigh three.
        w = min(1.0, count / 3.0)
        tx.execute(
            "INSERT INTO observer_co_access_edges(file_a, file_b, project_id, weight, raw_count, session_count,"
            " directional, task_type_breakdown, last_observed_at) VALUES (?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT(file_a, file_b, project_id) DO UPDATE SET weight = weight + excluded.weight,"
            " raw_count = raw_count + excluded.raw_count, session_count = session_count + excluded.session_count,"
            " directional = excluded.directional, last_observed_at = excluded.last_observed_at",
            (a, b, pid, w, count, inc, int(directional), json.dumps({digest.session_type: 1}), now))
        st.edges += 1
    for err in digest.errors:
        _upsert_error(tx, pid, digest, err, now)
        st.errors += 1
    if first_time:
        for mod in modules:
            tx.execute("INSERT INTO observer_module_session_counts(module, project_id, count) VALUES (?,?,1)"
                       " ON CONFLICT(module, project_id) DO UPDATE SET count = count + 1", (mod, pid))
        st.modules = len(modules)
    for pattern in digest.searches[:200]:
        tx.execute("INSERT INTO observer_search_patterns(pattern, project_id, count, session_count, last_seen_at)"
                   " VALUES (?,?,1,?,?) ON CONFLICT(pattern) DO UPDATE SET count = count + 1,"
                   " session_count = session_count + excluded.session_count, last_seen_at = excluded.last_seen_at",
                   (pattern, pid, inc, now))
    ok = 1 if session_succeeded(digest) else 0
    if first_time:
        for seq in digest.sequences:
            tx.execute("INSERT INTO observer_sequences(sequence, project_id, session_count, success_count,"
                       " last_seen_at) VALUES (?,?,1,?,?) ON CONFLICT(sequence) DO UPDATE SET"
                       " session_count = session_count + 1, success_count = success_count + excluded.success_count,"
                       " last_seen_at = excluded.last_seen_at", (seq, pid, ok, now))
        _learn_terms(tx, digest)
        # One session, one piece of evidence: a sub-agent counts under its parent (the same
        # lesson seen by the parent and its sub-agents is one session's evidence).
        evidence_id = digest.parent_session_id or digest.session_id
        began = ts_iso(digest.started_at)
        for key in set(signal_keys):
            kind = key.split(":", 1)[0]
            tx.execute("INSERT INTO observer_signal_counts(signal_key, kind, session_count, last_session, first_seen,"
                       " last_seen) VALUES (?,?,1,?,?,?) ON CONFLICT(signal_key) DO UPDATE SET session_count ="
                       " session_count + (CASE WHEN last_session = excluded.last_session THEN 0 ELSE 1 END),"
                       " last_session = excluded.last_session,"
                       " first_seen = min(coalesce(first_seen, excluded.first_seen), excluded.first_seen),"
                       " last_seen = max(coalesce(last_seen, excluded.last_seen), excluded.last_seen)",
                       (key, kind, evidence_id, began, began))
    metrics = {"steps": digest.steps, "events": digest.events, "files": len(digest.files),
               "errors": len(digest.errors), "signals": len(digest.signals), "evicted": digest.evicted,
               "succeeded": bool(ok), "first_prompt": redact_then_cut(digest.first_prompt, 300)}
    tx.execute("INSERT INTO session_metrics(session_id, agent, started_at, ended_at, outcome, session_type,"
               " metrics) VALUES (?,?,?,?,?,?,?) ON CONFLICT(session_id) DO UPDATE SET ended_at = excluded.ended_at,"
               " outcome = excluded.outcome, metrics = excluded.metrics",
               (digest.session_id, digest.agent, ts_iso(digest.started_at), now, digest.outcome,
                digest.session_type, json.dumps(metrics, ensure_ascii=False)))
    tx.changed("observer", "updated", [digest.session_id])
    tx.changed("session_metrics", "updated", [digest.session_id])  # the dashboard's A/B numbers
    return st


def _apply_file_ops(tx: Tx, digest: SessionDigest, now: str) -> None:
    """Renames carry a file's history to its new path; deletions mark files (and folders) gone.

    Applied after the session's own accesses, so a file read and then deleted ends gone.
    """
    for old, new in digest.moved:
        if old == new:
            continue
        # The new path inherits the old one's counts and per-session history (prefetch ranks by it).
        tx.execute(
            "INSERT INTO observer_file_nodes(file_path, project_id, access_count, last_accessed_at, session_count,"
            " read_count, edit_count, early_session_count, module)"
            " SELECT ?, project_id, access_count, last_accessed_at, session_count, read_count, edit_count,"
            " early_session_count, ? FROM observer_file_nodes WHERE file_path = ?"
            " ON CONFLICT(file_path) DO UPDATE SET access_count = access_count + excluded.access_count,"
            " session_count = max(session_count, excluded.session_count), removed_at = NULL",
            (new, module_of(new), old))
        tx.execute("INSERT OR IGNORE INTO observer_session_files(session_id, file_path, edited)"
                   " SELECT session_id, ?, edited FROM observer_session_files WHERE file_path = ?", (new, old))
        tx.execute("UPDATE observer_file_nodes SET removed_at = ? WHERE file_path = ?", (now, old))
    for path in digest.removed:
        if any(c in path for c in "*?["):
            tx.execute("UPDATE observer_file_nodes SET removed_at = ? WHERE file_path GLOB ?", (now, path))
        else:
            # A path may be a folder: everything under it went too.
            folder = path.rstrip("/") + "/"
            tx.execute("UPDATE observer_file_nodes SET removed_at = ? WHERE file_path = ?"
                       " OR substr(file_path, 1, ?) = ?", (now, path.rstrip("/"), len(folder), folder))


def _upsert_error(tx: Tx, pid: str, digest: SessionDigest, err: dict[str, Any], now: str) -> None:
    # sessions and fix_files are TEXT NOT NULL (JSON lists).
    row = cast(list[tuple[str, str]], tx.execute(
        "SELECT sessions, fix_files FROM observer_error_patterns WHERE id = ?", (err["fingerprint"],)).fetchall())
    resolved = 1 if err.get("resolved_how") else 0
    if not row:
        tx.execute("INSERT INTO observer_error_patterns(id, project_id, tool_name, error_fingerprint, error_message,"
                   " occurrence_count, last_seen_at, resolved_how, sessions, resolved_count, fix_files)"
                   " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                   (err["fingerprint"], pid, err["tool"], err["fingerprint"], redact_then_cut(err["message"], 500),
                    err["count"], now, err.get("resolved_how"), json.dumps([digest.session_id]), resolved,
                    json.dumps(err.get("fix_files", []))))
        return
    sessions = json.loads(row[0][0] or "[]")
    if digest.session_id not in sessions:
        sessions = ([*sessions, digest.session_id])[-50:]
    fixes = json.loads(row[0][1] or "[]")
    fixes.extend(f for f in err.get("fix_files", []) if f not in fixes)
    tx.execute("UPDATE observer_error_patterns SET occurrence_count = occurrence_count + ?, last_seen_at = ?,"
               " resolved_how = coalesce(?, resolved_how), sessions = ?, resolved_count = resolved_count + ?,"
               " fix_files = ? WHERE id = ?",
               (err["count"], now, err.get("resolved_how"), json.dumps(sessions), resolved,
                json.dumps(fixes[-10:]), err["fingerprint"]))


def _learn_terms(tx: Tx, digest: SessionDigest) -> None:
    """Associate the first prompt's terms with the files the session needed (not created)."""
    terms = prompt_terms(digest.first_prompt)
    needed = sorted(((p, f) for p, f in digest.files.items() if not f["created"]),
                    key=lambda pf: pf[1]["first_step"])[:MAX_TERM_FILES]
    if not terms or not needed:
        return
    # Rare terms carry more signal; files needed early in the session more than late ones.
    for rank, (path, f) in enumerate(needed):
        w = 1.0 / math.log2(rank + 2) * (1.5 if f["edits"] else 1.0)
        for term in terms:
            tx.execute("INSERT INTO observer_term_files(term, file_path, weight, session_count) VALUES (?,?,?,1)"
                       " ON CONFLICT(term, file_path) DO UPDATE SET weight = weight + excluded.weight,"
                       " session_count = session_count + 1", (term, path, w))


# -- reads used before the write ---------------------------------------------------------------

def signal_session_counts(conn: Any, keys: list[str], *, evidence_id: str | None = None) -> dict[str, int]:
    """Sessions in which each signal key was seen before (the frequency filter's input).

    ``evidence_id``: the session the caller's evidence belongs to (a sub-agent's parent); a key
    that session already counted is not counted again for it.
    """
    out: dict[str, int] = {}
    for i in range(0, len(keys), 400):
        chunk = keys[i:i + 400]
        for key, n, last in conn.execute(
                f"SELECT signal_key, session_count, last_session FROM observer_signal_counts WHERE signal_key IN "
                f"({','.join('?' * len(chunk))})", chunk):
            out[key] = int(n) - (1 if evidence_id is not None and last == evidence_id else 0)
    return out


def session_known(conn: Any, session_id: str) -> bool:
    """True when this session id was learned from before."""
    return bool(conn.execute("SELECT 1 FROM session_metrics WHERE session_id = ?", (session_id,)).fetchall())


def module_counts(conn: Any, modules: Iterable[str]) -> dict[str, int]:
    """Current session counts of the given modules."""
    out = {}
    for mod in modules:
        row = conn.execute("SELECT count FROM observer_module_session_counts WHERE module = ?", (mod,)).fetchall()
        out[mod] = int(row[0][0]) if row else 0
    return out


def recipes(conn: Any, *, min_sessions: int = RECIPE_MIN_SESSIONS, min_success: float = RECIPE_MIN_SUCCESS
            ) -> list[dict[str, Any]]:
    """Workflow recipes: tool sequences of >= 4 steps seen in >= 3 sessions with >= 80% success."""
    rows = conn.execute("SELECT sequence, session_count, success_count FROM observer_sequences"
                        " WHERE session_count >= ? ORDER BY session_count DESC LIMIT 200", (min_sessions,)).fetchall()
    out = []
    for seq, n, ok in rows:
        steps = seq.split(" > ")
        if len(steps) >= RECIPE_MIN_STEPS and ok / n >= min_success and len(set(steps)) >= 2:
            out.append({"steps": steps, "sessions": int(n), "success_rate": ok / n})
    return out


def prefetch_patterns(conn: Any, module: str | None = None, *, min_sessions: int = 3) -> list[dict[str, Any]]:
    """Files read in >= 80% (always) or >= 50% (frequently) of a module's sessions."""
    sql = ("SELECT f.module, f.file_path, f.session_count, m.count FROM observer_file_nodes f"
           " JOIN observer_module_session_counts m ON m.module = f.module WHERE m.count >= ?")
    params: list[Any] = [min_sessions]
    if module is not None:
        sql += " AND f.module = ?"
        params.append(module)
    out = []
    for mod, path, n, total in conn.execute(sql, params):
        share = n / total if total else 0.0
        if share >= PREFETCH_FREQUENT:
            out.append({"module": mod, "file": path, "share": share,
                        "kind": "always" if share >= PREFETCH_ALWAYS else "frequently"})
    out.sort(key=lambda r: (r["module"], -r["share"], r["file"]))
    return out

"""Which triggers a memory carries.

Two sources, both structural:

* a lesson the observer learned names its own trigger in ``metadata["triggers"]`` (the failed
  command's shape, the path that held nothing, the files a checker flagged);
* a rule in the user's own words (taught, imported from the project's rules file, or said in a
  session) is read for what it governs: paths it names fire before a read or an edit there, and
  a command it forbids (a code span after a negation: "never `git push --force`", "`pnpm`, not
  `npm install`") fires before that command runs. A command a rule recommends fires nothing:
  saying "use X" while the agent runs X tells it nothing.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from typing import Any, Final

from desktop.memory.observer.command_shape import parse
from desktop.memory.observer.signal_kinds import CHECK_RULE, COMMAND_FIX
from desktop.memory.triggers.model import ANY_FILE, COMMAND, EDIT, PATH, SETUP_STEP, Trigger

#: Memory types a person's rule can have (a learned lesson brings explicit triggers instead).
RULE_TYPES: Final = frozenset({"preference", "requirement", "decision", "gotcha", "note", "pattern"})
USER_SOURCES: Final = frozenset({"user_taught", "imported"})
MAX_TRIGGERS: Final = 8

_SPAN: Final = re.compile(r"`([^`\n]{2,160})`")
#: A path in running text: at least one folder separator, no scheme, no spaces.
_BARE_PATH: Final = re.compile(r"(?<![\w/.:~-])((?:\.?[\w-][\w.-]*/)+[\w.*-]*)(?![\w/])")
_FILE: Final = re.compile(r"^[\w.-]+\.[A-Za-z][\w]{0,6}$")
#: A placeholder a rule writes where any value goes (<sha>, N, ..., {id}).
_PLACEHOLDER: Final = re.compile(r"^(?:<[^>]*>|\{[^}]*\}|\.\.\.|…|[A-Z]|[A-Z_]{1,12}|\$\w+)$")
_PLACEHOLDER_PART: Final = re.compile(r"<[^>]*>|\{[^}]*\}|\.\.\.$|…$")
#: Negation just before a span: the span is what not to do. English, French, German, Spanish,
#: Italian, Portuguese and Czech function words (closed classes, not a corpus's phrases).
_NEGATION: Final = re.compile(
    r"\b(?:not|never|don'?t|do not|avoid|instead of|rather than|no longer|stop|without|"
    r"ne|pas|jamais|plutôt que|au lieu de|éviter|nicht|nie|kein\w*|statt|anstatt|nunca|evita\w*|"
    r"en lugar de|non|mai|invece di|não|nikdy|nepouž\w*)\b", re.I)
#: "`X` is not allowed", "`X` must never be used": the span before the negation is forbidden.
_NEGATION_AFTER: Final = re.compile(r"^\s*(?:is|are|must|should|does|do|can)\s+(?:not|never)\b|"
                                    r"^\s*(?:is|are)\s+(?:forbidden|banned|deprecated|wrong)\b", re.I)
#: Where a clause ends: a negation before it does not govern a span after it.
_CLAUSE_END: Final = re.compile(r"[.;:!?](?:\s|$)|\n")


def _negated(text: str, start: int, end: int) -> bool:
    """True when the span at ``start:end`` is what the rule forbids."""
    before = _SPAN.sub("X", text[max(0, start - 60):start])
    clause = _CLAUSE_END.split(before)[-1]
    return bool(_NEGATION.search(" ".join(clause.split()[-5:]))) or bool(_NEGATION_AFTER.match(text[end:end + 30]))


def _looks_like_path(text: str) -> bool:
    if " " in text or text.startswith(("http:", "https:", "-")) or "://" in text:
        return False
    return "/" in text or bool(_FILE.match(text))


def _path_triggers(path: str) -> list[Trigger]:
    clean = path.strip().rstrip(".,;:!?)").removeprefix("./").rstrip("/")
    if not clean or clean.startswith(("/", "~", "..")) or "*" in clean.split("/", 1)[0]:
        return []
    head = clean.split("/", 1)[0]
    is_file = bool(_FILE.match(posixpath.basename(clean))) and not path.endswith("/")
    return [Trigger(PATH, head, path=clean), Trigger(EDIT, posixpath.basename(clean) if is_file else ANY_FILE,
                                                   path=clean)]


def _command_trigger(span: str, *, forbidden: bool) -> Trigger | None:
    """A forbidden command fires when it is run; a recommended one when a run of the same program
    and first word does not follow it (``Run `mise run test:ci``` fires before ``mise run test``)."""
    cmd = parse(span)
    seg = cmd.main()
    if seg is None or len(span.split()) < 2 or not re.match(r"^[a-z][\w.+-]*$", seg.program):
        return None
    rest = [_PLACEHOLDER_PART.sub("", a) for a in seg.args[len(seg.words):] if not _PLACEHOLDER.match(a)]
    tokens = tuple(dict.fromkeys(a for a in rest if a and (a.startswith("-") or len(a) <= 40)))[:4]
    if not seg.words and not tokens:
        return None  # a bare program is too broad to fire on
    if forbidden:
        return Trigger(COMMAND, seg.program, seg.words, tokens)
    follows = (*seg.words[1:], *tokens)
    if not follows:
        return None  # "use `git status`": nothing a run could fail to follow
    # ``mise run test:ci`` governs runs of ``mise run test…``, not every ``mise run``.
    head = re.match(r"[a-z0-9]+", seg.words[1]) if len(seg.words) > 1 else None
    stem = (head.group(0),) if head is not None else ()
    return Trigger(COMMAND, seg.program, seg.words[:1], stem, unless=follows[:4])


def rule_triggers(content: str) -> list[Trigger]:
    """The triggers a rule's text implies (paths it names; commands it forbids)."""
    out: list[Trigger] = []
    covered: list[tuple[int, int]] = []
    for m in _SPAN.finditer(content):
        span = m.group(1).strip()
        covered.append(m.span())
        if _looks_like_path(span):
            out += _path_triggers(span)
            continue
        trig = _command_trigger(span, forbidden=_negated(content, m.start(), m.end()))
        if trig is not None:
            out.append(trig)
    for m in _BARE_PATH.finditer(content):
        if any(a <= m.start() < b for a, b in covered):
            continue
        if "/" in m.group(1) and len(m.group(1)) > 3 and not m.group(1).startswith(("http", "www.")):
            out += _path_triggers(m.group(1))
    if any(t.kind != COMMAND for t in out):
        # "never `git add` the `logs/` folder": the folder is what is forbidden, not every `git add`.
        out = [t for t in out if t.kind != COMMAND or t.tokens or t.unless]
    return out


#: A lesson that a program needs a setup step first, as ``templates`` words it.
_SETUP_LESSON: Final = re.compile(r"^`([^`\s]+)` is not found on the PATH here: run it as `(.+?) \1 …`\.$")


def _setup_of(content: str) -> tuple[str, ...]:
    """The setup step a not-on-the-PATH lesson recommends, as a trigger's ``unless`` (``model.SETUP_STEP``)."""
    m = _SETUP_LESSON.match(content)
    if m is None:
        return ()
    steps = tuple(t for t in m.group(2).split() if t not in ("&&", ";"))[:5]
    return (SETUP_STEP, *steps) if steps else ()


def triggers_of(mtype: str, content: str, source: str, metadata: dict[str, Any]) -> list[Trigger]:
    """Every trigger of one memory (explicit ones first), without duplicates."""
    found: list[Trigger] = []
    explicit = metadata.get("triggers") if isinstance(metadata, dict) else None
    checker_rule = isinstance(metadata, dict) and metadata.get("signal") == CHECK_RULE
    setup = _setup_of(content) if isinstance(metadata, dict) and metadata.get("signal") == COMMAND_FIX else ()
    for item in explicit if isinstance(explicit, list) else []:
        trig = Trigger.from_json(item)
        if trig is None or (checker_rule and trig.kind == EDIT and not trig.path):
            continue  # a checker's rule fires when the checker runs, not before any edit of a file kind
        if setup and trig.kind == COMMAND and not trig.unless:
            trig = dataclasses.replace(trig, unless=setup)  # learned before the setup step was kept
        found.append(trig)
    user_words = source in USER_SOURCES or (isinstance(metadata, dict) and metadata.get("signal") == "user_rule")
    if mtype in RULE_TYPES and user_words:
        found += rule_triggers(content)
    return list(dict.fromkeys(found))[:MAX_TRIGGERS]

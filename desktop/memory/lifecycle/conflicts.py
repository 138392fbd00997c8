"""Conflict detection: two memories that say opposite things about the same subject.

Keyword rules (document 001 section 11) find *claims* in a text: a stance verb
with a polarity and the object it applies to - ``use X`` / ``don't use X``,
``always X`` / ``never X``, ``enable X`` / ``disable X``, ``do X`` / ``avoid X``,
``should X`` / ``shouldn't X``, ``add X`` / ``remove X``, ``allow X`` / ``forbid X``.
Two claims conflict when they have the same stance, opposite polarity, the same
head term (``var`` vs ``const`` is no conflict) and mostly the same object. The
two memories must also share a file, module or tag when both name any (the
design's "shared files or topics").

With an embedding function, a pair whose texts are very similar but whose
negations differ ("cache the session token" / "do not cache the session token")
is a conflict too, even when no rule phrase matched.

Pure functions here; `conflict_store.py` reads candidates and writes links.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop.memory.types import Memory

Embed = Callable[[list[str]], Any]
EMBED_THRESHOLD = 0.85
OVERLAP_THRESHOLD = 0.5

_NORMALISE = [
    (re.compile(r"[’`]"), "'"),
    (re.compile(r"\bdo not\b|\bdont\b"), "don't"),
    (re.compile(r"\bdoes not\b|\bdoesnt\b"), "doesn't"),
    (re.compile(r"\bshould not\b|\bshouldnt\b"), "shouldn't"),
    (re.compile(r"\bmust not\b|\bmustnt\b"), "mustn't"),
    (re.compile(r"\bcannot\b|\bcan not\b"), "can't"),
    (re.compile(r"\bturn(?:ed)? on\b|\bswitch(?:ed)? on\b"), "enable"),
    (re.compile(r"\bturn(?:ed)? off\b|\bswitch(?:ed)? off\b"), "disable"),
]
_NEG_PREFIX = r"(?:don't|doesn't|never|shouldn't|mustn't|can't|avoid|stop|no longer)"
# stance -> (negative phrase regex, positive phrase regex); negatives are matched first
# and masked, so "don't use X" never also reads as "use X".
_RULES: dict[str, tuple[str, str]] = {
    "use": (rf"\b{_NEG_PREFIX}\s+(?:use|using)\b|\bavoid\s+using\b",
            r"\b(?:use|using|prefer|adopt)\b"),
    "always": (r"\bnever\b", r"\balways\b"),
    "enable": (r"\b(?:disable[sd]?|disabling|deactivate)\b", r"\b(?:enable[sd]?|enabling|activate)\b"),
    "should": (r"\b(?:shouldn't|mustn't|don't|avoid)\b", r"\b(?:should|must|do|need to|have to)\b"),
    "add": (r"\b(?:remove[sd]?|removing|delete|drop)\b", r"\b(?:add|adding|keep|include)\b"),
    "prefer": (r"\bavoid\b(?!\s+using)", r"\bprefer(?:s|red)?\b"),
    "allow": (r"\b(?:forbid|forbidden|disallow|prohibit|block)\b", r"\b(?:allow|allowed|permit)\b"),
}
_COMPILED = {k: (re.compile(n), re.compile(p)) for k, (n, p) in _RULES.items()}
# The object runs to the end of the clause; a dot or colon inside a word (".env",
# "users.email", "a::b") does not end it.
_OBJECT = re.compile(r"^\s*((?:[^.;:,!?\n()]|[.:](?=\w)){1,120})")
_CLAUSE_END = re.compile(r"\b(?:because|since|as|when|unless|but|so|instead|or|and then)\b")
_WORD = re.compile(r"[a-z0-9][a-z0-9_./+#-]*")
_STOP = frozenset([
    "a", "an", "the", "to", "for", "in", "on", "of", "with", "from", "by", "at", "into", "onto", "it",
    "its", "this", "that", "these", "those", "is", "are", "be", "been", "being", "we", "you", "they",
    "our", "your", "their", "any", "all", "some", "more", "less", "than", "then", "there", "here",
    "also", "just", "only", "very", "really", "always", "never", "use", "using", "used", "run",
    "running", "do", "does", "doing", "make", "keep", "have", "has", "should", "must", "need"
])
# Verbs that carry no subject of their own: the head term is the word after them.
_LIGHT_VERBS = frozenset({"use", "using", "run", "do", "be", "have", "keep", "make", "call", "set",
                          "put", "write", "rely", "on", "it"})
_NEGATIONS = re.compile(r"\b(?:not|no|never|don't|doesn't|shouldn't|mustn't|can't|avoid|disable[sd]?|"
                        r"without|stop)\b")


@dataclass(frozen=True)
class Claim:
    """One stance a text takes: e.g. stance "use", polarity False, object terms ("bcrypt",)."""

    stance: str
    positive: bool
    terms: tuple[str, ...]

    @property
    def head(self) -> str:
        """The subject the claim is about (first term after any light verb)."""
        return self.terms[0] if self.terms else ""


@dataclass
class ConflictText:
    """What detection needs of a memory."""

    id: int
    content: str
    files: Sequence[str] = ()
    modules: Sequence[str] = ()
    tags: Sequence[str] = ()
    type: str = ""


@dataclass
class Conflict:
    """A detected contradiction between memory `a` and memory `b`."""

    a: int
    b: int
    rule: str
    score: float
    detail: dict[str, Any] = field(default_factory=dict)

    def reason(self) -> str:
        """Audit sentence (ids only, never the texts: an emergency delete must not leave copies)."""
        return f"Memory #{self.a} and memory #{self.b} contradict each other ({self.rule}, {self.score:.2f})."


def normalise(text: str) -> str:
    """Lower-case and unify negation spellings so one regex per rule suffices."""
    out = text.lower()
    for rx, repl in _NORMALISE:
        out = rx.sub(repl, out)
    return out


def _object_terms(tail: str) -> tuple[str, ...]:
    m = _OBJECT.match(tail)
    if not m:
        return ()
    chunk = _CLAUSE_END.split(m.group(1), maxsplit=1)[0]
    words = [w.strip("./-") for w in _WORD.findall(chunk)]
    while words and words[0] in _LIGHT_VERBS:
        words.pop(0)
    # A crude plural fold so "file"/"files" count as the same term.
    terms = [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
             for w in words if w and w not in _STOP]
    return tuple(terms[:6])


def claims(text: str) -> list[Claim]:
    """Every stance claim in `text`."""
    norm = normalise(text)
    out: list[Claim] = []
    for stance, (neg, pos) in _COMPILED.items():
        masked = norm
        for m in neg.finditer(norm):
            terms = _object_terms(norm[m.end():])
            if terms:
                out.append(Claim(stance, False, terms))
            masked = masked[:m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
        for m in pos.finditer(masked):
            terms = _object_terms(masked[m.end():])
            if terms:
                out.append(Claim(stance, True, terms))
    return out


def _overlap(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    # Heads are already equal; compare what follows. A claim that only names the
    # subject ("don't use bcrypt") opposes any claim about that subject.
    sa, sb = set(a[1:]), set(b[1:])
    if not sa or not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def _share_topic(a: ConflictText, b: ConflictText) -> bool:
    fa, fb = set(a.files) | set(a.modules), set(b.files) | set(b.modules)
    if fa and fb:
        return bool(fa & fb) or bool(set(a.tags) & set(b.tags))
    return True  # no files on one side: the shared head term is the shared topic


def keyword_conflict(a: ConflictText, b: ConflictText) -> Conflict | None:
    """The strongest opposing claim pair of two memories, or None."""
    if not _share_topic(a, b):
        return None
    best: Conflict | None = None
    cb = claims(b.content)
    for x in claims(a.content):
        for y in cb:
            if x.stance != y.stance or x.positive == y.positive or x.head != y.head:
                continue
            score = _overlap(x.terms, y.terms)
            if score >= OVERLAP_THRESHOLD and (best is None or score > best.score):
                pos, neg = (x, y) if x.positive else (y, x)
                best = Conflict(a.id, b.id, f"{x.stance}/{'not ' + x.stance}", score,
                                {"subject": pos.head, "positive_terms": list(pos.terms),
                                 "negative_terms": list(neg.terms), "by": "keywords"})
    return best


def negation_parity(text: str) -> int:
    """0 or 1: whether the text negates an odd number of times."""
    return len(_NEGATIONS.findall(normalise(text))) % 2


def texts_conflict(a: str, b: str) -> bool:
    """True when two bare texts contradict each other by the keyword rules (tests, quick checks)."""
    return keyword_conflict(ConflictText(0, a), ConflictText(1, b)) is not None


def detect_conflicts(new: ConflictText, candidates: Sequence[ConflictText], *,
                     embed: Embed | None = None, threshold: float = EMBED_THRESHOLD) -> list[Conflict]:
    """Conflicts between `new` and each candidate: keyword rules, plus embedding similarity if given."""
    found: dict[int, Conflict] = {}
    for cand in candidates:
        if cand.id == new.id:
            continue
        hit = keyword_conflict(new, cand)
        if hit is not None:
            found[cand.id] = hit
    if embed is not None and candidates:
        rest = [c for c in candidates if c.id not in found and c.id != new.id and _share_topic(new, c)]
        if rest:
            import numpy as np  # only with an embedder: conflict checks on injection stay numpy-free

            vecs = np.asarray(embed([new.content, *[c.content for c in rest]]), dtype=np.float32)
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            unit = vecs / np.where(norms == 0, 1, norms)
            sims = unit[1:] @ unit[0]
            parity = negation_parity(new.content)
            for cand, sim in zip(rest, sims, strict=True):
                if float(sim) >= threshold and negation_parity(cand.content) != parity:
                    found[cand.id] = Conflict(new.id, cand.id, "similar/negated", float(sim),
                                              {"by": "embedding", "similarity": round(float(sim), 4)})
    return sorted(found.values(), key=lambda c: (-c.score, c.b))


def conflicting_pairs(memories: Sequence[Memory]) -> list[tuple[Memory, Memory]]:
    """Contradicting pairs among memories about to reach an agent, each once, lower id first.

    Quadratic, but called on the few dozen memories of one injection.
    """
    by_id = {m.id: m for m in memories}
    texts = [ConflictText(id=m.id, content=m.content, files=m.related_files, modules=m.related_modules,
                          tags=m.tags, type=m.type) for m in memories]
    seen: set[tuple[int, int]] = set()
    out: list[tuple[Memory, Memory]] = []
    for i, text in enumerate(texts):
        for c in detect_conflicts(text, texts[i + 1:]):
            key = (min(c.a, c.b), max(c.a, c.b))
            if key not in seen and c.a in by_id and c.b in by_id:
                seen.add(key)
                out.append((by_id[key[0]], by_id[key[1]]))
    return out

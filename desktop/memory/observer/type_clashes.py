"""A type of the project's own, mixed up with the plain type beneath it, build after build.

Projects wrap plain values in types of their own (a checkpoint id that is a string underneath, a
user id that is a number) so that the compiler catches a mix-up. Agents write the plain value where
the typed one is wanted, and the compiler says so in its own words, on a line that starts where the
compiler puts the place of the error:

* Go: ``x.go:3:9: cannot use x (variable of type string) as id.CheckpointID value in argument to f``;
* TypeScript: ``a.ts(4,7): error TS2345: Argument of type 'string' is not assignable to parameter of
  type 'UserId'``;
* mypy: ``x.py:9: error: Argument 1 to "f" has incompatible type "str"; expected "UserId"``;
* rustc, under ``error[E0308]: mismatched types``: ``| ^^^ expected `UserId`, found `String```.

One pair of a named type and a plain one, failing in two sessions, is what the project expects and
agents keep missing: the lesson names the type, and the file that declares it when the project is on
this disk (a named type declared nowhere in the project is a library's, and teaches nothing about it).
A mix-up of two named types is one bug; ``None``, ``null``, ``any`` or ``error`` against a type is
a missing check or an interface, not a wrapper; one session's pair is that day's refactoring. Each
session counts once (``signals.SIGNAL_SPECS``: two sessions).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from desktop.memory.observer.command_kinds import SHOWS_TEXT
from desktop.memory.observer.command_shape import parse
from desktop.memory.observer.harness import shorten_command
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signal_kinds import TYPE_CLASH
from desktop.memory.observer.signals import Signal, excerpt
from desktop.memory.privacy.boundary import redact_then_cut

_TYPE: Final = r"[\w.*&\[\]:<>]{1,80}"
#: Each compiler's mix-up, after the place it prints first: (the language, the place, the words).
#: ``kind`` is the underlying type Go names ("variable of string type X"): it must be the plain one.
_CLASHES: Final = (
    (".go", r"^\s*[\w./@+-]+\.go:\d+:\d+: ",
     rf"cannot use .{{1,160}}? \((?:variable|value|constant(?: \S+)?) of (?:(?P<kind>\w+) )?type (?P<given>{_TYPE})\) "
     rf"as (?P<wanted>{_TYPE}) value in"),
    (".go", r"^\s*[\w./@+-]+\.go:\d+:\d+: ",
     rf".{{0,200}}?\(mismatched types (?P<given>{_TYPE}) and (?P<wanted>{_TYPE})\)"),
    (".ts", r"^\s*[\w./@+-]+\.tsx?(?:\(\d+,\d+\): | ?:\d+:\d+ - )error TS\d+: ",
     r"(?:Argument of type|Type) '(?P<given>[^'\n]{1,80}?)' is not assignable to (?:parameter of )?"
     r"type '(?P<wanted>[^'\n]{1,80}?)'"),
    (".py", r"^\s*[\w./@+-]+\.pyi?:\d+(?::\d+)?: error: ",
     r".{0,200}?(?:has incompatible type \"(?P<given>[^\"\n]{1,80})\"; expected|"
     r"expression has type \"(?P<given2>[^\"\n]{1,80})\", variable has type|"
     r"Incompatible return value type \(got \"(?P<given3>[^\"\n]{1,80})\", expected) \"(?P<wanted>[^\"\n]{1,80})\""),
    (".rs", r"^\s*(?:\d+\s*)?\|[\s^\-|]*",
     rf"expected (?:struct |enum |type |reference )?`(?P<wanted>{_TYPE})`, found (?:struct |enum |type |reference )?"
     rf"`(?P<given>{_TYPE})`"),
)
_COMPILED: Final = tuple((lang, re.compile(place), re.compile(place + words)) for lang, place, words in _CLASHES)
#: Words every one of those lines has: output without any of them is not read line by line.
_ANY_CLASH: Final = re.compile(r"cannot use|mismatched types|is not assignable|incompatible (?:type|return)|"
                               r"expression has type|expected (?:struct |enum |type |reference )?`", re.I)
#: Plain types a wrapper type is made of. Not ``None``/``null``/``any``/``error``/``never``: against a
#: named type those are a missing check, an interface or an inference, never a wrapper.
_PLAIN: Final = frozenset({
    # Go
    "string", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr",
    "float32", "float64", "bool", "byte", "rune", "[]byte",
    # TypeScript
    "number", "boolean", "bigint",
    # Python
    "str", "float", "bytes",
    # Rust
    "String", "&str", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    "f32", "f64", "char", "&String",
})
#: A named type: a capitalised name of two letters or more, qualified or not (``id.CheckpointID``,
#: ``ids::UserId``); a pointer, a slice or a one-letter type parameter is not a wrapper.
_NAMED: Final = re.compile(r"^(?:[A-Za-z_]\w*(?:\.|::))*[A-Z]\w+$")
#: Where each language declares a type of its own (``{name}``: the type's bare name), and what over:
#: ``under`` is the type it wraps, when the declaration says so in a way that makes it a wrapper.
_DECLARATIONS: Final = {
    ".go": r"^type\s+{name}\b(?:\s+(?P<under>[\w.\[\]*]+))?",
    ".ts": r"^(?:export\s+)?(?:declare\s+)?(?:(?:interface|class|enum)\s+{name}\b|type\s+{name}\s*(?:<[^>\n]*>)?"
           r"\s*=\s*(?P<under>\w+))",
    ".py": r"^(?:class\s+{name}\b(?:\((?P<under>[\w.]+)\))?|{name}\s*(?::\s*[\w.\[\]]+\s*)?=\s*(?:typing\.)?"
           r"NewType\(\s*[\"'][^\"']*[\"']\s*,\s*(?P<under2>[\w.]+)\s*\))",
    ".rs": r"^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:(?:struct|enum)\s+{name}\b"
           r"(?:\s*\(\s*(?:pub\s+)?(?P<under>[\w:&<>]+)\s*\))?|type\s+{name}\s*=\s*(?P<under2>[\w:&<>]+))",
}
#: Folders never searched for a declaration: dependencies, builds, caches, hidden ones.
_SKIP: Final = frozenset({"node_modules", "vendor", "target", "dist", "build", "__pycache__", "venv"})
#: Programs that show, fetch or compare text: a compiler's lines in their output are another run's.
_VIEWERS: Final = SHOWS_TEXT | {"glab", "printf", "bat", "less", "more", "head", "tail", "diff", "sed", "awk", "jq",
                                "tee", "curl", "wget", "docker", "kubectl", "journalctl"}
_STATE: Final = "type_clashes"
MAX_PER_SESSION: Final = 6
MAX_WALKED: Final = 20_000
MAX_BYTES: Final = 256_000


def clash(line: str) -> tuple[str, str, str] | None:
    """(the named type, the plain type, the language's file extension) when ``line`` is a compiler's
    report of a mix-up of the two at a place in the code; None otherwise."""
    for lang, place, pattern in _COMPILED:
        if not place.match(line):
            continue
        m = pattern.match(line)
        if m is None:
            continue
        groups = m.groupdict()
        given = next(g for g in (groups.get("given"), groups.get("given2"), groups.get("given3")) if g)
        given, wanted = given.strip(), m.group("wanted").strip()
        plain = [t for t in (given, wanted) if t in _PLAIN]
        named = [t for t in (given, wanted) if t not in _PLAIN and _NAMED.match(t)]
        kind = groups.get("kind")
        if len(plain) == 1 and len(named) == 1 and (not kind or kind == plain[0]):
            return named[0], plain[0], lang
        return None
    return None


def bare(type_name: str) -> str:
    """The type's own name, whatever qualifies it (Go prints ``CheckpointID`` inside its package)."""
    return re.split(r"\.|::", type_name)[-1]


def on_failure(sp: Scratchpad, command: str, output: str, step: int, event: str) -> None:
    """A failed run whose output reports a named type mixed up with its plain one: one signal per pair.
    A program that only shows text (``cat build.log``, ``tail``, ``docker logs``) compiled nothing here."""
    tail = output[-20000:]
    if not _ANY_CLASH.search(tail):
        return  # nearly every failure: no line to read, no command to parse
    ran = parse(command).main()
    if ran is None or ran.program in _VIEWERS:
        return
    seen: list[dict[str, Any]] = sp.ev.setdefault(_STATE, [])
    for line in tail.splitlines():
        found = clash(line)
        if found is None:
            continue
        named, plain, lang = found
        if lang == ".rs" and "error[E0308]" not in output:
            continue  # a label line is rustc's only under its "mismatched types" error
        if any(s["type"] == named and s["plain"] == plain for s in seen):
            continue
        if len(seen) >= MAX_PER_SESSION:
            return
        seen.append({"type": named, "plain": plain})
        place = next(p for lg, p, _ in _COMPILED if lg == lang and p.match(line))
        message = place.sub("", line, count=1).strip()
        data = {"type": named, "plain": plain, "lang": lang, "command": shorten_command(command),
                "error": redact_then_cut(message, 200), "events": [event]}
        # Keyed as spelled until the session's end finds the declaration (``finalize``).
        sp.add_signal(Signal(TYPE_CLASH, f"{TYPE_CLASH}:{lang}:{named}|{plain}"[:200], step, [], data,
                             [excerpt(f"{shorten_command(command, 80)} → {redact_then_cut(message, 200)}", 200)]))


def declared_in(root: str, type_name: str, lang: str, plain: str = "",
                listing: dict[str, list[Path]] | None = None) -> str | None:
    """The file (relative to ``root``) that declares ``type_name`` in ``lang`` over ``plain`` (``type
    CheckpointID string`` in a folder named ``id`` for ``id.CheckpointID``); "" when the project declares
    none, two, or one over something else (a struct, an interface: then the mix-up is no wrapper's);
    None when the project is not on this disk. Bounded: at most MAX_WALKED names are looked at.
    ``listing`` keeps each language's source files between calls (one walk of the tree per session end)."""
    pattern = _DECLARATIONS.get(lang)
    if not root or pattern is None or not os.path.isdir(root):
        return None
    parts = re.split(r"\.|::", type_name)
    folder = parts[-2] if len(parts) > 1 and lang == ".go" else ""  # Go qualifies by the package's folder
    declaration = re.compile(pattern.format(name=re.escape(parts[-1])), re.M)
    found: list[str] = []
    if listing is None:
        listing = {}
    if lang not in listing:
        listing[lang] = list(_sources(root, lang))
    for path in (p for p in listing[lang] if not folder or p.parent.name == folder):
        try:
            if path.stat().st_size > MAX_BYTES:
                continue
            m = declaration.search(path.read_text("utf-8", "replace"))
        except OSError:
            continue
        if m is None:
            continue
        under = m.groupdict().get("under") or m.groupdict().get("under2") or ""
        if plain and _base(under) != _base(plain):
            return ""  # declared over something else: a struct, an interface, a class of its own
        found.append(path.relative_to(root).as_posix())
        if len(found) > 1:
            return ""  # two types of that name: which one the compiler meant is not known
    return found[0] if found else ""


def _base(type_name: str) -> str:
    """A type's last name, without a module or a reference (``std::string::String``; ``&str`` is a String's)."""
    name = bare(type_name.lstrip("&"))
    return "String" if name == "str" else name


def _sources(root: str, lang: str) -> Iterator[Path]:
    walked = 0
    for here, dirs, files in os.walk(root):
        walked += len(dirs) + len(files)
        if walked > MAX_WALKED:
            return  # a tree this large is searched no further at a session's end
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith("."))
        for f in sorted(files):
            if f.endswith(lang) or (lang == ".ts" and f.endswith(".tsx")):
                yield Path(here) / f


def finalize(sp: Scratchpad) -> None:
    """With the project on this disk, name the file that declares each mixed-up type (blind judges:
    "here" without the package's path), and drop a pair whose named type the project does not
    declare: a library's type (``time.Duration``, ``Path``) is no convention of this project."""
    listing: dict[str, list[Path]] = {}
    for key, sig in list(sp.signals.items()):
        if sig.kind != TYPE_CLASH:
            continue
        named, plain = str(sig.data["type"]), str(sig.data["plain"])
        where = declared_in(sp.cwd, named, str(sig.data.get("lang", "")), plain, listing)
        del sp.signals[key]
        if where == "":
            continue
        # The declaration is the type's identity: Go's ``id.CheckpointID`` and, inside its package,
        # ``CheckpointID`` are one type; ``user.ID`` and ``order.ID`` are two. Without the project on this
        # disk, the bare name is the best guess at it.
        if where:
            sig.data["declared"] = where
            sig.files = [where]
        sig.key = f"{TYPE_CLASH}:{where or sig.data.get('lang', '')}:{bare(named)}|{plain}"[:200]
        sp.add_signal(sig)

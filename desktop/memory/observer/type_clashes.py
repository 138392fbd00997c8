"""A type of the project's own, mixed up with the plain type beneath it, build after build.

Projects wrap plain values in types of their own (a checkpoint id that is a string underneath, a
user id that is a number) so that the compiler catches a mix-up. Agents write the plain value where
the typed one is wanted, and the compiler says so in its own words:

* Go: ``cannot use x (variable of type string) as id.CheckpointID value in argument to f``;
* TypeScript: ``Argument of type 'string' is not assignable to parameter of type 'UserId'``;
* mypy: ``Argument 1 to "f" has incompatible type "str"; expected "UserId"``;
* rustc: ``expected `UserId`, found `String```.

One pair of types, one named and one built in, failing a build in two sessions is what the project
expects and agents keep missing: the lesson names the type. A mix-up of two named types is one bug
(its fix is in the code); a pair seen in one session is that day's refactoring. Each session counts
once, whatever the number of lines the compiler printed (``signals.SIGNAL_SPECS``: two sessions).
"""

from __future__ import annotations

import re
from typing import Any, Final

from desktop.memory.observer.harness import shorten_command
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signal_kinds import TYPE_CLASH
from desktop.memory.observer.signals import Signal, excerpt
from desktop.memory.privacy.boundary import redact_then_cut

_TYPE: Final = r"[\w.*\[\]]{1,80}"
#: Each compiler's mix-up line, as (the type given, the type wanted).
_CLASHES: Final = (
    # Go: "variable of string type id.CheckpointID" is the named type over a string.
    re.compile(rf"cannot use .{{1,120}}? \((?:variable|value|constant) of (?:\w+ )?type (?P<given>{_TYPE})\) "
               rf"as (?P<wanted>{_TYPE}) value in"),
    re.compile(rf"mismatched types (?P<given>{_TYPE}) and (?P<wanted>{_TYPE})\)"),
    re.compile(r"(?:Argument of type|Type) '(?P<given>[^'\n]{1,80}?)' is not assignable to (?:parameter of )?"
               r"type '(?P<wanted>[^'\n]{1,80}?)'"),
    re.compile(r"(?:has incompatible type|expression has type) \"(?P<given>[^\"\n]{1,80})\"[;,] "
               r"(?:expected|variable has type) \"(?P<wanted>[^\"\n]{1,80})\""),
    re.compile(rf"expected (?:struct |enum |type )?`(?P<wanted>{_TYPE})`, found (?:struct |enum |type )?"
               rf"`(?P<given>{_TYPE})`"),
)
#: The plain types of Go, TypeScript, Python and Rust (and the untyped constants Go names).
_PLAIN: Final = frozenset({
    # Go
    "string", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr",
    "float32", "float64", "bool", "byte", "rune", "[]byte", "[]string", "error", "any", "interface{}",
    "untyped string", "untyped int", "untyped float", "untyped bool", "untyped nil",
    # TypeScript
    "number", "boolean", "bigint", "undefined", "null", "unknown", "object",
    # Python
    "str", "float", "bytes", "None",
    # Rust
    "String", "&str", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    "f32", "f64", "char", "Vec<u8>",
})
_NAMED: Final = re.compile(r"^\*?(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*$")
_STATE: Final = "type_clashes"
MAX_PER_SESSION: Final = 3


def clash(line: str) -> tuple[str, str] | None:
    """(the named type, the plain type) when ``line`` is a compiler's mix-up of the two; None otherwise."""
    for pattern in _CLASHES:
        m = pattern.search(line)
        if m is None:
            continue
        given, wanted = m.group("given").strip(), m.group("wanted").strip()
        plain = [t for t in (given, wanted) if t in _PLAIN]
        named = [t for t in (given, wanted) if t not in _PLAIN and _NAMED.match(t)]
        if len(plain) == 1 and len(named) == 1:
            return named[0].lstrip("*"), plain[0]
        return None
    return None


def on_failure(sp: Scratchpad, command: str, output: str, step: int, event: str) -> None:
    """A failed build, test or check whose output shows a named type mixed up with its plain one."""
    seen: list[dict[str, Any]] = sp.ev.setdefault(_STATE, [])
    for line in output[-20000:].splitlines():
        found = clash(line)
        if found is None:
            continue
        named, plain = found
        if any(s["type"] == named and s["plain"] == plain for s in seen):
            continue
        if len(seen) >= MAX_PER_SESSION:
            return
        seen.append({"type": named, "plain": plain})
        message = re.sub(r"^.*?:\d+(?::\d+)?:\s*", "", line.strip())
        data = {"type": named, "plain": plain, "command": shorten_command(command),
                "error": redact_then_cut(message, 200), "events": [event]}
        sp.add_signal(Signal(TYPE_CLASH, f"{TYPE_CLASH}:{named}|{plain}"[:200], step, [], data,
                             [excerpt(f"{shorten_command(command, 80)} → {message}", 200)]))

"""How a project opens pull requests and answers review comments, read from the commands that did it.

A team's review workflow is knowledge a new colleague is told on day one ("open PRs as drafts",
"answer each review comment in its own thread"), and agents rediscover it each session: they
open ready PRs, or post a reply to the wrong API path and get a 404. The commands that did it
successfully say it in the code hosts' own grammar (GitHub's ``gh``, GitLab's ``glab``):

* ``pull_request``: ``gh pr create`` / ``glab mr create``. Only the options that are the team's
  choice make a recipe (``--draft``, ``--reviewer x``, ``--label y``, a base branch other than
  ``main``); the title, the body and the head branch are one PR's, so they become ``…`` or go, and
  options such as ``--web`` or ``--milestone`` are one PR's too. A PR opened with nothing chosen is
  what any agent does unprompted: no recipe. The options are put in one order, so the same habit
  typed in another order is the same recipe.
* ``review_reply``: a reply in a review comment's thread through the host's API
  (``gh api repos/o/r/pulls/12/comments/345/replies -f body=…``, GitLab's
  ``merge_requests/7/discussions/<hex id>/notes``). The numbers are one PR's and one comment's, so
  they become ``<number>`` and ``<id>``; the reply's text becomes ``…``.

Every value kept is quoted for the shell (``shlex.quote``): a label typed ``'$(curl …)'`` stays a
literal in the recipe a later agent is told to run. Nothing here names a project: the patterns are
the tools' own subcommands, options and REST paths.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Final

PULL_REQUEST, REVIEW_REPLY = "pull_request", "review_reply"
KINDS: Final = frozenset({PULL_REQUEST, REVIEW_REPLY})

_CREATE: Final = re.compile(r"^(?:gh\s+pr|glab\s+mr)\s+create\b")
_API: Final = re.compile(r"^(?:gh|glab)\s+api\b")
# A reply in a review thread: GitHub's pulls/N/comments/ID/replies, GitLab's discussions/HEX/notes.
# The path is stated unquoted, so it may hold only a path's characters (never ``$(…)`` or ``;``).
_REPLY_PATH: Final = re.compile(
    r"^(?P<head>[\w.%:/-]*?/pulls/)\d+(?P<mid>/comments/)\d+(?P<tail>/replies)/?$|"
    r"^(?P<ghead>[\w.%:/-]*?/merge_requests/)\d+(?P<gmid>/discussions/)[0-9a-f]+(?P<gtail>/notes)/?$")
PLACEHOLDER: Final = "…"


@dataclass(frozen=True)
class _Options:
    """One tool's options for opening a PR: what each one is (short forms differ between tools)."""

    text: frozenset[str]       # one PR's title or body: the value becomes "…"
    branch: frozenset[str]     # one PR's own branch: dropped
    base: frozenset[str]       # the branch it merges into: the team's when not the default
    valued: frozenset[str]     # other options that take a value
    neutral: frozenset[str]    # choose nothing of the team's (where to run, how to fill, one PR's milestone)


_GH: Final = _Options(
    text=frozenset({"--title", "-t", "--body", "-b", "--body-file", "-F", "--template", "-T"}),
    branch=frozenset({"--head", "-H"}), base=frozenset({"--base", "-B"}),
    valued=frozenset({"--assignee", "-a", "--label", "-l", "--milestone", "-m", "--project", "-p", "--reviewer",
                      "-r", "--repo", "-R", "--recover"}),
    neutral=frozenset({"--repo", "-R", "--fill", "-f", "--fill-first", "--fill-verbose", "--web", "-w", "--dry-run",
                       "--editor", "-e", "--assignee", "-a", "--milestone", "-m", "--project", "-p", "--recover"}))
_GLAB: Final = _Options(
    text=frozenset({"--title", "-t", "--description", "-d"}),
    branch=frozenset({"--source-branch", "-s"}), base=frozenset({"--target-branch", "-b"}),
    valued=frozenset({"--assignee", "-a", "--label", "-l", "--milestone", "-m", "--reviewer", "--repo", "-R"}),
    neutral=frozenset({"--repo", "-R", "--fill", "-f", "--yes", "-y", "--web", "-w", "--assignee", "-a",
                       "--milestone", "-m"}))
_DEFAULT_BASES: Final = frozenset({"main", "master"})
#: Options no team chooses but the command needs as it ran (take the text from the commits, the
#: repository, no prompt): kept in the recipe, never a reason for one.
_HOW_TO_RUN: Final = frozenset({"--fill", "-f", "--fill-first", "--fill-verbose", "--yes", "-y", "--repo", "-R"})
#: ``gh api`` options that take a value (the method, a header), those that shape only the output, and
#: ``--input`` (one reply's file), none of them part of the recipe's habit but the method and headers.
_API_VALUED: Final = frozenset({"-X", "--method", "-H", "--header", "--hostname", "-p", "--preview"})
_OUTPUT_FLAGS: Final = frozenset({"--silent", "--include", "-i", "--paginate", "--verbose"})
_OUTPUT_VALUED: Final = frozenset({"--jq", "-q", "--template", "-t", "--cache", "--input"})
_FIELDS: Final = re.compile(r"^(?P<opt>-f|-F|--field|--raw-field)(?:=|(?<=-f)|(?<=-F))(?P<rest>.+)$")


def review_kind(command: str) -> str | None:
    """``pull_request`` or ``review_reply`` for a command that opens a PR or answers a review
    comment in its thread, else None."""
    command = " ".join(command.split())
    if _CREATE.match(command):
        return PULL_REQUEST
    if _API.match(command) and _api_path(_words(command)) is not None:
        return REVIEW_REPLY
    return None


def review_recipe(command: str, kind: str) -> str | None:
    """The command as a recipe of ``kind`` (one PR's text, branch and numbers taken out, every kept
    value quoted), or None when nothing in it is the team's choice or it cannot be read."""
    words = _words(command)
    if not words:
        return None
    if kind == PULL_REQUEST:
        return _pull_request(words, _GLAB if words[0] == "glab" else _GH)
    return _reply(words)


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=False)
    except ValueError:  # an unclosed quote: not a command that ran as written
        return []


def _pull_request(words: list[str], opts: _Options) -> str | None:
    choices: list[str] = []
    how: list[str] = []
    texts: list[str] = []
    i = 3
    while i < len(words):
        opt, eq, inline = words[i].partition("=")
        takes = opt in opts.text or opt in opts.branch or opt in opts.base or opt in opts.valued
        value = inline if eq else (words[i + 1] if takes and i + 1 < len(words) else None)
        i += 2 if takes and not eq else 1
        if not opt.startswith("-"):
            return None  # a stray word (a PR number, a path): not the form a recipe states
        if opt in opts.text:
            texts.append(f"{opt} {PLACEHOLDER}")
        elif opt in opts.base:
            if value and value not in _DEFAULT_BASES and "/" not in value and not re.search(r"\d", value):
                choices.append(f"{opt} {shlex.quote(value)}")
        elif opt in _HOW_TO_RUN:
            how.append(opt if value is None else f"{opt} {shlex.quote(value)}")
        elif opt not in opts.branch and opt not in opts.neutral:
            choices.append(opt if value is None else f"{opt} {shlex.quote(value)}")
    # The team's options, how it ran, then the text's placeholders, each in one order: one habit, one
    # recipe. The title comes first, as it is typed most.
    texts.sort(key=lambda t: (not t.startswith(("--title ", "-t ")), t))
    return " ".join([*words[:3], *sorted(choices), *sorted(how), *texts]) if choices else None


def _api_path(words: list[str]) -> tuple[int, re.Match[str]] | None:
    """The index of the REST path among an ``api`` call's words, and its match as a thread reply."""
    i = 2
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in _API_VALUED else 1
    m = _REPLY_PATH.match(words[i].lstrip("/")) if i < len(words) else None
    return (i, m) if m else None


def _reply(words: list[str]) -> str | None:
    found = _api_path(words)
    if found is None:
        return None
    at, m = found
    path = (f"{m['head']}<number>{m['mid']}<id>{m['tail']}" if m["head"] is not None
            else f"{m['ghead']}<number>{m['gmid']}<id>{m['gtail']}")
    out = [*words[:2], *(shlex.quote(w) for w in words[2:at]), path]
    i = at + 1
    while i < len(words):
        w = words[i]
        field = _FIELDS.match(w)
        if w in _OUTPUT_FLAGS or w.partition("=")[0] in _OUTPUT_VALUED:
            i += 2 if w in _OUTPUT_VALUED else 1
            continue
        if w in ("-f", "-F", "--field", "--raw-field") and i + 1 < len(words):
            out.append(f"{w} {words[i + 1].split('=', 1)[0]}={PLACEHOLDER}")
            i += 2
            continue
        if field is not None:  # -fbody=x, --field=body=x: the value is the reply's text
            sep = "=" if field["opt"].startswith("--") else ""
            out.append(f"{field['opt']}{sep}{field['rest'].split('=', 1)[0]}={PLACEHOLDER}")
        else:
            out.append(shlex.quote(w))
        i += 1
    return " ".join(out)

"""How a project opens pull requests and answers review comments, read from the commands that did it.

A team's review workflow is knowledge a new colleague is told on day one ("open PRs as drafts",
"answer each review comment in its own thread"), and agents rediscover it each session: they
open ready PRs, or post a reply to the wrong API path and get a 404. The commands that did it
successfully say it in the code hosts' own grammar (GitHub's ``gh``, GitLab's ``glab``):

* ``pull_request``: ``gh pr create`` / ``glab mr create``. Only the options that are the team's
  choice make a recipe (``--draft``, ``--reviewer x``, ``--label y``, a base branch other than
  ``main``); the title, the body and the head branch are one PR's, so they become ``…`` or go.
  A PR opened with nothing chosen is what any agent does unprompted: no recipe.
* ``review_reply``: a reply in a review comment's thread through the host's API
  (``gh api repos/o/r/pulls/12/comments/345/replies -f body=…``). The numbers are one PR's and
  one comment's, so they become ``<number>`` and ``<id>``; the reply's text becomes ``…``.

Nothing here names a project: the patterns are the tools' own subcommands and REST paths.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

PULL_REQUEST, REVIEW_REPLY = "pull_request", "review_reply"
KINDS: Final = frozenset({PULL_REQUEST, REVIEW_REPLY})

_CREATE: Final = re.compile(r"^(?:gh\s+pr|glab\s+mr)\s+create\b")
# A reply in a review thread: GitHub's pulls/N/comments/ID/replies, GitLab's discussion notes.
_REPLY_PATH: Final = re.compile(r"^(?P<head>.*?/(?:pulls|merge_requests)/)\d+(?P<mid>/(?:comments|discussions)/)"
                                r"\d+(?P<tail>/(?:replies|notes))/?$")
_API: Final = re.compile(r"^(?:gh|glab)\s+api\b")
#: Options whose value is one PR's text or branch: the value is not the recipe.
_TEXT_OPTS: Final = frozenset({"--title", "-t", "--body", "-b", "--body-file", "--description", "-d",
                               "--message", "-m"})
_BRANCH_OPTS: Final = frozenset({"--head", "-H", "--source-branch", "-s"})
_BASE_OPTS: Final = frozenset({"--base", "-B", "--target-branch"})
#: Options that choose nothing of the team's (where to run, take the text from the commits).
_NEUTRAL_OPTS: Final = frozenset({"--repo", "-R", "--fill", "-f", "--yes", "-y"})
#: Options that only shape what the API call prints.
_OUTPUT_OPTS: Final = frozenset({"--jq", "-q", "--template", "-t", "--silent", "--include", "-i", "--paginate"})
_FIELD_OPTS: Final = frozenset({"-f", "-F", "--field", "--raw-field"})
_DEFAULT_BASES: Final = frozenset({"main", "master"})
_VALUED: Final = _TEXT_OPTS | _BRANCH_OPTS | _BASE_OPTS | frozenset({"--repo", "-R", "--reviewer", "-r", "--label",
                                                                      "-l", "--assignee", "-a", "--milestone",
                                                                      "--project", "-p"})


def review_kind(command: str) -> str | None:
    """``pull_request`` or ``review_reply`` for a command that opens a PR or answers a review
    comment in its thread, else None."""
    command = " ".join(command.split())
    if _CREATE.match(command):
        return PULL_REQUEST
    if _API.match(command):
        words = _words(command)
        if words and any(_REPLY_PATH.match(w.lstrip("/")) for w in words[2:3]):
            return REVIEW_REPLY
    return None


def review_recipe(command: str, kind: str) -> str | None:
    """The command as a recipe of ``kind`` (one PR's text, branch and numbers taken out), or None
    when nothing in it is the team's choice or it cannot be read."""
    words = _words(command)
    if not words:
        return None
    return _pull_request(words) if kind == PULL_REQUEST else _reply(words)


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=False)
    except ValueError:  # an unclosed quote: not a command that ran as written
        return []


def _pull_request(words: list[str]) -> str | None:
    # The team's options first, then the placeholders of the text: one way, whatever the order typed.
    choices: list[str] = []
    texts: list[str] = []
    chosen, i = False, 3
    while i < len(words):
        w = words[i]
        opt, eq, inline = w.partition("=")
        value = inline if eq else (words[i + 1] if i + 1 < len(words) and opt in _VALUED else None)
        i += 1 if eq or value is None else 2
        if opt in _TEXT_OPTS:
            texts.append(f"{opt} …")
        elif opt in _BRANCH_OPTS:
            continue
        elif opt in _BASE_OPTS:
            if value and value not in _DEFAULT_BASES and "/" not in value and not re.search(r"\d", value):
                choices.append(f"{opt} {value}")
                chosen = True
        elif opt.startswith("-"):
            choices.append(w if value is None or eq else f"{opt} {value}")
            chosen = chosen or opt not in _NEUTRAL_OPTS
        else:
            return None  # a stray word (a PR number, a path): not the form a recipe states
    return " ".join([*words[:3], *choices, *texts]) if chosen else None


def _reply(words: list[str]) -> str | None:
    m = _REPLY_PATH.match(words[2].lstrip("/"))
    if m is None:
        return None
    out, i = [*words[:2], f"{m['head']}<number>{m['mid']}<id>{m['tail']}"], 3
    while i < len(words):
        w = words[i]
        if w in _OUTPUT_OPTS:
            i += 1 if w in ("--silent", "--include", "-i", "--paginate") else 2
            continue
        if w in _FIELD_OPTS and i + 1 < len(words):
            name = words[i + 1].split("=", 1)[0]
            out.append(f"{w} {name}=…")
            i += 2
            continue
        out.append(w)
        i += 1
    return " ".join(out)

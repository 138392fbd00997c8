"""Dates and relative time in queries and memories, resolved to day windows.

A memory saying "I went to the support group yesterday", written on 8 May 2023,
is about 7 May 2023; a query "what did we decide last week?" asked today is
about the seven days before this week. Neither text contains the date the other
uses, so neither BM25 nor a small embedding model can meet them. Here both
sides become :class:`Window` s of days: a query's named or relative date is
resolved against *now*, a memory's relative expressions against *its own time*
(``created_at``, which an import sets to when the text was really written),
and the scorer boosts memories whose windows overlap the query's.

Separately, :func:`asks_when` spots questions whose answer *is* a time ("when
did...", "how long ago..."): a memory that states a time is then more likely
to hold the answer (:func:`states_time`).

English only, like the stopword list; unrecognised phrasing resolves to nothing
(no boost), never to a wrong date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache

__all__ = ["Window", "asks_when", "memory_windows", "overlaps", "query_windows", "states_time"]

_MONTHS = {m: i + 1 for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"))}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH_RE = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
            r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_UNIT_DAYS = {"day": 1, "week": 7, "weekend": 7, "month": 30, "year": 365}
_NUMBER = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "few": 3, "couple of": 2, "several": 4}

_WHEN = re.compile(r"^\s*(?:when\b|what (?:date|day|time|year|month)\b|how long ago\b|since when\b|"
                   r"which (?:day|date|month|year)\b|in what (?:year|month)\b)", re.IGNORECASE)
_TIMEWORD = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|recently|ago|last (?:night|week|weekend|month|year|summer|winter|"
    r"spring|fall|autumn|time)|this (?:morning|week|weekend|month|year|summer)|next (?:week|month|year)|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|(?:19|20)\d\d|" + _MONTH_RE + r")\b", re.IGNORECASE)

# "13 October 2023", "1 February, 2023", "October 13, 2023", "May 23 2023", "in June", "July 2023", "2023".
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)? " + _MONTH_RE + r",? ((?:19|20)\d\d)\b", re.I)
_MONTH_DAY_YEAR = re.compile(r"\b" + _MONTH_RE + r" (\d{1,2})(?:st|nd|rd|th)?,? ((?:19|20)\d\d)\b", re.I)
_MONTH_YEAR = re.compile(r"\b" + _MONTH_RE + r",? ((?:19|20)\d\d)\b", re.I)
_IN_MONTH = re.compile(r"\b(?:in|during|of|since|early|late|mid|last|this) " + _MONTH_RE + r"\b", re.I)
_YEAR = re.compile(r"\b(?:in|during|of|since) ((?:19|20)\d\d)\b", re.I)
_AGO = re.compile(r"\b(a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of|several|\d+) "
                  r"(day|week|weekend|month|year)s? ago\b", re.I)
_RELATIVE = re.compile(r"\b(yesterday|today|tonight|last night|this morning|last (?:week|weekend)|"
                       r"this (?:week|weekend)|last month|this month|last year|this year|"
                       r"the other day|recently)\b", re.I)


@dataclass(frozen=True)
class Window:
    """An inclusive range of days; ``any_year`` matches the same days of any year ("in June")."""

    start: date
    end: date
    any_year: bool = False


def asks_when(query: str) -> bool:
    """Whether the question's answer is a time ("when...", "what year...", "how long ago...")."""
    return bool(_WHEN.search(query))


@lru_cache(maxsize=4096)
def states_time(text: str) -> bool:
    """Whether the text states a time: a date, a month, a weekday or a relative expression."""
    return bool(_TIMEWORD.search(text))


def _month_end(year: int, month: int) -> date:
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    return nxt - timedelta(days=1)


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _absolute(text: str) -> list[Window]:
    """Dates written out in ``text`` (days, months with a year, months alone, years)."""
    out: list[Window] = []
    taken: list[tuple[int, int]] = []

    def free(m: re.Match[str]) -> bool:
        return not any(a <= m.start() < b for a, b in taken)

    for m in _DAY_MONTH_YEAR.finditer(text):
        d = _safe_date(int(m.group(3)), _MONTHS[m.group(2).lower()[:3]], int(m.group(1)))
        if d:
            out.append(Window(d, d))
            taken.append(m.span())
    for m in _MONTH_DAY_YEAR.finditer(text):
        d = _safe_date(int(m.group(3)), _MONTHS[m.group(1).lower()[:3]], int(m.group(2)))
        if d and free(m):
            out.append(Window(d, d))
            taken.append(m.span())
    for m in _MONTH_YEAR.finditer(text):
        if free(m):
            year, month = int(m.group(2)), _MONTHS[m.group(1).lower()[:3]]
            out.append(Window(date(year, month, 1), _month_end(year, month)))
            taken.append(m.span())
    for m in _IN_MONTH.finditer(text):
        if free(m):
            month = _MONTHS[m.group(1).lower()[:3]]
            # "may" is also a verb: only "in/during/of... May" counts, and it matches May of any year.
            out.append(Window(date(2000, month, 1), _month_end(2000, month), any_year=True))
            taken.append(m.span())
    for m in _YEAR.finditer(text):
        if free(m):
            year = int(m.group(1))
            out.append(Window(date(year, 1, 1), date(year, 12, 31)))
    return out


def _relative(text: str, ref: date) -> list[Window]:
    """Relative expressions in ``text`` resolved against the day ``ref``."""
    out: list[Window] = []
    for m in _AGO.finditer(text):
        raw = m.group(1).lower()
        n = int(raw) if raw.isdigit() else _NUMBER.get(raw, 1)
        days = n * _UNIT_DAYS[m.group(2).lower()]
        slack = max(1, days // 4)  # "two weeks ago" is about, not exactly, 14 days
        out.append(Window(ref - timedelta(days=days + slack), ref - timedelta(days=max(0, days - slack))))
    for m in _RELATIVE.finditer(text):
        word = m.group(1).lower()
        if word in ("today", "tonight", "this morning"):
            out.append(Window(ref, ref))
        elif word in ("yesterday", "last night"):
            out.append(Window(ref - timedelta(days=1), ref - timedelta(days=1)))
        elif word in ("last week", "last weekend"):
            out.append(Window(ref - timedelta(days=13), ref - timedelta(days=1)))
        elif word in ("this week", "this weekend", "the other day", "recently"):
            out.append(Window(ref - timedelta(days=7), ref))
        elif word == "last month":
            first = ref.replace(day=1)
            prev_end = first - timedelta(days=1)
            out.append(Window(prev_end.replace(day=1), prev_end))
        elif word == "this month":
            out.append(Window(ref.replace(day=1), ref))
        elif word == "last year":
            out.append(Window(date(ref.year - 1, 1, 1), date(ref.year - 1, 12, 31)))
        elif word == "this year":
            out.append(Window(date(ref.year, 1, 1), ref))
    return out


def query_windows(query: str, now: datetime) -> list[Window]:
    """The days a query names, absolute or relative to ``now``; [] when it names none."""
    return _absolute(query) + _relative(query, now.date())


@lru_cache(maxsize=4096)
def memory_windows(text: str, created: datetime | None) -> tuple[Window, ...]:
    """The days a memory is about: the day it was written and the dates it states or implies.

    Its relative expressions ("yesterday", "two weeks ago") resolve against ``created``.
    Cached: the same memories are scored query after query.
    """
    out: list[Window] = _absolute(text)
    if created is not None:
        day = created.date()
        out.append(Window(day, day))
        out.extend(_relative(text, day))
    return tuple(out)


def _shift(w: Window, year: int) -> Window:
    try:
        return Window(w.start.replace(year=year), w.end.replace(year=year))
    except ValueError:  # 29 February
        return Window(w.start.replace(year=year, day=28), w.end.replace(year=year, day=28))


def overlaps(a: Window, b: Window) -> bool:
    """Whether two windows share a day (an ``any_year`` window is moved to the other's year)."""
    if a.any_year and not b.any_year:
        a = _shift(a, b.start.year)
    elif b.any_year and not a.any_year:
        b = _shift(b, a.start.year)
    return a.start <= b.end and b.start <= a.end

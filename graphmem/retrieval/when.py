"""Time in the text: relative time expressions resolved against when they were said.

"I went camping last Saturday", said on 2023-05-08, is about [2023-05-06, 2023-05-07). At ingestion
each memory's expressions are resolved against its message time and stored beside the text (as
words for BM25 and as date ranges); at query time a question is parsed the same way, and hits whose
dates fall in the question's range are boosted ("what did I do in November 2022?"); a question that
asks *when* favours hits that say when.

The resolution is dateparser's (a core dependency). Which words are worth handing to
it is decided here, by a small lexicon of time words (months, weekdays, years, "ago", "yesterday",
"last/next/this" + a unit ...): parsing every message whole costs 30-100 ms and finds dates in
words like "we" or "May I". Without dateparser nothing is resolved and search works as before.
"""

from __future__ import annotations

import calendar
import logging
import re
import threading
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

from graphmem.types import MemoryWrite, TimeSpan, time_words

__all__ = ["QueryTime", "annotate_times", "available", "overlap", "parse_query", "resolve", "time_words"]

log = logging.getLogger(__name__)

_MONTHS = {m.lower() for m in calendar.month_name[1:]} | {m.lower() for m in calendar.month_abbr[1:]} | {"sept"}
_WEEKDAYS = {d.lower() for d in calendar.day_name} | {"mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri"}
_UNITS = {"day", "days", "week", "weeks", "weekend", "month", "months", "year", "years", "fortnight"}
_RELATIVE = {"last", "next", "this", "past", "previous", "coming"}
_POINTS = {"yesterday", "today", "tonight", "tomorrow", "ago"}
_NUMBERS = {"a", "an", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
            "twelve", "couple", "few", "several"}  # fmt: skip
_GLUE = {"of", "the", "on", "in", "before", "after", "a", "an"}
_TOKEN = re.compile(r"[A-Za-z]+|\d{1,4}(?:st|nd|rd|th)?")
_YEAR = re.compile(r"^(19|20)\d\d$")
_DAY_NUMBER = re.compile(r"^\d{1,2}(st|nd|rd|th)?$")
#: "when did ...", "what year ...": the question asks for a time, so hits that carry one are favoured
_ASKS_WHEN = re.compile(r"\b(when|what (year|month|date|day|time)|how long ago)\b", re.IGNORECASE)
MAX_SPANS = 8
_RESOLVED: dict[tuple[str, date], TimeSpan | None] = {}  # see _resolve_phrase
_RESOLVED_MAX = 50_000
_RESOLVE_LOCK = threading.Lock()


@dataclass(frozen=True)
class QueryTime:
    """What a question says about time: the ranges it names, and whether it asks when."""

    spans: tuple[TimeSpan, ...] = ()
    asks_when: bool = False

    def __bool__(self) -> bool:
        return bool(self.spans) or self.asks_when

    @property
    def start(self) -> datetime | None:
        return min((s.start for s in self.spans), default=None)

    @property
    def end(self) -> datetime | None:
        return max((s.end for s in self.spans), default=None)


def available() -> bool:
    return _parser() is not None


def resolve(text: str, said_at: datetime | None) -> list[TimeSpan]:
    """The time expressions of ``text`` as date ranges, resolved against ``said_at`` (UTC)."""
    if said_at is None or not text:
        return []
    phrases = candidate_phrases(text)[:MAX_SPANS]
    if not phrases:  # no time words: dateparser (0.3-1 s to load) is not needed
        return []
    parser = _parser()
    if parser is None:
        return []
    base = said_at.astimezone(timezone.utc).replace(tzinfo=None)
    spans = []
    for phrase in phrases:
        span = _resolve_phrase(parser, phrase, base)
        if span is not None and span not in spans:
            spans.append(span)
    return spans


def parse_query(question: str, reference: datetime) -> QueryTime:
    """The question's time: ranges named in it (relative ones against ``reference``) and whether it asks when."""
    return QueryTime(tuple(resolve(question, reference)), bool(_ASKS_WHEN.search(question)))


def overlap(spans: list[TimeSpan], start: datetime, end: datetime) -> bool:
    return any(s.start < end and start < s.end for s in spans)


# --- finding and resolving phrases ------------------------------------------------------------------


def candidate_phrases(text: str) -> list[str]:
    """Runs of time words (with numbers and glue words between them) that name a time on their own."""
    tokens = list(_TOKEN.finditer(text))
    phrases: list[str] = []
    run: list[re.Match[str]] = []
    for i, m in enumerate(tokens):
        word = m.group(0).lower()
        if _is_time_word(word, tokens, i) or (run and (word in _GLUE or word in _NUMBERS or _DAY_NUMBER.match(word))):
            run.append(m)
            continue
        if word in _NUMBERS or _DAY_NUMBER.match(word) or word in _RELATIVE:
            if run and not _anchored(run):
                run = []
            run = [*run, m] if run else [m]
            continue
        _close(text, run, phrases)
        run = []
    _close(text, run, phrases)
    return phrases


def _is_time_word(word: str, tokens: list[re.Match[str]], i: int) -> bool:
    if word == "may":  # the month only beside a day number or a year ("May 2023", "8 May"), not "May I"
        near = [tokens[j].group(0) for j in (i - 1, i + 1) if 0 <= j < len(tokens)]
        return any(_YEAR.match(n) or _DAY_NUMBER.match(n) for n in near)
    if word in ("sat", "sun", "mar", "jun", "jan", "dec", "oct", "nov", "aug", "feb", "apr", "jul", "sep", "sept"):
        return tokens[i].group(0)[0].isupper()  # "Sat" the day, not "sat" the verb
    return word in _MONTHS or word in _WEEKDAYS or word in _UNITS or word in _POINTS or bool(_YEAR.match(word))


def _anchored(run: list[re.Match[str]]) -> bool:
    """A run names a time when it has a month, weekday, year, a point word ("yesterday", "ago"), or a
    relative word and a unit ("last week"); a number and a unit alone is a duration ("for 7 years")."""
    words = [m.group(0).lower() for m in run]
    if any(w in _MONTHS or w in _WEEKDAYS or w in _POINTS or _YEAR.match(w) for w in words):
        return True
    return any(w in _UNITS for w in words) and any(w in _RELATIVE for w in words)


def _close(text: str, run: list[re.Match[str]], phrases: list[str]) -> None:
    while run and run[-1].group(0).lower() in _GLUE:
        run = run[:-1]
    while run and run[0].group(0).lower() in _GLUE | {"a", "an"}:
        run = run[1:]
    if run and _anchored(run):
        phrases.append(text[run[0].start() : run[-1].end()])


def _resolve_phrase(parser: Any, phrase: str, base: datetime) -> TimeSpan | None:
    """The phrase's span said at ``base``, memoised per (phrase, day): phrases hold only day-or-coarser
    words (the lexicon has no hours or minutes) and spans are whole days, so the time of day of
    ``base`` never changes the answer, and a bulk import of a day's chat asks dateparser (~1-2 ms a
    phrase) once per distinct phrase. The lock also keeps threads from re-basing the one parser
    under each other."""
    key = (phrase, base.date())
    with _RESOLVE_LOCK:
        if key in _RESOLVED:
            return _RESOLVED[key]
        span = _parse_phrase(parser, phrase, base)
        if len(_RESOLVED) >= _RESOLVED_MAX:
            _RESOLVED.clear()
        _RESOLVED[key] = span
        return span


def _parse_phrase(parser: Any, phrase: str, base: datetime) -> TimeSpan | None:
    parser._settings.RELATIVE_BASE = base  # noqa: SLF001 - one parser, re-based per call (its documented setting)
    try:
        data = parser.get_date_data(phrase)
    except Exception:  # dateparser's own failures on odd input must not fail an add or a search
        log.debug("dateparser failed on %r", phrase, exc_info=True)
        return None
    if data is None or data.date_obj is None:
        return None
    return _span(phrase, data.date_obj, data.period or "day")


def _span(phrase: str, when: datetime, period: str) -> TimeSpan:
    day = datetime(when.year, when.month, when.day, tzinfo=timezone.utc)
    if period == "year":
        start, end = day.replace(month=1, day=1), day.replace(year=day.year + 1, month=1, day=1)
    elif period == "month":
        start = day.replace(day=1)
        end = start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)
    elif period == "week":
        start = day - timedelta(days=day.weekday())
        end = start + timedelta(days=7)
    else:
        period, start, end = "day", day, day + timedelta(days=1)
    return TimeSpan(phrase, start, end, period)


@lru_cache(maxsize=1)
def _parser() -> Any:
    """One English DateDataParser (building one loads dateparser's locale data: seconds)."""
    try:
        from dateparser.date import DateDataParser  # type: ignore[import-untyped]  # dateparser ships no types
    except ImportError:
        log.info("dateparser is not installed (a graphmem dependency: pip install dateparser): time expressions stay unresolved")
        return None
    return DateDataParser(languages=["en"], settings={"PREFER_DATES_FROM": "past", "RETURN_AS_TIMEZONE_AWARE": False})


def warm_parser() -> None:
    """Load dateparser and its English data, and resolve one phrase (its first parse compiles
    patterns), so the first add that states a time does not pay for it."""
    resolve("I moved there yesterday", datetime(2000, 1, 1, tzinfo=timezone.utc))


def annotate_times(memories: list[MemoryWrite], reference: datetime | None) -> None:
    """Resolve the time expressions of each ADD / UPDATE text against when it was said (its own
    ``said_at``, else ``reference``: the add's time). Already annotated writes are left alone."""
    for m in memories:
        if m.event in ("ADD", "UPDATE") and m.times is None and m.text:
            m.times = resolve(m.text, m.said_at or reference)

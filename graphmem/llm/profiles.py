"""Request profiles: which sampling parameters a model accepts, and how the client heals when it guessed wrong.

OpenAI's reasoning families (gpt-5*, o1*, o3*, o4*) refuse ``max_tokens`` ("Use
'max_completion_tokens' instead") and any ``temperature`` but the default; they take
``reasoning_effort``. The profile is chosen from the model name (the last path segment, so
``openai/gpt-5-mini`` behind a gateway counts) and every choice can be forced in config
(``reasoning``, ``max_tokens_param``, ``temperature: null``, ``reasoning_effort``) for deployment
names and fine-tunes the name rule cannot know.

What the name rule misses is learnt: a 400 naming an unsupported parameter or value makes the client
rename (``max_tokens`` -> the parameter the message names) or drop exactly that parameter, retry once,
warn once and remember it for the life of the client (:class:`Adaptations`).
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from typing import Any, Literal

log = logging.getLogger(__name__)

_REASONING_NAME = re.compile(r"^(gpt-5|o1|o3|o4)([-.:_]|$)", re.IGNORECASE)

#: Extraction is pattern-following (copy names, pick a tool), not multi-step reasoning: "low" keeps a
#: reasoning model's hidden tokens (billed as completion tokens) and latency down, and, unlike
#: "minimal", every reasoning family accepts it.
DEFAULT_REASONING_EFFORT = "low"

#: Parameters the client may drop or rename when a server refuses them; never model, messages, tools.
ADAPTABLE = frozenset({"temperature", "max_tokens", "max_completion_tokens", "reasoning_effort", "parallel_tool_calls"})

Auto = Literal["auto"]


def is_reasoning_model(model: str) -> bool:
    """True for OpenAI's reasoning families, also behind a gateway prefix (``openai/o3-mini``)."""
    return bool(_REASONING_NAME.match(model.rsplit("/", 1)[-1].strip()))


@dataclass(frozen=True)
class RequestProfile:
    """The sampling parameters one client sends with every request."""

    reasoning: bool
    max_tokens_param: str
    temperature: float | None
    reasoning_effort: str | None

    def params(self, max_tokens: int) -> dict[str, Any]:
        out: dict[str, Any] = {self.max_tokens_param: max_tokens}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.reasoning_effort is not None:
            out["reasoning_effort"] = self.reasoning_effort
        return out


def choose_profile(
    model: str,
    reasoning: bool | None = None,
    max_tokens_param: str | None = None,
    temperature: float | None | Auto = "auto",
    reasoning_effort: str | None | Auto = "auto",
) -> RequestProfile:
    """The profile for ``model``; each explicit argument wins over the name rule."""
    is_reasoning = is_reasoning_model(model) if reasoning is None else reasoning
    if temperature == "auto":
        temperature = None if is_reasoning else 0.0
    if reasoning_effort == "auto":
        reasoning_effort = DEFAULT_REASONING_EFFORT if is_reasoning else None
    param = max_tokens_param or ("max_completion_tokens" if is_reasoning else "max_tokens")
    return RequestProfile(is_reasoning, param, temperature, reasoning_effort)


@dataclass(frozen=True)
class Refusal:
    """What a 400 answer says the server would not take."""

    kind: str  # "parameter", "tools", "tool_choice", "response_format", "other"
    message: str
    parameter: str | None = None
    rename_to: str | None = None


_UNSUPPORTED_PARAM = re.compile(r"unsupported parameter:?\s*'([\w.]+)'", re.IGNORECASE)
_USE_INSTEAD = re.compile(r"use\s+'([\w.]+)'\s+instead", re.IGNORECASE)
_UNSUPPORTED_VALUE = re.compile(r"unsupported value:?\s*'([\w.]+)'", re.IGNORECASE)
_UNRECOGNISED = re.compile(r"(?:unrecognized request argument supplied|unknown (?:parameter|field|name)|extra inputs are not permitted)\W+'?([\w.]+)", re.IGNORECASE)
_NO_TOOLS = re.compile(r"does not support tools|tools? (?:is|are) not supported|does not support (?:function|tool)[ _-]?call", re.IGNORECASE)
_TOOL_CHOICE = re.compile(r"tool[ _]choice", re.IGNORECASE)
_RESPONSE_FORMAT = re.compile(r"response[ _]format|json[ _]schema|json_object", re.IGNORECASE)


def classify(message: str, param: str | None, code: str | None, sent: dict[str, Any]) -> Refusal:
    """Read a 400's message (and OpenAI's ``param`` / ``code`` fields) against the request sent."""
    named = _UNSUPPORTED_PARAM.search(message) or _UNSUPPORTED_VALUE.search(message) or _UNRECOGNISED.search(message)
    candidate = named.group(1) if named else param
    if candidate in ADAPTABLE and candidate in sent and (named or (code or "").startswith("unsupported")):
        rename = _USE_INSTEAD.search(message)
        target = rename.group(1) if rename and rename.group(1) in ADAPTABLE else None
        return Refusal("parameter", message, candidate, target)
    if _NO_TOOLS.search(message) and "tools" in sent:
        return Refusal("tools", message)
    if (_TOOL_CHOICE.search(message) or param == "tool_choice") and "tool_choice" in sent:
        return Refusal("tool_choice", message, "tool_choice")
    if (_RESPONSE_FORMAT.search(message) or param == "response_format") and "response_format" in sent:
        return Refusal("response_format", message, "response_format")
    return Refusal("other", message)


class Adaptations:
    """Parameters a server refused, learnt once per client and applied to every later request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._renamed: dict[str, str] = {}
        self._dropped: set[str] = set()
        self.notes: list[str] = []  # what was adapted, in words (graphmem doctor prints them)

    def apply(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            renamed, dropped = dict(self._renamed), set(self._dropped)
        out: dict[str, Any] = {}
        for key, value in params.items():
            key = renamed.get(key, key)
            if key not in dropped:
                out[key] = value
        return out

    def learn(self, refusal: Refusal, model: str) -> bool:
        """Remember a refused parameter; False when it was already adapted (nothing new to try)."""
        name = refusal.parameter
        if name is None:
            return False
        with self._lock:
            if refusal.rename_to and name not in self._renamed and refusal.rename_to not in self._dropped:
                self._renamed[name] = refusal.rename_to
                note = f"sends {refusal.rename_to} instead of {name}"
            elif name not in self._dropped:
                self._dropped.add(name)
                note = f"omits {name}"
            else:
                return False
            self.notes.append(note)
        log.warning("LLM %r refused %s; graphmem now %s for this client (%s)", model, name, note, _first_line(refusal.message))
        return True


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) < 200 else line[:197] + "..."

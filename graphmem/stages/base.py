"""What every LLM stage is made of: a prompt template with declared placeholders, tool schemas
and pydantic models that validate the model's (untrusted) arguments item by item."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from graphmem.errors import ConfigError
from graphmem.schema.resources import load_prompt

_PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt file: ``# purpose:`` and ``# placeholders:`` header lines, ``---``, then the body.

    Placeholders are written ``{{name}}`` (so JSON braces in a prompt need no escaping). Loading
    checks the body uses exactly the declared placeholders.
    """

    name: str
    purpose: str
    placeholders: tuple[str, ...]
    body: str

    @classmethod
    def parse(cls, name: str, text: str) -> PromptTemplate:
        head, sep, body = text.partition("\n---\n")
        if not sep:
            raise ConfigError(f"prompt {name!r}: missing the '---' line after its header")
        meta = dict(
            (k.strip(), v.strip())
            for k, _, v in (line.lstrip("# ").partition(":") for line in head.splitlines() if line.strip())
        )
        declared = tuple(p.strip() for p in meta.get("placeholders", "").split(",") if p.strip())
        used = set(_PLACEHOLDER.findall(body))
        if used != set(declared):
            raise ConfigError(f"prompt {name!r}: declares {sorted(declared)} but uses {sorted(used)}")
        return cls(name=name, purpose=meta.get("purpose", ""), placeholders=declared, body=body.strip() + "\n")

    @classmethod
    def load(cls, name: str) -> PromptTemplate:
        return cls.parse(name, load_prompt(name))

    def system_prompt(self, custom: str | None, **values: Any) -> str:
        """The stage's system prompt: the user's custom prompt (its placeholders filled when it uses
        any) in place of this template, else this template."""
        return render_text(custom, values) if custom else self.render(**values)

    def render(self, **values: Any) -> str:
        missing = set(self.placeholders) - set(values)
        if missing:
            raise ConfigError(f"prompt {self.name!r}: no value for {sorted(missing)}")
        return render_text(self.body, values)


def render_text(text: str, values: dict[str, Any]) -> str:
    """Fill ``{{name}}`` placeholders that have a value; leave anything else as written.

    Used for custom prompts too: a user's prompt may use any of the stage's placeholders, or none.
    """
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), text)


def validate_items(items: Any, model: type[M]) -> tuple[list[M], int]:
    """Validate a list of untrusted objects; keep the valid ones, count the dropped."""
    if not isinstance(items, list):
        return [], 1 if items is not None else 0
    kept: list[M] = []
    dropped = 0
    for item in items:
        try:
            kept.append(model.model_validate(item))
        except ValidationError:
            dropped += 1
    return kept, dropped

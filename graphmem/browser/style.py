"""The Neo4j Browser style (style.grass) and the display labels it colours by.

Browser's GraSS selects nodes by label only, so an entity's type becomes a second label
(``:Entity:Person``) for display. Only the labels below are ever written: they are fixed names, not
model output.
"""

from __future__ import annotations

from pathlib import Path

STYLE_PATH = Path(__file__).resolve().parent / "style.grass"

_SYNONYMS = {
    "Person": ("person", "people", "human", "individual"),
    "Place": ("place", "location", "city", "country", "address", "region"),
    "Organization": ("organization", "organisation", "company", "institution", "team", "school", "employer"),
    "Activity": ("activity", "sport", "hobby", "game"),
    "Food": ("food", "dish", "drink", "meal", "cuisine"),
    "Pet": ("pet", "animal"),
    "Object": ("object", "item", "thing", "product", "device"),
    "Event": ("event", "occasion", "meeting", "trip"),
    "Concept": ("concept", "idea", "topic", "skill", "subject"),
}

#: lower-case entity_type -> display label (a node.<Label> rule of style.grass).
TYPE_LABELS: dict[str, str] = {word: label for label, words in _SYNONYMS.items() for word in words}


def type_label(entity_type: str | None) -> str | None:
    """The display label of an entity type, or None when the style has no colour for it."""
    return TYPE_LABELS.get((entity_type or "").strip().lower())


def style_text() -> str:
    return STYLE_PATH.read_text(encoding="utf-8")


__all__ = ["STYLE_PATH", "TYPE_LABELS", "style_text", "type_label"]

"""Display labels: an entity's type written as a second label (``:Entity:Person``) so Neo4j
Browser's style (GraSS selects nodes by label only) can colour it. The Neo4j store and the exports
write these labels and the Browser style reads them, so the list lives here, below all three. Only
the labels below are ever written: they are fixed names, not model output.
"""

from __future__ import annotations

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


__all__ = ["TYPE_LABELS", "type_label"]

"""The Neo4j Browser style (style.grass), coloured by the display labels of
:mod:`graphmem.schema.labels` (which the stores write and this style reads).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from graphmem.schema.labels import TYPE_LABELS, type_label

if TYPE_CHECKING:
    from graphmem.schema.ontology import Ontology

STYLE_PATH = Path(__file__).resolve().parent / "style.grass"

def style_text(ontology: Ontology | None = None) -> str:
    """The GraSS style; with an ontology, a colour rule for each of the user's own entity types."""
    base = STYLE_PATH.read_text(encoding="utf-8")
    if ontology is None:
        return base
    rules = [_rule(name, i) for i, name in enumerate(ontology.entity_types)]
    return base.rstrip() + "\n" + "".join(rules)


def labels_for(ontology: Ontology | None) -> dict[str, str]:
    """lower-case entity_type -> display label: the style's fixed list, then the ontology's types
    (names validated by graphmem.schema.ontology, so they are safe labels)."""
    labels = dict(TYPE_LABELS)
    if ontology is not None:
        labels.update({name.casefold(): name for name in ontology.entity_types})
    return labels


def write_style(ontology: Ontology | None, folder: Path) -> Path:
    """The style file to drop on Browser: the shipped one, or a copy with the ontology's colours."""
    if ontology is None:
        return STYLE_PATH
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "style-ontology.grass"
    path.write_text(style_text(ontology), encoding="utf-8")
    return path


#: Colours for the user's own types, in declaration order (then round again).
_PALETTE = ("#C990C0", "#F16667", "#D9C8AE", "#569480", "#4C8EDA", "#FFC454", "#DA7194", "#8DCC93", "#57C7E3", "#F79767")


def _rule(name: str, i: int) -> str:
    colour = _PALETTE[i % len(_PALETTE)]
    return f"node.{name} {{\n  color: {colour};\n  border-color: {colour};\n  text-color-internal: #2A2C34;\n  caption: '{{name}}';\n}}\n"


__all__ = ["STYLE_PATH", "TYPE_LABELS", "labels_for", "style_text", "type_label", "write_style"]

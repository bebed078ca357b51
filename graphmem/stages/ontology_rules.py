"""How an ontology (graphmem.schema.ontology) shapes the graph extraction stage: the tools' JSON schemas,
the prompt's ontology section, and the checks applied to what the model returns.

Without an ontology every method is a no-op, so the stage behaves exactly as before.
"""

from __future__ import annotations

import copy
from typing import Any

from graphmem.llm.base import ToolSpec
from graphmem.schema.ontology import Ontology
from graphmem.stages.base import PromptTemplate


class OntologyRules:
    def __init__(self, ontology: Ontology | None) -> None:
        self.ontology = ontology
        self.strict = ontology is not None and ontology.mode == "strict"
        self.section = self._section() if ontology is not None else ""

    # --- what the model is shown ------------------------------------------------------------

    def _section(self) -> str:
        assert self.ontology is not None
        o = self.ontology
        rule = PromptTemplate.load(f"ontology_{o.mode}_rule").render()
        entities = "\n".join(_entity_line(name, et.description, {k: v.value for k, v in et.attributes.items()}) for name, et in o.entity_types.items())
        relations = "\n".join(
            f"- {name.upper()} [{'|'.join(r.source) or 'any'} → {'|'.join(r.target) or 'any'}]" + (f": {r.description}" if r.description else "")
            for name, r in o.relation_types.items()
        )
        template = PromptTemplate.load("ontology_section")
        return template.render(mode_rule=rule.strip(), entity_types=entities or "- (any)", relation_types=relations or "- (any)").strip()

    def system_prompt(self, text: str, custom: bool) -> str:
        """A custom prompt that does not place the ontology section gets it appended."""
        if custom and self.section and self.section not in text:
            return text.rstrip() + "\n\n" + self.section + "\n"
        return text

    def entities_tool(self, base: ToolSpec) -> ToolSpec:
        if self.ontology is None:
            return base
        params = copy.deepcopy(base.parameters)
        item = params["properties"]["entities"]["items"]
        names = list(self.ontology.entity_types)
        if self.strict:
            item["properties"]["entity_type"] = {"type": "string", "enum": names, "description": "one of the ontology's entity types"}
        else:
            item["properties"]["entity_type"]["description"] = f"preferably one of: {', '.join(names)}"
        attributes = self.ontology.attribute_schema()
        if attributes is not None:
            item["properties"]["attributes"] = attributes
        return ToolSpec(base.name, base.description, params)

    def relations_tool(self, base: ToolSpec) -> ToolSpec:
        if self.ontology is None or not self.ontology.relation_types:
            return base
        params = copy.deepcopy(base.parameters)
        item = params["properties"]["relations"]["items"]
        names = self.ontology.relation_names
        if self.strict:
            item["properties"]["relationship"] = {"type": "string", "enum": names, "description": "one of the ontology's relation types"}
        else:
            item["properties"]["relationship"]["description"] = f"preferably one of: {', '.join(names)}"
        return ToolSpec(base.name, base.description, params)

    # --- what the model returned ------------------------------------------------------------

    def entity_type(self, stored_default: str, raw: str) -> str | None:
        """The stored type of an entity the model typed ``raw`` (``stored_default`` is the type
        without an ontology); None in strict mode when it is not a declared type."""
        if self.ontology is None:
            return stored_default
        declared = self.ontology.entity_type(raw)
        if declared is not None:
            return declared.casefold()
        return None if self.strict else stored_default

    def relationship(self, sanitised: str) -> str | None:
        """The relationship type to store, or None in strict mode when it is not declared."""
        if self.ontology is None or not self.ontology.relation_types:
            return sanitised
        return sanitised if self.ontology.relation_type(sanitised) or not self.strict else None

    def endpoints_fit(self, relationship: str, source_type: str, target_type: str) -> bool:
        if self.ontology is None or not self.strict or not self.ontology.relation_types:
            return True  # guided: declared endpoint types are advice, not a filter
        return self.ontology.allows(relationship, source_type, target_type)

    def attributes(self, entity_type: str, raw: Any) -> tuple[dict[str, Any], int]:
        if self.ontology is None:
            return {}, 0
        return self.ontology.attributes(entity_type, raw)

    def label(self, entity_type: str) -> str | None:
        return self.ontology.label(entity_type) if self.ontology is not None else None


def _entity_line(name: str, description: str, attributes: dict[str, str]) -> str:
    line = f"- {name}" + (f": {description}" if description else "")
    if attributes:
        line += " (attributes: " + ", ".join(f"{k}: {v}" for k, v in attributes.items()) + ")"
    return line

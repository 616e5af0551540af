"""What pydantic's JSON Schema leaves out of the document: the rule for free JSON values.

Every JSON value the server takes or gives (an app state's unknown fields, a character's,
a tool result's details) is checked by ``journal.jsonvalues.check_json``: no NUL in any
string or key. pydantic writes such a value as ``{"type": "object"}`` (or
``additionalProperties: true``), which promises any JSON at all, so a client (or a
fuzzer: tests/api/test_fuzz.py) that keeps to the document met a 422 it did not say.
Here each of them refers to ``JsonValue``, a recursive schema that says it. Lone
surrogates cannot be written in a JSON Schema pattern, nor a depth in a recursive schema;
the descriptions say so.
"""

from __future__ import annotations

from typing import Any

from journal.jsonvalues import JSON_DEPTH_MAX, JSON_VALUE_DEPTH_MAX, NO_NUL, TEXT_RULE

REF = "#/components/schemas/JsonValue"
KEY = {"pattern": NO_NUL, "description": TEXT_RULE}
JSON_VALUE = {
    "description": (
        f"any JSON value; in its strings and keys {TEXT_RULE}; finite numbers; a free value "
        f"(an app state, a result's details) nests at most {JSON_VALUE_DEPTH_MAX} levels of "
        f"arrays and objects, a request body at most {JSON_DEPTH_MAX}"
    ),
    "anyOf": [
        {"type": "string", "pattern": NO_NUL},
        {"type": ["number", "boolean", "null"]},
        {"type": "array", "items": {"$ref": REF}},
        {"type": "object", "propertyNames": KEY, "additionalProperties": {"$ref": REF}},
    ],
}


def _free(schema: dict[str, Any]) -> bool:
    """An object schema that lets any key and any value in."""
    if schema.get("type") != "object" or "patternProperties" in schema:
        return False
    extra = schema.get("additionalProperties")
    return extra is True or (extra is None and "properties" not in schema)


def _document(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _document(item)
        return
    if not isinstance(node, dict):
        return
    if _free(node):
        node["propertyNames"] = KEY
        node["additionalProperties"] = {"$ref": REF}
    elif "patternProperties" in node and len(node["patternProperties"]) == 1:
        # dict[Text, Model]: pydantic says "keys matching the pattern hold a Model", which
        # lets a key that does not match (one with a NUL) hold anything.
        ((pattern, value),) = node.pop("patternProperties").items()
        node["propertyNames"] = {**node.get("propertyNames", {}), "pattern": pattern}
        node["additionalProperties"] = value
    for child in node.values():
        _document(child)


def document_json_values(schema: dict[str, Any]) -> dict[str, Any]:
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    _document(components)
    _document(schema.get("paths", {}))
    components["JsonValue"] = JSON_VALUE
    return schema

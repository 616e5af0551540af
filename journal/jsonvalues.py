"""Check JSON-valued fields, and read the JSON text that comes from outside.

A field holds plain JSON only: no NUL characters, no lone surrogates, no NaN, and no nesting
deeper than a limit. Every database can keep such a value and every reader can encode it.
JSON text from outside (a session file's line, a request body, a socket frame) goes through
the one reader here, which refuses text nested past the limit before any parser recurses."""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Annotated, Any

from pydantic import AfterValidator, Field, StringConstraints, ValidationInfo

NUL = "text must not contain the NUL character (U+0000)"
SURROGATE = "text must not contain a lone surrogate (U+D800–U+DFFF)"

# How deep a JSON text from outside may nest arrays and objects. pydantic-core, which reads
# the journals' rows and a session file's lines, reads 201 levels and no more; Python's json
# recurses once a level and fails past about a thousand, less whatever the stack holds.
JSON_DEPTH_MAX = 200
# How deep a free JSON value (a tool call's arguments, a result's details, an app state) may
# nest: less than a text by the levels of the entry or record it is kept in, so whatever the
# journal keeps reads back, as a row or as a line of an export, within JSON_DEPTH_MAX.
JSON_VALUE_DEPTH_MAX = JSON_DEPTH_MAX - 10


class JsonTooDeep(ValueError):
    """A JSON text or value nests arrays and objects deeper than its limit."""

    def __init__(self, limit: int):
        self.limit = limit
        super().__init__(f"JSON nested deeper than {limit} levels of arrays and objects")


def _text_problem(value: str) -> str | None:
    if "\x00" in value:
        return NUL
    if value.isascii():
        return None
    try:  # cheaper than a regular expression over the text
        value.encode("utf-8")
    except UnicodeEncodeError:
        return SURROGATE
    return None


def check_text(value: str) -> str:
    """Refuse U+0000, which PostgreSQL's jsonb cannot store, and lone surrogates (a JSON
    ``"\\udfff"`` escape decodes to one): no UTF-8 encodes them, so neither PostgreSQL nor
    any page or export could write them out."""
    problem = _text_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def check_json(value: Any, *, depth_max: int = JSON_VALUE_DEPTH_MAX) -> Any:
    """Walk a JSON value: only JSON types, every key and string as ``check_text`` wants it,
    only finite numbers, arrays and objects nested at most ``depth_max`` deep
    (``JsonTooDeep``).

    One walk, level by level, does what pydantic's recursive ``JsonValue`` would do, several
    times faster: reading a 10,000-entry branch is mostly this. It never recurses, so no
    value is too deep for it to say so.
    """
    level = [value]
    depth = 0
    while level:
        below: list[Any] = []
        containers = False
        for item in level:
            kind = type(item)
            if kind is str:
                if "\x00" in item or not item.isascii():
                    check_text(item)
            elif kind is dict:
                containers = True
                for key, child in item.items():
                    if type(key) is not str:
                        raise ValueError(f"object keys must be strings, got {type(key).__name__}")
                    if "\x00" in key or not key.isascii():
                        check_text(key)
                    below.append(child)
            elif kind is list:
                containers = True
                below.extend(item)
            elif kind is float:
                if not math.isfinite(item):
                    raise ValueError("numbers must be finite (no NaN or Infinity)")
            elif item is not None and kind not in (int, bool):
                raise ValueError(f"not a JSON value: {kind.__name__}")
        if containers:
            depth += 1
            if depth > depth_max:
                raise JsonTooDeep(depth_max)
        level = below
    return value


# A JSON string (its escapes included), and a run of anything but brackets.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_text_depth(text: str) -> int:
    """How deep ``text`` nests arrays and objects, read as JSON reads it (brackets inside
    strings do not count), up to its first error at least: never less than any JSON parser
    recurses into it. Counts without recursing, in time linear in the text."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(0, max(accumulate(map(_STEP.__getitem__, brackets)), default=0))


def check_json_text(text: str, *, depth_max: int = JSON_DEPTH_MAX) -> str:
    """Refuse (``JsonTooDeep``) a JSON text that nests deeper than ``depth_max``, before any
    parser reads it."""
    # More brackets than the limit is rare in a line or a body; only then are they counted.
    if text.count("[") + text.count("{") > depth_max and json_text_depth(text) > depth_max:
        raise JsonTooDeep(depth_max)
    return text


def json_loads(text: str | bytes, *, depth_max: int = JSON_DEPTH_MAX) -> Any:
    """``json.loads``, except that a text nested deeper than ``depth_max`` is refused
    (``JsonTooDeep``, a ``ValueError``) before it is parsed, so that how deep the caller's
    stack already is never decides. Bytes are decoded as ``json.loads`` decodes them."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode(json.detect_encoding(text), "surrogatepass")
    return json.loads(check_json_text(text, depth_max=depth_max))


def json_copy(value: Any) -> Any:
    """A copy of a JSON value that shares no dict or list with it (strings and numbers are
    immutable and shared). Several times faster than ``copy.deepcopy`` on journal data."""
    kind = type(value)
    if kind is dict:
        return {key: json_copy(child) for key, child in value.items()}
    if kind is list:
        return [json_copy(child) for child in value]
    return value


def _json_object(value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
    """A checked JSON object that shares nothing with what it was built from: a caller that
    mutates the dict it passed changes no entry. Parsed JSON is fresh already. The copy
    recurses, but only into a value the check has found shallow enough."""
    check_json(value)
    return value if info.mode == "json" else json_copy(value)


# What the schema can say of check_text (for OpenAPI and its fuzzers): no NUL. Lone
# surrogates cannot be written in a JSON Schema pattern; the descriptions say so.
NO_NUL = r"^[^\u0000]*$"
TEXT_RULE = "no NUL (U+0000) and no lone surrogate (U+D800–U+DFFF)"

Text = Annotated[
    str,
    AfterValidator(check_text),
    Field(json_schema_extra={"pattern": NO_NUL, "description": TEXT_RULE}),
]
Id = Annotated[
    str,
    StringConstraints(min_length=1, max_length=128),
    AfterValidator(check_text),
    Field(
        json_schema_extra={"pattern": NO_NUL, "description": f"1 to 128 characters; {TEXT_RULE}"}
    ),
]
JsonObject = Annotated[dict[str, Any], AfterValidator(_json_object)]


def whole_number(value: Any) -> Any:
    """A JSON number with no fraction (``46.0``) as the integer it is, as JSON Schema reads
    it; anything else is left for a strict check (so ``"7"`` and ``true`` stay refused)."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value

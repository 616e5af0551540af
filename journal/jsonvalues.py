"""JSON-valued fields: plain JSON only, no NUL characters, no NaN — what every database can keep."""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import AfterValidator, JsonValue, StringConstraints


def check_text(value: str) -> str:
    """Refuse U+0000, which PostgreSQL's jsonb cannot store."""
    if "\x00" in value:
        raise ValueError("text must not contain the NUL character (U+0000)")
    return value


def check_json(value: Any) -> Any:
    """Walk a JSON value: no NUL in any key or string, only finite numbers."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            check_text(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError("numbers must be finite (no NaN or Infinity)")
        elif isinstance(item, dict):
            for key, child in item.items():
                check_text(key)
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)
    return value


Text = Annotated[str, AfterValidator(check_text)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=128), AfterValidator(check_text)]
JsonObject = Annotated[dict[str, JsonValue], AfterValidator(check_json)]

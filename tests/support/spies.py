"""A spy on a function: each call it hears is noted, then passed on to the real one."""

from __future__ import annotations

from typing import Any


def calls_of(monkeypatch, owner: Any, name: str) -> list[tuple[tuple, dict]]:
    """Replace ``owner.name`` for the test with one that notes each call's positional and
    keyword arguments, in order, and returns what the real one returns."""
    real = getattr(owner, name)
    calls: list[tuple[tuple, dict]] = []

    def noted(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, noted)
    return calls

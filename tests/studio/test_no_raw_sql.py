"""The studio sends no SQL of its own: raw statements live in jaiweb/store, beside the
schema and the indexes they are written against, where the query-plan tests read them.

import-linter names modules, not attributes, so it cannot forbid ``connection.cursor()``
while allowing ``django.db.models``; this reads the studio's source with ``ast`` instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

STUDIO = Path(__file__).resolve().parents[2] / "jaiweb" / "studio"
RAW = {"cursor", "raw", "extra", "RawSQL", "execute", "executemany"}


def raw_sql_calls(path: Path) -> list[str]:
    """Each call in ``path`` that would send SQL by hand, as "file:line: name"."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in RAW:
            found.append(f"{path}:{node.lineno}: {name}")
    return found


def test_the_studio_sends_no_sql_of_its_own():
    found = [call for path in sorted(STUDIO.rglob("*.py")) for call in raw_sql_calls(path)]
    assert found == [], "raw SQL belongs in jaiweb/store:\n" + "\n".join(found)


def test_the_check_finds_a_cursor(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f(c):\n    with c.cursor() as k:\n        k.execute('x')\n")
    assert len(raw_sql_calls(sample)) == 2

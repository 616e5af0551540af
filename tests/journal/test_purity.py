"""journal/ is the functional core: it must not pull in the web stack, a clock or randomness."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

JOURNAL = Path(__file__).resolve().parents[2] / "journal"
FORBIDDEN_MODULES = {
    "django",
    "channels",
    "daphne",
    "jaiweb",
    "openai",
    "httpx",
    "psycopg",
    "random",
    "time",
    "uuid",
    "secrets",
    "os",
    "sqlite3",
    "socket",
}


def test_importing_journal_loads_no_web_stack():
    code = (
        "import sys, journal.tree, journal.snapshot, journal.navigation, journal.context, "
        "journal.recovery, journal.ids\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'channels', 'daphne', 'jaiweb', 'openai', 'httpx', 'psycopg'})\n"
        "print(','.join(bad))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=JOURNAL.parent
    )
    assert out.stdout.strip() == ""


def test_no_module_of_journal_imports_io_clock_or_randomness():
    offenders = []
    paths = sorted(JOURNAL.rglob("*.py"))
    assert JOURNAL / "importers" / "__init__.py" in paths  # the subpackages are read too
    for path in paths:
        name = str(path.relative_to(JOURNAL))
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [
                f"{name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN_MODULES
            ]
            if isinstance(node, ast.Attribute) and node.attr in {"now", "utcnow", "today"}:
                offenders.append(f"{name}: .{node.attr}()")
    assert offenders == []

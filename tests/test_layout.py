"""The test tree's own rules, read from its source with ``ast`` (no test module is imported).

* No module of tests/ imports from a ``test_*.py`` module: what tests share lives in
  tests/support/ (or a conftest fixture), so running one test file never depends on, or
  collects, another's tests.
* One ``wait_until``: tests/support/waiting.py's.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


@dataclass(frozen=True)
class Module:
    path: Path
    tree: ast.Module

    @property
    def name(self) -> str:
        return ".".join(self.path.relative_to(ROOT).with_suffix("").parts)

    @property
    def where(self) -> str:
        return str(self.path.relative_to(ROOT))


def modules(folder: Path = TESTS) -> list[Module]:
    return [
        Module(path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        for path in sorted(folder.rglob("*.py"))
    ]


def _is_test_module(dotted: str) -> bool:
    """``tests.….test_x`` that is a file of the tree (not a package named test_…)."""
    parts = dotted.split(".")
    return (
        parts[0] == "tests"
        and parts[-1].startswith("test_")
        and ROOT.joinpath(*parts).with_suffix(".py").is_file()
    )


def imports_of_test_modules(module: Module) -> list[str]:
    """Each import in ``module`` that names a ``test_*`` module, as "line: what"."""
    package = module.name.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from .test_x import y, from . import test_x
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        found += [f"{node.lineno}: {t}" for t in targets if _is_test_module(t)]
    return found


def definitions_of(name: str, module: Module) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(module.tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
    ]


def test_no_module_imports_from_a_test_module():
    offenders = {m.where: found for m in modules() if (found := imports_of_test_modules(m))}
    assert offenders == {}


def test_there_is_one_wait_until():
    defined = {m.where: lines for m in modules() if (lines := definitions_of("wait_until", m))}
    assert list(defined) == ["tests/support/waiting.py"], defined


# --- the rules' own tests: each catches what it is for -----------------------------------


def _module(source: str, where: str = "tests/agent/helpers_for_layout.py") -> Module:
    return Module(ROOT / where, ast.parse(source))


def test_the_import_rule_sees_every_way_of_importing_a_test_module():
    ways = [
        "from tests.agent.test_loop import KUNG_FU",
        "import tests.agent.test_loop",
        "from tests.agent import test_loop",
        "from .test_loop import KUNG_FU",
        "from . import test_loop",
        "def f():\n    from tests.test_settings import PROD\n",
    ]
    for source in ways:
        assert imports_of_test_modules(_module(source)), source
    fine = [
        "from tests.support.waiting import wait_until",
        "from tests.agent.scripted import text",
        "from tests.agent import scripted",
        "import tests.clusters",
    ]
    for source in fine:
        assert imports_of_test_modules(_module(source)) == [], source


def test_the_wait_until_rule_sees_a_second_definition():
    assert definitions_of("wait_until", _module("def wait_until(p, t, w):\n    pass\n")) == [1]
    nested = "class A:\n    async def wait_until(self):\n        pass\n"
    assert definitions_of("wait_until", _module(nested)) == [2]

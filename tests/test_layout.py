"""The test tree's own rules, read from its source with ``ast`` (no test module is imported).

* No module of tests/ imports from a ``test_*.py`` module: what tests share lives in
  tests/support/ (or a conftest fixture), so running one test file never depends on, or
  collects, another's tests.
* What more than one folder of tests/ uses lives in tests/support/: a helper module beside
  its tests serves only the tests of its own folder.
* One ``wait_until``: tests/support/waiting.py's.
* No test asserts on the wall clock: no bound on a ``time.monotonic()``/``time.time()``
  difference (or a name holding one, or called ``elapsed``/``took``), no assertion right
  after a ``time.sleep``/``asyncio.sleep``, and no waiting a while to assert that nothing
  came (``assert not event.wait(t)``, ``receive_nothing``). Timing is asserted on a fake
  clock (tests/support/clocks.py), and an absence once a later event, a sentinel, shows
  it would have happened by then. Outside the scan: the browser tests, the cluster and
  burst tests, and tests/support (which implements the waiting); a few tests whose
  property is a real-time bound are allowed by name below, each with its reason.
"""

from __future__ import annotations

import ast
import itertools
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


def imported_names(module: Module) -> set[str]:
    """The dotted names ``module`` imports, as absolute names (``from a import b``: both
    ``a`` and ``a.b``)."""
    package = module.name.rsplit(".", 1)[0]
    names: set[str] = set()
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            names.update([base, *(f"{base}.{alias.name}" for alias in node.names)])
    return names


def shared_outside_support(tree: list[Module]) -> dict[str, list[str]]:
    """Each helper module outside tests/support/ that a module of another folder imports,
    with those importers."""
    helpers = [
        m
        for m in tree
        if "support" not in m.path.relative_to(TESTS).parts
        and not m.path.name.startswith("test_")
        and m.path.name not in ("conftest.py", "__init__.py")
    ]
    found: dict[str, list[str]] = {}
    for helper in helpers:
        users = [
            m.where
            for m in tree
            if m.path.parent != helper.path.parent and helper.name in imported_names(m)
        ]
        if users:
            found[helper.where] = users
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


def test_what_two_folders_share_lives_in_support():
    assert shared_outside_support(modules()) == {}


def test_there_is_one_wait_until():
    defined = {m.where: lines for m in modules() if (lines := definitions_of("wait_until", m))}
    assert list(defined) == ["tests/support/waiting.py"], defined


# --- no wall clock in assertions ----------------------------------------------------------

NOT_SCANNED = (
    "tests/e2e/",  # a real browser against a real studio: real time throughout
    "tests/ops/test_cluster.py",  # real processes, real leases, on PostgreSQL and Redis
    "tests/ops/test_burst.py",
    "tests/support/clusters.py",
    "tests/support/",  # the waiting and the fake clock themselves
    "tests/support/append_worker.py",  # a worker process, starting at an agreed wall time
)
# (file, test) → why its assertion on real time is the property under test.
REAL_TIME_ALLOWED = {
    (
        "tests/agent/test_shutdown.py",
        "test_a_studio_holding_a_run_that_waits_for_approval_exits_and_the_next_takes_it",
    ): "a SIGTERMed child must exit within its bound and the next take over before a 60 s "
    "lease would let it: real seconds of real processes, which no fake clock reaches",
    (
        "tests/agent/test_shutdown.py",
        "test_a_studio_inside_a_step_exits_within_its_bound_and_the_next_takes_over_at_once",
    ): "as above, for a run stuck inside a tool",
    (
        "tests/agent/test_openai_provider.py",
        "test_stalled_stream_times_out_as_transient",
    ): "httpx's read timeout is real time inside the client: a 0.5 s timeout must not take 3 s",
}
CLOCKS = {"monotonic", "monotonic_ns", "time", "time_ns", "perf_counter", "perf_counter_ns"}
SLEEPS = {("time", "sleep"), ("asyncio", "sleep")}
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _reads_the_clock(node: ast.AST, timed: set[str]) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            if (
                isinstance(f, ast.Attribute)
                and f.attr in CLOCKS
                and isinstance(f.value, ast.Name)
                and f.value.id == "time"
            ):
                return True
        if isinstance(sub, ast.Name) and (
            sub.id in timed or "elapsed" in sub.id or sub.id in ("took", "duration")
        ):
            return True
    return False


def _timed_names(scope: ast.AST) -> set[str]:
    """Names in ``scope`` that hold a wall-clock reading or a difference of them."""
    timed: set[str] = set()
    while True:
        before = len(timed)
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                value = node.value
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if value is not None and _reads_the_clock(value, timed):
                    timed |= {t.id for t in targets if isinstance(t, ast.Name)}
            elif (  # x.append(time.monotonic())
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("append", "add")
                and isinstance(node.func.value, ast.Name)
                and any(_reads_the_clock(a, timed) for a in node.args)
            ):
                timed.add(node.func.value.id)
        if len(timed) == before:
            return timed


def _is_sleep(stmt: ast.stmt) -> bool:
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Await):
        call = call.value
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and (call.func.value.id, call.func.attr) in SLEEPS
    )


def _waits_for_nothing(test: ast.expr) -> bool:
    """``not x.wait(t)`` / ``not x.wait(timeout=t)``, or ``[await] x.receive_nothing(…)``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        call = test.operand
        return (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "wait"
            and bool(call.args or call.keywords)
        )
    call = test.value if isinstance(test, ast.Await) else test
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "receive_nothing"
    )


def wall_clock_assertions(module: Module) -> list[str]:
    """Each assertion on real time in ``module``, as "line (function): what"."""
    found = []
    scopes = [
        n for n in ast.walk(module.tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    for scope in scopes:
        if (module.where, scope.name) in REAL_TIME_ALLOWED:
            continue
        timed = _timed_names(scope)
        for node in ast.walk(scope):
            if isinstance(node, ast.Assert):
                compares = [c for c in ast.walk(node.test) if isinstance(c, ast.Compare)]
                bounded = any(
                    any(isinstance(op, ORDERING) for op in c.ops)
                    and any(_reads_the_clock(x, timed) for x in [c.left, *c.comparators])
                    for c in compares
                )
                if bounded:
                    found.append(f"{node.lineno} ({scope.name}): a bound on the wall clock")
                if _waits_for_nothing(node.test):
                    found.append(f"{node.lineno} ({scope.name}): waits a while for nothing")
            for body in ("body", "orelse", "finalbody"):
                stmts = getattr(node, body, None)
                if not isinstance(stmts, list):
                    continue
                for first, then in itertools.pairwise(stmts):
                    if _is_sleep(first) and isinstance(then, ast.Assert):
                        found.append(f"{then.lineno} ({scope.name}): asserts after a sleep")
    return sorted(set(found), key=lambda f: int(f.split(" ", 1)[0]))


def scanned_modules() -> list[Module]:
    return [m for m in modules() if not m.where.startswith(NOT_SCANNED)]


def test_no_test_asserts_on_the_wall_clock():
    offenders = {m.where: found for m in scanned_modules() if (found := wall_clock_assertions(m))}
    assert offenders == {}


def test_every_real_time_exception_names_a_test_that_is_there():
    names = {
        (m.where, n.name)
        for m in modules()
        for n in ast.walk(m.tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    assert set(REAL_TIME_ALLOWED) <= names, set(REAL_TIME_ALLOWED) - names


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
        "from tests.support.scripted import text",
        "from tests.support import scripted",
        "import tests.support.clusters",
    ]
    for source in fine:
        assert imports_of_test_modules(_module(source)) == [], source


def test_the_sharing_rule_sees_a_helper_used_from_another_folder():
    helper = _module('"""A helper."""\n', "tests/agent/helping.py")
    beside = _module("from tests.agent.helping import x\n", "tests/agent/test_a.py")
    elsewhere = _module("from tests.agent import helping\n", "tests/store/test_b.py")
    assert shared_outside_support([helper, beside]) == {}
    assert shared_outside_support([helper, beside, elsewhere]) == {
        "tests/agent/helping.py": ["tests/store/test_b.py"]
    }


def test_the_wait_until_rule_sees_a_second_definition():
    assert definitions_of("wait_until", _module("def wait_until(p, t, w):\n    pass\n")) == [1]
    nested = "class A:\n    async def wait_until(self):\n        pass\n"
    assert definitions_of("wait_until", _module(nested)) == [2]


def test_the_wall_clock_rule_sees_bounds_sleeps_and_waits_for_nothing():
    caught = {
        "a bound on a difference": (
            "def test_x():\n    start = time.monotonic()\n    work()\n"
            "    assert time.monotonic() - start < 0.5\n"
        ),
        "a name holding the difference": (
            "def test_x():\n    t0 = time.time()\n    took = time.time() - t0\n"
            "    assert took < 2, took\n"
        ),
        "readings collected in a list": (
            "def test_x():\n    at = []\n    at.append(time.monotonic())\n"
            "    assert at[1] - at[0] > 0.1\n"
        ),
        "elapsed by name": "def test_x(elapsed):\n    assert 0.3 <= elapsed\n",
        "a sleep, then the assertion": (
            "def test_x():\n    go()\n    time.sleep(0.3)\n    assert not done()\n"
        ),
        "an async sleep, then the assertion": (
            "async def test_x():\n    await asyncio.sleep(1)\n    assert q.empty()\n"
        ),
        "an event waited on for nothing": "def test_x(e):\n    assert not e.wait(1.0)\n",
        "a socket waited on for nothing": (
            "async def test_x(ws):\n    assert await ws.receive_nothing(timeout=0.8)\n"
        ),
    }
    for what, source in caught.items():
        assert wall_clock_assertions(_module(source)), what
    fine = [
        "def test_x():\n    wait_until(done, 10, 'it')\n    assert done()\n",
        "def test_x(clock):\n    clock.advance(0.5)\n    assert sent == [(clock.now, 'a')]\n",
        "def test_x(e):\n    assert e.wait(10)\n",  # waiting for something that must come
        "def test_x():\n    time.sleep(0.1)\n    x = 1\n",
        "def test_x(row, now):\n    assert row.expires_at > now\n",
    ]
    for source in fine:
        assert wall_clock_assertions(_module(source)) == [], source
    allowed = _module(
        "def test_stalled_stream_times_out_as_transient():\n"
        "    started = time.monotonic()\n    assert time.monotonic() - started < 3\n",
        "tests/agent/test_openai_provider.py",
    )
    assert wall_clock_assertions(allowed) == []

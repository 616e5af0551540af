"""Helpers for the browser tests: the studio child, sign-up/log-in, prompts, screenshots."""

from __future__ import annotations

import os
import re
import time
import uuid
from pathlib import Path

from tests.support.children import Child
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
# Taken by every run into an ignored folder, so a test run changes no tracked file;
# `./dev screenshots` copies the README's pictures to docs/screenshots/ on purpose.
SCREENSHOTS = ROOT / "var" / "screenshots"
PASSWORD = "e2e-Pass-word-93"
TIMEOUT_MS = 20_000  # default wait for any hook to show up
VIEWPORT = {"width": 1280, "height": 800}  # every page's


# --- the studio child ------------------------------------------------------------------


class Studio:
    """A `manage.py studio` child on the test database that can be killed and started again.

    The first start picks a free port; later starts reuse it, so open pages reconnect to
    the same origin (and keep their session cookie).
    """

    def __init__(self, settings_dict: dict, env: dict[str, str]):
        self.settings_dict = settings_dict
        self.env = env
        self.port = 0
        self.url = ""
        self.child: Child | None = None
        self.children: list[Child] = []

    def start(self, extra_env: dict[str, str] | None = None, timeout: float = 60) -> str:
        assert self.child is None or self.child.process.poll() is not None, "already running"
        child = Child(
            self.settings_dict,
            "studio",
            "--port",
            str(self.port),
            "--no-migrate",
            "-v",
            "0",
            env={**self.env, **(extra_env or {})},
        )
        self.child = child
        self.children.append(child)
        self.url = child.listening_url(timeout).rstrip("/")
        self.port = int(self.url.rsplit(":", 1)[1])
        return self.url

    def wait_exit(self, timeout: float = 60) -> int:
        assert self.child is not None
        return self.child.wait_exit(timeout)

    def kill(self) -> None:
        """SIGKILL (from outside, like a crash), and wait for it to be gone."""
        if self.child is not None:
            self.child.stop()

    def restart(self, extra_env: dict[str, str] | None = None) -> str:
        self.kill()
        deadline = time.monotonic() + 15
        while True:  # the same port: usually free at once, but give the kernel a moment
            try:
                return self.start(extra_env)
            except AssertionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def output(self) -> str:
        chunks = []
        for i, child in enumerate(self.children, 1):
            chunks.append(f"--- studio child {i} (exit {child.process.poll()}) stdout ---")
            chunks.extend(child.out[-40:])
            chunks.append(f"--- studio child {i} stderr ---")
            chunks.extend(child.err[-100:])
        return "\n".join(chunks)


# --- helpers ---------------------------------------------------------------------------


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def shot(page, name: str) -> Path:
    """Save a screenshot to var/screenshots/<name>.png (overwritten; the folder is ignored).

    Written beside it and renamed over it: `./dev test-all` runs both database passes at
    once, and two browsers may take the same screenshot at the same moment.
    """
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    part = path.with_name(f".{name}.{os.getpid()}.png")
    part.write_bytes(page.screenshot())
    os.replace(part, path)
    return path


def user_for_the_studio(username: str, password: str, **fields):
    """A user made here that a studio child can log in. This process hashes with a fast
    hasher (tests/conftest.py) that the child, on the product's settings, does not know:
    the password is hashed as the child hashes it."""
    from django.conf import global_settings
    from django.contrib.auth import get_user_model
    from django.test.utils import override_settings

    with override_settings(PASSWORD_HASHERS=global_settings.PASSWORD_HASHERS):
        return get_user_model().objects.create_user(username, password=password, **fields)


def signup(page, base: str, username: str, password: str = PASSWORD) -> None:
    page.goto(f"{base}/accounts/signup/")
    form = page.locator("#signup-form")
    form.locator('input[name="username"]').fill(username)
    form.locator('input[name="password1"]').fill(password)
    form.locator('input[name="password2"]').fill(password)
    form.locator('button[type="submit"]').click()
    page.wait_for_url(f"{base}/")


def login(page, base: str, username: str, password: str = PASSWORD) -> None:
    page.goto(f"{base}/accounts/login/")
    form = page.locator("#login-form")
    form.locator('input[name="username"]').fill(username)
    form.locator('input[name="password"]').fill(password)
    form.locator('button[type="submit"]').click()
    page.wait_for_url(f"{base}/")


SESSION_URL = re.compile(r"/sessions/([^/]+)/$")


def new_session(page, base: str, title: str, characters: str = "") -> str:
    """From "My sessions": create one, with the cast ``characters`` as typed there (none:
    the form's default); returns its id (the page is then its studio)."""
    page.goto(f"{base}/")
    page.locator('input[name="title"]').fill(title)
    if characters:
        page.locator('textarea[name="characters"]').fill(characters)
    page.locator('[data-action="create-session"]').click()
    page.wait_for_url(SESSION_URL)
    return SESSION_URL.search(page.url).group(1)


def wait_ws_open(page, timeout: float = TIMEOUT_MS) -> None:
    page.locator('body[data-ws="open"]').wait_for(state="attached", timeout=timeout)


def send_prompt(page, text: str, *, answered: bool = True) -> None:
    """Type a prompt and send it; with ``answered``, return once the server has answered
    the post, so the run it starts exists before the caller waits for it to finish (a
    wait that reads "no unfinished run" before the post arrives would pass at once, and
    the next prompt would join the first run as queued input)."""
    form = page.locator("#prompt-form")
    form.locator('textarea[name="text"]').fill(text)
    if not answered:
        _submit(form)
        return
    with page.expect_response(
        lambda r: r.request.method == "POST" and r.url.split("?")[0].endswith("/prompts")
    ):
        _submit(form)


def _submit(form) -> None:
    submit = form.locator('button[type="submit"], input[type="submit"], button:not([type])')
    if submit.count():
        submit.first.click()
    else:
        form.evaluate("f => f.requestSubmit()")


def credits(page) -> int:
    text = page.locator("#credits").inner_text()
    match = re.search(r"-?\d+", text.replace(",", ""))
    assert match, f"no number in #credits: {text!r}"
    return int(match.group())


def wait_credits(page, value: int, timeout: float = TIMEOUT_MS) -> None:
    deadline = time.monotonic() + timeout / 1000
    last = None
    while time.monotonic() < deadline:
        try:
            last = credits(page)
        except AssertionError:
            last = None
        if last == value:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"#credits shows {last}, expected {value}")


def approve_next(page, timeout: float = TIMEOUT_MS) -> None:
    """Click the approval prompt's approve button once it appears."""
    button = page.locator('[data-action="approve"]:visible').first
    button.wait_for(state="visible", timeout=timeout)
    button.click()


def unfinished_operations(session_id: str) -> list:
    from jaiweb.store.models import Operation

    return list(Operation.objects.filter(session_id=session_id, outcome__isnull=True))


def wait_run_finished(session_id: str, timeout: float = 30) -> None:
    """The session has no unfinished operation (read from the database)."""
    wait_until(lambda: not unfinished_operations(session_id), timeout, "the run to finish")


def wait_page_at_leaf(page, session_id: str, timeout: float = TIMEOUT_MS) -> None:
    """The page shows the session's leaf (from the database) where its writes take it from
    (the tree's, which the kept forms send, and the prompt's): a run's last update reached
    the page, so a write clicked now is not refused as stale."""
    from jaiweb.store.models import ComicSession

    deadline = time.monotonic() + timeout / 1000
    while True:
        leaf = ComicSession.objects.values_list("leaf_id", flat=True).get(pk=session_id) or ""
        shown = [tree_leaf(page), page.locator("#prompt-leaf").input_value()]
        if set(shown) == {leaf}:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the page's forms carry {sorted(set(shown))}, the leaf is {leaf}")
        page.wait_for_timeout(100)


def branch_entry_ids(session_id: str) -> list[str]:
    """Root → leaf entry ids of the session's active branch, from the database."""
    from jaiweb.store.models import ComicSession
    from jaiweb.store.selectors import branch_rows

    session = ComicSession.objects.get(pk=session_id)
    return [row.entry_id for row in branch_rows(session=session)]


def tree_ids(page) -> list[str]:
    """The nodes drawn in #tree: one per turn, named by the turn's last entry."""
    return page.locator("#tree [data-entry-id]").evaluate_all(
        "els => els.map(e => e.dataset.entryId)"
    )


def active_tree_ids(page) -> list[str]:
    return page.locator('#tree [data-entry-id][data-active="true"]').evaluate_all(
        "els => els.map(e => e.dataset.entryId)"
    )


def tree_turns(page) -> list[dict]:
    """Each node of #tree: its first and last entry, the entry it hangs from, the rewind
    it came by, whether it is on the active path."""
    return page.locator("#tree .node").evaluate_all(
        """els => els.map(e => ({
            first: e.dataset.firstId, last: e.dataset.entryId, parent: e.dataset.parentId,
            via: e.closest("li.item").dataset.via || "", active: e.dataset.active === "true",
        }))"""
    )


def drawn_entry_ids(page) -> set[str]:
    """Every entry #tree stands for: those inside a turn's node (from its first entry to
    its last), the rewinds that are the edges into turns, and the rewind the session is at
    right now (the tree's leaf)."""
    from jaiweb.store.models import Entry

    match = SESSION_URL.search(page.url)
    assert match, f"not a studio page: {page.url}"
    parents = dict(
        Entry.objects.filter(session_id=match.group(1)).values_list("entry_id", "parent_id")
    )
    drawn: set[str] = set()
    for turn in tree_turns(page):
        entry = turn["last"]
        while entry is not None and entry not in drawn:
            drawn.add(entry)
            if entry == turn["first"]:
                break
            entry = parents.get(entry)
        if turn["via"]:
            drawn.add(turn["via"])
    leaf = page.locator("#tree").get_attribute("data-leaf-id")
    if leaf:
        drawn.add(leaf)
    return drawn


def wait_tree_has(page, entry_ids, timeout: float = TIMEOUT_MS) -> None:
    """Every given entry is drawn in #tree (the page caught up with the journal)."""
    want = set(entry_ids)
    deadline = time.monotonic() + timeout / 1000
    while time.monotonic() < deadline:
        missing = want - drawn_entry_ids(page)
        if not missing:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"#tree never showed {sorted(missing)}; it has {tree_turns(page)}")


def node_of(page, entry_id: str):
    """The node of the turn that holds ``entry_id`` (by its first or its last entry)."""
    return page.locator(
        f'#tree .node[data-entry-id="{entry_id}"], #tree .node[data-first-id="{entry_id}"]'
    ).first


def character_state(page) -> str:
    """What #character-state shows: its text and the values of its fields (it may be a form)."""
    return page.locator("#character-state").evaluate(
        """el => [el.innerText,
                  ...[...el.querySelectorAll("input, textarea, select")].map(f => f.value)]
                 .join("\\n")"""
    )


def wait_character_state(page, has: str, lacks: str | None = None, timeout: float = 10) -> None:
    def ok():
        text = character_state(page)
        return has in text and (lacks is None or lacks not in text)

    try:
        wait_until(ok, timeout, f"#character-state to show {has!r}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; it shows: {character_state(page)!r}") from None


def open_new_session(page, base: str, title: str = "episode", characters: str = "") -> str:
    """Sign up a new user, create a session from "My sessions" (with the cast
    ``characters``, if given), wait for its socket."""
    signup(page, base, unique("e2e_"))
    session_id = new_session(page, base, title, characters)
    wait_ws_open(page)
    return session_id


def prompt_and_wait(page, session_id: str, text: str) -> None:
    """Prompt (one that asks for no approval), wait for the run to end and the page's tree
    to show it."""
    send_prompt(page, text)
    wait_run_finished(session_id)
    wait_tree_has(page, branch_entry_ids(session_id))


def tree_leaf(page) -> str:
    """The leaf the page's tree shows: the one its kept forms send ("" for a new session)."""
    return page.locator("#tree").get_attribute("data-leaf-id") or ""


def run_with_approval(page, session_id: str, text: str) -> None:
    """Prompt, approve the panel when asked, wait for the run to end and the page to show it."""
    send_prompt(page, text)
    approve_next(page)
    wait_run_finished(session_id)
    wait_tree_has(page, branch_entry_ids(session_id))


def panels(page):
    return page.locator("#strip [data-panel]")


def wait_stream_has(page, text: str, who: str = "the page", timeout: float = TIMEOUT_MS) -> None:
    """#stream shows ``text`` (the live narration reached this page)."""
    try:
        page.locator("#stream").filter(has_text=text).wait_for(timeout=timeout)
    except Exception:
        shown = page.locator("#stream").inner_html()
        raise AssertionError(f"#stream of {who} lacks {text!r}; it holds {shown!r}") from None


# --- the Content-Security-Policy -------------------------------------------------------

# Every document of the context reports each violation the moment it happens: the event
# (which every browser dispatches) goes to Python through a binding.
CSP_WATCH = """
document.addEventListener("securitypolicyviolation", function (e) {
  window.__cspViolation({
    page: e.documentURI, directive: e.effectiveDirective, blocked: e.blockedURI,
    source: e.sourceFile + ":" + e.lineNumber, sample: e.sample,
  });
}, true);
"""


def watch_csp(context, found: list[str] | None = None) -> list[str]:
    """The CSP violations of every page of ``context`` from now on, as they are reported
    (added to ``found`` when given): the documents' ``securitypolicyviolation`` events, and
    Chromium's console lines about the policy (a violation no event names still shows
    there)."""
    found = [] if found is None else found
    context.expose_binding("__cspViolation", lambda _source, v: found.append(f"[event] {v}"))
    context.add_init_script(CSP_WATCH)

    def console(message) -> None:
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            found.append(f"[console.{message.type}] {message.text}")

    context.on("console", console)
    return found

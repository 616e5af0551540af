"""What a catch-up draws once and keeps: the tree's turns (each by what it shows and the
language) and the stream of a whole pass (by the database version and the language)."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from jaiweb.store.selectors import session_get
from jaiweb.store.services import operation_accept
from jaiweb.studio import regions
from jaiweb.studio.templatetags import tree_render
from tests.support.runs import run_pending
from tests.support.spies import calls_of

pytestmark = pytest.mark.django_db


def drawn(episode, *texts: str):
    for text in texts:
        operation_accept(session_id=episode.id, text=text)
        run_pending()
    return session_get(session_id=episode.id)


def template_tree(session, language: str) -> str:
    """The tree region as its template draws it, every turn again (the page's way)."""
    from django.utils import translation

    context = {**regions.studio_context(session=session), "oob": True}
    with translation.override(language):
        return render_to_string("studio/regions/tree.html", context)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_tree_from_kept_turns_is_the_tree_the_template_draws(alice, episode, language):
    session = drawn(episode, "/draw a pig on a roof", "/say hello")
    context = regions.studio_context(session=session)
    first = regions.region_parts(context=context, language=language, names=["tree"])["tree"]
    assert first == template_tree(session, language)
    again = regions.region_parts(context=context, language=language, names=["tree"])["tree"]
    assert again == first
    # A new turn: the kept turns serve, the new one and the changed last one are drawn.
    session = drawn(session, "/draw a pig eating a lollipop")
    later = regions.region_parts(
        context=regions.studio_context(session=session), language=language, names=["tree"]
    )["tree"]
    assert later == template_tree(session, language) and later != first
    assert "eating a lollipop" in later


def test_kept_turns_are_drawn_once(alice, episode, monkeypatch):
    session = drawn(episode, "/draw a pig on a roof", "/say hello")
    context = regions.studio_context(session=session)
    regions.region_parts(context=context, language="en", names=["tree"])
    drawings = calls_of(monkeypatch, tree_render, "_render")
    regions.region_parts(context=context, language="en", names=["tree"])
    assert drawings == []  # every turn kept
    regions.region_parts(context=context, language="zh-hans", names=["tree"])
    assert len(drawings) == len(context["tree_items"])  # another language: drawn once more


def test_a_whole_pass_reads_the_stream_once_per_database_version(alice, episode, monkeypatch):
    session = drawn(episode, "/say hello")
    calls = calls_of(monkeypatch, regions, "stream_html")

    def reads() -> list[str]:
        return [kwargs["language"] for _args, kwargs in calls]

    _, stream = regions.catch_up_html(session=session, language="en", with_stream=True)
    assert "hello" in stream or 'id="stream-text"' in stream
    for _ in range(3):
        assert regions.catch_up_html(session=session, language="en", with_stream=True)[1] == stream
    assert reads() == ["en"]
    regions.catch_up_html(session=session, language="zh-hans", with_stream=True)
    assert reads() == ["en", "zh-hans"]
    session = drawn(session, "/say again")  # a new run: a new database version
    _, later = regions.catch_up_html(session=session, language="en", with_stream=True)
    assert reads() == ["en", "zh-hans", "en"] and later != stream
    assert regions.catch_up_html(session=session, language="en")[1] == ""  # not asked for


def test_an_operation_fact_reads_neither_the_tree_nor_the_strip(alice, episode, monkeypatch):
    from jaiweb.live import versions

    session = drawn(episode, "/draw a pig on a roof")
    names = ["controls", "session-notice", "character-state"]
    whole = regions.region_parts(
        context=regions.studio_context(session=session), language="en", names=names
    )
    counts = versions.fact_counts(session.id)
    moved = regions.region_versions({**counts, "operation": counts.get("operation", 0) + 1})

    def not_read(*args, **kwargs):
        raise AssertionError("an operation's fact read the path")

    monkeypatch.setattr(regions, "active_path_view", not_read)
    monkeypatch.setattr(regions, "strip_view", not_read)
    parts = regions.changed_regions_html(
        session_id=session.id, language="en", versions=moved, names=names
    )
    assert parts == whole


def test_a_changed_pass_finds_what_another_watcher_rendered_without_the_database(
    alice, episode, django_assert_num_queries
):
    session = drawn(episode, "/draw a pig on a roof")
    versions = regions.region_versions({"entry": 7, "wallet": 2})
    names = ("tree", "strip", "credits")
    ask = {"session_id": session.id, "versions": versions, "names": names}
    assert regions.changed_regions_cached(language="en", **ask) is None  # nothing rendered yet
    rendered = regions.changed_regions_html(language="en", **ask)
    assert set(rendered) == set(names) and "a pig on a roof" in rendered["strip"]
    with django_assert_num_queries(0):
        assert regions.changed_regions_cached(language="en", **ask) == rendered
    assert regions.changed_regions_cached(language="zh-hans", **ask) is None  # its own words
    moved = regions.region_versions({"entry": 8, "wallet": 2})  # a fact since: read again
    assert regions.changed_regions_cached(language="en", **{**ask, "versions": moved}) is None


def test_the_pass_after_a_studio_write_finds_what_its_answer_rendered(
    client, alice, episode, monkeypatch
):
    from jaiweb.live import versions
    from jaiweb.studio.pass_counts import pass_counts

    session = drawn(episode, "/draw a pig on a roof")
    client.force_login(alice)
    answer = client.post(
        f"/sessions/{session.id}/permission-mode",
        {"mode": "auto", "expected_leaf_id": session.leaf_id},
        HTTP_HX_REQUEST="true",
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert answer.status_code == 200
    html = answer.content.decode()

    def not_read(*args, **kwargs):
        raise AssertionError("the pass after the write read the path again")

    monkeypatch.setattr(regions, "studio_context", not_read)
    before = pass_counts()["reads"]
    names = ("tree", "strip", "character-state", "prompt-leaf")
    moved = regions.region_versions(versions.fact_counts(session.id))  # the write's announcement
    parts = regions.changed_regions_html(
        session_id=session.id, language="en", versions=moved, names=names
    )
    assert set(parts) == set(names) and all(parts[name] in html for name in names)
    after = pass_counts()["reads"]
    assert after["cached"] == before["cached"] + 1 and after["path"] == before["path"]

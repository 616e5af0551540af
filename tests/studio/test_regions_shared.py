"""The regions a session's watchers share: rendered once per journal version."""

from __future__ import annotations

import time

import pytest

from jaiweb.commands.sessions import prompt_submit
from jaiweb.studio import regions
from tests.support.threads import orm_thread

pytestmark = pytest.mark.django_db(transaction=True)


def test_watchers_asking_at_once_share_one_rendering(alice, episode, monkeypatch):
    renders = []
    real = regions.region_parts

    def slow(**kwargs):
        renders.append(1)
        time.sleep(0.3)
        return real(**kwargs)

    monkeypatch.setattr(regions, "region_parts", slow)
    results = []

    def watcher():
        results.append(regions.regions_html_shared(session=episode, language="en"))

    threads = [orm_thread(watcher) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(renders) == 1 and len(set(results)) == 1 and 'id="tree"' in results[0]
    regions.regions_html_shared(session=episode, language="zh-hans")  # another language
    assert len(renders) == 2


def test_a_new_fact_in_the_journal_is_a_new_rendering(alice, episode):
    before = regions.regions_html_shared(session=episode, language="en")
    prompt_submit(session=episode, user=alice, text="a <new> prompt")
    episode.refresh_from_db()
    after = regions.regions_html_shared(session=episode, language="en")
    assert "a &lt;new&gt; prompt" in after and "a &lt;new&gt; prompt" not in before


def test_watchers_going_quiet_at_once_share_one_read_of_the_stream(alice, episode, monkeypatch):
    reads = []
    real = regions.stream_html

    def slow(**kwargs):
        reads.append(1)
        time.sleep(0.3)
        return real(**kwargs)

    monkeypatch.setattr(regions, "stream_html", slow)
    results = []

    def watcher():
        results.append(regions.catch_up_html(session=episode, language="en", with_stream=True))

    threads = [orm_thread(watcher) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(reads) == 1 and len(set(results)) == 1 and 'id="stream-text"' in results[0][1]

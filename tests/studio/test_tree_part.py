"""GET /sessions/<id>/tree: the folded parts of the explorer, loaded on demand."""

from __future__ import annotations

import re

import pytest

from jaiweb.studio.tree import CHAIN_PAGE, PAGE
from tests.support.trees import big_tree_create

pytestmark = pytest.mark.django_db

NODE = re.compile(r'data-entry-id="([^"]+)"')


@pytest.fixture
def big(alice):
    return big_tree_create(owner=alice, depth=600, forks=30, fork_len=40)


def test_the_folded_middle_of_the_path_loads_a_page_at_a_time(client, alice, big):
    client.force_login(alice)
    page = client.get(f"/sessions/{big.id}/").content.decode()
    query = re.search(r'tree\?(path=[^"]+)"', page).group(1).replace("&amp;", "&")
    part = client.get(f"/sessions/{big.id}/tree?{query}").content.decode()
    ids = NODE.findall(part)  # one node per turn (here: a prompt, and the state after it)
    assert ids[:2] == ["m2", "m3"] and len(ids) == PAGE
    assert 'data-active="true"' in part
    more = re.search(r"… (\d+) more", part)
    stop = int(re.search(r"stop=(\d+)", query).group(1))
    assert more and int(more.group(1)) == stop - int(ids[-1][1:]) - 1


def test_a_fork_opens_as_its_branches_runs(client, alice, big):
    client.force_login(alice)
    part = client.get(f"/sessions/{big.id}/tree?forks=m0&except=m1").content.decode()
    ids = NODE.findall(part)  # one node per turn; the rewind b0 is the edge to the first
    assert ids[0] == "s0_0" and ids[1] == "s0_1" and 'data-via="b0"' in part
    assert 'data-active="true"' not in part  # side branches are off the active path
    assert re.search(r"… (\d+) more", part)  # 39 turns: a page of them, then a fold
    query = re.search(r'tree\?(chain=[^"]+)"', part).group(1).replace("&amp;", "&")
    rest = NODE.findall(client.get(f"/sessions/{big.id}/tree?{query}").content.decode())
    assert rest[0] == f"s0_{CHAIN_PAGE}" and rest[-1] == f"s0_{2 * CHAIN_PAGE - 1}"


def test_bad_requests_change_nothing_and_say_so(client, alice, big):
    client.force_login(alice)
    assert client.get(f"/sessions/{big.id}/tree").status_code == 422
    assert client.get(f"/sessions/{big.id}/tree?path=m5&start=x&stop=2").status_code == 422
    # Issue 14.9: stop=-1 was Python's slice from the end, a page nobody asked for.
    for query in ("start=0&stop=-1", "start=-3&stop=2", "start=5&stop=2", f"start=0&stop={2**63}"):
        response = client.get(f"/sessions/{big.id}/tree?path=m5&{query}")
        assert response.status_code == 422, query
        assert response.content.decode() == "a malformed tree request"
    for query in ("chain=0&from=-1", f"chain={2**63}&from=0", f"chain=0&from={2**64}"):
        assert client.get(f"/sessions/{big.id}/tree?{query}").status_code == 422, query
    assert client.get(f"/sessions/{big.id}/tree?path=nope&start=0&stop=2").status_code == 404
    typed = client.get(f"/sessions/{big.id}/tree", {"forks": '"><script>x</script>'})
    assert typed.status_code == 404 or "<script>x" not in typed.content.decode()


def test_someone_elses_tree_is_404(client, bob, big):
    client.force_login(bob)
    assert client.get(f"/sessions/{big.id}/tree?forks=m0").status_code == 404

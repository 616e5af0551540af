"""Every route that turns an image id into bytes × who asks × whose image it is.

Two sessions each name a panel of their owner's and, as a session imported before imports
checked what they name would, a panel of the other's. A picture's bytes reach a caller
only when the picture is the session owner's and the caller may see that session (its
owner, or a share viewer through the session's own link): 0 leaks of the other image.
"""

from __future__ import annotations

import base64
import itertools

import pytest
from django.test import Client

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.render.models import Image
from jaiweb.render.services import render_request
from jaiweb.store.services import entry_append, session_create
from jaiweb.store.shares import share_link_create, share_panel_ref
from tests.api.conftest import BASE
from tests.support.factories import assistant, panel, user

pytestmark = pytest.mark.django_db

ROLES = ("owner", "other", "share_viewer", "anonymous")
WHOSE = ("own", "another's")


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def carol(django_user_model):
    return django_user_model.objects.create_user("carol", password="carol-pass-1")


class World:
    """Alice's and Bob's sessions, each naming its owner's panel and the other's."""

    def __init__(self, alice, bob, carol, media):
        self.users = {"alice": alice, "bob": bob, "carol": carol}
        self.media = media
        self.images = {
            name: render_request(user=u, key=f"k_{name}", params={"prompt": name}).image_id
            for name, u in (("alice", alice), ("bob", bob))
        }
        self.sessions, self.tokens = {}, {}
        for name, other in (("alice", "bob"), ("bob", "alice")):
            session = session_create(
                owner=self.users[name], title=name, initial_app_state=DEFAULT_STATE
            )
            entry_append(
                session_id=session.id,
                entries=[
                    user("u", None, "画"),
                    assistant("a", "u", calls=[("c_p1", "generate_image")]),
                    panel("p1", "a", image=self.images[name]),
                    assistant("b", "p1", calls=[("c_p2", "generate_image")]),
                    panel("p2", "b", image=self.images[other]),
                ],
                expected_leaf_id=None,
            )
            self.sessions[name] = session
            self.tokens[name] = share_link_create(session_id=session.id)[1]

    def data(self, image_id: str) -> bytes:
        return (self.media / Image.objects.get(pk=image_id).path).read_bytes()

    def client(self, owner: str, role: str) -> Client:
        client = Client()
        if role == "owner":
            client.force_login(self.users[owner])
        elif role == "other":
            client.force_login(self.users["carol"])
        return client

    def routes(self, owner: str, image_id: str, role: str) -> list[tuple[str, str]]:
        """``(kind, address)`` of every way ``role`` could try to reach ``image_id`` through
        ``owner``'s session; only a share viewer holds the link's token."""
        session = self.sessions[owner]
        token = self.tokens[owner] if role == "share_viewer" else "not-the-token"
        ref = share_panel_ref(token=token, image_id=image_id)
        return [
            ("panel", f"/panels/{image_id}"),
            ("page", f"/s/{token}/"),
            ("shared panel", f"/s/{token}/panels/{ref}"),
            ("page", f"/s/{token}/panels/{image_id}"),
            ("page", f"/sessions/{session.id}/"),
            ("file", f"/sessions/{session.id}/episode.html"),
            ("file", f"/sessions/{session.id}/session.jsonl?images=1"),
            ("file", f"{BASE}/sessions/{session.id}/export?images=true"),
            ("page", f"/sessions/{session.id}/compare?left=p1&right=p2"),
            ("page", "/feed/"),
        ]


def body_of(response) -> bytes:
    """The whole body. A file response is read to its end, not closed: closing one ends the
    request, and with it the test's database connection."""
    return b"".join(response.streaming_content) if response.streaming else response.content


def may_get(whose: str, role: str, kind: str) -> bool:
    """Whether the picture may reach this caller by this kind of route: the owner's own
    pictures by address and in their files, a share viewer's through the link."""
    if whose != "own":
        return False
    if role == "owner":
        return kind in ("panel", "file")
    return role == "share_viewer" and kind == "shared panel"


def test_no_route_serves_a_picture_to_anyone_but_its_owner_and_the_links_viewers(
    alice, bob, carol, media
):
    world = World(alice, bob, carol, media)
    seen = []
    for owner, whose, role in itertools.product(("alice", "bob"), WHOSE, ROLES):
        image_owner = owner if whose == "own" else ("bob" if owner == "alice" else "alice")
        image_id = world.images[image_owner]
        data = world.data(image_id)
        client = world.client(owner, role)
        for kind, route in world.routes(owner, image_id, role):
            response = client.get(route)
            assert response.status_code in (200, 302, 401, 404), (route, response.status_code)
            content = body_of(response)
            got = data in content or base64.b64encode(data) in content
            seen.append((owner, whose, role, route, got))
            assert got == may_get(whose, role, kind), (owner, whose, role, route)
    assert [s for s in seen if s[1] != "own" and s[4]] == []  # 0 leaks
    assert len([s for s in seen if s[4]]) == 2 * 5  # each owner: panel, 3 files, shared panel

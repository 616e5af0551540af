"""A session with two branches and two states, for the tests of chapters, the rewind
choices and "back to where I was" (issue 30)."""

from __future__ import annotations

from jaiweb.render.services import wallet_get_or_create
from jaiweb.store.services import entry_append, session_create
from tests.support.factories import assistant, branch, panel, state, user

HERO = "猪猪侠"
STRONG = {
    "characters": {HERO: {"buff": "超级棒棒糖(功夫大师)", "skill": "降龙十巴掌", "mood": "得意"}},
    "permission_mode": "ask",
}
SICK = {
    "characters": {HERO: {"buff": "拉肚子虚脱", "skill": "无", "mood": "狼狈"}},
    "permission_mode": "auto",
}


def two_branch_story(alice):
    """Two branches: the stomach-ache turn (state SICK) left by a rewind to a0; the active
    branch (state STRONG, the initial one) ends at a1."""
    wallet_get_or_create(user=alice)
    session = session_create(owner=alice, title="story", initial_app_state=STRONG)
    entry_append(
        session_id=session.id,
        entries=[
            user("u0", None, "吃棒棒糖"),
            assistant("a0", "u0", "好的"),
            user("us", "a0", "吃泻药"),
            assistant("c1", "us", calls=[("c_p_sick", "generate_image")]),
            state("s1", "c1", SICK),
            panel("p_sick", "s1", cost=20),
            assistant("f1", "p_sick", "捂肚子"),
            branch("b1", "a0", "f1"),
            user("u1", "b1", "降龙十巴掌"),
            assistant("a1", "u1", "拍飞"),
        ],
        expected_leaf_id=None,
    )
    session.refresh_from_db()
    return session

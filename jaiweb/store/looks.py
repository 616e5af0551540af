"""Check that the looks a state names are the session owner's images.

A character's ``reference_image_id`` must be one of the owner's images wherever a state
comes in: a new session's initial state, or a hand edit. An image id is never a capability,
so naming another user's picture gets the same refusal as naming none."""

from __future__ import annotations

from typing import Any

from jaiweb.render.selectors import image_owned
from jaiweb.store.errors import ImageNotYours
from journal.session_file import looks_named


def looks_check(*, owner_id: Any, state: dict | None, field: str = "initial_app_state") -> None:
    """Refuse (``ImageNotYours``, naming the character's field) a state whose characters'
    looks name an image that is not ``owner_id``'s."""
    characters = (state or {}).get("characters")
    if not isinstance(characters, dict) or not looks_named(state):
        return
    for name, character in characters.items():
        image = character.get("reference_image_id") if isinstance(character, dict) else None
        if isinstance(image, str) and not image_owned(image_id=image, owner_id=owner_id):
            raise ImageNotYours(f"{field}.characters.{name}.reference_image_id", image)

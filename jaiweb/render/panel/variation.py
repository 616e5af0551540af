"""What a panel's seed changes: where the figures stand, how they hold themselves, how the
camera frames them and the details of the setting.

A seed is an int in ``0 .. SEED_LIMIT - 1`` from the render's parameters (the image tool
derives it from the call's idempotency key). Each aspect of the picture asks for its own
numbers by name (``Dice.number("sun", …)``), from a hash of the seed and that name, so the
same seed always gives the same picture, on any machine and any Python, and a new aspect
never shifts the others.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

SEED_LIMIT = 2**32
# A character's look in the render parameters' ``characters`` (journal.appstate's
# LOOK_FIELDS; the render service plays an outside server and reads no journal module).
LOOK_FIELDS = ("seed", "reference_image_id")
T = TypeVar("T")


def panel_seed(params: dict[str, Any]) -> int:
    """The seed in a render's parameters; a panel asked for without one draws with 0.

    Raises ``ValueError`` naming the field when the seed is not an int in range (the render
    service stores that failure and charges nothing)."""
    seed = params.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"seed must be an int from 0 to {SEED_LIMIT - 1}, not {seed!r}")
    return seed


def figure_seed(seed: int, name: str, own: int | None = None) -> int:
    """The seed one figure's pose varies with: the character's own seed when it has one (its
    look: the same pose from panel to panel), else the panel's, told apart by the figure's
    name so that two figures of one panel vary on their own."""
    if own is not None:
        return own
    return Dice(seed).number(f"figure:{name}", 0, SEED_LIMIT - 1)


def own_seed(character: Any) -> int | None:
    """A character's own seed from its state in the render parameters, None when it has
    none (or one out of range, which the app state never holds)."""
    seed = character.get("seed") if isinstance(character, dict) else None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        return None
    return seed


def figure_seed_of(params: dict[str, Any], name: str) -> int | None:
    """The seed the figure of ``name`` varied with in the panel drawn from ``params``; None
    for parameters with no seed (a picture that came with an import)."""
    characters = params.get("characters")
    own = own_seed(characters.get(name) if isinstance(characters, dict) else None)
    if own is not None:
        return own
    try:
        return figure_seed(panel_seed(params), name) if "seed" in params else None
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Dice:
    """Numbers for named aspects of one picture, fixed by the seed."""

    seed: int

    def _digest(self, what: str) -> bytes:
        return hashlib.sha512(f"{self.seed}\x00{what}".encode()).digest()

    def number(self, what: str, low: int, high: int) -> int:
        """An int from ``low`` to ``high`` (both included) for the aspect ``what``."""
        return low + int.from_bytes(self._digest(what)[:8], "big") % (high - low + 1)

    def numbers(self, what: str, count: int, low: int, high: int) -> list[int]:
        """``count`` ints from ``low`` to ``high`` for the aspect ``what`` (up to 32 of them)."""
        digest = self._digest(what)
        if count > len(digest) // 2:
            raise ValueError(f"at most {len(digest) // 2} numbers an aspect")
        span = high - low + 1
        return [
            low + int.from_bytes(digest[2 * i : 2 * i + 2], "big") % span for i in range(count)
        ]

    def choice(self, what: str, options: Sequence[T]) -> T:
        """One of ``options`` for the aspect ``what``."""
        return options[self.number(what, 0, len(options) - 1)]


# --- framing -----------------------------------------------------------------------------

# How close the camera stands: the whole stage (setting, action, figures) is scaled around
# a point on the ground line. Name tags, bubbles and the caption stay the size they are.
FRAMINGS = (("wide", 1.0), ("medium", 1.08), ("close", 1.16))
FEET_LEFT, FEET_RIGHT = 84.0, 556.0  # a figure's feet stay in here: its name tag fits below
REACH_LEFT, REACH_RIGHT = 12.0, 628.0  # and its body in here


@dataclass(frozen=True, slots=True)
class Frame:
    """The camera: its framing's name, how much it zooms and where it points (``cx``)."""

    name: str = "wide"
    zoom: float = 1.0
    cx: float = 320.0

    def x(self, x: float) -> float:
        """Where a point of the stage at ``x`` lands in the panel."""
        return self.cx + (x - self.cx) * self.zoom

    def up(self, height: float) -> float:
        """How far above the ground a height on the stage lands."""
        return height * self.zoom

    def transform(self, feet: float) -> str:
        """The stage group's transform attribute (none for a wide shot)."""
        if self.zoom == 1.0:
            return ""
        return (
            f' transform="translate({self.cx:.0f},{feet:.0f}) scale({self.zoom:.2f}) '
            f'translate({-self.cx:.0f},{-feet:.0f})"'
        )


def _zoom_within(zoom: float, cx: float, x: float, left: float, right: float) -> float:
    if x > cx:
        return min(zoom, (right - cx) / (x - cx))
    if x < cx:
        return min(zoom, (cx - left) / (cx - x))
    return zoom


def frame_for(dice: Dice, figures: Sequence[tuple[float, float, float]]) -> Frame:
    """The camera for figures given as (feet, leftmost, rightmost) x: a framing from the
    seed, pointed at the middle of the cast and a little to one side, zoomed no closer than
    keeps every figure and its name tag inside the panel."""
    name, zoom = dice.choice("framing", FRAMINGS)
    centre = sum(f[0] for f in figures) / len(figures) if figures else 320.0
    cx = min(max(centre + dice.number("pan", -40, 40), 200.0), 440.0)
    for feet, leftmost, rightmost in figures:
        zoom = _zoom_within(zoom, cx, feet, FEET_LEFT, FEET_RIGHT)
        zoom = _zoom_within(zoom, cx, leftmost, REACH_LEFT, REACH_RIGHT)
        zoom = _zoom_within(zoom, cx, rightmost, REACH_LEFT, REACH_RIGHT)
    zoom = max(1.0, math.floor(zoom * 100) / 100)
    return Frame(name if zoom > 1.0 else "wide", zoom, cx)

"""Draws a panel's props and actions: what the figures hold or stand by (a kite, a car, a
pill) and the marks that show what they do (a punch's burst, tears, "Zzz", music notes).

Each prop is a group ``<g data-prop="…">`` and each action a group ``<g data-act="…">``
(ids from ``vocabulary``). An action may first move its figures (``stage``): a jump or a
flight lifts the one who does it, a bow or a fall tilts them, a hug or a handshake brings
two figures face to face. Who does it is the panel's hero; who it is done to (a punch, a
fall after a blow) is its opponent when it has one. Deterministic: the seed (``Dice``)
picks the little that varies (where a car parks, where the kite flies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from jaiweb.render.panel.cast import star
from jaiweb.render.panel.variation import Dice

WIDTH = 640
LINE = 'stroke="#222" stroke-width="2"'


class Scale(Protocol):
    scale: float


class Held(Protocol):
    body: str
    holds: str


class Figure(Protocol):
    """What this module reads of a placed figure (``panel.Member``)."""

    x: float
    facing: int
    lift: float
    spin: float
    look: Scale
    pose: Held


@dataclass
class Spot:
    """Where a figure's marks go: its feet, its head, its front hand."""

    x: float
    facing: int
    base: float  # the feet's height (the ground less any lift)
    s: float  # scale
    spin: float = 0.0  # degrees: a figure that bows, falls or lies down

    @property
    def head(self) -> tuple[float, float]:
        turn = math.radians(self.spin)
        up = 142 * self.s
        return self.x + up * math.sin(turn), self.base - up * math.cos(turn)

    @property
    def hand(self) -> tuple[float, float]:
        return self.x + self.facing * 40 * self.s, self.base - 62 * self.s


def spot_of(member: Figure | None, feet: float) -> Spot:
    if member is None:  # nobody on stage: the marks go where a figure would stand
        return Spot(WIDTH / 2, 1, feet, 1.0)
    return Spot(member.x, member.facing, feet - member.lift, member.look.scale, member.spin)


# --- actions that move the figures -------------------------------------------------------


def stage(actions: tuple[str, ...], setting: str, cast: list, hero: Figure | None,
          opponent: Figure | None) -> None:  # fmt: skip
    """Move the figures the actions (and a handshake's setting) ask for, before the
    camera frames them: a blow sends the one hit flying or falling, other actions move
    the hero."""
    if hero is None:
        return
    other = opponent or next((m for m in cast if m is not hero), None)
    if other is not None and ("hug" in actions or setting == "handshake"):
        _face_to_face(hero, other, 62 if "hug" in actions else 96)
    hit = opponent is not None and "punch" in actions  # a blow: the hitter stays put
    lands = hit and hero.pose.body != "sick"  # a sick hero knocks nobody over
    if lands and opponent is not None and not _knocked(opponent) and not opponent.spin:
        # the one hit flies or falls, not the one who hits
        if "fly" in actions:
            opponent.lift, opponent.spin = 48, 28
        elif "fall" in actions:
            opponent.spin, opponent.lift = -70 * opponent.facing, 16
    free = hero.pose.body != "knocked" and not hero.spin
    if not free:
        return
    if "sleep" in actions:
        hero.spin, hero.lift = -90, 34
    elif "fly" in actions and not hit:
        hero.lift = 80
    elif "jump" in actions:
        hero.lift = 44
    elif "fall" in actions and not hit:
        hero.spin, hero.lift = -70 * hero.facing, 16
    elif "bow" in actions:
        hero.spin = 32 * hero.facing
    elif "run" in actions:
        hero.spin = 12 * hero.facing
    elif "dance" in actions:
        hero.spin = -10 * hero.facing


def _knocked(member: Figure | None) -> bool:
    return member is not None and member.pose.body == "knocked"


def _face_to_face(a: Figure, b: Figure, gap: float) -> None:
    left, right = (a, b) if a.x <= b.x else (b, a)
    mid = min(max((a.x + b.x) / 2, 160.0), WIDTH - 160.0)
    left.x, right.x = mid - gap / 2, mid + gap / 2
    left.facing, right.facing = 1, -1


# --- drawing -----------------------------------------------------------------------------


def behind(props: tuple[str, ...], cast: list, hero: Figure | None, feet: float,
           dice: Dice) -> str:  # fmt: skip
    """The props that stand behind the figures: a car."""
    if "car" not in props:
        return ""
    at = spot_of(hero, feet)
    x = dice.number("car", 420, 500) if at.x < WIDTH / 2 else dice.number("car", 140, 220)
    colour = dice.choice("car-colour", ("#e53935", "#1e88e5", "#fdd835", "#43a047"))
    y = feet
    return (
        f'<g data-prop="car" transform="translate({x},{y:.0f})">'
        f'<path d="M -110 -24 L -110 -62 Q -106 -72 -90 -74 L -60 -76 L -34 -112 '
        f'L 44 -112 L 74 -76 L 104 -72 Q 114 -68 114 -56 L 114 -24 Z" fill="{colour}" '
        f"{LINE}/>"
        '<path d="M -26 -104 L 36 -104 L 58 -78 L -46 -78 Z" fill="#b3e5fc" '
        'stroke="#222" stroke-width="1.5"/><path d="M 6 -104 V -78" stroke="#222" '
        'stroke-width="3"/>'
        '<rect x="102" y="-66" width="12" height="8" fill="#fff59d"/>'
        '<rect x="-110" y="-66" width="8" height="8" fill="#ef5350"/>'
        '<circle cx="-62" cy="-22" r="20" fill="#263238"/><circle cx="-62" cy="-22" r="8" '
        'fill="#b0bec5"/><circle cx="68" cy="-22" r="20" fill="#263238"/>'
        '<circle cx="68" cy="-22" r="8" fill="#b0bec5"/></g>'
    )


def in_front(props: tuple[str, ...], actions: tuple[str, ...], setting: str, cast: list,
             hero: Figure | None, opponent: Figure | None, feet: float, height: float,
             dice: Dice, cjk: bool) -> str:  # fmt: skip
    """The props held or standing in front, then the marks of each action (and at a
    handshake, the two hands clasped)."""
    at = spot_of(hero, feet)
    out = []
    other = opponent or next((m for m in cast if m is not hero), None)
    if setting == "handshake" and hero is not None and other is not None:
        out.append(_clasp(at, spot_of(other, feet)))
    held = {m.pose.holds for m in cast}
    for prop in props:
        if prop == "lollipop" and "lollipop" in held:
            continue  # a figure holds it already
        draw = PROPS.get(prop)
        if draw is not None:
            out.append(f'<g data-prop="{prop}">{draw(at, feet, height, dice)}</g>')
    target = spot_of(opponent, feet) if opponent is not None else None
    for act in actions:
        draw_act = ACTS.get(act)
        if draw_act is None:
            continue
        who = at
        if (
            act in ("fly", "fall")
            and target is not None
            and ("punch" in actions or _knocked(opponent))
        ):
            if opponent is not None and not (opponent.lift or opponent.spin):
                continue  # the blow did not land: nobody flies or falls
            who = target  # the one hit is the one who flies or falls
        mark = draw_act(who, target, feet, dice, cjk)
        out.append(f'<g data-act="{act}">{mark}</g>')
    return "".join(out)


def _clasp(a: Spot, b: Spot) -> str:
    """Two arms reaching to the middle and the hands clasped there."""
    mx = (a.x + b.x) / 2
    y = min(a.base - 80 * a.s, b.base - 80 * b.s)
    arms = "".join(
        f'<path d="M {p.x + p.facing * 22 * p.s:.0f} {p.base - 100 * p.s:.0f} L {mx:.0f} '
        f'{y:.0f}" stroke="#455a64" stroke-width="10" stroke-linecap="round"/>'
        for p in (a, b)
    )
    return (
        f'<g data-act="handshake">{arms}'
        f'<ellipse cx="{mx:.0f}" cy="{y:.0f}" rx="16" ry="11" fill="#ffe0b2" {LINE}/>'
        f'<path d="M {mx - 8:.0f} {y - 6:.0f} v 12 M {mx:.0f} {y - 8:.0f} v 14 '
        f'M {mx + 8:.0f} {y - 6:.0f} v 12" stroke="#8d6e63" stroke-width="1.5"/>'
        f'<path d="M {mx - 26:.0f} {y - 30:.0f} l -8 -8 M {mx:.0f} {y - 34:.0f} v -12 '
        f'M {mx + 26:.0f} {y - 30:.0f} l 8 -8" stroke="#fbc02d" stroke-width="3" '
        'stroke-linecap="round"/></g>'
    )


def _kite(at: Spot, feet: float, height: float, dice: Dice) -> str:
    x = min(max(at.x + at.facing * dice.number("kite", 120, 190), 60), WIDTH - 60)
    y = dice.number("kite-y", 84, 120)
    hx, hy = at.hand
    bows = "".join(
        f'<path d="M {x + i * 10 - 6} {y + 60 + i * 16} l 12 -6 l 0 12 Z" fill="#ffeb3b"/>'
        for i in range(1, 4)
    )
    return (
        f'<path d="M {hx:.0f} {hy:.0f} Q {(hx + x) / 2:.0f} {y + 40:.0f} {x} {y + 42}" '
        'stroke="#555" stroke-width="1.5" fill="none"/>'
        f'<path d="M {x} {y + 42} q 20 20 10 40 t 20 44" stroke="#e53935" stroke-width="2" '
        f'fill="none"/>{bows}'
        f'<polygon points="{x},{y - 30} {x + 26},{y} {x},{y + 42} {x - 26},{y}" fill="#ff7043" '
        f"{LINE}/>"
        f'<path d="M {x} {y - 30} V {y + 42} M {x - 26} {y} H {x + 26}" stroke="#222" '
        'stroke-width="1.5"/>'
        f'<polygon points="{x},{y - 30} {x + 26},{y} {x},{y}" fill="#ffca28"/>'
    )


def _lollipop(at: Spot, feet: float, height: float, dice: Dice) -> str:
    hx, hy = at.hand
    return (
        f'<path d="M {hx:.0f} {hy:.0f} L {hx + 4:.0f} {hy - 50:.0f}" stroke="#fafafa" '
        'stroke-width="5" stroke-linecap="round"/>'
        f'<circle cx="{hx + 5:.0f}" cy="{hy - 68:.0f}" r="22" fill="#ff4081" {LINE}/>'
        f'<path d="M {hx + 5:.0f} {hy - 68:.0f} m -13 0 a 13 13 0 1 1 13 13 a 7 7 0 1 1 -7 -7" '
        'fill="none" stroke="#fff59d" stroke-width="4"/>'
    )


def _pill(at: Spot, feet: float, height: float, dice: Dice) -> str:
    hx, hy = at.hand
    return (
        f'<g transform="translate({hx:.0f},{hy - 16:.0f}) rotate(-30)">'
        f'<rect x="-18" y="-8" width="36" height="16" rx="8" fill="#fff" {LINE}/>'
        f'<path d="M 0 -8 H 10 A 8 8 0 0 1 10 8 H 0 Z" fill="#e53935" {LINE}/></g>'
        f'<path d="M {hx + 22:.0f} {hy - 40:.0f} l 4 -8 M {hx + 30:.0f} {hy - 30:.0f} l 8 -4" '
        'stroke="#fbc02d" stroke-width="2.5" stroke-linecap="round"/>'
    )


def _umbrella(at: Spot, feet: float, height: float, dice: Dice) -> str:
    hx, hy = at.hand
    top = at.base - 214 * at.s
    cx = hx - at.facing * 10
    return (
        f'<path d="M {hx:.0f} {hy:.0f} L {cx:.0f} {top:.0f}" stroke="#5d4037" stroke-width="4"/>'
        f'<path d="M {hx:.0f} {hy:.0f} q 0 10 -8 10" stroke="#5d4037" stroke-width="4" '
        'fill="none"/>'
        f'<path d="M {cx - 80:.0f} {top + 36:.0f} Q {cx:.0f} {top - 40:.0f} {cx + 80:.0f} '
        f'{top + 36:.0f} q -20 -12 -40 0 q -20 -12 -40 0 q -20 -12 -40 0 q -20 -12 -40 0 Z" '
        f'fill="#7e57c2" {LINE}/>'
    )


def _camera(at: Spot, feet: float, height: float, dice: Dice) -> str:
    x = dice.choice("camera-side", (70, WIDTH - 70))
    y = feet + 20
    return (
        f'<path d="M {x} {y - 70} L {x - 26} {y + 30} M {x} {y - 70} L {x + 26} {y + 30} '
        f'M {x} {y - 70} L {x} {y + 34}" stroke="#424242" stroke-width="4"/>'
        f'<rect x="{x - 30}" y="{y - 104}" width="60" height="38" rx="6" fill="#37474f" '
        f"{LINE}/>"
        f'<rect x="{x - 22}" y="{y - 114}" width="18" height="10" fill="#37474f"/>'
        f'<circle cx="{x}" cy="{y - 85}" r="13" fill="#90caf9" stroke="#eceff1" '
        'stroke-width="3"/>'
        f'<circle cx="{x + 20}" cy="{y - 98}" r="3" fill="#ff5252"/>'
    )


def _book(at: Spot, feet: float, height: float, dice: Dice) -> str:
    hx, hy = at.hand
    return (
        f'<g transform="translate({hx:.0f},{hy - 4:.0f})">'
        f'<rect x="-12" y="-18" width="26" height="34" rx="2" fill="#1565c0" {LINE}/>'
        '<rect x="-8" y="-12" width="18" height="5" fill="#ffca28"/></g>'
    )


def _ball(at: Spot, feet: float, height: float, dice: Dice) -> str:
    x = at.x + at.facing * 62 * at.s
    y = feet - 16
    return (
        f'<circle cx="{x:.0f}" cy="{y:.0f}" r="16" fill="#fff" {LINE}/>'
        f'<polygon points="{star(x, y, 7, 4)}" fill="#222"/>'
    )


PROPS = {
    "kite": _kite,
    "lollipop": _lollipop,
    "pill": _pill,
    "umbrella": _umbrella,
    "camera": _camera,
    "book": _book,
    "ball": _ball,
}  # the car stands behind the figures (``behind``)


def _word(x: float, y: float, text: str, size: int, fill: str, rotate: int = 0) -> str:
    """A fixed sound word ("POW!", "哈哈"): never text a user typed."""
    return (
        f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" font-weight="bold" fill="{fill}" '
        f'stroke="#222" stroke-width="1" text-anchor="middle" '
        f'transform="rotate({rotate} {x:.0f} {y:.0f})">{text}</text>'
    )


def _punch(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    if target is not None:  # on the side of the face turned to the hitter
        x, y = target.head
        x += target.facing * 40 * target.s
    else:
        x, y = at.x + at.facing * 96 * at.s, at.base - 108 * at.s
    return (
        f'<polygon points="{star(x, y, 44, 22, 10)}" fill="#ffeb3b" stroke="#e65100" '
        'stroke-width="3"/>' + _word(x, y + 7, "砰！" if cjk else "POW!", 18, "#d32f2f", -12)
    )


def _fly(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    # the trail is where the flier comes from: behind a hero in flight, on the hitter's
    # side of the one knocked flying (who faces the hitter)
    back = at.facing if at is target else -at.facing
    x, y = at.x, at.base
    return "".join(
        f'<path d="M {x + back * 30:.0f} {y - dy * at.s:.0f} q {back * 50} 8 {back * 110} 0" '
        'stroke="#90a4ae" stroke-width="4" fill="none" stroke-linecap="round"/>'
        for dy in (40, 90, 140)
    ) + (
        f'<ellipse cx="{x:.0f}" cy="{feet - 4:.0f}" rx="30" ry="6" fill="none" '
        'stroke="#90a4ae" stroke-width="2" stroke-dasharray="6 6"/>'
    )


def _fall(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    x = at.head[0]
    lines = "".join(
        f'<path d="M {x + dx:.0f} {feet - 6:.0f} l {dx * 0.5:.0f} -18" stroke="#795548" '
        'stroke-width="3" stroke-linecap="round"/>'
        for dx in (-36, -12, 12, 36)
    )
    stars = "".join(
        f'<polygon points="{star(x + dx, at.head[1] - 44 + dy, 8, 3)}" fill="#fdd835" {LINE}/>'
        for dx, dy in ((-24, 0), (6, -16), (30, 4))
    )
    return lines + stars


def _hug(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    x = at.x + at.facing * 31
    y = at.base - 200 * at.s
    return "".join(
        f'<path d="M {x + dx:.0f} {y + dy:.0f} c -6 -10 -20 -4 -14 6 l 14 14 l 14 -14 '
        f'c 6 -10 -8 -16 -14 -6 Z" fill="#e91e63" {LINE}/>'
        for dx, dy in ((0, 0), (-30, 18), (28, 14))
    )


def _bow(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    x = at.x - at.facing * 20
    y = at.base - 150 * at.s
    return (
        f'<path d="M {x:.0f} {y:.0f} q {at.facing * 40} -40 {at.facing * 90} -10" '
        'stroke="#222" stroke-width="2.5" fill="none" stroke-dasharray="6 5"/>'
        f'<path d="M {x + at.facing * 90:.0f} {y - 10:.0f} l {-at.facing * 12} -8 '
        f'm {at.facing * 12} 8 l {-at.facing * 10} 10" stroke="#222" stroke-width="2.5"/>'
    )


def _wave(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    x = at.x + at.facing * 58 * at.s
    y = at.base - 170 * at.s
    hand = f'<circle cx="{x:.0f}" cy="{y:.0f}" r="9" fill="#ffe0b2" {LINE}/>'
    arm = (
        f'<path d="M {at.x + at.facing * 20 * at.s:.0f} {at.base - 104 * at.s:.0f} '
        f'L {x:.0f} {y + 6:.0f}" stroke="#ef5350" stroke-width="9" stroke-linecap="round"/>'
    )
    arcs = "".join(
        f'<path d="M {x + at.facing * r:.0f} {y - r:.0f} q {at.facing * r * 0.6:.0f} '
        f'{r:.0f} 0 {2 * r:.0f}" stroke="#222" stroke-width="2.5" fill="none"/>'
        for r in (16, 26)
    )
    return arm + hand + arcs


def _hide(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    x, y = at.x, feet
    return (
        f'<g fill="#388e3c" stroke="#1b5e20" stroke-width="2">'
        f'<circle cx="{x - 44:.0f}" cy="{y - 40:.0f}" r="40"/>'
        f'<circle cx="{x + 44:.0f}" cy="{y - 44:.0f}" r="42"/>'
        f'<circle cx="{x:.0f}" cy="{y - 70 * at.s:.0f}" r="48"/>'
        f'<circle cx="{x:.0f}" cy="{y - 20:.0f}" r="44"/></g>'
        f'<path d="M {x - 20:.0f} {y - 90 * at.s:.0f} l 6 -6 M {x + 30:.0f} {y - 60:.0f} '
        'l 6 -6" stroke="#a5d6a7" stroke-width="3"/>'
    )


def _run(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    back = -at.facing
    lines = "".join(
        f'<path d="M {at.x + back * 40:.0f} {at.base - dy * at.s:.0f} l {back * 70} 0" '
        'stroke="#616161" stroke-width="3" stroke-linecap="round"/>'
        for dy in (40, 80, 120)
    )
    dust = "".join(
        f'<circle cx="{at.x + back * (36 + i * 22):.0f}" cy="{feet - 8 - i * 3:.0f}" '
        f'r="{10 - i * 2}" fill="#d7ccc8" stroke="#8d6e63"/>'
        for i in range(3)
    )
    return lines + dust


def _cry(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    hx, hy = at.head
    streams = "".join(
        f'<path d="M {hx + at.facing * dx * at.s:.0f} {hy:.0f} q {at.facing * dx * 0.4:.0f} '
        f'30 {at.facing * dx * 0.8:.0f} 64" stroke="#4fc3f7" stroke-width="6" fill="none" '
        'stroke-linecap="round"/>'
        for dx in (-11, 13)
    )
    return streams + (
        f'<ellipse cx="{at.x:.0f}" cy="{feet - 2:.0f}" rx="44" ry="7" fill="#4fc3f7" '
        'fill-opacity="0.7"/>'
    )


def _laugh(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    hx, hy = at.head
    x = hx + at.facing * 70
    return _word(x, hy - 30, "哈哈哈！" if cjk else "HA HA!", 20, "#ff9800", 10 * at.facing)


def _eat(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    hx, hy = at.hand
    return (
        f'<g transform="translate({hx:.0f},{hy + 4:.0f})">'
        '<path d="M -22 -8 Q -22 16 0 16 Q 22 16 22 -8 Z" fill="#fafafa" stroke="#222" '
        'stroke-width="2"/><ellipse cx="0" cy="-9" rx="20" ry="6" fill="#fff"/>'
        '<path d="M -4 -10 l 28 -34 M 4 -10 l 26 -30" stroke="#8d6e63" stroke-width="3"/>'
        '<path d="M -12 -10 q 4 -8 8 0 q 4 -8 8 0 q 4 -8 8 0" stroke="#bdbdbd" '
        'fill="none"/></g>'
    )


def _sleep(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    hx, hy = at.head
    x, y = hx + 20, hy - 40
    return "".join(_word(x + i * 18, y - i * 22, "Z", 16 + i * 6, "#5c6bc0") for i in range(3))


def _read(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    x = at.x + at.facing * 38 * at.s
    y = at.base - 100 * at.s
    return (
        f'<g transform="translate({x:.0f},{y:.0f}) rotate({-10 * at.facing})">'
        f'<path d="M 0 -22 Q -18 -28 -34 -22 V 18 Q -18 12 0 18 Z" fill="#fff" {LINE}/>'
        f'<path d="M 0 -22 Q 18 -28 34 -22 V 18 Q 18 12 0 18 Z" fill="#fff" {LINE}/>'
        '<path d="M -28 -12 h 22 M -28 -4 h 22 M -28 4 h 18 M 6 -12 h 22 M 6 -4 h 22 '
        'M 6 4 h 16" stroke="#90a4ae" stroke-width="2"/>'
        '<path d="M 0 -22 V 18" stroke="#c62828" stroke-width="3"/></g>'
    )


def _note(x: float, y: float) -> str:
    return (
        f'<ellipse cx="{x:.0f}" cy="{y:.0f}" rx="7" ry="5" fill="#222" '
        f'transform="rotate(-20 {x:.0f} {y:.0f})"/>'
        f'<path d="M {x + 6:.0f} {y:.0f} V {y - 28:.0f} q 8 4 12 12" stroke="#222" '
        'stroke-width="2.5" fill="none"/>'
    )


def _dance(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    hx, hy = at.head
    notes = "".join(_note(hx + dx, hy + dy) for dx, dy in ((-70, -10), (64, -34), (80, 30)))
    swing = (
        f'<path d="M {at.x - 50:.0f} {feet - 20:.0f} q 50 20 100 0" stroke="#ab47bc" '
        'stroke-width="3" fill="none" stroke-dasharray="8 6"/>'
    )
    return notes + swing


def _jump(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    return "".join(
        f'<path d="M {at.x + dx:.0f} {at.base + 10:.0f} V {feet - 6:.0f}" stroke="#616161" '
        'stroke-width="3" stroke-linecap="round"/>'
        for dx in (-20, 0, 20)
    ) + (
        f'<path d="M {at.x - 40:.0f} {feet - 4:.0f} l -12 -8 M {at.x + 40:.0f} {feet - 4:.0f} '
        'l 12 -8" stroke="#8d6e63" stroke-width="3"/>'
    )


def _shout(at: Spot, target: Spot | None, feet: float, dice: Dice, cjk: bool) -> str:
    hx, hy = at.head
    mx, my = hx + at.facing * 30 * at.s, hy + 20 * at.s
    rays = "".join(
        f'<path d="M {mx + at.facing * 16:.0f} {my + dy * 0.3:.0f} l {at.facing * 44} {dy}" '
        'stroke="#d32f2f" stroke-width="4" stroke-linecap="round"/>'
        for dy in (-30, -10, 10, 30)
    )
    return rays + _word(mx + at.facing * 86, my - 30, "！！", 26, "#d32f2f")


ACTS = {
    "punch": _punch,
    "fly": _fly,
    "fall": _fall,
    "hug": _hug,
    "bow": _bow,
    "wave": _wave,
    "hide": _hide,
    "run": _run,
    "cry": _cry,
    "laugh": _laugh,
    "eat": _eat,
    "sleep": _sleep,
    "read": _read,
    "dance": _dance,
    "jump": _jump,
    "shout": _shout,
}

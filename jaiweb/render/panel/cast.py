"""Draws the cast: each known character's own silhouette, colours and accessory, in a pose.

A figure is drawn around its feet at (0, 0), facing right, about 180 px tall at scale 1;
the panel moves, scales and mirrors it. Unknown names get a plain figure in a colour of
their own (from a hash of the name, so the same name is always the same colour).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from jaiweb.render.panel.text import attr
from journal.cast import BY_ROLE, Cast

OUTLINE = 'stroke="#222" stroke-width="2.5" stroke-linejoin="round"'
THIN = 'stroke="#222" stroke-width="1.8"'


@dataclass(frozen=True)
class Look:
    """What makes a character recognisable at a glance."""

    name: str
    aliases: tuple[str, ...]  # English names and other ways a prompt may say it
    kind: str  # hero | brute | girl | small | robot | elder | plain
    skin: str
    outfit: str
    accent: str
    scale: float = 1.0


# The built-in characters' looks, by their role in the starter cast (``journal.cast``,
# where their names and aliases live: a look is only how one is drawn).
ROLES = {
    "hero": ("hero", "#f7a8c4", "#e53935", "#fdd835", 1.0),
    "rival": ("brute", "#d99873", "#1e6fd9", "#263238", 1.12),
    "girl": ("girl", "#f9c6da", "#8e24aa", "#ec407a", 0.95),
    "small": ("small", "#ffe08a", "#43a047", "#fb8c00", 0.8),
    "robot": ("robot", "#9ccffa", "#607d8b", "#ff7043", 0.92),
    "teacher": ("elder", "#ffe0b8", "#6d4c41", "#eeeeee", 1.06),
}
BOOK: tuple[Look, ...] = tuple(
    Look(BY_ROLE[role].zh, BY_ROLE[role].words[1:], *drawn) for role, drawn in ROLES.items()
)
BY_NAME = {look.name: look for look in BOOK}


def look_of(name: str, cast: Cast | None = None) -> Look:
    """How a character is drawn: a built-in's look when the cast says it stands for one
    (a user's "Pig-Man" is the hero), else a plain figure in a colour of its own."""
    member = (cast or Cast.of({})).by_name.get(name)
    if member is None:
        member = next((m for m in (cast or Cast.of({})).members if name in m.words), None)
    if member is not None and member.role in ROLES:
        return Look(name, member.aliases, *ROLES[member.role])
    hue = int(hashlib.sha256(name.encode()).hexdigest()[:4], 16) % 360
    return Look(name, (), "plain", f"hsl({hue},55%,78%)", f"hsl({(hue + 150) % 360},45%,45%)",
                f"hsl({(hue + 60) % 360},70%,55%)")  # fmt: skip


# --- a figure ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pose:
    """How a figure stands (``stand``, ``eat``, ``fight``, ``finish``, ``knocked``, ``sick``,
    ``proud``, ``sad``) and its face (``calm``, ``happy``, ``proud``, ``sad``, ``angry``,
    ``scared``, ``sick``, ``dazed``, ``fierce``)."""

    body: str = "stand"
    face: str = "calm"
    holds: str = ""  # "" | lollipop | bottle
    variant: int = 0  # one of VARIANTS ways to strike the pose (from the panel's seed)


# A pose's variants: the head's tilt and the stance's width on top of the pose's own, and
# for the arms see ``_arms``. Variant 0 is the pose as it always was.
VARIANTS = 4
TILTS = (0, -7, 5, 10)
STANCES = (0, 6, -4, 10)


def figure(look: Look, pose: Pose) -> str:
    """The figure's SVG, feet at the origin, facing right."""
    crouch = 22 if pose.body == "sick" else 0
    head_y = -142 + crouch + (6 if pose.body == "sad" else 0)
    arms, hand = _arms(look, pose, crouch, head_y)
    parts = [_behind(look, pose, crouch), _legs(look, pose), _torso(look, pose, crouch), arms]
    tilt = {"sad": 10, "sick": 6, "proud": -6}.get(pose.body, 0) + TILTS[pose.variant % VARIANTS]
    head = _head(look) + _face(look, pose.face) + _headwear(look)
    parts.append(f'<g transform="translate(0,{head_y}) rotate({tilt})">{head}</g>')
    parts.append(_held(pose.holds, hand))  # in front of the face: a lollipop at the mouth
    return "".join(parts)


def _behind(look: Look, pose: Pose, crouch: int) -> str:
    if look.kind != "hero":  # the hero's cape
        return ""
    flow = 40 if pose.body in ("fight", "finish", "knocked") else 18
    return (
        f'<path d="M -6 {-112 + crouch} C {-40 - flow} {-90 + crouch}, {-44 - flow} -30, '
        f'{-30 - flow} -14 L 8 -20 Z" fill="#c62828" {OUTLINE}/>'
    )


def _legs(look: Look, pose: Pose) -> str:
    spread = 22 if pose.body in ("fight", "finish", "proud") else 12
    spread += STANCES[pose.variant % VARIANTS]
    if look.kind == "girl":  # the dress: the feet stay together
        spread = 10
    colour = "#455a64" if look.kind == "robot" else look.outfit
    return (
        f'<path d="M {-spread} -6 L -6 -40 M {spread} -6 L 6 -40" stroke="{colour}" '
        'stroke-width="11" stroke-linecap="round" fill="none"/>'
        f'<ellipse cx="{-spread - 3}" cy="-4" rx="11" ry="6" fill="#3e2723"/>'
        f'<ellipse cx="{spread + 3}" cy="-4" rx="11" ry="6" fill="#3e2723"/>'
    )


def _torso(look: Look, pose: Pose, crouch: int) -> str:
    top = -112 + crouch
    kind = look.kind
    if kind == "brute":
        shape = f"M -40 {top} L 40 {top} L 26 -34 L -26 -34 Z"
        trim = f'<rect x="-26" y="-50" width="52" height="9" fill="{look.accent}"/>'
    elif kind == "girl":
        shape = f"M -16 {top} L 16 {top} L 36 -30 L -36 -30 Z"
        trim = f'<path d="M -36 -30 L 36 -30" stroke="{look.accent}" stroke-width="5"/>'
    elif kind == "robot":
        shape = f"M -28 {top} L 28 {top} L 28 -36 L -28 -36 Z"
        trim = (
            f'<circle cx="-10" cy="{top + 24}" r="5" fill="{look.accent}"/>'
            f'<circle cx="8" cy="{top + 24}" r="5" fill="#ffee58"/>'
            f'<rect x="-16" y="{top + 40}" width="32" height="8" rx="2" fill="#cfd8dc"/>'
        )
    elif kind == "elder":
        shape = f"M -24 {top} L 24 {top} L 28 -32 L -28 -32 Z"
        trim = f'<path d="M 0 {top} L 0 -32" stroke="#3e2723" stroke-width="2"/>'
    elif kind == "small":
        shape = f"M -30 {top + 10} C -40 -40, 40 -40, 30 {top + 10} Z"
        trim = f'<rect x="-14" y="{top + 14}" width="28" height="18" rx="4" fill="{look.accent}"/>'
    else:
        shape = f"M -26 {top} C -36 -60, -30 -36, -22 -34 L 22 -34 C 30 -36, 36 -60, 26 {top} Z"
        trim = ""
        if kind == "hero":  # a star on the chest
            trim = (
                f'<polygon points="{_star(0, top + 28, 11, 5)}" fill="{look.accent}" '
                'stroke="#222" stroke-width="1.2"/>'
            )
    return f'<path d="{shape}" fill="{look.outfit}" {OUTLINE}/>{trim}'


def _arms(look: Look, pose: Pose, crouch: int, head_y: int) -> tuple[str, tuple[int, int]]:
    """The arms and hands, and where the front hand is (what it holds is drawn there).

    The variant moves the arms the pose leaves free: a stand's waves, points or clasps, a
    fight's guard goes up or down, an eater's or a striker's other arm swings, a flying
    figure flails; the striking hand, the hand at the mouth and hands on the hips stay."""
    sy = -104 + crouch  # shoulders
    skin = "#b0bec5" if look.kind == "robot" else look.skin
    sleeve = f'stroke="{look.outfit}" stroke-width="10" stroke-linecap="round" fill="none"'
    v = pose.variant % VARIANTS
    if pose.body == "eat":
        front = (20, head_y + 18)
        back = ((-30, -56), (-40, sy - 30), (-20, -50), (-42, -74))[v]
    elif pose.body == "fight":  # the guard: as it was, high, low, one fist back
        front, back = (
            ((54, sy + 8), (38, sy + 18)),
            ((50, sy - 10), (34, sy)),
            ((60, sy + 22), (40, sy + 30)),
            ((58, sy + 2), (-34, sy + 14)),
        )[v]
    elif pose.body == "finish":
        front = (76, sy - 4)
        back = ((-34, sy + 36), (-46, sy + 8), (-28, sy + 52), (-44, sy + 22))[v]
    elif pose.body == "knocked":
        front, back = (
            ((-22, sy - 46), (30, sy - 40)),
            ((-36, sy - 30), (40, sy - 50)),
            ((-14, sy - 52), (22, sy - 30)),
            ((-40, sy - 14), (36, sy - 44)),
        )[v]
    elif pose.body == "sick":
        front, back = (8, -64 + crouch // 2), (-8, -60 + crouch // 2)
    elif pose.body == "proud":  # hands on the hips, elbows out
        front, back = (26, -64), (-26, -64)
        elbows = (
            f"M 24 {sy} L 44 -84 L {front[0]} {front[1]} M -24 {sy} L -44 -84 L {back[0]} {back[1]}"
        )
        return f'<path d="{elbows}" {sleeve}/>' + _hand(front, skin) + _hand(back, skin), front
    elif pose.body == "sad":  # arms hanging, a hand at the eyes, hands clasped, one hanging
        front, back = (
            ((30, -46), (-30, -46)),
            ((16, head_y + 10), (-30, -46)),
            ((8, -60), (-8, -62)),
            ((26, -44), (-12, -58)),
        )[v]
    else:  # stand: arms down, a wave, pointing ahead, a hand behind the head
        front, back = (
            ((30, -52), (-30, -52)),
            ((40, sy - 58), (-30, -52)),
            ((70, sy + 4), (-30, -52)),
            ((30, -52), (-16, head_y - 18)),
        )[v]
    path = f"M 22 {sy} L {front[0]} {front[1]} M -22 {sy} L {back[0]} {back[1]}"
    return f'<path d="{path}" {sleeve}/>' + _hand(back, skin) + _hand(front, skin), front


def _held(holds: str, at: tuple[int, int]) -> str:
    x, y = at
    if holds == "lollipop":
        return _lollipop(at)
    if holds == "bottle":  # the medicine
        return (
            f'<rect x="{x - 6}" y="{y - 26}" width="13" height="22" rx="3" fill="#8d6e63" '
            f'{THIN}/><rect x="{x - 3}" y="{y - 32}" width="7" height="7" fill="#eee" {THIN}/>'
            f'<path d="M {x - 3} {y - 15} h 7 M {x + 0.5} {y - 18.5} v 7" stroke="#fff" '
            'stroke-width="2"/>'
        )
    return ""


def _hand(at: tuple[int, int], skin: str) -> str:
    return f'<circle cx="{at[0]}" cy="{at[1]}" r="8" fill="{skin}" {THIN}/>'


def _lollipop(at: tuple[int, int]) -> str:
    x, y = at
    return (
        f'<path d="M {x} {y} L {x + 4} {y - 34}" stroke="#fafafa" stroke-width="4"/>'
        f'<circle cx="{x + 5}" cy="{y - 46}" r="15" fill="#ff4081" {THIN}/>'
        f'<path d="M {x + 5} {y - 46} m -9 0 a 9 9 0 1 1 9 9 a 5 5 0 1 1 -5 -5" '
        'fill="none" stroke="#fff59d" stroke-width="3"/>'
    )


def _head(look: Look) -> str:
    skin = look.skin
    if look.kind == "robot":
        return (
            f'<rect x="-30" y="-30" width="60" height="56" rx="10" fill="{skin}" {OUTLINE}/>'
            '<rect x="-22" y="-18" width="44" height="26" rx="6" fill="#263238"/>'
        )
    if look.kind == "elder":
        return (
            f'<circle cx="0" cy="0" r="30" fill="{skin}" {OUTLINE}/>'
            f'<path d="M -30 -6 C -36 -30, -14 -40, 0 -34 C 14 -40, 36 -30, 30 -6" '
            f'fill="{look.accent}" {THIN}/>'
        )
    r = 38 if look.kind == "small" else 33
    ears = (
        f'<path d="M -24 {-r + 8} L -30 {-r - 12} L -8 {-r + 2} Z" fill="{skin}" {OUTLINE}/>'
        f'<path d="M 24 {-r + 8} L 30 {-r - 12} L 8 {-r + 2} Z" fill="{skin}" {OUTLINE}/>'
    )
    mask = (  # the hero's mask, under the eyes drawn next
        '<path d="M -26 -16 Q 2 -24 30 -16 L 28 2 Q 2 -4 -24 2 Z" fill="#64b5f6" '
        'stroke="#1565c0" stroke-width="1.5"/>'
        if look.kind == "hero"
        else ""
    )
    return (
        ears
        + f'<circle cx="0" cy="0" r="{r}" fill="{skin}" {OUTLINE}/>'
        + mask
        + f'<ellipse cx="6" cy="8" rx="12" ry="8.5" fill="#f48fb1" {THIN}/>'
        + '<circle cx="2" cy="8" r="2.2" fill="#6d2c45"/><circle cx="10" cy="8" r="2.2" '
        'fill="#6d2c45"/>'
    )


def _headwear(look: Look) -> str:
    """The accessory that tells the character apart."""
    kind, accent = look.kind, look.accent
    if kind == "brute":  # the crest and the headband
        return (
            f'<path d="M -18 -28 L -12 -48 L -4 -31 L 2 -52 L 8 -31 L 16 -46 L 20 -26 Z" '
            f'fill="{accent}" {THIN}/>'
            '<rect x="-33" y="-22" width="66" height="7" fill="#fdd835" stroke="#222" '
            'stroke-width="1.2"/><path d="M -33 -18 L -46 -10 M -33 -18 L -44 -26" '
            'stroke="#fdd835" stroke-width="4"/>'
        )
    if kind == "girl":  # the bow
        return (
            f'<path d="M 6 -36 L -14 -50 L -14 -24 Z M 6 -36 L 26 -50 L 26 -24 Z" '
            f'fill="{accent}" {THIN}/><circle cx="6" cy="-36" r="5" fill="#ad1457"/>'
        )
    if kind == "small":  # the propeller cap
        return (
            f'<path d="M -30 -20 Q 0 -56 30 -20 Z" fill="{accent}" {THIN}/>'
            '<path d="M 0 -40 L 0 -50 M -16 -52 L 16 -48" stroke="#222" stroke-width="3"/>'
        )
    if kind == "robot":  # the antenna
        return (
            '<path d="M 0 -30 L 0 -50" stroke="#222" stroke-width="3"/>'
            f'<circle cx="0" cy="-54" r="6" fill="{accent}" {THIN}/>'
        )
    if kind == "elder":  # the glasses and the beard
        return (
            '<circle cx="-10" cy="-4" r="8" fill="none" stroke="#222" stroke-width="2"/>'
            '<circle cx="12" cy="-4" r="8" fill="none" stroke="#222" stroke-width="2"/>'
            '<path d="M -2 -4 L 4 -4" stroke="#222" stroke-width="2"/>'
            f'<path d="M -18 14 Q 0 64 18 14 Q 0 24 -18 14 Z" fill="{accent}" {THIN}/>'
        )
    return ""


def _face(look: Look, face: str) -> str:
    """Eyes, brows, mouth and the little signs around them."""
    ey = -6  # eyes' height
    out = []
    if face in ("happy", "proud"):
        out.append(
            f'<path d="M -16 {ey} q 5 -7 10 0 M 8 {ey} q 5 -7 10 0" fill="none" '
            'stroke="#222" stroke-width="2.5" stroke-linecap="round"/>'
        )
    elif face == "dazed":
        out.append(
            f'<path d="M -16 {ey - 5} l 9 9 m 0 -9 l -9 9 M 8 {ey - 5} l 9 9 m 0 -9 l -9 9" '
            'stroke="#222" stroke-width="2.5"/>'
        )
    elif face == "scared":
        out.append(
            f'<circle cx="-11" cy="{ey}" r="6" fill="#fff" {THIN}/>'
            f'<circle cx="13" cy="{ey}" r="6" fill="#fff" {THIN}/>'
            f'<circle cx="-11" cy="{ey}" r="2" fill="#222"/><circle cx="13" cy="{ey}" r="2" '
            'fill="#222"/>'
        )
    elif face == "sick":
        out.append(
            f'<path d="M -16 {ey} q 3 -4 6 0 q 3 4 6 0 M 8 {ey} q 3 -4 6 0 q 3 4 6 0" '
            'fill="none" stroke="#222" stroke-width="2"/>'
        )
    else:
        low = 2 if face == "sad" else 0
        out.append(
            f'<circle cx="-11" cy="{ey + low}" r="4.2" fill="#222"/>'
            f'<circle cx="13" cy="{ey + low}" r="4.2" fill="#222"/>'
        )
    brows = {
        "angry": "M -19 -20 L -5 -14 M 21 -20 L 7 -14",
        "fierce": "M -19 -20 L -5 -15 M 21 -20 L 7 -15",
        "sad": "M -18 -13 L -5 -18 M 20 -13 L 7 -18",
        "sick": "M -18 -14 L -5 -18 M 20 -14 L 7 -18",
        "scared": "M -18 -18 L -5 -20 M 20 -18 L 7 -20",
    }.get(face)
    if brows and look.kind != "robot":
        out.append(f'<path d="{brows}" stroke="#222" stroke-width="2.5" fill="none"/>')
    mouth = {
        "happy": "M -8 20 Q 4 32 16 20 Z",
        "proud": "M -6 20 Q 6 28 18 18",
        "sad": "M -6 26 Q 4 18 14 26",
        "angry": "M -6 24 L 14 22",
        "fierce": "M -8 18 Q 4 34 16 18 Z",
        "scared": "M 0 24 m -5 0 a 5 6 0 1 0 10 0 a 5 6 0 1 0 -10 0",
        "sick": "M -8 24 q 4 -4 8 0 q 4 4 8 0 q 4 -4 8 0",
        "dazed": "M -4 24 q 8 6 16 0",
    }.get(face, "M -4 22 L 12 22")
    filled = face in ("happy", "fierce")
    fill = "#8e2433" if filled else ("#5d1a1a" if face == "scared" else "none")
    if look.kind == "robot":
        out.append(f'<path d="{mouth}" transform="translate(0,-8) scale(0.8)" fill="{fill}" '
                   'stroke="#80deea" stroke-width="2.5"/>')  # fmt: skip
    else:
        out.append(f'<path d="{mouth}" fill="{fill}" stroke="#222" stroke-width="2.5"/>')
    if face == "sad":
        out.append('<path d="M 18 -2 q 5 9 0 12 q -5 -3 0 -12" fill="#4fc3f7" stroke="#0277bd"/>')
    if face in ("sick", "scared"):
        out.append(
            '<path d="M 30 -26 q 7 11 0 15 q -7 -4 0 -15" fill="#7cc4ff" stroke="#0277bd"/>'
            '<path d="M -30 -18 q 6 9 0 12 q -6 -3 0 -12" fill="#7cc4ff" stroke="#0277bd"/>'
        )
    if face == "sick":
        out.append('<circle cx="0" cy="0" r="30" fill="#7cb342" fill-opacity="0.28"/>')
    if face == "angry":
        out.append(
            '<path d="M 24 -34 l 6 6 m 0 -6 l -6 6 m 10 -2 l 6 6 m 0 -6 l -6 6" '
            'stroke="#e53935" stroke-width="2.5"/>'
        )
    if face in ("happy", "proud") and look.kind in ("girl", "hero", "small"):
        out.append(
            '<ellipse cx="-20" cy="10" rx="6" ry="3.5" fill="#ef5350" fill-opacity="0.45"/>'
            '<ellipse cx="24" cy="10" rx="6" ry="3.5" fill="#ef5350" fill-opacity="0.45"/>'
        )
    if face == "dazed":
        out.append(
            f'<polygon points="{_star(-20, -44, 7, 3)}" fill="#fdd835" {THIN}/>'
            f'<polygon points="{_star(18, -50, 6, 2.5)}" fill="#fdd835" {THIN}/>'
        )
    return "".join(out)


def _star(cx: float, cy: float, outer: float, inner: float, points: int = 5) -> str:
    """A star's polygon points (fixed precision: the same input is the same bytes)."""
    coords = []
    for i in range(points * 2):
        r = outer if i % 2 == 0 else inner
        a = math.pi * i / points - math.pi / 2
        coords.append(f"{cx + r * math.cos(a):.1f},{cy + r * math.sin(a):.1f}")
    return " ".join(coords)


star = _star


def title(name: str, state: dict[str, str]) -> str:
    """A tooltip with the character's state (readers of the SVG see it too)."""
    words = ", ".join(f"{k}: {v}" for k, v in state.items() if v)
    return f"<title>{attr(name + (' — ' + words if words else ''))}</title>"

"""Draws one comic panel as SVG from its prompt (a panel script) and the characters' state.

Deterministic: the same prompt, state and seed give the same bytes (the render service
stores the first result per key and compares parameters, so a repeat must be the same
panel). Another seed draws the same script another way (``variation``): where the figures
stand, how they strike their poses, how close the camera frames them and the details of
the setting; a regenerate, which renders under a new key and so a new seed, shows it.
Everything that came from a user, a model or the state is escaped. The picture:

* the setting from the scene (a tournament ring, a classroom, or outdoors), named on the
  SVG root's ``data-scene`` (``ring``, ``classroom``, ``default``);
* the cast: the characters the scene and the speech name (known ones by name or English
  alias, others when the state has them), else the characters in the state; each known
  one with its own silhouette, colours and accessory (``cast.BOOK``);
* poses and faces from the state (a sick buff doubles a figure over whatever the scene
  says; the mood sets the face) and from the scene (eating, fighting, the finishing move,
  winning, sadness); in a fight the opponent faces the hero, and a finishing move sends
  the opponent flying;
* no caption and no speech bubbles: those are the studio's lettering layer, drawn over
  every backend's picture in the page and in exports (``journal.pages``), so they can be
  edited without drawing the panel again. The caption still names the picture (its SVG
  title and label); the name tags and a finishing move's burst are part of the art.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from jaiweb.render.panel.cast import (
    VARIANTS,
    Look,
    Pose,
    figure,
    look_of,
    named_in,
    star,
    title,
)
from jaiweb.render.panel.script import Script, parse
from jaiweb.render.panel.text import attr, fit, text_block, xml
from jaiweb.render.panel.variation import (
    LOOK_FIELDS,
    Dice,
    Frame,
    figure_seed,
    frame_for,
    own_seed,
    panel_seed,
)

WIDTH = 640
BASE_HEIGHT = 400
MARGIN = 8
MAX_CAST = 4
FONTS = "'Noto Sans CJK SC','PingFang SC','Microsoft YaHei',sans-serif"

# What the scene is about, in both languages (checked on the folded scene and caption).
EATING = ("吃", "吞", "eat", "eats", "ate", "eating", "swallows", "swallowed", "lollipop", "棒棒糖")
FIGHTING = (
    "对决", "对战", "大战", "打", "揍", "比武", "擂台", "挑战", "巴掌", "fight", "battle", "bout",
    "duel", "vs", "versus", "against", "punch", "punches", "slap", "slaps", "ring", "fights",
)  # fmt: skip
FINISHING = ("绝招", "大招", "必杀", "降龙十巴掌", "拍飞", "最后一击", "finishing", "ultimate",
             "special move", "final blow", "knocks", "sends him flying")  # fmt: skip
SICKNESS = ("泻药", "过期", "拉肚子", "肚子疼", "肚子痛", "虚脱", "laxative", "expired",
            "stomach", "sick")  # fmt: skip
MEDICINE = ("药", "medicine", "pill", "bottle", "laxative")
WINNING = ("赢", "胜利", "获胜", "冠军", "win", "wins", "won", "winning", "victory", "champion")
SADNESS = ("哭", "难过", "伤心", "sad", "cries", "crying", "tears")
# A figure is sick when its state says so; a scene alone says so only for a cast of one.
RING = ("擂台", "武林大会", "比武", "ring", "tournament", "arena", "bout", "stage")
CLASSROOM = ("教室", "学校", "课堂", "黑板", "classroom", "school", "lesson", "blackboard")
VERSUS = re.compile(r"(?:对决|对战|大战|挑战|拍飞|打|揍|vs\.?|versus|against|fights?|hits?)\s*$")
FACES = (
    ("sick", ("狼狈", "虚脱", "难受", "sick", "nauseous")),
    ("proud", ("得意", "骄傲", "自豪", "proud", "smug", "cocky")),
    ("happy", ("开心", "高兴", "快乐", "兴奋", "happy", "glad", "joy", "excited", "cheerful")),
    (
        "sad",
        ("难过", "伤心", "悲伤", "沮丧", "失落", "哭", "累", "sad", "unhappy", "upset", "tired"),
    ),
    ("angry", ("生气", "愤怒", "恼火", "发火", "angry", "mad", "furious")),
    ("scared", ("害怕", "恐惧", "紧张", "scared", "afraid", "frightened", "nervous")),
)
SICK_BUFF = ("拉肚子", "虚脱", "肚子", "泻", "sick", "stomach")
NOTHING = ("", "无", "none", "-")


def _has(text: str, words: tuple[str, ...]) -> bool:
    """Whether the (folded) text has one of the words: Chinese ones anywhere, English ones
    as whole words ("ring" is not in "bring", "eat" not in "great")."""
    return _matcher(words).search(text) is not None


@functools.cache
def _matcher(words: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = [
        rf"\b{re.escape(w.strip())}\b" if w.strip().isascii() else re.escape(w) for w in words
    ]
    return re.compile("|".join(alternatives))


@dataclass
class Member:
    name: str
    look: Look
    state: dict[str, str]
    pose: Pose = field(default_factory=Pose)
    x: float = WIDTH / 2
    facing: int = 1  # 1: right, -1: left
    lift: float = 0.0  # up from the ground (a flying opponent)
    spin: float = 0.0  # degrees
    alone: bool = False  # the only one in the panel


def draw_panel(params: dict[str, Any]) -> str:
    """The panel's SVG for the render parameters ``prompt``, ``characters`` and ``seed``."""
    dice = Dice(panel_seed(params))
    prompt = str(params.get("prompt", ""))
    raw_state = params.get("characters") or {}
    # The look (a seed, a reference picture) is no part of what the figure shows or says.
    states = {
        str(name): {
            k: str(v)
            for k, v in value.items()
            if isinstance(v, str | int | float) and k not in LOOK_FIELDS
        }
        for name, value in raw_state.items()
        if isinstance(value, dict)
    }
    seeds = {str(name): own_seed(value) for name, value in raw_state.items()}
    script = parse(prompt)
    folded = f"{script.scene} {script.caption}".casefold()
    cast = _cast(script, states)
    hero, opponent = _stage(cast, script, folded, dice, seeds)
    frame = frame_for(dice, [_extent(m) for m in cast])

    caption_text = script.shown_caption  # named on the picture, never drawn on it
    # The stage stands where it stood when the lettering was drawn in the picture with no
    # caption and no bubble: the words are the studio's layer now (journal.pages).
    feet = max(338.0, MARGIN + 18 + frame.up(178))
    height = feet + 62
    scene = _scene_of(folded)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0f}" '
        f'viewBox="0 0 {WIDTH} {height:.0f}" font-family="{FONTS}" role="img" '
        f'aria-label="{attr(caption_text)}" data-scene="{scene}">',
        f"<title>{xml(caption_text)}</title>",
        # the stage: what the camera's framing zooms (name tags and text stay as they are)
        f'<g data-framing="{frame.name}"{frame.transform(feet)}>',
        _setting(scene, folded, feet, height, dice),
    ]
    if hero is not None and hero.pose.body == "fight" and opponent is not None:
        mid = (hero.x + opponent.x) / 2
        parts.append(
            f'<polygon points="{star(mid, feet - 120, 30, 12, 8)}" fill="#ffeb3b" '
            'stroke="#e65100" stroke-width="2"/>'
        )
    if hero is not None and hero.pose.body == "finish":
        parts.append(_speed_lines(hero, feet))
    for member in cast:
        parts.append(_placed(member, feet))
    if hero is not None and hero.pose.body == "finish":
        parts.append(_finishing_burst(hero, feet))
    parts.append("</g>")
    for member in cast:
        parts.append(_name_tag(member, feet, frame))
    parts.append(
        f'<text x="{WIDTH - 6}" y="{height - 5:.0f}" text-anchor="end" font-size="9" '
        'fill="#555">local renderer · offline</text>'
    )
    parts.append(f'<rect x="1" y="1" width="{WIDTH - 2}" height="{height - 2:.0f}" '
                 'fill="none" stroke="#111" stroke-width="3"/>')  # fmt: skip
    parts.append("</svg>")
    return "\n".join(p for p in parts if p)


# --- who is in the panel, and how they stand ---------------------------------------------


def _cast(script: Script, states: dict[str, dict[str, str]]) -> list[Member]:
    text = " ".join([script.scene, script.caption, *(name for name, _ in script.speech)])
    names = named_in(text)
    # names only the state knows (a cast of one's own), when the text names them
    for name in states:
        if name not in names and name and name in text:
            names.append(name)
    names.sort(key=lambda n: _first_spot(text, n))
    fight = _has(text.casefold(), FIGHTING + FINISHING)
    if states and not any(n in states for n in names) and (fight or not names):
        # someone lands the blow, or nobody is named: the state's cast is on stage
        names = [*(n for n in states if n not in names)][: 1 if names else MAX_CAST] + names
    return [Member(n, look_of(n), states.get(n, {})) for n in names[:MAX_CAST]]


def _first_spot(text: str, name: str) -> int:
    look = look_of(name)
    folded = text.casefold()
    spots = [folded.find(n.casefold()) for n in (name, *look.aliases)]
    return min((s for s in spots if s >= 0), default=len(text))


def _stage(
    cast: list[Member],
    script: Script,
    folded: str,
    dice: Dice,
    seeds: dict[str, int | None] | None = None,
) -> tuple[Member | None, Member | None]:
    """Pick the hero and the opponent, give everyone a pose, and place them. The seed
    (``dice``) moves each figure a step from its place and picks the way it strikes its
    pose, unless the character has a seed of its own (``seeds``), which then picks it;
    who stands where and faces whom stays what the scene says."""
    seeds = seeds or {}
    if not cast:
        return None, None
    speakers = [name for name, _ in script.speech]
    hero = next((m for m in cast if m.name in speakers), cast[0])
    if len(cast) > 1 and not _sick(hero) and any(_sick(m) for m in cast):
        hero = next(m for m in cast if _sick(m))  # whoever the state says is sick
    fight = _has(folded, FIGHTING) or _has(folded, FINISHING)
    opponent = None
    if fight and len(cast) > 1:
        others = [m for m in cast if m is not hero]
        opponent = next((m for m in others if _after_versus(folded, m)), others[0])
    hero.alone = len(cast) == 1
    for member in cast:
        own = seeds.get(member.name)
        variant = Dice(figure_seed(dice.seed, member.name, own)).number("pose", 0, VARIANTS - 1)
        member.pose = dataclasses.replace(_pose(member, hero, opponent, folded), variant=variant)
    order = [m for m in cast if m is not opponent]
    if opponent is not None:
        order = [hero, *[m for m in order if m is not hero], opponent]
    slots = {1: [300], 2: [210, 440], 3: [150, 320, 490], 4: [110, 250, 390, 530]}[len(order)]
    if opponent is not None and len(order) == 2:
        slots = [220, 420]
    steps = dice.numbers("steps", len(order), -24, 24)
    for member, x, step in zip(order, slots, steps, strict=True):
        member.x = x + step
        member.facing = 1 if x <= WIDTH / 2 or len(order) == 1 else -1
    if opponent is not None and opponent.pose.body == "knocked":
        opponent.x = 490 + dice.number("flight", -20, 20)
        opponent.lift, opponent.spin = dice.number("height", 36, 52), 28
    return hero, opponent


def _extent(member: Member) -> tuple[float, float, float]:
    """Where a figure's feet are, and its leftmost and rightmost x (a flying one's body
    reaches far to the right)."""
    s = member.look.scale
    right = 130 if member.pose.body == "knocked" else 60
    return member.x, member.x - 60 * s, member.x + right * s


def _after_versus(folded: str, member: Member) -> bool:
    spot = _first_spot(folded, member.name)
    return spot < len(folded) and bool(VERSUS.search(folded[max(0, spot - 12) : spot]))


def _sick(member: Member) -> bool:
    buff = member.state.get("buff", "").casefold()
    return _has(buff, SICK_BUFF) or _face_of(member) == "sick"


def _face_of(member: Member) -> str:
    mood = member.state.get("mood", "").casefold()
    return next((face for face, words in FACES if _has(mood, words)), "calm")


def _pose(member: Member, hero: Member, opponent: Member | None, folded: str) -> Pose:
    face = _face_of(member)
    buff = member.state.get("buff", "")
    lollipop = "棒棒糖" in buff or "lollipop" in buff.casefold()
    if _sick(member) or (member is hero and member.alone and _has(folded, SICKNESS)):
        return Pose("sick", "sick")
    if member is hero:
        if _has(folded, FINISHING):
            return Pose("finish", "fierce")
        if _has(folded, EATING):
            holds = "lollipop" if lollipop or _has(folded, ("棒棒糖", "lollipop")) else ""
            return Pose("eat", "happy" if face == "calm" else face, holds)
        if _has(folded, FIGHTING):
            return Pose("fight", face if face in ("angry", "scared") else "fierce")
        if face == "proud" or _has(folded, WINNING):
            return Pose("proud", "proud", "lollipop" if lollipop else "")
        if face == "sad" or _has(folded, SADNESS):
            return Pose("sad", "sad")
        return Pose("stand", face, "lollipop" if lollipop else "")
    if member is opponent:
        if hero.pose.body == "finish" or (_has(folded, FINISHING) and not _sick(hero)):
            return Pose("knocked", "dazed")
        return Pose("fight", face if face != "calm" else "angry")
    holds = "bottle" if member.look.kind == "elder" and _has(folded, MEDICINE) else ""
    if face == "sad":
        return Pose("sad", "sad", holds)
    if face == "proud":
        return Pose("proud", "proud", holds)
    return Pose("stand", "scared" if holds and _sick(hero) else face, holds)


def _placed(member: Member, feet: float) -> str:
    s = member.look.scale
    y = feet - member.lift
    where = f"translate({member.x:.0f},{y:.0f})"
    if member.spin:
        where += f" rotate({member.spin:.0f})"
    where += f" scale({s * member.facing:.2f},{s:.2f})"
    shadow = (
        f'<ellipse cx="{member.x:.0f}" cy="{feet:.0f}" rx="{34 * s:.0f}" ry="7" '
        'fill="#000" fill-opacity="0.18"/>'
    )
    return (
        f'{shadow}<g transform="{where}" data-character="{attr(member.name)}">'
        f"{title(member.name, member.state)}{figure(member.look, member.pose)}</g>"
    )


def _hand_of(hero: Member, feet: float) -> tuple[float, float]:
    s = hero.look.scale
    return hero.x + hero.facing * 96 * s, feet - 108 * s


def _speed_lines(hero: Member, feet: float) -> str:
    """Behind the hero: the strike's motion."""
    _, hy = _hand_of(hero, feet)
    back = -hero.facing
    return "".join(
        f'<path d="M {hero.x + back * 44:.0f} {hy + dy:.0f} l {back * 80} 0" stroke="#ff9800" '
        'stroke-width="4" stroke-linecap="round"/>'
        for dy in (-30, 0, 30)
    )


def _finishing_burst(hero: Member, feet: float) -> str:
    """At the hero's palm: a burst with the skill's name (the state's, else "!!")."""
    hx, hy = _hand_of(hero, feet)
    skill = hero.state.get("skill", "")
    words = skill if skill.casefold() not in NOTHING else "!!"
    fitted = fit(words, 96, 44, largest=16, smallest=9)
    return f'<polygon points="{star(hx, hy, 66, 40, 12)}" fill="#fff176" stroke="#e65100" ' + (
        'stroke-width="3"/>'
    ) + text_block(
        fitted, hx, hy - fitted.height / 2 - 2, anchor="middle",
        extra=' font-weight="bold" fill="#b71c1c"',
    )  # fmt: skip


def _name_tag(member: Member, feet: float, frame: Frame) -> str:
    """Under the figure's feet, where the camera shows them: its name and its buff."""
    name = fit(member.name, 130, 18, largest=13, smallest=9)
    w = max(name.width + 14, 40)
    x = frame.x(member.x)
    y = feet + 8
    out = (
        f'<rect x="{x - w / 2:.1f}" y="{y:.0f}" width="{w:.1f}" '
        f'height="{name.height + 6:.1f}" rx="6" fill="#fff" fill-opacity="0.9" '
        'stroke="#222" stroke-width="1.2"/>'
        + text_block(name, x, y + 2, anchor="middle", extra=' font-weight="bold"')
    )
    buff = member.state.get("buff", "")
    if buff.casefold() not in NOTHING:
        badge = fit(buff, 140, 26, largest=11, smallest=8)
        out += text_block(badge, x, y + name.height + 8, anchor="middle", extra=' fill="#333"')
    return out


# --- the setting -------------------------------------------------------------------------


def _scene_of(folded: str) -> str:
    """The one word naming the setting drawn (docs/ARCHITECTURE.md §13): ``ring``, ``classroom``, or
    ``default`` (outdoors) when the scene asks for neither."""
    if _has(folded, RING):
        return "ring"
    if _has(folded, CLASSROOM):
        return "classroom"
    return "default"


def _setting(scene: str, folded: str, feet: float, height: float, dice: Dice) -> str:
    """The background of ``scene``; the seed (``dice``) places its details: the crowd and
    its camera flashes in a ring, the chalk drawing and the clock in a classroom, the sun,
    the clouds and the hills outdoors."""
    hue = int(hashlib.sha256(folded.encode()).hexdigest()[:4], 16) % 60 + 180  # blues
    floor = feet - 26
    sky = (
        '<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">'
        f'<stop offset="0" stop-color="hsl({hue},70%,84%)"/>'
        f'<stop offset="1" stop-color="hsl({hue + 20},60%,93%)"/></linearGradient></defs>'
        f'<rect width="{WIDTH}" height="{height:.0f}" fill="url(#sky)"/>'
    )
    if scene == "ring":
        return sky + _ring(floor, height, dice)
    if scene == "classroom":
        return _classroom(floor, height, dice)
    return sky + _outdoors(floor, height, dice)


def _ring(floor: float, height: float, dice: Dice) -> str:
    rows = dice.numbers("crowd", 16, 0, 16)
    hues = dice.numbers("crowd-hues", 16, 0, 359)
    crowd = "".join(
        f'<circle cx="{24 + i * 40}" cy="{floor - 156 + rows[i]:.0f}" r="14" '
        f'fill="hsl({hues[i]},30%,55%)" fill-opacity="0.5"/>'
        for i in range(16)
    )
    spots = dice.numbers("flashes", 6, 0, 580)
    flashes = "".join(  # a camera's flash: a four-pointed sparkle in the crowd
        f'<path d="M {30 + spots[i]} {floor - 185 + spots[i + 3] % 40:.0f} l 3 6 l 6 3 l -6 3 '
        'l -3 6 l -3 -6 l -6 -3 l 6 -3 Z" fill="#fffde7" stroke="#fbc02d" stroke-width="1"/>'
        for i in range(3)
    )
    ropes = "".join(
        f'<path d="M 20 {floor - d:.0f} L {WIDTH - 20} {floor - d:.0f}" stroke="#d32f2f" '
        'stroke-width="4"/>'
        for d in (40, 80, 120)
    )
    return (
        crowd + flashes + f'<rect y="{floor:.0f}" width="{WIDTH}" height="{height - floor:.0f}" '
        'fill="#5d7fb8"/>'
        + f'<rect x="14" y="{floor - 130:.0f}" width="10" height="130" fill="#eceff1" '
        'stroke="#222"/>' + f'<rect x="{WIDTH - 24}" y="{floor - 130:.0f}" width="10" height="130" '
        'fill="#eceff1" stroke="#222"/>' + ropes
    )


# What is chalked on the blackboard, drawn from (0, 0) at the board's top left corner.
CHALK = (
    "M 30 40 q 40 -20 80 0 M 150 60 l 120 0",  # a wave and a line
    "M 60 20 l 12 30 l 32 0 l -26 18 l 10 30 l -28 -18 l -28 18 l 10 -30 l -26 -18 l 32 0 Z",
    "M 40 90 l 0 -40 l 40 -30 l 40 30 l 0 40 Z M 70 90 l 0 -22 l 20 0 l 0 22",  # a house
    "M 100 60 m -20 0 a 20 20 0 1 0 40 0 a 20 20 0 1 0 -40 0 M 100 20 l 0 -12 M 100 100 "
    "l 0 12 M 60 60 l -12 0 M 140 60 l 12 0",  # a sun
)


def _classroom(floor: float, height: float, dice: Dice) -> str:
    board_y = floor - 230
    shift = dice.number("chalk-x", 0, 150)
    drawing = dice.choice("chalk", CHALK)
    clock_x = dice.choice("clock-side", (76, WIDTH - 76))
    hour, minute = dice.number("hour", 0, 11), dice.number("minute", 0, 59)
    return (
        f'<rect width="{WIDTH}" height="{height:.0f}" fill="#f3e5ab"/>'
        f'<rect x="150" y="{board_y:.0f}" width="340" height="130" fill="#2e5d3a" '
        'stroke="#6d4c41" stroke-width="8"/>'
        f'<path d="{drawing}" transform="translate({150 + shift},{board_y:.0f})" '
        'stroke="#e8f5e9" stroke-width="3" fill="none"/>'
        f'<g transform="translate({clock_x},{board_y + 36:.0f})">'
        '<circle r="24" fill="#fff" stroke="#5d4037" stroke-width="4"/>'
        f'<path d="M 0 0 L 0 -13" transform="rotate({hour * 30 + minute // 2})" '
        'stroke="#222" stroke-width="3.5" stroke-linecap="round"/>'
        f'<path d="M 0 0 L 0 -19" transform="rotate({minute * 6})" stroke="#222" '
        'stroke-width="2" stroke-linecap="round"/></g>'
        f'<rect y="{floor:.0f}" width="{WIDTH}" height="{height - floor:.0f}" fill="#a1887f"/>'
    )


def _cloud(x: int, y: float) -> str:
    return (
        f'<g fill="#fff" fill-opacity="0.9"><ellipse cx="{x}" cy="{y:.0f}" rx="30" ry="13"/>'
        f'<ellipse cx="{x - 20}" cy="{y + 5:.0f}" rx="18" ry="10"/>'
        f'<ellipse cx="{x + 22}" cy="{y + 4:.0f}" rx="20" ry="11"/></g>'
    )


def _outdoors(floor: float, height: float, dice: Dice) -> str:
    sun_x, sun_up = dice.number("sun", 50, WIDTH - 50), dice.number("sun-height", 170, 230)
    clouds = dice.numbers("clouds", 4, 40, WIDTH - 40)
    left, right = dice.numbers("hills", 2, 30, 90)
    crest = dice.number("crest", 120, 200)
    return (
        f'<circle cx="{sun_x}" cy="{floor - sun_up:.0f}" r="30" fill="#ffe082"/>'
        + _cloud(clouds[0], floor - 250 + clouds[2] % 40)
        + _cloud(clouds[1], floor - 190 + clouds[3] % 40)
        + f'<path d="M 0 {floor:.0f} Q {crest} {floor - left:.0f} 320 {floor:.0f} '
        f'Q {WIDTH - crest} {floor - right:.0f} {WIDTH} {floor:.0f} Z" fill="#9ccc65"/>'
        + f'<rect y="{floor:.0f}" width="{WIDTH}" height="{height - floor:.0f}" fill="#7cb342"/>'
    )

"""Draws one comic panel as SVG from its prompt (a panel script) and the characters' state.

Deterministic: the same prompt, state and seed give the same bytes (the render service
stores the first result per key and compares parameters, so a repeat must be the same
panel). Another seed draws the same script another way (``variation``): where the figures
stand, how they strike their poses, how close the camera frames them and the details of
the setting; a regenerate, which renders under a new key and so a new seed, shows it.
Everything that came from a user, a model or the state is escaped. The picture:

* the setting from the scene (a tournament ring, a classroom, or outdoors), named on the
  SVG root's ``data-scene`` (``ring``, ``classroom``, ``default``);
* the cast: the characters the scene, the speech and the script's actor and target name,
  each once, resolved by the session's one cast (``journal.cast``: "Pig-Man", 猪猪侠 and
  GG Bond are one character), else the characters in the state; each built-in one with
  its own silhouette, colours and accessory (``cast.BOOK``);
* poses and faces from the state (a sick buff doubles a figure over whatever the scene
  says; the mood sets the face) and from the scene (eating, fighting, the finishing move,
  winning, sadness); in a fight the opponent faces the hero, and a finishing move sends
  the opponent flying. The script's ``actor`` strikes and its ``target`` is the one hit
  and sent flying (``data-role`` ``actor`` / ``target`` and ``data-flying`` on the figure);
* no caption and no speech bubbles: those are the studio's lettering layer, drawn over
  every backend's picture in the page and in exports (``journal.pages``), so they can be
  edited without drawing the panel again. The caption still names the picture (its SVG
  title and label); the name tags and a finishing move's burst are part of the art.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from jaiweb.render.panel import props, settings, vocabulary
from jaiweb.render.panel.cast import (
    VARIANTS,
    Look,
    Pose,
    figure,
    look_of,
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
from journal.cast import Ambiguous, Cast

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
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


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
    role: str = ""  # "actor" (who strikes) or "target" (who is hit), when there is a fight


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
    staging = script.staging.merged(vocabulary.read(folded))
    scene = staging.setting or vocabulary.DEFAULT_SETTING
    book = Cast.of(
        {str(n): v for n, v in raw_state.items() if isinstance(v, dict)},
        "zh" if CJK.search(prompt) else "en",
    )
    cast = _cast(script, states, book)
    hero, opponent = _stage(cast, script, folded, dice, seeds, book)
    props.stage(staging.actions, scene, cast, hero, opponent)
    focus = _focus(cast, hero, opponent, staging.framing)
    frame = frame_for(dice, [_extent(m) for m in focus], staging.framing)

    caption_text = script.shown_caption  # named on the picture, never drawn on it
    # The stage stands where it stood when the lettering was drawn in the picture with no
    # caption and no bubble: the words are the studio's layer now (journal.pages).
    feet = max(338.0, MARGIN + 18 + frame.up(178))
    height = feet + 62
    cjk = any("\u4e00" <= c <= "\u9fff" for c in folded)
    time, weather = staging.time or "day", staging.weather or "clear"

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0f}" '
        f'viewBox="0 0 {WIDTH} {height:.0f}" font-family="{FONTS}" role="img" '
        f'aria-label="{attr(caption_text)}" data-scene="{scene}" data-time="{time}" '
        f'data-weather="{weather}">',
        f"<title>{xml(caption_text)}</title>",
        # the stage: what the camera's framing zooms (name tags and text stay as they are)
        f'<g data-framing="{frame.name}"{frame.transform(feet)}>',
        settings.backdrop(scene, staging.time, staging.weather, folded, feet, height, dice),
        props.behind(staging.props, cast, hero, feet, dice),
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
    parts.append(settings.foreground(scene, feet, height, dice))
    parts.append(props.in_front(staging.props, staging.actions, scene, cast, hero, opponent,
                                feet, height, dice, cjk))  # fmt: skip
    parts.append(settings.weather_over(scene, staging.weather, height, dice))
    parts.append("</g>")
    for member in cast:
        if 0 <= frame.x(member.x) <= WIDTH:  # a close-up may leave a figure out of the shot
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


def _cast(script: Script, states: dict[str, dict[str, str]], book: Cast) -> list[Member]:
    """Who is drawn: each character the script names once, by the one cast's names (the
    actor and the target first, where the text does not name them)."""
    text = " ".join([script.scene, script.caption, *(name for name, _ in script.speech)])
    names = book.named(text)
    for role in (script.actor, script.target):
        name = _resolve(book, role)
        if name and name not in names:
            names.append(name)
    names.sort(key=lambda n: book.first_spot(text, n))
    fight = _has(text.casefold(), FIGHTING + FINISHING)
    if states and not any(n in states for n in names) and (fight or not names):
        # someone lands the blow, or nobody is named: the state's cast is on stage
        names = [*(n for n in states if n not in names)][: 1 if names else MAX_CAST] + names
    return [Member(n, look_of(n, book), states.get(n, {})) for n in names[:MAX_CAST]]


def _resolve(book: Cast, name: str) -> str | None:
    """The character a script's role line names (None for nobody, or for two)."""
    try:
        return book.resolve(name)
    except Ambiguous:
        return None


def _stage(
    cast: list[Member],
    script: Script,
    folded: str,
    dice: Dice,
    seeds: dict[str, int | None] | None = None,
    book: Cast | None = None,
) -> tuple[Member | None, Member | None]:
    """Pick the hero and the opponent, give everyone a pose, and place them.

    The seed (``dice``) moves each figure a step from its place and picks the way it strikes
    its pose. A character with a seed of its own in ``seeds`` takes the way from that seed
    instead. Who stands where and who faces whom stay what the scene says."""
    seeds = seeds or {}
    book = book or Cast.of({})
    if not cast:
        return None, None
    by_name = {m.name: m for m in cast}
    actor = by_name.get(_resolve(book, script.actor) or "")
    target = by_name.get(_resolve(book, script.target) or "")
    speakers = [name for name, _ in script.speech]
    hero = actor or next((m for m in cast if m.name in speakers), cast[0])
    if len(cast) > 1 and not _sick(hero) and any(_sick(m) for m in cast):
        hero = next(m for m in cast if _sick(m))  # whoever the state says is sick
    fight = _has(folded, FIGHTING) or _has(folded, FINISHING)
    opponent = None
    if target is not None and target is not hero and (fight or actor is not None):
        opponent = target  # the script says who is hit
    elif fight and len(cast) > 1:
        others = [m for m in cast if m is not hero]
        opponent = next((m for m in others if _after_versus(folded, m, book)), others[0])
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
    if opponent is not None or hero is actor:
        hero.role = "actor"
    if opponent is not None:
        opponent.role = "target"
    return hero, opponent


def _focus(
    cast: list[Member], hero: Member | None, opponent: Member | None, framing: str
) -> list[Member]:
    """Who the camera must keep in the shot: the hero in a close-up, the hero and the
    opponent (or the next one) in a two-shot, else everyone."""
    if hero is None or framing not in ("close-up", "two-shot"):
        return cast
    if framing == "close-up":
        return [hero]
    other = opponent or next((m for m in cast if m is not hero), None)
    return [hero] if other is None else [hero, other]


def _extent(member: Member) -> tuple[float, float, float]:
    """Where a figure's feet are, and its leftmost and rightmost x (a flying one's body
    reaches far to the right)."""
    s = member.look.scale
    right = 130 if member.pose.body == "knocked" else 60
    return member.x, member.x - 60 * s, member.x + right * s


def _after_versus(folded: str, member: Member, book: Cast) -> bool:
    spot = book.first_spot(folded, member.name)
    return spot < len(folded) and bool(VERSUS.search(folded[max(0, spot - 12) : spot]))


def _sick(member: Member) -> bool:
    buff = member.state.get("buff", "").casefold()
    return _has(buff, SICK_BUFF) or _face_of(member) == "sick"


def _face_of(member: Member) -> str:
    mood = member.state.get("mood", "").casefold()
    return next((face for face, words in FACES if _has(mood, words)), "calm")


def _pose(member: Member, hero: Member, opponent: Member | None, folded: str) -> Pose:
    """A figure's pose and face: the state first (a sick figure doubles over), then the
    scene's action for the hero, the hit or the flight for the opponent."""
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
    role = f' data-role="{member.role}"' if member.role else ""
    flying = ' data-flying="true"' if member.pose.body == "knocked" else ""
    return (
        f'{shadow}<g transform="{where}" data-character="{attr(member.name)}"{role}{flying}>'
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

"""The offline director's keyword table: which words in a prompt mean which intent.

Checked in order; the first rule whose keywords the prompt contains (ignoring case), and
none of its exclusions, decides. The user documentation is ``docs/DIRECTOR.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHARACTERS = ("猪猪侠", "超人强", "菲菲", "小呆呆", "波比", "迷糊老师")
DEFAULT_CHARACTER = "猪猪侠"


@dataclass(frozen=True)
class Rule:
    """One row of the keyword table: when it applies, what it calls, how it is announced."""

    name: str
    keywords: tuple[str, ...]
    excludes: tuple[str, ...] = ()
    state: tuple[tuple[str, str], ...] = ()  # set_character_state fields, in order
    actions: tuple[str, ...] = ("draw",)  # "state" | "draw" | "publish" | "panels"
    intro_zh: str = ""  # {c}: the character
    intro_en: str = ""

    def matches(self, folded: str) -> bool:
        return any(k in folded for k in self.keywords) and not any(
            x in folded for x in self.excludes
        )


RULES: tuple[Rule, ...] = (
    Rule(
        "laxative",
        ("泻药", "过期", "拿错", "laxative"),
        state=(("buff", "拉肚子虚脱(捂肚子冒冷汗)"), ("skill", "无"), ("mood", "狼狈")),
        actions=("state", "draw"),
        intro_zh="糟糕，{c}吃下的是过期泻药丸：拉肚子虚脱，招式全没了！",
        intro_en="Oops, {c} got an expired laxative pill: weak, sweating, no skill left!",
    ),
    Rule(
        "lollipop",
        ("棒棒糖", "lollipop"),
        excludes=("过期", "泻药", "拿错"),
        state=(("buff", "超级棒棒糖(功夫大师)"), ("skill", "降龙十巴掌"), ("mood", "得意")),
        actions=("state", "draw"),
        intro_zh="{c}吃下超级棒棒糖，变身功夫大师，学会了降龙十巴掌！",
        intro_en="{c} eats the super lollipop and becomes a kung-fu master (降龙十巴掌)!",
    ),
    Rule(
        "finishing",
        ("降龙十巴掌", "绝招", "finishing move"),
        actions=("draw",),
        intro_zh="绝招时刻！角色就按这条分支上现在的状态来画，不改状态。",
        intro_en="Finishing move! The characters are drawn as this branch says; no state change.",
    ),
    Rule("publish", ("发布", "publish"), actions=("publish",)),
    Rule("panels", ("分镜列表", "list panels"), actions=("panels",)),
)
DEFAULT_RULE = Rule("scene", (), actions=("draw",))

_NAMES = "|".join(CHARACTERS)
EATER = re.compile(
    rf"({_NAMES})(?:[^\s，。！？、,.!?；;：:]{{0,2}}?[吃吞]"
    r"|\s*(?:eats|ate|eat|swallows|swallowed|takes|took)\b)",
    re.IGNORECASE,
)


def character_in(text: str) -> str:
    """The one named right before an eating word, else the first one named, else the hero."""
    eater = EATER.search(text)
    if eater:
        return eater.group(1)
    named = [(text.find(name), name) for name in CHARACTERS if name in text]
    return min(named)[1] if named else DEFAULT_CHARACTER

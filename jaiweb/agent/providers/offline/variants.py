"""The offline director's variants: "draw 3 variants of …" / "画3个版本：…".

``requested`` finds the request in a prompt and gives the prompt back with the request
read as a plain drawing request ("draw …", "画…"), so the keyword table and the commands
read the rest as they always do. ``expand`` then turns each panel the plan draws into that
many ``generate_image`` calls with the same prompt and a ``variants`` count: one set,
approved once for its whole cost (``journal/variants.py``).
"""

from __future__ import annotations

import re
from typing import Any

from journal.variants import VARIANTS_MAX, VARIANTS_MIN

GENERATE = "generate_image"

NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6,
    "七": 7, "八": 8, "九": 9, "十": 10,
}  # fmt: skip

_EN_COUNT = r"(?P<n>\d{1,3}|one|two|three|four|five|six)"
_ZH_COUNT = r"(?P<n>\d{1,3}|[一二两俩三四五六七八九十])"
EN = re.compile(
    r"\b(?:(?:please\s+)?(?:draw|make|give\s+me|render|sketch|paint)\s+(?:me\s+)?)?"
    + _EN_COUNT
    + r"\s+(?:different\s+)?(?:variants?|versions?|takes|options)\b"
    r"(?:\s+of(?:\s+(?:this|the|a)\s+panel)?)?\s*[:：,，]?\s*",
    re.IGNORECASE,
)
ZH = re.compile(
    r"(?:画|来|出)?\s*" + _ZH_COUNT + r"\s*(?:个|张|幅|种|格)?\s*(?:不同的?)?\s*(?:版本|变体|候选)"
    r"\s*[:：,，]?\s*"
)

TEXT = {
    "zh": {
        "variants": "这一格画 {n} 个版本，每个版本各画各的、各收各的费；画好后在分镜条上用 "
        "「‹ 1/{n} ›」挑一个给读者看，挑选不花积分。{n} 个版本只需批准一次",
        "range": "一格可以画 {low} 到 {high} 个版本，你要的是 {n} 个。"
        "请重新说，比如「画3个版本：猪猪侠吃棒棒糖」",
    },
    "en": {
        "variants": "I will draw {n} variants of this panel, each drawn and charged on its "
        'own; then pick the one readers see with the "‹ 1/{n} ›" switcher on the strip '
        "(choosing is free). One approval covers all {n}",
        "range": "A panel can have {low} to {high} variants, and you asked for {n}. "
        'Ask again, for example "draw 3 variants of Pig-Man eating the lollipop"',
    },
}


def requested(text: str) -> tuple[int | None, str]:
    """The variants count a prompt asks for (None: it asks for none), and the prompt with
    the request read as a plain drawing request."""
    for pattern, draw in ((EN, "draw "), (ZH, "画")):
        found = pattern.search(text)
        if found is None:
            continue
        word = found["n"].lower()
        count = int(word) if word.isdigit() else NUMBERS[word]
        rest = text[: found.start()] + draw + text[found.end() :]
        return count, rest
    return None, text


def in_range(count: int) -> bool:
    return VARIANTS_MIN <= count <= VARIANTS_MAX


def out_of_range(count: int, lang: str) -> str:
    return TEXT[lang]["range"].format(low=VARIANTS_MIN, high=VARIANTS_MAX, n=count)


def expand(calls: list[tuple[str, dict[str, Any]]], count: int) -> list[tuple[str, dict]]:
    """Each drawing of ``calls`` as ``count`` calls with the same prompt and the count."""
    out: list[tuple[str, dict[str, Any]]] = []
    for tool, args in calls:
        if tool == GENERATE:
            out += [(tool, {**args, "variants": count}) for _ in range(count)]
        else:
            out.append((tool, args))
    return out


def announce(lang: str, count: int) -> str:
    return TEXT[lang]["variants"].format(n=count)

"""Reads a prompt without commands: the keyword table (English and Chinese) → its intent.

``RULES`` is checked in order; the first rule that matches decides. A rule matches when
the prompt has one of its ``words`` (when it has any), one word of each group in
``also``, and none of its ``unless`` words. Chinese words match anywhere, English ones
as whole words, ignoring case. A polite request ("Can you …?", "请…") counts as a
request, not a question. The user documentation of the table is ``docs/DIRECTOR.md``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from jaiweb.render.panel.cast import BOOK

CHARACTERS = tuple(look.name for look in BOOK)  # 猪猪侠, 超人强, 菲菲, 小呆呆, 波比, 迷糊老师
DEFAULT_CHARACTER = "猪猪侠"
ENGLISH_NAMES = {
    "猪猪侠": "Pig-Man",
    "超人强": "Super Strong",
    "菲菲": "Feifei",
    "小呆呆": "Daidai",
    "波比": "Bobby",
    "迷糊老师": "Teacher Mihu",
}
ALIASES = {look.name: look.aliases for look in BOOK}
PRONOUNS = ("him", "her", "he", "she", "his", "他", "她")

# --- word groups -------------------------------------------------------------------------

# fmt: off
UNDO = ("undo", "go back", "rewind", "revert", "take back", "take it back", "step back",
        "back up", "roll back", "撤销", "撤回", "返回", "回退", "退回", "上一步", "后退", "倒回")
HOWTO = ("how do i", "how can i", "how to", "how do you", "怎么用", "怎么做",
         "怎么画", "怎么发布", "怎么改", "怎么设置", "怎么撤销", "如何", "怎样才能")
PUBLISH = ("publish", "post it", "post the panel", "post this panel", "release the panel",
           "发布", "发表", "发到剧集", "公开这", "上传到剧集")
LIST = ("list panels", "list the panels", "list all panels", "list my panels", "show panels",
        "show the panels", "show me the panels", "show all panels", "which panels",
        "what panels", "how many panels", "panels so far", "分镜列表", "列出分镜",
        "列出所有分镜", "所有分镜", "有哪些分镜", "看看分镜", "几格分镜", "多少格", "画了哪些")
STATE = ("state", "status", "buff", "skill", "skills", "mood", "feeling", "feel", "doing",
         "状态", "心情", "招式", "技能", "怎么样")
LAXATIVE = ("泻药", "过期", "拿错", "吃错药", "拉肚子", "肚子疼", "肚子痛", "laxative",
            "laxatives", "expired", "wrong medicine", "wrong pill", "wrong bottle",
            "stomach ache", "stomachache", "bad medicine", "food poisoning")
LOLLIPOP = ("棒棒糖", "lollipop", "lollipops", "lolly")
FINISHING = ("降龙十巴掌", "绝招", "大招", "必杀", "终极", "最后一击", "杀手锏",
             "finishing move", "finishing blow", "ultimate move", "ultimate attack",
             "special move", "signature move", "final blow", "final move", "super move",
             "dragon slap", "dragon-subduing")
MOODS = {  # a kind of mood: the words for it, and the mood set in Chinese
    "sad": (("sad", "unhappy", "upset", "gloomy", "miserable", "cry", "crying",
             "难过", "伤心", "悲伤", "沮丧", "失落", "哭"), "难过"),
    "happy": (("happy", "glad", "cheerful", "joyful", "excited",
               "开心", "高兴", "快乐", "兴奋"), "开心"),
    "angry": (("angry", "mad", "furious", "grumpy", "生气", "愤怒", "恼火", "发火"), "生气"),
    "proud": (("proud", "smug", "cocky", "得意", "骄傲", "自豪"), "得意"),
    "scared": (("scared", "afraid", "frightened", "nervous", "害怕", "恐惧", "紧张"), "害怕"),
    "tired": (("tired", "exhausted", "sleepy", "累", "疲惫", "困"), "疲惫"),
    "calm": (("calm", "relaxed", "平静", "冷静"), "平静"),
}
MOOD_WORDS = (*(w for words, _ in MOODS.values() for w in words), "mood", "心情")
MOOD_CUES = ("make", "makes", "let", "set", "turn", "turns", "feel", "feels", "is", "gets",
             "becomes", "looks", "looking", "look", "mood",
             "让", "使", "把", "变得", "感到", "觉得", "心情", "很", "变", "有点")
GREETING = ("hi", "hello", "hey", "yo", "greetings", "good morning", "good evening",
            "good afternoon", "你好", "您好", "嗨", "哈喽", "早上好", "晚上好", "大家好")
HELP = ("help", "what can you do", "how does this work", "commands", "instructions",
        "get started", "帮助", "帮忙", "你能做什么", "你会什么", "怎么用", "说明", "指令",
        "命令", "教我")
DRAW = ("draw", "draws", "sketch", "paint", "illustrate", "render", "picture of",
        "next panel", "new panel", "another panel", "a panel", "panel:", "画", "绘",
        "来一格", "下一格", "再来一格", "分镜：", "分镜:")
FIGHT = ("对决", "对战", "大战", "比武", "打", "揍", "拍飞", "挑战", "vs", "versus", "against",
         "fight", "fights", "fighting", "battle", "battles", "duel", "faces", "punch", "slap",
         "slaps", "hits", "knocks")
EATING = ("吃", "吞", "eats", "eat", "ate", "eating", "swallows", "swallowed", "takes", "took")
GIVING = ("gives", "give", "gave", "hands", "handed", "feeds", "fed", "给", "喂")
# fmt: on
QUESTION_START = re.compile(
    r"^\s*(?:what|what's|whats|which|who|whose|where|why|when|how|how's|is|are|was|were|"
    r"does|do|did|has|have)\b",
    re.IGNORECASE,
)
QUESTION_ZH = re.compile(
    r"(?:吗|呢|么)\s*[。.!！]*\s*$|什么|是不是|有没有|怎么样|哪|为什么|多少|几个|几格"
)
POLITE = re.compile(
    r"^\s*(?:(?:hi|hello|hey)\b[\s,!.]*)?(?:can you|could you|would you|will you|please|"
    r"请你|请|麻烦你|麻烦|帮我|能不能|能否|可以)\s*",
    re.IGNORECASE,
)  # fmt: skip

# The words a scene may start with that are the user's instruction, not the scene.
INSTRUCTION = re.compile(
    r"^\s*(?:(?:please|can you|could you|help me|now|ok(?:ay)?|next|then|and)\s*,?\s*)*"
    r"(?:(?:draw|sketch|paint|illustrate|render|show|make)\s+(?:me\s+|us\s+)?)"
    r"(?:(?:a|an|the|one|another|one more|the next|a new)\s+)?"
    r"(?:(?:new|comic|next|last)\s+)*(?:(?:panel|picture|image|frame|scene|page)s?\b)?"
    r"\s*(?:of|where|with|in which|showing|that shows|:|：|-|—)?\s*"
    r"|^\s*(?:请|帮我|给我|再|先|接着|然后)*(?:画|绘|来)(?![得了着过面出])(?:一|1)?(?:张|格|幅|个)?"
    r"(?:新的)?(?:分镜|图|画面|漫画)?\s*[：:，,]?\s*"
    r"|^\s*(?:下一格|再来一格|新的一格|来一格)(?:分镜)?\s*[：:，,]?\s*",
    re.IGNORECASE,
)  # fmt: skip
TRIVIAL_SCENE = re.compile(
    r"^(?:(?:a|an|the|my|me|us|some|something|one|comic|comics|panel|panels|picture|story|"
    r"episode|for|with|it|this|that|up)\s*)*$|^(?:漫画|一格|一张|分镜|图|东西|故事|一集)*$",
    re.IGNORECASE,
)  # fmt: skip


# --- the table ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One row of the keyword table: when it applies and what the director does then.

    ``question``: True, the prompt must be a question; False, it must not; None, either.
    ``actions``, in order: ``undo`` ``help`` ``publish`` ``panels`` ``answer_state``
    ``state`` (the rule's ``state`` fields) ``mood`` ``draw`` ``answer`` ``offer``. Only
    ``draw`` costs credits.
    """

    name: str
    words: tuple[str, ...] = ()
    also: tuple[tuple[str, ...], ...] = ()
    unless: tuple[str, ...] = ()
    question: bool | None = None
    actions: tuple[str, ...] = ()
    state: tuple[tuple[str, str], ...] = ()  # set_character_state fields, in order

    def matches(self, folded: str, question: bool) -> bool:
        return (
            (not self.words or _has(folded, self.words))
            and all(_has(folded, group) for group in self.also)
            and not (self.unless and _has(folded, self.unless))
            and (self.question is None or self.question == question)
        )


NAMED = tuple(CHARACTERS) + tuple(a for aliases in ALIASES.values() for a in aliases)
LAXATIVE_STATE = (("buff", "拉肚子虚脱(捂肚子冒冷汗)"), ("skill", "无"), ("mood", "狼狈"))
KUNG_FU_STATE = (("buff", "超级棒棒糖(功夫大师)"), ("skill", "降龙十巴掌"), ("mood", "得意"))
RULES: tuple[Rule, ...] = (
    Rule("undo", UNDO, unless=DRAW, actions=("undo",)),
    Rule("howto", HOWTO, actions=("help",)),
    Rule("publish", PUBLISH, actions=("publish",)),
    Rule("panels", LIST, actions=("panels",)),
    Rule("state_question", STATE + MOOD_WORDS, question=True, actions=("answer_state",)),
    Rule("laxative", LAXATIVE, actions=("state", "draw"), state=LAXATIVE_STATE),
    Rule("lollipop", LOLLIPOP, unless=LAXATIVE, actions=("state", "draw"), state=KUNG_FU_STATE),
    Rule("finishing", FINISHING, actions=("draw",)),
    Rule("mood", MOOD_WORDS, also=(MOOD_CUES,), question=False, actions=("mood",)),
    Rule("help", GREETING + HELP, unless=DRAW + NAMED, actions=("help",)),
    Rule("question", question=True, actions=("answer",)),
    Rule("draw", DRAW, actions=("draw",)),
    Rule("scene", NAMED, actions=("draw",)),
)
UNSURE = Rule("unsure", actions=("offer",))


@dataclass(frozen=True)
class Reading:
    """What a prompt asks for, as the table reads it."""

    rule: Rule
    character: str  # who it is about
    opponent: str | None  # who they fight, when someone else is named
    mood: str | None  # for the mood rule: the mood to set, in the narration's language
    scene: str  # the prompt without the instruction words ("Draw a panel: …")
    draws_too: bool  # a mood change that also asks for a panel


def read(text: str, lang: str, last_character: str | None = None) -> Reading:
    """The intent of a prompt without command lines."""
    request = request_of(text)
    folded = request.casefold()
    question = is_question(request)
    rule = next((r for r in RULES if r.matches(folded, question)), UNSURE)
    character = character_in(text, last_character)
    mood = mood_in(text, lang) if rule.name == "mood" else None
    return Reading(
        rule=rule,
        character=character,
        opponent=opponent_in(text, character),
        mood=mood,
        scene=scene_of(request),
        draws_too=rule.name == "mood" and _has(folded, DRAW),
    )


def request_of(text: str) -> str:
    """A polite request ("Can you make him sad?", "请画…吗") without the politeness, so it
    reads as the request it is rather than as a question."""
    match = POLITE.match(text)
    if match is None:
        return text
    rest = text[match.end() :].strip()
    return re.sub(r"(?:吗|呢)?\s*[?？]+\s*$|吗\s*$", "", rest)


def is_question(text: str) -> bool:
    """Ends with a question mark, starts with a question word, or asks in Chinese."""
    text = text.strip()
    return (
        text.endswith(("?", "？"))
        or QUESTION_START.match(text) is not None
        or QUESTION_ZH.search(text) is not None
    )


def scene_of(text: str) -> str:
    """The scene a prompt describes, without the instruction around it ("" when the prompt
    is all instruction, like "画一格")."""
    scene = " ".join(text.split())
    stripped = INSTRUCTION.sub("", scene, count=1).strip()
    return stripped[:1].upper() + stripped[1:]


def is_trivial_scene(scene: str) -> bool:
    """Nothing to draw in it ("a comic", "一格"): the director asks instead."""
    return bool(TRIVIAL_SCENE.match(re.sub(r"[\s,.!?，。！？:：]+", " ", scene).strip()))


def named(text: str) -> list[str]:
    """The known characters a text names (by name or English alias), in order."""
    folded = text.casefold()
    spots = []
    for name in CHARACTERS:
        found = [_spot(folded, w) for w in (name, *ALIASES[name])]
        found = [f for f in found if f >= 0]
        if found:
            spots.append((min(found), name))
    return [name for _, name in sorted(spots)]


def character_in(text: str, last: str | None = None) -> str:
    """Who the prompt is about: the one who eats, else the one given something, else the
    first one named who is not the giver, else (for "him"/"her") the one the conversation
    last changed, else the hero."""
    folded = text.casefold()
    names = named(text)
    for name in names:
        for word in (name, *ALIASES[name]):
            if _near(folded, word.casefold(), EATING, after=True):
                return name
    for name in names:
        for word in (name, *ALIASES[name]):
            if _near(folded, word.casefold(), GIVING, after=False):
                return name
    givers = {
        name
        for name in names
        for word in (name, *ALIASES[name])
        if _near(folded, word.casefold(), GIVING, after=True)
    }
    fought = {
        n
        for n in names
        for word in (n, *ALIASES[n])
        if _near(folded, word.casefold(), FIGHT, after=False)
    }
    takers = [n for n in names if n not in givers and n not in fought]
    if takers:
        return takers[0]
    if last and _has(folded, PRONOUNS):
        return last
    return DEFAULT_CHARACTER


def opponent_in(text: str, character: str) -> str | None:
    """Someone else named in a fight (the one after 对决 / vs / against …), else anyone else
    named, else nobody."""
    folded = text.casefold()
    others = [n for n in named(text) if n != character]
    for name in others:
        for word in (name, *ALIASES[name]):
            if _near(folded, word.casefold(), FIGHT, after=False):
                return name
    return others[0] if others and _has(folded, FIGHT + FINISHING) else None


def mood_in(text: str, lang: str) -> str:
    """The mood a prompt asks for: the words after "mood to" / "心情改成", else the first
    mood word it has, in the narration's language."""
    literal = re.search(
        r"(?:mood\s*(?:to|=|:|is|as)\s*|心情\s*(?:改成|设为|设成|变成|是|为|=|：|:)\s*)"
        r"([^,.!?，。！？;；]{1,40})",
        text,
        re.IGNORECASE,
    )
    if literal:
        return literal.group(1).strip()
    folded = text.casefold()
    best: tuple[int, str] | None = None
    for english, (words, chinese) in MOODS.items():
        for word in words:
            spot = _spot(folded, word)
            if spot >= 0 and (best is None or spot < best[0]):
                best = (spot, chinese if lang == "zh" else english)
    return best[1] if best else ("平静" if lang == "zh" else "calm")


def mood_kind(value: str) -> str | None:
    """Which of ``MOODS`` a mood value is (either language), if any."""
    folded = value.casefold()
    for english, (words, chinese) in MOODS.items():
        if folded in (english, chinese) or _has(folded, words):
            return english
    if _has(folded, ("狼狈", "虚脱", "sick")):
        return "sick"
    return None


def display(name: str, lang: str) -> str:
    """A character's name as the narration says it."""
    english = ENGLISH_NAMES.get(name)
    return f"{english} ({name})" if lang == "en" and english else name


def has_words(text: str, words: tuple[str, ...]) -> bool:
    """Whether the text has one of the words (as the table matches them)."""
    return _has(text.casefold(), words)


def mentions_someone(text: str) -> bool:
    """A pronoun (him, her, 他, 她): the prompt is about whoever the conversation was about."""
    return _has(text.casefold(), PRONOUNS)


# --- matching ----------------------------------------------------------------------------


def _has(folded: str, words: tuple[str, ...]) -> bool:
    return _matcher(words).search(folded) is not None


def _spot(folded: str, word: str) -> int:
    found = _matcher((word.casefold(),)).search(folded)
    return found.start() if found else -1


@functools.cache
def _matcher(words: tuple[str, ...]) -> re.Pattern[str]:
    """Chinese words (and punctuation) anywhere; English words and phrases whole."""
    parts = []
    for word in sorted(set(words), key=len, reverse=True):
        w = word.casefold()
        if w.isascii() and any(c.isalnum() for c in w):
            parts.append(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])")
        else:
            parts.append(re.escape(w))
    return re.compile("|".join(parts))


def _near(folded: str, word: str, verbs: tuple[str, ...], *, after: bool) -> bool:
    """Whether one of ``verbs`` comes right after ``word`` (``after``) or right before it,
    a few characters or two words apart at most."""
    spot = _spot(folded, word)
    if spot < 0:
        return False
    if after:
        window = folded[spot + len(word) : spot + len(word) + 24]
        found = _matcher(verbs).search(window)
        return found is not None and _gap_is_small(window[: found.start()])
    window = folded[max(0, spot - 24) : spot]
    last = None
    for last in _matcher(verbs).finditer(window):  # noqa: B007 (the last one is wanted)
        pass
    return last is not None and _gap_is_small(window[last.end() :])


def _gap_is_small(gap: str) -> bool:
    """At most a few CJK characters or two English words between a name and its verb."""
    if re.search(r"[，。！？、,.!?;；：:]", gap):
        return False
    words = gap.split()
    cjk = sum(1 for c in gap if "\u4e00" <= c <= "\u9fff")
    return len(words) <= 2 and cjk <= 3

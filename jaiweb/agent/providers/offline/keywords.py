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

from journal.cast import STARTERS, Ambiguous, Cast, has_pronoun

ENGLISH_NAMES = {s.zh: s.en for s in STARTERS}  # a built-in's Chinese name → its English one

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
FINISHING = ("降龙十巴掌", "绝招", "大招", "必杀", "终极", "最后一击", "杀手锏", "拍飞",
             "finishing move", "finishing blow", "ultimate move", "ultimate attack",
             "special move", "signature move", "final blow", "final move", "super move",
             "dragon slap", "dragon slaps", "dragon-subduing", "ten slaps", "ten dragon slaps")
KNOCK = ("knock", "knocks", "knocked", "send", "sends", "sent", "slap", "slaps", "punch",
         "punches", "kick", "kicks", "hit", "hits", "打", "拍", "踢", "揍")
PASSIVE = ("被", "is hit", "gets hit", "is knocked", "gets knocked", "is slapped", "goes flying",
           "is sent flying")  # after a name: the one it is done to
FLYING = ("flying", "into the air", "out of the ring", "飞", "飞出")
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
SETTINGS = ("ring", "arena", "classroom", "school", "beach", "city", "street", "park", "rooftop",
            "roof", "forest", "kitchen", "home", "house", "sea", "mountain", "sky", "stage",
            "擂台", "教室", "学校", "海滩", "沙滩", "城市", "街上", "公园", "屋顶", "森林", "厨房",
            "家里", "海边", "山上", "天上", "舞台")
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
    state: str = ""  # the built-in state it sets (``STATES``), in the session's language
    named: bool | None = None  # True: the prompt must name someone; False: must not

    def matches(self, folded: str, question: bool, named: bool = False) -> bool:
        return (
            (self.named is None or self.named == named)
            and (not self.words or _has(folded, self.words))
            and all(_has(folded, group) for group in self.also)
            and not (self.unless and _has(folded, self.unless))
            and (self.question is None or self.question == question)
        )


# The built-in states a rule sets, in the session's language (Chinese for a session that
# has none: the sessions from before languages were kept).
STATES = {
    "zh": {
        "laxative": (("buff", "拉肚子虚脱(捂肚子冒冷汗)"), ("skill", "无"), ("mood", "狼狈")),
        "kung_fu": (("buff", "超级棒棒糖(功夫大师)"), ("skill", "降龙十巴掌"), ("mood", "得意")),
    },
    "en": {
        "laxative": (
            ("buff", "Expired laxative (stomach ache, cold sweat)"),
            ("skill", "none"),
            ("mood", "miserable"),
        ),
        "kung_fu": (
            ("buff", "Super lollipop (kung-fu master)"),
            ("skill", "Ten Dragon Slaps"),
            ("mood", "proud"),
        ),
    },
}
RULES: tuple[Rule, ...] = (
    Rule("undo", UNDO, unless=DRAW, actions=("undo",)),
    Rule("howto", HOWTO, actions=("help",)),
    Rule("publish", PUBLISH, actions=("publish",)),
    Rule("panels", LIST, actions=("panels",)),
    Rule("state_question", STATE + MOOD_WORDS, question=True, actions=("answer_state",)),
    Rule("laxative", LAXATIVE, actions=("state", "draw"), state="laxative"),
    Rule("lollipop", LOLLIPOP, unless=LAXATIVE, actions=("state", "draw"), state="kung_fu"),
    Rule("finishing", FINISHING, actions=("draw",)),
    Rule("finishing", FLYING, also=(KNOCK,), actions=("draw",)),
    Rule("mood", MOOD_WORDS, also=(MOOD_CUES,), question=False, actions=("mood",)),
    Rule("help", GREETING + HELP, unless=DRAW, named=False, actions=("help",)),
    Rule("question", question=True, actions=("answer",)),
    Rule("draw", DRAW, actions=("draw",)),
    Rule("scene", named=True, actions=("draw",)),  # someone named doing something
    Rule("scene", SETTINGS, actions=("draw",)),  # a place: a scene to draw
)
UNSURE = Rule("unsure", actions=("offer",))


@dataclass(frozen=True)
class Reading:
    """What a prompt asks for, as the table reads it, and who it is about (by the cast)."""

    rule: Rule
    character: str  # who it is about (whose state changes; who acts, but for a giver)
    opponent: str | None  # the other party: who is hit, or who gives
    mood: str | None  # for the mood rule: the mood to set, in the narration's language
    scene: str  # the prompt without the instruction words ("Draw a panel: …")
    draws_too: bool  # a mood change that also asks for a panel
    actor: str = ""  # who does the panel's action
    target: str = ""  # who it is done to
    unsure: Ambiguous | None = None  # a mention that could be two characters: ask


def read(
    text: str,
    lang: str,
    cast: Cast | None = None,
    recent: list[str] | None = None,
    states: dict[str, dict[str, str]] | None = None,
) -> Reading:
    """The intent of a prompt without command lines; who it is about comes from the cast
    (``recent``: the characters the branch named, oldest first)."""
    cast = cast or Cast.of({})
    request = request_of(text)
    folded = request.casefold()
    question = is_question(request)
    names = cast.named(text)
    rule = next((r for r in RULES if r.matches(folded, question, bool(names))), UNSURE)
    if rule is UNSURE and has_pronoun(text) and _has(folded, FIGHT + EATING + GIVING + KNOCK):
        rule = RULES[-2]  # "knock him …": someone the story knows, doing something
    mood = mood_in(text, lang) if rule.name == "mood" else None
    fight = rule.name == "finishing" or _has(folded, FIGHT)
    try:
        unsure = cast.ambiguous_in(text)
        if unsure is not None:
            raise unsure
        character, other, actor, target = roles(
            text, cast, list(recent or []), states or {}, fight=fight
        )
    except Ambiguous as exc:
        hero = _hero(cast)
        return Reading(rule, hero, None, mood, scene_of(request), False, unsure=exc)
    return Reading(
        rule=rule,
        character=character,
        opponent=other,
        mood=mood,
        scene=scene_of(request),
        draws_too=rule.name == "mood" and _has(folded, DRAW),
        actor=actor,
        target=target,
    )


def roles(
    text: str,
    cast: Cast,
    recent: list[str],
    states: dict[str, dict[str, str]],
    *,
    fight: bool = False,
) -> tuple[str, str | None, str, str]:
    """Who a prompt is about, its other party, who acts and who it is done to.

    The one who eats, else the one given something, else the first one named who neither
    gives nor is hit; a pronoun ("him", "他") is whoever ``Cast.refer`` says, never one the
    same sentence names. In a fight with no striker named, the one with a skill strikes (the
    last named of them), and "him" is the other party. ``Ambiguous`` when a pronoun could be
    two characters."""
    folded = text.casefold()
    names = cast.named(text)
    pronoun = has_pronoun(text)

    def near(name: str, verbs: tuple[str, ...], after: bool) -> bool:
        return any(_near(folded, w.casefold(), verbs, after=after) for w in _words(cast, name))

    eaters = [n for n in names if near(n, EATING, True)]
    receivers = [n for n in names if near(n, GIVING, False)]
    givers = [n for n in names if near(n, GIVING, True)]
    hit = [n for n in names if near(n, FIGHT + KNOCK, False) or near(n, PASSIVE, True)]
    doers = [n for n in names if n not in givers and n not in hit]
    if givers and not receivers and not eaters and pronoun:
        receivers = [cast.refer(recent, besides=names)]
    if not eaters and not receivers and pronoun and _pronoun_eats(folded):
        eaters = [cast.refer(recent, besides=names)]  # "he eats …"
    if eaters or receivers:  # someone takes something: whoever gives it acts
        character = (eaters or receivers)[0]
        giver = next((g for g in givers if g != character), None)
        if giver is None and _has(folded, GIVING):  # "迷糊老师拿错了药，给他吃了…"
            giver = next((n for n in names if n != character), None)
        return character, giver, giver or character, character if giver else ""
    if fight and (names or pronoun):
        actor = doers[0] if doers else _striker(cast, recent, states, besides=hit)
        target = next((n for n in hit if n != actor), None)
        if target is None:
            target = next((n for n in names if n != actor), None)
        if target is None and pronoun:
            target = cast.refer(recent, besides=[actor], fight=True)
        return actor, target, actor, target or ""
    if doers:
        other = next((n for n in names if n != doers[0]), None)
        return doers[0], other, doers[0], ""
    if pronoun:
        who = cast.refer(recent, besides=names)
        return who, None, who, ""
    who = recent[-1] if recent and recent[-1] in cast.by_name else _hero(cast)
    return who, None, "", ""  # nobody named: the panel does not say who acts


def _pronoun_eats(folded: str) -> bool:
    return any(_near(folded, p, EATING, after=True) for p in ("he", "she", "他", "她"))


def _striker(
    cast: Cast, recent: list[str], states: dict[str, dict[str, str]], besides: list[str]
) -> str:
    """Who strikes when nobody is named as striking: the one with a skill (the last named
    of them), else the last one named, else the hero."""
    skilled = [
        n
        for n, s in states.items()
        if n in cast.by_name and n not in besides and s.get("skill", "").casefold() not in NONE
    ]
    for name in reversed(recent):
        if name in skilled:
            return name
    if skilled:
        return skilled[0]
    for name in reversed(recent):
        if name in cast.by_name and name not in besides:
            return name
    return _hero(cast)


def _hero(cast: Cast) -> str:
    hero = cast.role("hero")
    return hero.name if hero else cast.members[0].name


def _words(cast: Cast, name: str) -> tuple[str, ...]:
    member = cast.by_name.get(name)
    return member.words if member else (name,)


NONE = ("", "无", "none", "-")


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


def has_words(text: str, words: tuple[str, ...]) -> bool:
    """Whether the text has one of the words (as the table matches them)."""
    return _has(text.casefold(), words)


def mentions_someone(text: str) -> bool:
    """A pronoun (him, her, 他, 她): the prompt is about whoever the conversation was about."""
    return has_pronoun(text)


# --- matching ----------------------------------------------------------------------------


def _has(folded: str, words: tuple[str, ...]) -> bool:
    return _matcher(words).search(folded) is not None


def _spot(folded: str, word: str) -> int:
    found = _matcher((word.casefold(),)).search(folded)
    return found.start() if found else -1


@functools.lru_cache(maxsize=1024)  # user names come and go: a bounded cache
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

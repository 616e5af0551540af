"""The panel vocabulary: the settings, times of day, weathers, framings, props and actions a
panel can show, and the words (English and Chinese) that ask for each.

The offline director reads a user's prompt with it and states what it found on the panel
script's own lines (``Setting: beach``, ``场景：海滩``); the local renderer reads those
lines, and reads a prompt without them (a model's free text) with the same table, so a
word means the same thing to both. Chinese words match anywhere, English ones as whole
words, ignoring case. A table is checked in order: the first setting that matches wins,
so a specific place comes before a general one (a rooftop before a city).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Word:
    """One thing the vocabulary knows: its id (what the SVG says), its Chinese name (what a
    Chinese script line says), the words that ask for it, and words that rule it out."""

    id: str
    zh: str
    words: tuple[str, ...]
    unless: tuple[str, ...] = ()


# fmt: off
SETTINGS: tuple[Word, ...] = (
    Word("group-photo", "合影", ("group photo", "group picture", "group shot",
         "photo together", "take a photo", "takes a photo", "taking a photo",
         "pose for a photo", "pose for a picture",
         "say cheese", "selfie", "合影", "合照", "集体照", "拍照", "照相", "大合照")),
    Word("handshake", "握手", ("handshake", "handshakes", "shake hands", "shakes hands",
         "shaking hands", "shook hands", "shake hand", "make peace", "makes peace", "握手",
         "握手言和", "和好")),
    Word("fireworks", "烟花", ("fireworks", "firework", "new year's eve", "烟花", "烟火", "焰火",
         "放炮")),
    Word("hotpot", "火锅", ("hotpot", "hot pot", "restaurant", "dinner table", "dining table",
         "火锅", "饭店", "餐厅", "饭馆", "涮")),
    Word("rooftop", "天台", ("rooftop", "roof top", "on the roof", "on a roof", "roof",
         "天台", "屋顶", "楼顶", "房顶")),
    Word("classroom", "教室", ("classroom", "school", "lesson", "blackboard",
         "教室", "学校", "课堂", "黑板", "上课")),
    Word("ring", "擂台", ("ring", "tournament", "arena", "bout", "stage", "擂台", "武林大会",
         "比武")),
    Word("beach", "海滩", ("beach", "seaside", "sea", "ocean", "shore", "sand", "surf",
         "surfing", "海滩", "沙滩", "海边", "大海", "冲浪")),
    Word("park", "公园", ("kite", "kites", "park", "meadow", "lawn", "picnic", "风筝", "公园",
         "草地", "野餐")),
    Word("road", "公路", ("car", "cars", "drive", "drives", "driving", "drove", "road",
         "highway", "taxi", "汽车", "开车", "公路", "马路", "轿车", "出租车", "兜风")),
    Word("city", "城市", ("city", "downtown", "skyscraper", "skyscrapers", "street", "streets",
         "town", "城市", "街道", "街头", "大街", "市中心", "高楼", "城里")),
    Word("forest", "森林", ("forest", "woods", "jungle", "森林", "树林", "丛林")),
    Word("mountain", "山顶", ("mountain", "mountains", "cliff", "peak", "summit", "hike",
         "hiking", "高山", "山顶", "爬山", "登山", "山上", "悬崖")),
    Word("home", "家里", ("home", "living room", "bedroom", "sofa", "couch", "house", "bed",
         "家里", "客厅", "卧室", "沙发", "床上", "回家")),
    Word("hospital", "医院", ("hospital", "doctor", "clinic", "nurse", "医院", "医生", "诊所",
         "护士")),
    Word("library", "图书馆", ("library", "bookshelf", "bookshelves", "图书馆", "书架", "书店")),
    Word("space", "太空", ("outer space", "space", "rocket", "spaceship", "planet", "astronaut",
         "太空", "宇宙", "火箭", "飞船", "星球")),
    Word("rain", "雨中", ("rain", "raining", "rains", "rainy", "storm", "stormy", "downpour",
         "下雨", "大雨", "暴雨", "雨中", "雨天", "淋雨", "雨")),
)
DEFAULT_SETTING = "default"  # outdoors: a green hill under the sky (docs/ARCHITECTURE.md §13)

TIMES: tuple[Word, ...] = (
    Word("night", "夜晚", ("night", "midnight", "at night", "tonight", "moon", "moonlight",
         "starry", "夜", "晚上", "深夜", "半夜", "月亮", "月光", "星空")),
    Word("evening", "黄昏", ("evening", "sunset", "dusk", "twilight", "傍晚", "黄昏", "日落",
         "夕阳")),
    Word("morning", "清晨", ("morning", "dawn", "sunrise", "早上", "清晨", "早晨", "日出",
         "黎明")),
    Word("day", "白天", ("day", "daytime", "noon", "afternoon", "白天", "中午", "下午")),
)
WEATHERS: tuple[Word, ...] = (
    Word("rain", "雨", ("rain", "raining", "rains", "rainy", "storm", "stormy", "downpour",
         "umbrella", "下雨", "大雨", "暴雨", "雨中", "雨天", "淋雨", "雨伞", "雨")),
    Word("snow", "雪", ("snow", "snowing", "snowy", "snowman", "blizzard", "下雪", "大雪",
         "雪人", "雪")),
    Word("wind", "大风", ("wind", "windy", "gale", "breeze", "大风", "刮风", "狂风")),
    Word("cloudy", "多云", ("cloudy", "clouds", "overcast", "gloomy", "多云", "阴天", "乌云")),
    Word("clear", "晴", ("sunny", "clear sky", "sunshine", "晴天", "晴朗", "阳光")),
)
FRAMINGS: tuple[Word, ...] = (
    Word("close-up", "特写", ("close-up", "close up", "closeup", "close shot", "特写", "近景")),
    Word("two-shot", "双人镜头", ("two-shot", "two shot", "双人镜头", "双人特写")),
    Word("wide", "全景", ("wide shot", "wide-shot", "wide angle", "long shot", "establishing shot",
         "全景", "远景", "广角")),
)
PROPS: tuple[Word, ...] = (
    Word("kite", "风筝", ("kite", "kites", "风筝")),
    Word("car", "汽车", ("car", "cars", "taxi", "drive", "drives", "driving", "汽车", "轿车",
         "开车", "出租车", "车")),
    Word("lollipop", "棒棒糖", ("lollipop", "lollipops", "lolly", "棒棒糖")),
    Word("pill", "药丸", ("pill", "pills", "laxative", "laxatives", "medicine", "tablet",
         "药丸", "泻药", "药片", "吃药", "药")),
    Word("umbrella", "雨伞", ("umbrella", "umbrellas", "雨伞", "伞")),
    Word("camera", "相机", ("camera", "photo", "photograph", "selfie", "相机", "照相", "拍照",
         "合影", "合照")),
    Word("book", "书", ("book", "books", "novel", "comic book", "书", "课本", "小说")),
    Word("ball", "球", ("ball", "football", "soccer", "basketball", "球", "足球", "篮球"),
         unless=("星球", "地球")),
)
ACTIONS: tuple[Word, ...] = (
    Word("punch", "出拳", ("punch", "punches", "punched", "slap", "slaps", "slapped", "hit",
         "hits", "strike", "strikes", "smack", "knock", "knocks", "knocked", "kick", "kicks",
         "出拳", "打", "揍", "拳", "巴掌", "扇", "踢", "拍飞"),
         unless=("打盹", "打开", "打扫", "打电话", "打招呼", "打伞", "打球", "打篮球", "打游戏")),
    Word("fly", "飞", ("fly", "flies", "flying", "flew", "soar", "soars", "soaring", "takes off",
         "飞", "飞起", "飞上天", "飞走", "拍飞"), unless=("kite", "kites", "风筝", "飞船")),
    Word("fall", "摔倒", ("fall", "falls", "fell", "falling", "trip", "trips", "tripped",
         "slip", "slips", "slipped", "tumble", "tumbles", "摔", "摔倒", "跌倒", "滑倒", "倒下")),
    Word("hug", "拥抱", ("hug", "hugs", "hugged", "hugging", "embrace", "embraces", "cuddle",
         "拥抱", "抱住", "抱抱", "抱")),
    Word("bow", "鞠躬", ("bow", "bows", "bowed", "bowing", "鞠躬", "行礼")),
    Word("wave", "挥手", ("wave", "waves", "waved", "waving", "挥手", "招手", "挥挥手", "打招呼")),
    Word("hide", "躲", ("hide", "hides", "hid", "hiding", "躲", "藏", "躲起来", "藏起来")),
    Word("run", "跑", ("run", "runs", "ran", "running", "race", "races", "chase", "chases",
         "flee", "flees", "跑", "奔跑", "逃跑", "追")),
    Word("cry", "哭", ("cry", "cries", "cried", "crying", "tears", "weep", "weeps", "sob",
         "sobs", "哭", "流泪", "大哭", "哭泣")),
    Word("laugh", "笑", ("laugh", "laughs", "laughed", "laughing", "giggle", "giggles",
         "大笑", "哈哈", "笑")),
    Word("eat", "吃", ("eat", "eats", "ate", "eating", "swallow", "swallows", "swallowed",
         "吃", "吞", "吃饭")),
    Word("sleep", "睡觉", ("sleep", "sleeps", "slept", "sleeping", "asleep", "nap", "naps",
         "snore", "snores", "睡", "睡觉", "睡着", "打盹", "午睡")),
    Word("read", "看书", ("read", "reads", "reading", "看书", "读书", "阅读", "念书")),
    Word("dance", "跳舞", ("dance", "dances", "danced", "dancing", "跳舞", "舞蹈", "起舞")),
    Word("jump", "跳", ("jump", "jumps", "jumped", "jumping", "leap", "leaps", "hop", "hops",
         "跳起", "跳", "蹦"), unless=("跳舞",)),
    Word("shout", "大喊", ("shout", "shouts", "shouted", "shouting", "yell", "yells", "scream",
         "screams", "roar", "roars", "大喊", "大叫", "喊", "吼", "尖叫")),
)
# fmt: on
# What a setting brings with it when the prompt says nothing else.
SETTING_TIME = {"rooftop": "night", "fireworks": "night", "space": "night"}
SETTING_WEATHER = {"rain": "rain"}
SETTING_PROPS = {"park": ("kite",), "road": ("car",), "group-photo": ("camera",)}
INDOOR = ("classroom", "hotpot", "home", "hospital", "library", "handshake", "group-photo")

TABLES = {
    "setting": SETTINGS,
    "time": TIMES,
    "weather": WEATHERS,
    "framing": FRAMINGS,
    "props": PROPS,
    "actions": ACTIONS,
}
# The script's own lines: their keys in each language (``Setting: beach``, ``场景：海滩``).
KEYS = {
    "setting": ("Setting", "场景"),
    "time": ("Time", "时间"),
    "weather": ("Weather", "天气"),
    "framing": ("Framing", "镜头"),
    "props": ("Props", "道具"),
    "actions": ("Actions", "动作"),
}
LINE = re.compile(
    r"^\s*(?P<key>"
    + "|".join(re.escape(k) for keys in KEYS.values() for k in keys)
    + r")\s*[:：]\s*(?P<value>.*)$",
    re.I,
)
LIST_SEPARATORS = re.compile(r"[,，、;；/]+|\s+and\s+|\s*和\s*")


@dataclass(frozen=True)
class Staging:
    """What a panel shows besides its cast and text: all ids of the tables above ("" or
    () when nothing asks for one)."""

    setting: str = ""
    time: str = ""
    weather: str = ""
    framing: str = ""
    props: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()

    def lines(self, lang: str = "en") -> list[str]:
        """The script lines that state this staging, keyed and named in ``lang``."""
        zh = lang == "zh"
        out = []
        for field, (en_key, zh_key) in KEYS.items():
            value = getattr(self, field)
            ids = value if isinstance(value, tuple) else ((value,) if value else ())
            if not ids:
                continue
            names = [name_of(field, i, lang) for i in ids]
            out.append(f"{zh_key}：{'、'.join(names)}" if zh else f"{en_key}: {', '.join(names)}")
        return out

    def merged(self, other: Staging) -> Staging:
        """This staging, each part it leaves open taken from ``other``."""
        return Staging(
            self.setting or other.setting,
            self.time or other.time,
            self.weather or other.weather,
            self.framing or other.framing,
            self.props or other.props,
            self.actions or other.actions,
        )


def key_line(line: str) -> tuple[str, str] | None:
    """The field (``setting``, ``time`` …) and raw value of a script line that states one,
    else None."""
    found = LINE.match(line)
    if not found or not found.group("value").strip():
        return None
    key = found.group("key").casefold()
    field = next(f for f, keys in KEYS.items() if key in (k.casefold() for k in keys))
    return field, found.group("value").strip()


def value_of(field: str, value: str) -> str | tuple[str, ...]:
    """The ids a stated value names: an id, a Chinese name or any of the words (unknown
    ones are dropped); a tuple for ``props`` and ``actions``."""
    table = TABLES[field]
    ids = []
    for part in LIST_SEPARATORS.split(value):
        found = _lookup(table, part.strip())
        if found and found not in ids:
            ids.append(found)
    if field in ("props", "actions"):
        return tuple(ids)
    return ids[0] if ids else ""


def read(text: str) -> Staging:
    """The staging a free text asks for: the first setting of the table it names (a setting
    may bring its time, weather and props), the time, weather and framing it names, and
    every prop and action it names in the order it names them."""
    folded = text.casefold()
    setting = first(SETTINGS, folded)
    time = first(TIMES, folded) or SETTING_TIME.get(setting, "")
    weather = first(WEATHERS, folded) or SETTING_WEATHER.get(setting, "")
    if weather == "clear" and setting in INDOOR:
        weather = ""
    props = tuple(dict.fromkeys((*every(PROPS, folded), *SETTING_PROPS.get(setting, ()))))
    return Staging(setting, time, weather, first(FRAMINGS, folded), props, every(ACTIONS, folded))


def first(table: tuple[Word, ...], folded: str) -> str:
    """The id of the first entry of ``table`` the folded text asks for, else ""."""
    return next((w.id for w in table if _asks(w, folded)), "")


def every(table: tuple[Word, ...], folded: str) -> tuple[str, ...]:
    """The ids of every entry the folded text asks for, in the order it names them."""
    found = [(_matcher(w.words).search(folded), w.id) for w in table if _asks(w, folded)]
    return tuple(i for m, i in sorted(found, key=lambda f: f[0].start() if f[0] else 0))


def name_of(field: str, id_: str, lang: str) -> str:
    """How a script line in ``lang`` names an id (its Chinese name in ``zh``)."""
    if lang != "zh":
        return id_
    return next((w.zh for w in TABLES[field] if w.id == id_), id_)


def ids(field: str) -> tuple[str, ...]:
    return tuple(w.id for w in TABLES[field])


def _asks(word: Word, folded: str) -> bool:
    return _matcher(word.words).search(folded) is not None and not (
        word.unless and _matcher(word.unless).search(folded)
    )


def _lookup(table: tuple[Word, ...], value: str) -> str:
    folded = value.casefold()
    if not folded:
        return ""
    for w in table:
        if folded in (w.id, w.zh.casefold()):
            return w.id
    return first(table, folded)


@functools.cache
def _matcher(words: tuple[str, ...]) -> re.Pattern[str]:
    """Chinese words anywhere; English words and phrases whole ("ring" is not in "bring")."""
    parts = []
    for word in sorted(set(words), key=len, reverse=True):
        w = word.casefold()
        if w.isascii():
            parts.append(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])")
        else:
            parts.append(re.escape(w))
    return re.compile("|".join(parts))

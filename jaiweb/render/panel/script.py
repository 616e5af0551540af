"""The panel script: the plain-text prompt a panel is drawn from (scene, caption, speech).

A prompt is lines of text. A line ``Caption: …`` (or ``Narration:``, ``旁白：``,
``字幕：``) is the caption box; a line ``<name> says: …`` (or ``<name>说：…``, also
shouts / asks / 喊 / 问) is a speech bubble for that character; every other line is the
scene, which says what the panel shows. Without a caption line, the scene is the
caption. A line ``Actor: <name>`` (``主角：``) names who does the panel's action and a
line ``Target: <name>`` (``对象：``) who it is done to, so a renderer need not guess them
from the scene's words. Lines ``Setting:``, ``Time:``, ``Weather:``, ``Framing:``,
``Props:`` and ``Actions:`` (``场景：``, ``时间：``, ``天气：``, ``镜头：``, ``道具：``,
``动作：``) state what the panel shows in the words of ``vocabulary``; a renderer reads
what they leave open from the scene. It stays readable as an ordinary image prompt, so
any backend can take it.

The offline director writes its prompts with ``compose``; the local renderer reads any
prompt with ``parse`` (a model's free-text prompt is all scene).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from jaiweb.render.panel.vocabulary import Staging, key_line, value_of

CAPTION_LINE = re.compile(r"^\s*(?:caption|narration|narrator|旁白|字幕)\s*[:：]\s*(.*)$", re.I)
SPEECH_LINE = re.compile(
    r"^\s*(?P<name>[^\s:：][^:：]{0,23}?)\s*"
    r"(?:says|said|shouts|yells|asks|cries|说道|说|喊道|大喊|喊|叫道|问道|问)\s*[:：]\s*(?P<text>.*)$",
    re.I,
)
ACTOR_LINE = re.compile(r"^\s*(?:actor|主角)\s*[:：]\s*(.*)$", re.I)
TARGET_LINE = re.compile(r"^\s*(?:target|对象)\s*[:：]\s*(.*)$", re.I)
ROLE_KEYS = {"en": ("Actor: ", "Target: "), "zh": ("主角：", "对象：")}
QUOTES = "\"'“”‘’「」『』"


@dataclass(frozen=True)
class Script:
    scene: str = ""
    caption: str = ""  # empty: the scene is the caption
    speech: tuple[tuple[str, str], ...] = field(default=())  # (speaker, words), in order
    actor: str = ""  # who does the action; empty: not said
    target: str = ""  # who the action is done to; empty: not said
    staging: Staging = field(default_factory=Staging)  # what its own lines state

    @property
    def shown_caption(self) -> str:
        return self.caption or self.scene


def parse(prompt: str) -> Script:
    scene: list[str] = []
    caption: list[str] = []
    speech: list[tuple[str, str]] = []
    roles = {"actor": "", "target": ""}
    staging = Staging()
    for line in prompt.splitlines():
        if not line.strip():
            continue
        stated = key_line(line)
        value = value_of(*stated) if stated else ""
        if stated and value:  # a line that names nothing the vocabulary knows is scene
            staging = replace(staging, **{stated[0]: value})
            continue
        role = _role_line(line)
        if role:
            roles[role[0]] = role[1]
            continue
        said = CAPTION_LINE.match(line)
        if said:
            caption.append(said.group(1).strip())
            continue
        said = SPEECH_LINE.match(line)
        if said and said.group("text").strip(QUOTES + " "):
            speech.append((said.group("name").strip(), said.group("text").strip().strip(QUOTES)))
            continue
        scene.append(line.strip())
    return Script(
        " ".join(scene), " ".join(c for c in caption if c), tuple(speech), **roles, staging=staging
    )


def _role_line(line: str) -> tuple[str, str] | None:
    """The role (``actor`` or ``target``) and name a line gives, or None for another line."""
    for role, pattern in (("actor", ACTOR_LINE), ("target", TARGET_LINE)):
        named = pattern.match(line)
        if named and named.group(1).strip():
            return role, " ".join(named.group(1).split())
    return None


def compose(
    scene: str,
    caption: str = "",
    speech: tuple[tuple[str, str], ...] = (),
    *,
    lang: str = "en",
    actor: str = "",
    target: str = "",
    staging: Staging | None = None,
) -> str:
    """The prompt for this script, its keys in ``lang`` (``zh`` or ``en``); ``parse`` of it
    gives the script back (each part on one line)."""
    lines = [" ".join(scene.split())]
    if staging is not None:
        lines.extend(staging.lines("zh" if lang == "zh" else "en"))
    keys = ROLE_KEYS["zh" if lang == "zh" else "en"]
    for key, name in zip(keys, (actor, target), strict=True):
        if name.strip():
            lines.append(f"{key}{' '.join(name.split())}")
    if caption:
        one = " ".join(caption.split())
        lines.append(f"旁白：{one}" if lang == "zh" else f"Caption: {one}")
    for name, words in speech:
        one = " ".join(words.split())
        lines.append(f"{name}说：「{one}」" if lang == "zh" else f'{name} says: "{one}"')
    return "\n".join(lines)

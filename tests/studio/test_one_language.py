"""One language per page: every template's words and every director message come in both
languages, the English ones hold no Chinese, and one glossary term stands for a concept in
each language (积分 for credits, never 点券).

What a user typed is theirs and is shown as typed; everything else the page or the director
says is in the page's language, and a new session's built-in names, states and defaults are
in its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jaiweb.agent.providers.base import TextDelta, ToolCallDelta, ToolSpec
from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.agent.providers.offline.keywords import STATES
from jaiweb.agent.providers.offline.narration import DIALOGUE, LABELS, STORY, TEXT, TOOL_LABELS
from journal.cast import new_cast
from journal.entries import UserMessage

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = sorted((ROOT / "templates").rglob("*.html"))
PO = ROOT / "locale/zh_Hans/LC_MESSAGES/django.po"
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
WRONG_TERMS = ("点券",)  # the Chinese page says 积分 for credits, everywhere

TRANSLATE = re.compile(r"""\{%\s*translate\s+(["'])(.*?)\1""", re.S)
BLOCK = re.compile(
    r"\{%\s*blocktranslate([^%]*)%\}(.*?)(?:\{%\s*plural\s*%\}.*?)?\{%\s*endblocktranslate\s*%\}",
    re.S,
)


def catalogue() -> dict[str, str]:
    """The .po file's msgids and their (first) msgstr."""
    found: dict[str, str] = {}
    for block in PO.read_text(encoding="utf-8").split("\n\n"):
        msgid = re.search(r'^msgid ((?:".*"\n?)+)', block, re.M)
        msgstr = re.search(r'^msgstr(?:\[0\])? ((?:".*"\n?)+)', block, re.M)
        if msgid and msgstr:
            found[_joined(msgid.group(1))] = _joined(msgstr.group(1))
    return found


def _joined(quoted: str) -> str:
    return "".join(json.loads(line) for line in quoted.split("\n") if line.strip())


def msgids_of(template: Path) -> list[str]:
    """Every string the template asks to be translated, as the catalogue keys it."""
    text = template.read_text(encoding="utf-8")
    ids = [m.group(2) for m in TRANSLATE.finditer(text)]
    for options, body in BLOCK.findall(text):
        if "trimmed" in options:
            body = " ".join(body.split())
        ids.append(re.sub(r"\{\{\s*(\w+)\s*\}\}", r"%(\1)s", body))
    return ids


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_template_says_its_words_in_both_languages(template):
    """No Chinese written into a template (the English page would show it), and every
    word it translates has its Chinese in the catalogue, in the glossary's terms."""
    text = template.read_text(encoding="utf-8")
    assert not CJK.search(text), CJK.findall(text)
    words = catalogue()
    for msgid in msgids_of(template):
        assert words.get(msgid), f"{msgid!r} has no Chinese in django.po"
        assert not any(t in words[msgid] for t in WRONG_TERMS), words[msgid]


def test_the_catalogue_says_credits_with_one_term():
    for msgid, msgstr in catalogue().items():
        assert not any(term in msgstr for term in WRONG_TERMS), (msgid, msgstr)
        if re.search(r"\bcredits?\b", msgid, re.I) and msgstr:
            assert "积分" in msgstr, (msgid, msgstr)


def test_every_director_message_is_in_both_languages_and_english_has_no_chinese():
    tables = [TEXT, STORY, DIALOGUE, TOOL_LABELS, LABELS]
    for table in tables:
        assert set(table["en"]) == set(table["zh"]) if isinstance(table["en"], dict) else True
    for key, words in TEXT["en"].items():
        assert not CJK.search(words), (key, words)
    for rule, story in STORY["en"].items():
        assert not CJK.search(json.dumps(story, ensure_ascii=False)), rule
    for table in (DIALOGUE, TOOL_LABELS, LABELS):
        assert not CJK.search(json.dumps(table["en"], ensure_ascii=False))
    for table in (TEXT, STORY, DIALOGUE, TOOL_LABELS, LABELS, STATES):
        said = json.dumps(table["zh"], ensure_ascii=False)
        assert not any(term in said for term in WRONG_TERMS), said
    assert not CJK.search(json.dumps(STATES["en"], ensure_ascii=False))
    words = catalogue()  # the director names a state's fields as the page does
    for field in ("buff", "skill", "mood"):
        assert TEXT["zh"][f"key_{field}"] == words[field], field


TOOLS = [
    ToolSpec(name, "", {})
    for name in ("set_character_state", "generate_image", "publish_panel", "list_panels")
]
PROMPTS = [
    "Hi! What can you do?",
    "help",
    "Draw Pig-Man eating the super lollipop in the ring",
    "The teacher accidentally gives him expired medicine",
    "Time for the finishing move!",
    "knock him flying with the ten slaps",
    "Make Super Strong sad",
    "What's Pig-Man's state?",
    "undo",
    "list panels",
    "publish it",
    "Feifei cheers at the beach",
    "hmm",
    "/state Pig-Man mood=happy",
    "/draw Pig-Man waves",
    "/frobnicate",
    "/state",
]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_an_english_session_hears_and_stores_no_chinese(prompt):
    """A session created on an English page (its starter cast and defaults in English):
    the director's narration and every argument it sends are English, whatever it does."""
    names = ["Pig-Man", "Super Strong", "Teacher Muddle", "Feifei"]
    state = {"characters": new_cast(names, "en"), "permission_mode": "ask", "language": "en"}
    text, arguments = "", ""
    for event in OfflineDirector().stream(
        [UserMessage(content=prompt)], TOOLS, language="en", app_state=state
    ):
        if isinstance(event, TextDelta):
            text += event.text
        elif isinstance(event, ToolCallDelta):
            arguments += event.arguments or ""
    assert text.startswith(LABELS["en"])
    assert not CJK.search(text), text
    assert not CJK.search(arguments), arguments


def test_an_unsure_reply_offers_a_draw_it_button_not_a_command_to_type(client):
    from django.template.loader import render_to_string
    from django.utils import translation

    reply = (
        "[offline director] I'm not sure you want a panel drawn (a panel costs 10 credits), "
        "so I haven't drawn one. Draw it? /draw the hero wins."
    )
    html = render_to_string("studio/stream/reply.html", {"reply": reply})
    assert 'data-action="draw-it" data-prompt="/draw the hero wins"' in html
    assert "Draw it</button>" in html and "send:" not in html
    with translation.override("zh-hans"):
        zh = render_to_string(
            "studio/stream/reply.html", {"reply": "[离线导演] 要画出来吗？/draw 猪猪侠。"}
        )
    assert 'data-prompt="/draw 猪猪侠"' in zh and "画出来</button>" in zh
    plain = render_to_string("studio/stream/reply.html", {"reply": "[offline director] Done."})
    assert "draw-it" not in plain

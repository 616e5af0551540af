"""The ten scenes of issue 29, each prompted once in English and once in Chinese, through
the offline director and the render service with the local renderer: each draws its own
setting (the SVG root's ``data-scene``, CONTRACT §7) and no two panels are the same."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from jaiweb.agent.providers.base import ToolSpec, assemble
from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.render.backends.local import LocalRenderer
from jaiweb.render.models import Image
from jaiweb.render.panel.script import parse
from jaiweb.render.services import credits_grant, render_request
from journal.entries import UserMessage
from journal.ids import render_seed

pytestmark = pytest.mark.django_db
TOOLS = [ToolSpec(n, n, {"type": "object"}) for n in ("generate_image", "set_character_state")]
STATE = {"characters": {"猪猪侠": {}, "超人强": {}, "菲菲": {}}, "permission_mode": "ask"}

# scene: (the English prompt, the Chinese prompt, the setting it must draw)
SCENES = {
    "beach": ("Draw Pig-Man building a sandcastle at the beach", "画猪猪侠在海滩上堆沙堡", "beach"),
    "city": ("Draw Pig-Man walking through the city", "画猪猪侠走在城市街头", "city"),
    "kite": ("Draw Pig-Man flying a kite", "画猪猪侠放风筝", "park"),
    "car": ("Draw Super Strong driving his car", "画超人强开车兜风", "road"),
    "rain": ("Draw Feifei walking in the rain", "画菲菲在雨中散步", "rain"),
    "rooftop": ("Draw Pig-Man on the rooftop at night", "画猪猪侠晚上在天台上", "rooftop"),
    "fireworks": (
        "Draw Pig-Man and Feifei watching fireworks",
        "画猪猪侠和菲菲看烟花",
        "fireworks",
    ),
    "hotpot": ("Draw Pig-Man and Super Strong eating hotpot", "画猪猪侠和超人强吃火锅", "hotpot"),
    "handshake": (
        "Draw Pig-Man and Super Strong shaking hands",
        "画猪猪侠和超人强握手言和",
        "handshake",
    ),
    "group photo": (
        "Draw Pig-Man, Super Strong and Feifei posing for a group photo",
        "画猪猪侠、超人强和菲菲拍合影",
        "group-photo",
    ),
}


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def panel_prompt(prompt: str, language: str) -> str:
    """The prompt the offline director gives ``generate_image`` for a user's prompt."""
    reply = assemble(
        OfflineDirector().stream(
            [UserMessage(content=prompt)], TOOLS, language=language, app_state=STATE
        )
    )
    draws = [json.loads(c.arguments) for c in reply.tool_calls if c.name == "generate_image"]
    assert len(draws) == 1, reply.text
    return draws[0]["prompt"]


def rendered(user, key: str, prompt: str, media) -> bytes:
    params = {"prompt": prompt, "characters": STATE["characters"], "seed": render_seed(key)}
    result = render_request(user=user, key=key, params=params, renderer=LocalRenderer())
    return (media / Image.objects.get(id=result.image_id).path).read_bytes()


def test_the_ten_scenes_in_both_languages_draw_ten_settings(alice, media):
    credits_grant(user=alice, amount=500, note="twenty panels")
    panels: dict[tuple[str, str], bytes] = {}
    for name, (english, chinese, setting) in SCENES.items():
        for language, prompt in (("en", english), ("zh-hans", chinese)):
            script = parse(panel_prompt(prompt, language))
            assert script.staging.setting == setting, (name, language)  # the director's line
            svg = rendered(alice, f"scene:{name}:{language}", panel_prompt(prompt, language), media)
            root = ET.fromstring(svg)
            assert root.get("data-scene") == setting, (name, language)
            assert root.find(f".//{{http://www.w3.org/2000/svg}}g[@data-setting='{setting}']")
            panels[name, language] = svg
    scenes = {ET.fromstring(svg).get("data-scene") for svg in panels.values()}
    assert len(scenes) == 10
    assert len(set(panels.values())) == 20  # no two panels byte-identical


def test_the_rooftop_is_at_night_and_the_rain_falls(alice, media):
    for prompt, language in (("Draw Pig-Man on the rooftop at night", "en"),
                             ("画猪猪侠晚上在天台上", "zh-hans")):  # fmt: skip
        root = ET.fromstring(
            rendered(alice, f"night:{language}", panel_prompt(prompt, language), media)
        )
        assert root.get("data-time") == "night"
    root = ET.fromstring(rendered(alice, "rain", panel_prompt("画菲菲在雨中散步", "zh"), media))
    assert root.get("data-weather") == "rain"
    assert root.find(".//{http://www.w3.org/2000/svg}g[@data-weather='rain']") is not None

"""Languages: English and Simplified Chinese, by the browser, switchable (/i18n/setlang/)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db


def test_the_browsers_language_decides(client):
    assert "注册" in client.get("/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    assert "Sign up" in client.get("/", HTTP_ACCEPT_LANGUAGE="en-US").content.decode()


def test_the_switch_is_remembered(client, alice, episode):
    client.force_login(alice)
    r = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"})
    assert r.status_code == 302
    body = client.get(f"/sessions/{episode.id}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<html lang="zh-hans">' in body
    assert "告诉导演接下来发生什么" in body and "积分" in body
    client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    assert "Tell the director" in client.get(f"/sessions/{episode.id}/").content.decode()


def test_every_string_of_the_catalogue_is_translated():
    from pathlib import Path

    po = Path(__file__).resolve().parents[2] / "locale/zh_Hans/LC_MESSAGES/django.po"
    text = po.read_text(encoding="utf-8")
    entries = text.split("\n\n")[1:]
    untranslated = [e for e in entries if 'msgstr ""' in e.splitlines()[-1:] or 'msgstr[0] ""' in e]
    assert not untranslated, untranslated[:3]
    assert "#, fuzzy" not in text


def test_the_compiled_catalogue_matches_the_po_file():
    """`compilemessages` was run after the last edit of the .po file."""
    import gettext
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "locale/zh_Hans/LC_MESSAGES"
    with (folder / "django.mo").open("rb") as f:
        compiled = gettext.GNUTranslations(f)
    text = (folder / "django.po").read_text(encoding="utf-8")
    singles = re.findall(r'^msgid "(.+)"\nmsgstr "(.+)"$', text, re.M)
    assert len(singles) > 100
    for msgid, msgstr in singles:
        assert compiled.gettext(_unquote(msgid)) == _unquote(msgstr), msgid


def _unquote(s: str) -> str:
    return s.replace('\\"', '"').replace("\\\\", "\\")

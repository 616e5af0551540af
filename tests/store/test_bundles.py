"""Bundles (session file version 2): labels and panel images go through export and import.

An imported session shows the same strip with its panels served to the importer; an
image keeps its id unless another image has it (then a derived one, written wherever the
entries name it); importing charges and grants nothing; version 1 files still import; a
refusal writes nothing — no row, no file.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client

from jaiweb.commands.sessions import prompt_submit, session_rewind
from jaiweb.render.models import Image, LedgerEntry, RenderJob, Wallet
from jaiweb.store.errors import BundleTooLarge, ImportRefused
from jaiweb.store.labels import label_add, labels_of
from jaiweb.store.models import ComicSession, Entry, Label, Operation, OperationRecord
from jaiweb.store.selectors import branch_rows, session_get
from jaiweb.store.transfer import session_export, session_import
from jaiweb.studio.selectors.strip import strip_panels
from journal.entries import parse_entry
from journal.session_file import LABEL_KINDS, LABEL_TEXT_MAX, images_named
from tests.support.children import manage
from tests.support.deep_json import DEEP_FILES, TOO_DEEP, deep_file, refusal
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.JAIWEB_FEED_SECRET = "test-feed-secret"
    cache.clear()  # the prompt rate limit counts per user id, and ids come back
    yield settings.MEDIA_ROOT
    cache.clear()


def draw(session, user, text):
    prompt_submit(session=session, user=user, text=text)
    run_pending()
    session.refresh_from_db()


@pytest.fixture
def drawn(alice):
    """Alice's session: two panels on the active branch, a third on an abandoned one, a
    label and a bookmark."""
    from jaiweb.agent.state import DEFAULT_STATE
    from jaiweb.store.services import session_create

    session = session_create(owner=alice, title="功夫猪", initial_app_state=DEFAULT_STATE)
    draw(session, alice, "/draw 猪猪侠吃下棒棒糖")
    fork = session.leaf_id
    draw(session, alice, "/draw 一掌拍飞超人强")
    session_rewind(session=session, entry_id=fork)
    session.refresh_from_db()
    draw(session, alice, "/draw 超人强逃跑")
    label_add(session_id=session.id, entry_id=fork, text="第一格")
    label_add(session_id=session.id, entry_id=session.leaf_id, kind="bookmark", text="★")
    session.refresh_from_db()
    assert len(images_named(entries_of(session))) == 3
    return session


def entries_of(session):
    """Every entry of the session in append order, the abandoned branch's too."""
    payloads = (
        Entry.objects.filter(session=session).order_by("seq").values_list("payload", flat=True)
    )
    return [parse_entry(payload) for payload in payloads]


def export(session, images=True):
    return list(session_export(session=session, images=images))


def lines_of(lines, type_):
    return [json.loads(line) for line in lines if json.loads(line).get("type") == type_]


def strip_of(session):
    return [
        (p.prompt, p.narration, p.asked)
        for p in strip_panels(branch_rows(session=session_get(session_id=session.id)))
    ]


def panel_ids(session):
    return [
        p.image_id for p in strip_panels(branch_rows(session=session_get(session_id=session.id)))
    ]


def image_bytes_served(user, image_id):
    client = Client()
    client.force_login(user)
    response = client.get(f"/panels/{image_id}")
    body = b"".join(response.streaming_content) if response.status_code == 200 else b""
    return response.status_code, body


def counts():
    return tuple(
        m.objects.count()
        for m in (ComicSession, Entry, Operation, OperationRecord, Label, Image, RenderJob)
    )


def files(media):
    return sorted(p for p in Path(media).rglob("*") if p.is_file()) if Path(media).exists() else []


def wallets():
    return list(
        Wallet.objects.order_by("pk").values_list("pk", "balance")
    ), LedgerEntry.objects.count()


# -- the format ----------------------------------------------------------------------


def test_a_bundle_carries_labels_and_every_panel_of_the_tree(drawn, media):
    lines = export(drawn)
    header = json.loads(lines[0])
    assert header["version"] == 2
    assert (header["session"]["label_count"], header["session"]["image_count"]) == (2, 3)
    images = lines_of(lines, "image")
    assert [i["id"] for i in images] == images_named(entries_of(drawn))[:3]
    for image in images:
        row = Image.objects.get(pk=image["id"])
        data = (Path(media) / row.path).read_bytes()
        assert base64.b64decode(image["data"]) == data
        assert image["sha256"] == hashlib.sha256(data).hexdigest()
        assert (image["size"], image["content_type"]) == (len(data), "image/svg+xml")
    labels = lines_of(lines, "label")
    assert sorted((label["kind"], label["text"]) for label in labels) == [
        ("bookmark", "★"),
        ("label", "第一格"),
    ]
    kinds = [json.loads(line).get("type") for line in lines[1:]]
    assert kinds[-5:] == ["label", "label", "image", "image", "image"]
    # without images: the same file, but for them
    plain = export(drawn, images=False)
    assert json.loads(plain[0])["session"]["image_count"] == 0
    assert plain[1:] == [line for line in lines[1:] if '"type":"image"' not in line]


def test_label_constants_match_the_store():
    assert LABEL_KINDS == Label.KINDS
    assert Label._meta.get_field("text").max_length == LABEL_TEXT_MAX


# -- round trips ---------------------------------------------------------------------


def test_another_user_gets_the_same_strip_with_panels_of_their_own(drawn, alice, bob, media):
    lines = export(drawn)
    before_wallets = wallets()
    imported = session_import(owner=bob, lines=[line.encode() for line in lines])
    assert wallets() == before_wallets  # nothing charged, nothing granted, no wallet made

    assert strip_of(imported) == strip_of(drawn)
    old, new = panel_ids(drawn), panel_ids(imported)
    assert len(new) == 2 and not set(old) & set(new)  # alice's ids are taken: derived ones
    for old_id, new_id in zip(old, new, strict=True):
        assert Image.objects.get(pk=new_id).user == bob
        status, body = image_bytes_served(bob, new_id)
        assert status == 200
        assert body == (Path(media) / Image.objects.get(pk=old_id).path).read_bytes()
        assert image_bytes_served(alice, new_id)[0] == 404  # bob's, private
        assert image_bytes_served(bob, old_id)[0] == 404  # alice's stays hers
    # every other byte of the entries is the same: only image ids moved
    again = export(imported)
    renames = dict(zip(old, new, strict=True))
    third = [i for i in images_named(entries_of(drawn)) if i not in renames]
    renames.update(
        zip(third, [i for i in images_named(entries_of(imported)) if i not in new], strict=True)
    )
    original = [line for line in lines[1:] if '"type":"image"' not in line]
    for old_id, new_id in renames.items():
        original = [line.replace(old_id, new_id) for line in original]
    assert [
        line for line in again[1:] if '"type":"image"' not in line and '"operation_id"' not in line
    ] == [line for line in original if '"operation_id"' not in line]
    assert {i["id"] for i in lines_of(again, "image")} == set(renames.values())
    out = io.StringIO()
    call_command("journal_check", stdout=out)
    assert "checked: OK" in out.getvalue()


def test_the_same_person_importing_twice_gets_the_same_ids_and_no_second_copy(drawn, bob):
    lines = export(drawn)
    one = session_import(owner=bob, lines=lines)
    images = Image.objects.count()
    two = session_import(owner=bob, lines=lines)
    assert Image.objects.count() == images  # the derived ids are the same: the images are there
    assert panel_ids(one) == panel_ids(two)
    first, second = export(one), export(two)
    assert [line for line in first[1:] if '"operation_id"' not in line] == [
        line for line in second[1:] if '"operation_id"' not in line
    ]


def test_the_owner_importing_their_own_bundle_keeps_every_id(drawn, alice):
    lines = export(drawn)
    images = Image.objects.count()
    imported = session_import(owner=alice, lines=lines)
    assert Image.objects.count() == images  # the very images: nothing copied
    assert panel_ids(imported) == panel_ids(drawn)
    again = export(imported)
    entries = [line for line in lines[1:] if '"operation_id"' not in line]
    assert [line for line in again[1:] if '"operation_id"' not in line] == entries


def test_on_another_server_image_ids_are_kept(drawn, bob, media):
    """Where no image has the bundle's ids (another database), they and the entries stay."""
    lines = export(drawn)
    old = panel_ids(drawn)
    for image in Image.objects.all():
        (Path(media) / image.path).unlink()
    Image.objects.all().delete()
    imported = session_import(owner=bob, lines=lines)
    assert panel_ids(imported) == old
    assert all(Image.objects.get(pk=i).user == bob for i in old)
    assert all(image_bytes_served(bob, i)[0] == 200 for i in old)
    again = export(imported)
    assert [line for line in again[1:] if '"operation_id"' not in line] == [
        line for line in lines[1:] if '"operation_id"' not in line
    ]
    assert lines_of(again, "image") == lines_of(lines, "image")


def test_an_image_id_taken_by_other_bytes_of_the_importer_moves(drawn, alice, media):
    lines = export(drawn)
    image = Image.objects.get(pk=panel_ids(drawn)[0])
    (Path(media) / image.path).write_bytes(b"<svg>changed</svg>")
    imported = session_import(owner=alice, lines=lines)
    moved, kept = panel_ids(imported), panel_ids(drawn)
    assert moved[0] != kept[0] and moved[1] == kept[1]
    assert image_bytes_served(alice, moved[0])[1] == base64.b64decode(
        next(i["data"] for i in lines_of(lines, "image") if i["id"] == kept[0])
    )


def test_labels_round_trip(drawn, bob):
    imported = session_import(owner=bob, lines=export(drawn))
    mine = [(la.entry_id, la.kind, la.text, la.created_at) for la in labels_of(session_id=drawn.id)]
    theirs = [
        (la.entry_id, la.kind, la.text, la.created_at) for la in labels_of(session_id=imported.id)
    ]
    assert theirs == mine and len(mine) == 2
    assert lines_of(export(imported), "label") == lines_of(export(drawn), "label")


def test_a_label_on_an_entry_appended_after_the_export_began_is_left_out(drawn, alice):
    lines = session_export(session=drawn)
    header = next(lines)
    draw(drawn, alice, "/say 再见")
    label_add(session_id=drawn.id, entry_id=drawn.leaf_id, text="新的")
    rest = list(lines)
    assert json.loads(header)["session"]["label_count"] == 2
    assert len(lines_of(rest, "label")) == 2
    session_import(owner=alice, lines=[header, *rest])


def test_a_file_naming_images_it_does_not_carry_is_refused(drawn, bob, media):
    """Issue 27: a file that names Alice's images and carries none is no way to reach them."""
    before, stored = counts(), files(media)
    with pytest.raises(ImportRefused, match="neither in this file nor one of yours"):
        session_import(owner=bob, lines=export(drawn, images=False))
    assert counts() == before and files(media) == stored


def test_images_of_someone_else_are_never_exported(drawn, alice, bob, staff_user):
    """Only the session owner's images go in the bundle, even for a session that names
    another user's (one imported before imports checked what they name)."""
    sneaky = session_import(owner=alice, lines=export(drawn, images=False))
    ComicSession.objects.filter(pk=sneaky.pk).update(owner=bob)
    assert panel_ids(sneaky) == panel_ids(drawn)
    assert all(image_bytes_served(bob, i)[0] == 404 for i in panel_ids(sneaky))
    assert lines_of(export(sneaky), "image") == []
    assert json.loads(export(sneaky)[0])["session"]["image_count"] == 0
    # staff may export alice's session: her images are in it
    assert len(lines_of(export(drawn), "image")) == 3


@pytest.fixture
def staff_user(django_user_model):
    return django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)


# -- version 1 -----------------------------------------------------------------------


def as_version_1(lines):
    header = json.loads(lines[0])
    header["version"] = 1
    del header["session"]["label_count"], header["session"]["image_count"]
    rest = [line for line in lines[1:] if json.loads(line).get("type") not in ("label", "image")]
    return [json.dumps(header, ensure_ascii=False), *rest]


def test_version_1_files_still_import(drawn, alice, bob):
    """A version 1 file carries no images: its owner may import it, nobody else."""
    imported = session_import(owner=alice, lines=as_version_1(export(drawn)))
    assert strip_of(imported) == strip_of(drawn) and labels_of(session_id=imported.id) == []
    with pytest.raises(ImportRefused, match="neither in this file nor one of yours"):
        session_import(owner=bob, lines=as_version_1(export(drawn)))


def test_the_version_1_fixture_imports(alice):
    with open(FIXTURES / "jaiweb" / "article_v1.jsonl", "rb") as lines:
        imported = session_import(owner=alice, lines=lines)
    assert imported.entry_count == 7 and imported.leaf_id == "e6"
    assert json.loads(export(imported)[1]) == json.loads(
        (FIXTURES / "jaiweb" / "article_v1.jsonl").read_text(encoding="utf-8").splitlines()[1]
    )


# -- refusals ------------------------------------------------------------------------


def _first(lines, type_):
    return next(i for i, line in enumerate(lines) if json.loads(line).get("type") == type_)


def _image(lines):
    return _first(lines, "image")


def _set(index_of, **changes):
    def edit(lines):
        i = index_of(lines)
        data = json.loads(lines[i])
        data.update(changes)
        lines[i] = json.dumps(data, ensure_ascii=False)
        return lines

    return edit


def _header(**changes):
    def edit(lines):
        data = json.loads(lines[0])
        data["session"].update(changes)
        lines[0] = json.dumps(data, ensure_ascii=False)
        return lines

    return edit


def _label(lines):
    return _first(lines, "label")


def _swap_label_and_image(lines):
    i, j = _label(lines), _image(lines)
    lines[i], lines[j] = lines[j], lines[i]
    return lines


def _image_twice(lines):
    lines.insert(_image(lines) + 1, lines[_image(lines)])
    return _header(image_count=4)(lines)


def _unnamed_image(lines):
    data = json.loads(lines[_image(lines)])
    data["id"] = "img_nobodyknowsthis00"
    lines[_image(lines)] = json.dumps(data)
    return lines


def _not_svg(lines):
    data = b"<html><script>alert(1)</script></html>"
    return _set(
        _image,
        data=base64.b64encode(data).decode(),
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )(lines)


def _label_in_v1(lines):
    header = json.loads(lines[0])
    header["version"] = 1
    del header["session"]["label_count"], header["session"]["image_count"]
    lines[0] = json.dumps(header, ensure_ascii=False)
    return lines


BUNDLE_REFUSALS = [
    ("not base64", _set(_image, data="***"), _image, "data is not base64"),
    ("size", _set(_image, size=1), _image, "size 1, but the data has"),
    ("digest", _set(_image, sha256="0" * 64), _image, "sha256 000"),
    ("content type", _set(_image, content_type="text/html"), _image, "invalid image line"),
    ("not what it says", _not_svg, _image, "the data is not image/svg+xml"),
    ("unnamed", _unnamed_image, _image, "is named by no entry"),
    ("twice", _image_twice, lambda lines: _image(lines) + 1, "twice"),
    ("bad id", _set(_image, id="../../etc/passwd"), _image, "invalid image line: id"),
    ("label order", _swap_label_and_image, lambda lines: _image(lines) + 1, "a label after"),
    ("label target", _set(_label, entry_id="nope"), _label, "names entry 'nope'"),
    ("label text", _set(_label, text="x" * 81), _label, "at most 80 characters"),
    ("label blank", _set(_label, kind="label", text=""), _label, "has a text"),
    ("label kind", _set(_label, kind="sticker"), _label, "invalid label line: kind"),
    ("label in v1", _label_in_v1, _label, "a label in a version 1 file"),
    ("image count", _header(image_count=2), lambda lines: 0, "says 2 images, the file has 3"),
    ("label count", _header(label_count=5), lambda lines: 0, "says 5 labels, the file has 2"),
    ("no counts", _header(label_count=None), lambda lines: 0, "invalid header"),
]


@pytest.mark.parametrize(
    ("edit", "where", "reason"),
    [case[1:] for case in BUNDLE_REFUSALS],
    ids=[case[0] for case in BUNDLE_REFUSALS],
)
def test_refusals_name_the_line_and_write_nothing(drawn, bob, media, edit, where, reason):
    lines = edit(export(drawn))
    before, before_files = counts(), files(media)
    with pytest.raises(ImportRefused) as refused:
        session_import(owner=bob, lines=lines)
    assert refused.value.line_no == where(lines) + 1, str(refused.value)
    assert reason in str(refused.value)
    assert counts() == before and files(media) == before_files


def test_a_bundle_over_the_cap_is_refused_before_anything_is_written(drawn, bob, media, settings):
    lines = [line + "\n" for line in export(drawn)]
    size = sum(len(line.encode()) for line in lines)
    before, before_files = counts(), files(media)
    settings.JAIWEB_MAX_BUNDLE_BYTES = size - 1
    with pytest.raises(BundleTooLarge, match=f"larger than {size - 1} bytes"):
        session_import(owner=bob, lines=lines)
    assert counts() == before and files(media) == before_files
    settings.JAIWEB_MAX_BUNDLE_BYTES = size
    session_import(owner=bob, lines=lines)
    with pytest.raises(BundleTooLarge):
        session_import(owner=bob, lines=lines, max_bytes=100)
    session_import(owner=bob, lines=lines, max_bytes=None)


def test_the_commands_carry_images(drawn, bob, tmp_path, media):
    path = tmp_path / "bundle.jsonl"
    call_command("export_session", drawn.id, "--images", "-o", str(path))
    assert len(lines_of(path.read_text(encoding="utf-8").splitlines(), "image")) == 3
    out = io.StringIO()
    call_command("import_session", str(path), "--owner", "bob", stdout=out)
    assert "2 labels" in out.getvalue()
    imported = ComicSession.objects.filter(owner=bob).get()
    assert strip_of(imported) == strip_of(drawn)
    assert all(image_bytes_served(bob, i)[0] == 200 for i in panel_ids(imported))

    with pytest.raises(
        CommandError,
        match=r"larger than 100 bytes \(JAIWEB_MAX_BUNDLE_BYTES\); nothing was imported",
    ):
        call_command("import_session", str(path), "--owner", "bob", "--max-bytes", "100")


@pytest.mark.django_db(transaction=True)  # the command is a child: it sees committed rows
@pytest.mark.parametrize(("kind", "depth"), list(zip(DEEP_FILES, TOO_DEEP, strict=True)))
def test_the_command_refuses_a_line_nested_past_the_limit_without_a_traceback(
    bob, tmp_path, kind, depth
):
    """It was a RecursionError's traceback: now the refusal naming the line, exit 1."""
    path = tmp_path / f"{kind}.jsonl"
    path.write_bytes(deep_file(kind, depth))
    before = counts()
    done = manage(connection.settings_dict, "import_session", str(path), "--owner", "bob")
    line = DEEP_FILES[kind][1]
    assert (done.returncode, done.out) == (1, [])
    assert done.err == [f"CommandError: {path}: {refusal(line)}; nothing was imported"]
    assert counts() == before

"""Comic exports of a long branch: a 100-panel branch of the local renderer's SVG panels
(ten of them with edited lettering) exported as a PDF and as a CBZ in a 2x2 layout.

Prints each export's time (and the CPU time it took, which a loaded machine moves less),
size and pages beside the time to read the panels' bytes from disk (the floor no export
can go under), and the peak memory Python allocated during each export (tracemalloc),
made as bytes and written into a file, for a quarter of the branch and for all of it.

Then the memory of the whole process, C libraries included (Cairo, Pillow, qpdf, zlib:
tracemalloc sees none of them): each export runs alone in a child process, which reads
the branch and lays its pages out, then reports its peak resident set size while it
draws the export above its resident set size just before (Linux's VmHWM, reset through
/proc/self/clear_refs). That for branches of several sizes (``--memory-panels``), beside
one page's composition measured the same way in the same run: page 1 drawn as a Pillow
image and written as a PNG, what every export does once per page. Memory that does not
grow with the pages stays near that, whatever the branch. docs/EXPORTS.md ("Time" and
"Memory") has the last figures.

    .venv/bin/python bench/export.py                  # 100 panels; memory at 4 to 400
    .venv/bin/python bench/export.py --panels 40 --repeat 1 --memory-panels 4,40
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import figure, header, load, parser, scratch_django  # noqa: E402

WAYS = ("bytes", "file")  # the request's way (comic_export) and the background job's

STATE = {"猪猪侠": {"buff": "超级棒棒糖(功夫大师)", "skill": "降龙十巴掌", "mood": "得意"}}
SCENES = (
    ("猪猪侠在武林大会擂台上对决超人强", "猪猪侠吃下超级棒棒糖，变身功夫大师！", "来吧！"),
    ("迷糊老师在教室里讲课", "迷糊老师拿错了药瓶。", "这是棒棒糖吗？"),
    ("Pig-Man walks in the park", "A quiet morning before the tournament.", "What a day!"),
    ("使出绝招降龙十巴掌，一掌拍飞超人强！", "降龙十巴掌！超人强飞出了擂台。", "看招！"),
)


def branch_of(panels: int):
    """A session whose branch holds ``panels`` panels, each a prompt, a generate_image call
    and its result (rendered by the local renderer and kept as the owner's image)."""
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from jaiweb.render.backends.local import LocalRenderer
    from jaiweb.render.panel.script import compose
    from jaiweb.render.services import credits_grant, render_request
    from jaiweb.store.services import entry_append, session_create
    from journal.entries import (
        AssistantMessage,
        MessageEntry,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )

    user = get_user_model().objects.create_user(f"bench{panels}", password="bench-pass-1")
    credits_grant(user=user, amount=10 * panels + 100)
    session = session_create(
        owner=user,
        title=f"{panels} panels",
        initial_app_state=dict(characters=STATE, permission_mode="auto"),
    )
    renderer = LocalRenderer()
    start = timezone.now()
    leaf = None
    for i in range(panels):
        scene, caption, said = SCENES[i % len(SCENES)]
        prompt = compose(f"{scene} ({i + 1})", caption, (("猪猪侠", said),), lang="zh")
        params = {"prompt": prompt, "characters": STATE, "seed": i}
        image = render_request(user=user, key=f"bench-{panels}-{i}", params=params,
                               renderer=renderer).image_id  # fmt: skip
        at = start + timedelta(seconds=i)
        call = ToolCall(id=f"c{i}", name="generate_image", arguments={"prompt": prompt})
        entries = [
            MessageEntry(id=f"u{i}", parent_id=leaf, timestamp=at,
                         message=UserMessage(content=f"panel {i + 1}")),
            MessageEntry(id=f"a{i}", parent_id=f"u{i}", timestamp=at,
                         message=AssistantMessage(content="drawing", tool_calls=[call],
                                                  stop_reason="tool_use")),
            MessageEntry(id=f"r{i}", parent_id=f"a{i}", timestamp=at,
                         message=ToolResultMessage(tool_call_id=f"c{i}",
                                                   tool_name="generate_image",
                                                   content="panel rendered",
                                                   details={"image_id": image, "cost": 10})),
        ]  # fmt: skip
        entry_append(session_id=session.id, entries=entries, expected_leaf_id=leaf)
        leaf = f"r{i}"
    session.refresh_from_db()
    return session


def letter(session, count: int) -> None:
    """Edit the lettering of ``count`` panels (an app_state entry each)."""
    from jaiweb.comic.services import panel_lettering_set

    for i in range(count):
        session.refresh_from_db()
        panel_lettering_set(
            session=session,
            entry_id=f"r{i * 7}",
            edit={"caption": f"Edited caption {i}", "speech": [
                {"character": "猪猪侠", "text": f"改过的台词 {i}", "x": 0.3, "y": 0.2}
            ]},
            expected_leaf_id=session.leaf_id,
        )  # fmt: skip
    session.refresh_from_db()


def read_seconds(session) -> tuple[float, int]:
    """Seconds to read every panel's bytes from disk, and how many bytes."""
    from django.conf import settings

    from jaiweb.comic.exports import comic_panels
    from jaiweb.render.selectors import images_by_id

    started = time.perf_counter()
    panels, _layout, _when = comic_panels(session=session, leaf_id=None)
    ids = [p.image_id for p in panels if p.image_id]
    images = images_by_id(ids=ids, owner_id=session.owner_id)
    size = sum(len((Path(settings.MEDIA_ROOT) / images[i].path).read_bytes()) for i in ids)
    return time.perf_counter() - started, size


def timed_export(
    session, fmt: str, repeat: int
) -> tuple[list[float], list[float], int, int, int, int]:
    """Each run's seconds and CPU seconds, the file's size, its pages, and the peaks of
    Python's allocations while it is made as bytes (the request's way) and while it is
    written into a file (the background export's way)."""
    import tempfile

    from jaiweb.comic.exports import comic_export, comic_work, comic_work_write

    times, cpu, data, pages = [], [], b"", 0
    for _ in range(repeat):
        started, cpu_started = time.perf_counter(), time.process_time()
        out = comic_export(session=session, leaf_id=None, format=fmt, layout="2x2")
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
        data, pages = out.data, out.page_count
    tracemalloc.start()
    again = comic_export(session=session, leaf_id=None, format=fmt, layout="2x2").data
    _now, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert again == data, "an export of one node is the same bytes every time"
    work = comic_work(session=session, leaf_id=None, format=fmt, layout="2x2")
    with tempfile.TemporaryFile() as file:
        tracemalloc.start()
        comic_work_write(work, file)
        _now, file_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        file.seek(0)
        assert file.read() == data, "the file is the same bytes"
    return times, cpu, len(data), pages, peak, file_peak


def _status_kb(field: str) -> int:
    """A field of /proc/self/status, in kB (VmRSS: resident now; VmHWM: its peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def _peak_reset() -> None:
    """Start VmHWM again from the resident set now (Linux ≥ 4.0: clear_refs, 5)."""
    Path("/proc/self/clear_refs").write_text("5")


def child_memory(session_id: str, what: str, way: str) -> None:
    """In a child process: one export (``what`` pdf or cbz, ``way`` bytes or file) or one
    page's composition (``what`` page), printed as JSON: the resident set before, its peak
    above that while drawing, the seconds, the bytes made."""
    import tempfile

    import django

    django.setup()
    # Imported before the baseline: a library's code is not an export's memory.
    for name in ("cairosvg", "fpdf", "pikepdf", "fontTools.subset", "PIL.Image", "PIL.ImageDraw"):
        with contextlib.suppress(ImportError):
            __import__(name)
    from jaiweb.comic.drawing import draw_page, png_bytes
    from jaiweb.comic.exports import comic_export, comic_work, comic_work_write
    from jaiweb.comic.fonts import lettering_font
    from jaiweb.store.models import ComicSession

    session = ComicSession.objects.get(id=session_id)
    lettering_font()
    work = comic_work(session=session, leaf_id=None, format="cbz" if what == "page" else what,
                      layout="2x2")  # fmt: skip
    gc.collect()
    before = _status_kb("VmRSS")
    _peak_reset()
    started = time.perf_counter()
    if what == "page":
        size = len(png_bytes(draw_page(work.pages[0], work.pictures, work.font)))
    elif way == "bytes":
        size = len(comic_export(session=session, leaf_id=None, format=what, layout="2x2").data)
    else:
        with tempfile.TemporaryFile() as file:
            comic_work_write(work, file)
            size = file.tell()
    seconds = time.perf_counter() - started
    peak = _status_kb("VmHWM")
    print(json.dumps({"before": before * 1024, "peak": (peak - before) * 1024,
                      "seconds": seconds, "size": size, "pages": len(work.pages)}))  # fmt: skip


def measured(session, what: str, way: str) -> dict:
    """One export (or page) in a child process of its own, on this run's database."""
    done = subprocess.run(
        [sys.executable, __file__, "--child-memory", session.id, what, way],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise SystemExit(f"the child measuring {what} ({way}) failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def memory_table(sessions: dict[int, object], largest: int) -> None:
    """Each export's peak RSS in a child, for every branch size, and one page's."""
    print(f"\nPeak resident memory of an export above the process's before it (a child process "
          f"each, C libraries included; {load()} at the start)")  # fmt: skip
    page = measured(sessions[largest], "page", "file")
    print(f"  one page's composition (page 1 drawn and written as PNG): "
          f"{page['peak'] / 1e6:.1f} MB")  # fmt: skip
    heads = [f"{fmt} {way}" for fmt in ("pdf", "cbz") for way in WAYS]
    print("  panels  pages  " + "  ".join(f"{h:>20}" for h in heads) + "  load")
    for panels in sorted(sessions):
        row, pages, kept = [], 0, {}
        for fmt in ("pdf", "cbz"):
            for way in WAYS:
                got = measured(sessions[panels], fmt, way)
                pages, kept[(fmt, way)] = got["pages"], got
                row.append(f"{got['peak'] / 1e6:6.1f} MB ({got['seconds']:5.2f} s)")
        print(f"  {panels:>6}  {pages:>5}  " + "  ".join(f"{c:>20}" for c in row)
              + f"  {os.getloadavg()[0]:.1f}")  # fmt: skip
        if panels == largest:
            for fmt in ("pdf", "cbz"):
                figure(
                    f"{fmt.upper()} export of a {panels}-panel branch (2x2) into a file: peak RSS",
                    kept[(fmt, "file")]["peak"] / 1e6,
                    page["peak"] / 1e6,
                    unit="MB",
                    floor_name="one page's composition",
                    target=None,
                )


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child-memory":
        child_memory(*sys.argv[2:])
        return
    p = parser(__doc__)
    p.add_argument("--panels", type=int, default=100, help="panels on the branch")
    p.add_argument("--repeat", type=int, default=3, help="timed exports of each format")
    p.add_argument(
        "--memory-panels",
        default="4,25,100,400",
        help="branch sizes whose exports' peak RSS is measured (comma-separated)",
    )
    args = p.parse_args()
    sizes = sorted({int(n) for n in args.memory_panels.split(",") if n.strip()})
    header(args, f"a {args.panels}-panel branch of local SVG panels, 2x2, to PDF and CBZ")
    with scratch_django("sqlite", args, prefix="jaiweb-export-"):
        from jaiweb.comic.fonts import lettering_font

        lettering_font()  # found once per process, as in a running studio
        quarter = branch_of(max(args.panels // 4, 1))
        whole = branch_of(args.panels)
        letter(whole, min(10, args.panels // 7 + 1))
        for session in (quarter, whole):
            read, size = read_seconds(session)
            panels = session.title.split()[0]
            print(f"\n{panels} panels: reading the panels' bytes {read * 1000:.0f} ms "
                  f"({size / 1e6:.1f} MB)")  # fmt: skip
            for fmt in ("pdf", "cbz"):
                times, cpu, length, pages, peak, file_peak = timed_export(session, fmt, args.repeat)
                print(
                    f"  {fmt}: median {statistics.median(times):.2f} s "
                    f"(min {min(times):.2f}, max {max(times):.2f}, {len(times)} runs; "
                    f"CPU {statistics.median(cpu):.2f} s), "
                    f"{pages} pages, {length / 1e6:.2f} MB, peak Python memory "
                    f"{peak / 1e6:.0f} MB ({file_peak / 1e6:.0f} MB into a file); "
                    f"reading the bytes: {read:.2f} s"
                )
                if session is whole:
                    figure(
                        f"{fmt.upper()} export of a {panels}-panel branch (2x2)",
                        statistics.median(times),
                        read,
                        unit="s",
                        floor_name="reading the panels' bytes",
                        target=None,
                    )

        if sizes:
            made = {len_of(quarter): quarter, len_of(whole): whole}
            sessions = {n: made.get(n) or branch_of(n) for n in sizes}
            memory_table(sessions, max(sizes))


def len_of(session) -> int:
    return int(session.title.split()[0])


if __name__ == "__main__":
    main()

"""The lettering's font: Noto Sans CJK (Simplified Chinese face) when it is installed, so
Chinese captions render; a Latin font besides as a fallback; a clear error when neither."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path

from jaiweb.comic.errors import ExportUnavailable

log = logging.getLogger("jaiweb.comic")

# (path, the face's name in a collection): Debian's fonts-noto-cjk first, then where other
# distributions put the same files, then Latin-only fonts (Chinese shows as boxes there).
CANDIDATES: tuple[tuple[str, str | None], ...] = (
    ("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", "Noto Sans CJK SC"),
    ("/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc", "Noto Sans CJK SC"),
    ("/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc", "Noto Sans CJK SC"),
    ("/usr/share/fonts/opentype/noto/NotoSansCJKsc-Regular.otf", None),
    ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", None),
    ("/usr/share/fonts/TTF/DejaVuSans.ttf", None),
)
INSTALL_HINT = "install Debian's fonts-noto-cjk (apt-get install fonts-noto-cjk)"


@dataclass(frozen=True, slots=True)
class LetteringFont:
    path: str
    index: int  # the face's number in a collection (.ttc); 0 for a single font
    cjk: bool


@functools.cache
def lettering_font(candidates: tuple[tuple[str, str | None], ...] = CANDIDATES) -> LetteringFont:
    """The first installed candidate; ``ExportUnavailable`` naming what to install when none
    is. A Latin-only fallback is logged, since Chinese captions would not show in it."""
    from PIL import ImageFont

    for path, face in candidates:
        if not Path(path).is_file():
            continue
        index = _face_index(path, face) if face else 0
        if index is None:
            continue
        cjk = "CJK" in ImageFont.truetype(path, 12, index=index).getname()[0]
        if not cjk:
            log.warning("comic exports letter with %s: no CJK font found (%s)", path, INSTALL_HINT)
        return LetteringFont(path, index, cjk)
    raise ExportUnavailable(f"no font to letter the comic with: {INSTALL_HINT}")


def _face_index(path: str, face: str) -> int | None:
    """The number of the face called ``face`` in the collection at ``path``."""
    from PIL import ImageFont

    for index in range(32):
        try:
            name = ImageFont.truetype(path, 12, index=index).getname()[0]
        except OSError:
            return None
        if name == face:
            return index
    return None

"""A panel's picture, ready for its frame: SVG rasterised by CairoSVG, PNG, JPEG and WebP
opened by Pillow, scaled to fit the frame's art box without cropping."""

from __future__ import annotations

import colorsys
import io
import logging
import re
import sys
from typing import Any

from jaiweb.comic.errors import ExportUnavailable

log = logging.getLogger("jaiweb.comic")

RASTER_TYPES = ("image/png", "image/jpeg", "image/webp")


HSL = re.compile(
    rb"hsla?\(\s*(-?[\d.]+)(?:deg)?\s*[,\s]\s*([\d.]+)%\s*[,\s]\s*([\d.]+)%\s*"
    rb"(?:[,/]\s*[\d.]+%?\s*)?\)"
)


def _hex_of_hsl(match: re.Match[bytes]) -> bytes:
    hue, saturation, lightness = (float(group) for group in match.groups())
    red, green, blue = colorsys.hls_to_rgb((hue % 360) / 360, lightness / 100, saturation / 100)
    return b"#%02x%02x%02x" % tuple(round(min(max(c, 0.0), 1.0) * 255) for c in (red, green, blue))


def hsl_as_hex(data: bytes) -> bytes:
    """The SVG with its CSS ``hsl()`` colours written as ``#rrggbb``: CairoSVG reads only
    hex, ``rgb()`` and named colours, and would paint an ``hsl()`` fill black. An alpha
    given inside ``hsla()`` is dropped (the local renderer gives opacity separately)."""
    return HSL.sub(_hex_of_hsl, data)


def svg_drawn(data: bytes, *, width: int) -> Any:
    """The SVG drawn ``width`` pixels wide as an RGBA Pillow image, with nothing it names
    outside itself; ``ExportUnavailable`` when the Cairo library is not installed (CairoSVG
    loads it on first use). Cairo's pixels are read as they are, not written as a PNG and
    read back: the same pixels for a fraction of the time."""
    try:
        import cairosvg  # noqa: F401 - loads the Cairo library, or says it is missing
        from cairosvg.parser import Tree
        from cairosvg.surface import PNGSurface
    except (ImportError, OSError) as exc:
        raise ExportUnavailable(
            "SVG panels need the Cairo library to be drawn into an export: install "
            f"libcairo2 (apt-get install libcairo2) ({exc})"
        ) from exc
    from PIL import Image

    # unsafe=False: no XML entities, and nothing fetched but the ``data:`` URLs the SVG
    # carries (a file or network address draws nothing), so a panel reads nothing else.
    tree = Tree(bytestring=hsl_as_hex(data), unsafe=False)
    drawn = PNGSurface(tree, None, 96, output_width=width)  # None: drawn, written nowhere
    surface = drawn.cairo
    surface.flush()
    if sys.byteorder != "little":  # Pillow reads no big-endian premultiplied ARGB
        out = io.BytesIO()
        surface.write_to_png(out)
        drawn.finish()
        with Image.open(out) as opened:
            return opened.convert("RGBA")
    # Cairo's ARGB32 is premultiplied and native-endian: B, G, R, A in memory here.
    size, stride = (surface.get_width(), surface.get_height()), surface.get_stride()
    pixels = bytes(surface.get_data())
    drawn.finish()
    return Image.frombuffer("RGBA", size, pixels, "raw", "BGRa", stride, 1)


def fitted(data: bytes | None, content_type: str, width: int, height: int) -> Any | None:
    """The picture scaled to fit ``width`` × ``height`` (its shape kept), as an RGB Pillow
    image; None when there is none or it cannot be read (the frame is left empty)."""
    from PIL import Image, ImageOps

    if data is None:
        return None
    try:
        if content_type == "image/svg+xml":
            picture = svg_drawn(data, width=width)
        elif content_type not in RASTER_TYPES:
            return None
        else:
            with Image.open(io.BytesIO(data)) as opened:
                opened.load()
                picture = opened.convert("RGBA")
    except ExportUnavailable:
        raise
    except Exception as exc:  # any picture a backend or an import left: an empty frame
        log.warning("a panel picture could not be read for an export: %s", exc)
        return None
    picture = ImageOps.contain(picture, (width, height), Image.Resampling.LANCZOS)
    flat = Image.new("RGB", picture.size, "white")
    flat.paste(picture, mask=picture.getchannel("A"))
    return flat

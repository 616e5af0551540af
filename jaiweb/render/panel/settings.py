"""Draws a panel's setting: the sky for its time of day and weather, the place behind the
figures, what stands in front of them (a hotpot's table, a photographer's camera) and
the weather over everything.

Each setting of ``vocabulary.SETTINGS`` (and the plain outdoors, ``default``) is drawn
here in a group ``<g data-setting="…">``. Deterministic: the seed (``Dice``) places the
details (where the sun, the palm tree, the fireworks are), nothing else varies.
"""

from __future__ import annotations

import colorsys
import hashlib
from collections.abc import Callable

from jaiweb.render.panel.variation import Dice
from jaiweb.render.panel.vocabulary import INDOOR

WIDTH = 640
LINE = 'stroke="#222" stroke-width="2"'


def backdrop(setting: str, time: str, weather: str, folded: str, feet: float, height: float,
             dice: Dice) -> str:  # fmt: skip
    """What stands behind the figures: the sky (outdoors) and the place."""
    floor = feet - 26
    draw = PLACES.get(setting, _outdoors)
    body = draw(floor, height, dice, time)
    if setting not in INDOOR:
        # no sun over a ring's crowd, no moon in front of the fireworks
        heavens = "" if setting == "ring" else _heavens(time, weather, floor, dice)
        if setting == "fireworks":
            heavens = _heavens(time, weather, floor, dice, moon=False)
        body = _sky(folded, time, weather, height) + heavens + body
    return f'<g data-setting="{setting or "default"}">{body}</g>'


def foreground(setting: str, feet: float, height: float, dice: Dice) -> str:
    """What stands in front of the figures: a hotpot's table, a group photo's camera."""
    if setting == "hotpot":
        return _hotpot_table(feet, dice)
    if setting == "group-photo":
        return _photo_frame(feet, height, dice)
    return ""


def weather_over(setting: str, weather: str, height: float, dice: Dice) -> str:
    """Rain, snow or wind over the whole stage (none indoors)."""
    if setting in INDOOR or weather not in ("rain", "snow", "wind"):
        return ""
    if weather == "rain":
        xs = dice.numbers("rain-x", 32, -40, WIDTH)
        ys = dice.numbers("rain-y", 32, 0, int(height) - 30)
        lines = "".join(f"M {x} {y} l -8 26 " for x, y in zip(xs, ys, strict=True))
        xs2 = dice.numbers("rain-x2", 32, -40, WIDTH)
        ys2 = dice.numbers("rain-y2", 32, 0, int(height) - 30)
        lines += "".join(f"M {x} {y} l -8 26 " for x, y in zip(xs2, ys2, strict=True))
        return (
            f'<g data-weather="rain"><path d="{lines}" stroke="#5c8fc9" stroke-width="2" '
            'stroke-opacity="0.75" stroke-linecap="round"/></g>'
        )
    if weather == "snow":
        xs = dice.numbers("snow-x", 32, 0, WIDTH)
        ys = dice.numbers("snow-y", 32, 0, int(height) - 20)
        flakes = "".join(
            f'<circle cx="{x}" cy="{y}" r="{3 + (x + y) % 3}"/>'
            for x, y in zip(xs, ys, strict=True)
        )
        return f'<g data-weather="snow" fill="#fff" stroke="#b0bec5">{flakes}</g>'
    ys = dice.numbers("wind", 4, 40, int(height) - 160)
    swirls = "".join(
        f'<path d="M {40 + i * 130} {y} q 60 -20 120 0 t 80 -8" stroke="#eceff1" '
        'stroke-width="3" fill="none" stroke-linecap="round"/>'
        f'<ellipse cx="{170 + i * 130}" cy="{y - 8}" rx="7" ry="3.5" fill="#8bc34a" '
        f'transform="rotate(-30 {170 + i * 130} {y - 8})"/>'
        for i, y in enumerate(ys)
    )
    return f'<g data-weather="wind">{swirls}</g>'


def hsl(hue: float, saturation: float, lightness: float) -> str:
    """A colour as ``#rrggbb`` (some SVG readers, cairosvg among them, know no ``hsl()``)."""
    r, g, b = colorsys.hls_to_rgb(hue % 360 / 360, lightness / 100, saturation / 100)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


# --- sky ---------------------------------------------------------------------------------

SKIES = {  # time → (top, bottom) of the sky
    "morning": ("#9fd3ff", "#ffe0b2"),
    "evening": ("#5e35b1", "#ff8a65"),
    "night": ("#0b1533", "#27407a"),
}
GREY = ("#90a4ae", "#cfd8dc")


def _sky(folded: str, time: str, weather: str, height: float) -> str:
    hue = int(hashlib.sha256(folded.encode()).hexdigest()[:4], 16) % 60 + 180  # blues
    top, bottom = hsl(hue, 70, 84), hsl(hue + 20, 60, 93)
    if time in SKIES:
        top, bottom = SKIES[time]
    if weather in ("rain", "cloudy", "snow") and time != "night":
        top, bottom = GREY
    return (
        '<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">'
        f'<stop offset="0" stop-color="{top}"/><stop offset="1" stop-color="{bottom}"/>'
        f'</linearGradient></defs><rect width="{WIDTH}" height="{height:.0f}" fill="url(#sky)"/>'
    )


def _heavens(time: str, weather: str, floor: float, dice: Dice, moon: bool = True) -> str:
    """The sun (lower and redder at the day's ends), or the moon and stars; clouds."""
    out = ""
    x, up = dice.number("sun", 50, WIDTH - 50), dice.number("sun-height", 170, 230)
    if time == "night":
        xs = dice.numbers("stars", 14, 10, WIDTH - 10)
        ys = dice.numbers("stars-y", 14, 10, int(floor) - 120)
        out += "".join(
            f'<circle cx="{sx}" cy="{sy}" r="{1 + (sx % 2)}" fill="#fff9c4"/>'
            for sx, sy in zip(xs, ys, strict=True)
        )
        if moon:  # a crescent
            out += (
                f'<circle cx="{x}" cy="{floor - up:.0f}" r="26" fill="#fff59d"/>'
                f'<circle cx="{x + 12}" cy="{floor - up - 8:.0f}" r="22" fill="#0b1533"/>'
            )
    elif weather not in ("rain", "cloudy", "snow"):
        low = 90 if time in ("morning", "evening") else 0
        colour = "#ffb74d" if low else "#ffe082"
        out += f'<circle cx="{x}" cy="{floor - up + low:.0f}" r="30" fill="{colour}"/>'
    clouds = dice.numbers("clouds", 4, 40, WIDTH - 40)
    grey = weather in ("rain", "cloudy", "snow")
    if time != "night" or grey:
        fill = "#78909c" if grey else "#fff"
        out += _cloud(clouds[0], floor - 250 + clouds[2] % 40, fill)
        out += _cloud(clouds[1], floor - 190 + clouds[3] % 40, fill)
        if grey:
            out += _cloud(clouds[2], floor - 230 + clouds[0] % 30, fill)
    return out


def _cloud(x: int, y: float, fill: str = "#fff") -> str:
    return (
        f'<g fill="{fill}" fill-opacity="0.9"><ellipse cx="{x}" cy="{y:.0f}" rx="30" ry="13"/>'
        f'<ellipse cx="{x - 20}" cy="{y + 5:.0f}" rx="18" ry="10"/>'
        f'<ellipse cx="{x + 22}" cy="{y + 4:.0f}" rx="20" ry="11"/></g>'
    )


def _ground(floor: float, height: float, fill: str) -> str:
    return f'<rect y="{floor:.0f}" width="{WIDTH}" height="{height - floor:.0f}" fill="{fill}"/>'


def _night(time: str) -> bool:
    return time in ("night", "evening")


# --- outdoor places ----------------------------------------------------------------------


def _outdoors(floor: float, height: float, dice: Dice, time: str) -> str:
    left, right = dice.numbers("hills", 2, 30, 90)
    crest = dice.number("crest", 120, 200)
    dark = time == "night"
    return (
        f'<path d="M 0 {floor:.0f} Q {crest} {floor - left:.0f} 320 {floor:.0f} '
        f'Q {WIDTH - crest} {floor - right:.0f} {WIDTH} {floor:.0f} Z" '
        f'fill="{"#33691e" if dark else "#9ccc65"}"/>'
        + _ground(floor, height, "#2e5a1c" if dark else "#7cb342")
    )


def _beach(floor: float, height: float, dice: Dice, time: str) -> str:
    sea_top = floor - 80
    palm = dice.choice("palm-side", (70, WIDTH - 70))
    parasol = WIDTH - palm + dice.number("parasol", -30, 30)
    waves = "".join(
        f'<path d="M {x} {sea_top + 20 + (x // 40 % 3) * 16:.0f} q 10 -7 20 0 q 10 7 20 0" '
        'stroke="#e1f5fe" stroke-width="2.5" fill="none"/>'
        for x in dice.numbers("waves", 8, 10, WIDTH - 50)
    )
    stripes = "".join(
        f'<path d="M {parasol} {floor - 118:.0f} L {parasol + dx} {floor - 84:.0f}" '
        'stroke="#fff" stroke-width="8"/>'
        for dx in (-40, 0, 40)
    )
    fronds = "".join(
        f'<path d="M {palm} {floor - 170:.0f} q {dx * 0.6:.0f} -30 {dx} {dy}" '
        'stroke="#2e7d32" stroke-width="12" fill="none" stroke-linecap="round"/>'
        for dx, dy in ((-60, 20), (60, 20), (-40, 40), (44, 44), (0, -10))
    )
    return (
        f'<rect y="{sea_top:.0f}" width="{WIDTH}" height="{floor - sea_top + 4:.0f}" '
        'fill="#1e88e5"/>' + waves
        + _ground(floor - 6, height, "#f3d9a4")
        + f'<path d="M 0 {floor - 6:.0f} q 80 -10 160 0 t 160 0 t 160 0 t 160 0" '
        'fill="#e1f5fe" stroke="#fff" stroke-width="3"/>'
        + f'<path d="M {palm - 8} {floor + 20:.0f} q 14 -90 8 -190" stroke="#8d6e63" '
        'stroke-width="14" fill="none"/>' + fronds
        + f'<path d="M {parasol} {floor + 24:.0f} L {parasol} {floor - 118:.0f}" '
        'stroke="#6d4c41" stroke-width="4"/>'
        + f'<path d="M {parasol - 70} {floor - 84:.0f} Q {parasol} {floor - 150:.0f} '
        f'{parasol + 70} {floor - 84:.0f} Z" fill="#e53935" {LINE}/>' + stripes
        + f'<ellipse cx="{palm + 60}" cy="{floor + 30:.0f}" rx="9" ry="5" fill="#ff8a65"/>'
    )  # fmt: skip


def _skyline(floor: float, dice: Dice, time: str, name: str, base: float, tall: int,
             scale: float = 1.0) -> str:  # fmt: skip
    """A row of buildings standing on ``base``, lit windows at night."""
    heights = dice.numbers(f"{name}-heights", 9, tall // 2, tall)
    hues = dice.numbers(f"{name}-hues", 9, 190, 240)
    lit = dice.numbers(f"{name}-lit", 9, 0, 7)
    dark = _night(time)
    out = []
    w = 74 * scale
    for i, (h, hue) in enumerate(zip(heights, hues, strict=True)):
        x = i * w - 8
        light = 22 if dark else 62
        out.append(
            f'<rect x="{x:.0f}" y="{base - h:.0f}" width="{w - 6:.0f}" height="{h}" '
            f'fill="{hsl(hue, 18, light)}" stroke="#37474f" stroke-width="1.5"/>'
        )
        for row in range(int(h // (26 * scale))):
            for col in range(2):
                on = dark and (row + col + lit[i]) % 3 != 0
                window = "#ffe082" if on else ("#1a237e" if dark else "#bbdefb")
                out.append(
                    f'<rect x="{x + (10 + col * 32) * scale:.0f}" '
                    f'y="{base - h + (10 + row * 26) * scale:.0f}" width="{18 * scale:.0f}" '
                    f'height="{12 * scale:.0f}" fill="{window}"/>'
                )
    return "".join(out)


def _city(floor: float, height: float, dice: Dice, time: str) -> str:
    lamp = dice.choice("lamp", (46, WIDTH - 46))
    glow = "#fff59d" if _night(time) else "#eceff1"
    return (
        _skyline(floor, dice, time, "city", floor - 20, 230)
        + _ground(floor - 20, height, "#9e9e9e")
        + f'<rect y="{floor - 20:.0f}" width="{WIDTH}" height="10" fill="#bdbdbd"/>'
        + f'<path d="M {lamp} {floor + 10:.0f} L {lamp} {floor - 150:.0f} q 0 -14 20 -14" '
        'stroke="#37474f" stroke-width="6" fill="none"/>'
        + f'<ellipse cx="{lamp + 24}" cy="{floor - 160:.0f}" rx="12" ry="7" fill="{glow}" '
        f"{LINE}/>"
    )


def _park(floor: float, height: float, dice: Dice, time: str) -> str:
    trees = dice.numbers("trees", 2, 20, 120)
    bench = dice.number("bench", 200, 420)
    flowers = dice.numbers("flowers", 8, 10, WIDTH - 10)
    return (
        _outdoors(floor, height, dice, time)
        + _tree(trees[0], floor, 1.0) + _tree(WIDTH - trees[1], floor, 0.85)
        + f'<g transform="translate({bench},{floor - 40:.0f})"><rect width="90" height="8" '
        f'fill="#8d6e63" {LINE}/><rect y="-22" width="90" height="8" fill="#8d6e63" {LINE}/>'
        '<path d="M 8 8 v 18 M 82 8 v 18" stroke="#5d4037" stroke-width="5"/></g>'
        + "".join(
            f'<circle cx="{x}" cy="{floor + 12 + (x % 30):.0f}" r="5" '
            f'fill="{("#ec407a", "#fff176", "#ffffff")[x % 3]}"/>'
            for x in flowers
        )
    )  # fmt: skip


def _tree(x: float, floor: float, s: float) -> str:
    return (
        f'<rect x="{x - 9 * s:.0f}" y="{floor - 120 * s:.0f}" width="{18 * s:.0f}" '
        f'height="{124 * s:.0f}" fill="#795548"/>'
        f'<circle cx="{x:.0f}" cy="{floor - 150 * s:.0f}" r="{54 * s:.0f}" fill="#43a047" '
        f"{LINE}/>"
        f'<circle cx="{x - 30 * s:.0f}" cy="{floor - 118 * s:.0f}" r="{34 * s:.0f}" '
        f'fill="#388e3c"/>'
    )


def _road(floor: float, height: float, dice: Dice, time: str) -> str:
    dashes = dice.number("dashes", 0, 60)
    sign = dice.choice("sign", (40, WIDTH - 40))
    return (
        f'<path d="M 0 {floor - 90:.0f} Q 160 {floor - 150:.0f} 320 {floor - 90:.0f} '
        f'T {WIDTH} {floor - 90:.0f} L {WIDTH} {floor:.0f} L 0 {floor:.0f} Z" '
        f'fill="{"#33691e" if time == "night" else "#aed581"}"/>'
        + _ground(floor - 40, height, "#546e7a")
        + f'<rect y="{floor - 46:.0f}" width="{WIDTH}" height="6" fill="#eceff1"/>'
        + "".join(
            f'<rect x="{x}" y="{floor + 18:.0f}" width="44" height="6" fill="#ffeb3b"/>'
            for x in range(-60 + dashes, WIDTH, 100)
        )
        + f'<path d="M {sign} {floor - 40:.0f} L {sign} {floor - 150:.0f}" stroke="#607d8b" '
        'stroke-width="5"/>'
        + f'<rect x="{sign - 26}" y="{floor - 186:.0f}" width="52" height="40" rx="6" '
        f'fill="#2e7d32" {LINE}/>'
        + f'<path d="M {sign - 14} {floor - 166:.0f} h 24 l -8 -8 m 8 8 l -8 8" '
        'stroke="#fff" stroke-width="3" fill="none"/>'
    )


def _rain(floor: float, height: float, dice: Dice, time: str) -> str:
    puddles = dice.numbers("puddles", 3, 40, WIDTH - 80)
    return (
        _skyline(floor, dice, time, "rain", floor - 20, 170)
        + _ground(floor - 20, height, "#757575")
        + "".join(
            f'<ellipse cx="{x}" cy="{floor + 20 + i * 8:.0f}" rx="{46 - i * 8}" ry="8" '
            'fill="#90caf9" stroke="#5c8fc9" stroke-width="2"/>'
            f'<ellipse cx="{x + 10}" cy="{floor + 20 + i * 8:.0f}" rx="14" ry="3" '
            'fill="none" stroke="#e3f2fd" stroke-width="1.5"/>'
            for i, x in enumerate(puddles)
        )
    )


def _rooftop(floor: float, height: float, dice: Dice, time: str) -> str:
    tank = dice.choice("tank", (70, WIDTH - 110))
    return (
        _skyline(floor, dice, time, "below", floor - 70, 120, 0.6)
        + f'<rect y="{floor - 40:.0f}" width="{WIDTH}" height="26" fill="#5d4037" {LINE}/>'
        + "".join(
            f'<rect x="{x}" y="{floor - 40:.0f}" width="2" height="26" fill="#3e2723"/>'
            for x in range(30, WIDTH, 60)
        )
        + _ground(floor - 14, height, "#78909c")
        + f'<g transform="translate({tank},{floor - 24:.0f})">'
        '<path d="M 6 0 L 10 -60 M 34 0 L 30 -60" stroke="#455a64" stroke-width="4"/>'
        f'<rect x="-4" y="-120" width="48" height="62" rx="6" fill="#8d6e63" {LINE}/>'
        '<path d="M -4 -100 h 48 M -4 -80 h 48" stroke="#5d4037" stroke-width="2"/></g>'
        + f'<path d="M {WIDTH - tank - 20} {floor - 40:.0f} L {WIDTH - tank - 20} '
        f"{floor - 190:.0f} M {WIDTH - tank - 36} {floor - 170:.0f} h 32 M "
        f'{WIDTH - tank - 30} {floor - 150:.0f} h 20" stroke="#b0bec5" stroke-width="3"/>'
        + f'<circle cx="{WIDTH - tank - 20}" cy="{floor - 192:.0f}" r="4" fill="#ef5350"/>'
    )


FIREWORK_COLOURS = ("#ff5252", "#ffd740", "#69f0ae", "#40c4ff", "#e040fb", "#ffab40")


def _fireworks(floor: float, height: float, dice: Dice, time: str) -> str:
    xs = dice.numbers("bursts", 4, 60, WIDTH - 60)
    ys = dice.numbers("bursts-y", 4, 80, 170)
    sizes = dice.numbers("bursts-r", 4, 34, 58)
    colours = dice.numbers("bursts-c", 4, 0, len(FIREWORK_COLOURS) - 1)
    bursts = []
    for x, y, r, c in zip(xs, ys, sizes, colours, strict=True):
        colour = FIREWORK_COLOURS[c]
        rays = "".join(
            f"M {x} {y} l {dx * r:.0f} {dy * r:.0f} "
            for dx, dy in ((1, 0), (0.71, 0.71), (0, 1), (-0.71, 0.71), (-1, 0),
                           (-0.71, -0.71), (0, -1), (0.71, -0.71))
        )  # fmt: skip
        bursts.append(
            f'<path d="{rays}" stroke="{colour}" stroke-width="3" stroke-linecap="round"/>'
            f'<circle cx="{x}" cy="{y}" r="{r * 0.55:.0f}" fill="none" stroke="{colour}" '
            'stroke-width="2" stroke-dasharray="3 6"/>'
            f'<circle cx="{x}" cy="{y}" r="5" fill="#fff"/>'
            f'<path d="M {x} {y + 10} q -6 {floor - y - 120:.0f} 0 {floor - y - 90:.0f}" '
            f'stroke="{colour}" stroke-width="1.5" stroke-dasharray="2 5" fill="none"/>'
        )
    return (
        "".join(bursts)
        + _skyline(floor, dice, time, "shore", floor - 60, 80, 0.5)
        + f'<rect y="{floor - 60:.0f}" width="{WIDTH}" height="40" fill="#1a237e"/>'
        + "".join(
            f'<path d="M {x} {floor - 44:.0f} h 26" stroke="{FIREWORK_COLOURS[i % 6]}" '
            'stroke-width="3" stroke-opacity="0.7"/>'
            for i, x in enumerate(xs)
        )
        + _ground(floor - 20, height, "#37474f")
    )


def _forest(floor: float, height: float, dice: Dice, time: str) -> str:
    xs = dice.numbers("forest", 7, 0, WIDTH)
    back = "".join(
        f'<path d="M {x} {floor - 40:.0f} l -40 0 l 40 -{150 + x % 60} l 40 '
        f'{150 + x % 60} Z" fill="#2e7d32" stroke="#1b5e20" stroke-width="2"/>'
        for x in xs
    )
    return (
        back + _tree(dice.number("oak", 40, 140), floor, 1.1)
        + _tree(WIDTH - dice.number("oak2", 40, 140), floor, 0.95)
        + _ground(floor - 20, height, "#558b2f")
        + f'<g transform="translate({dice.number("mushroom", 180, 460)},{floor + 18:.0f})">'
        '<rect x="-4" y="-10" width="8" height="12" fill="#fff"/>'
        '<path d="M -14 -8 Q 0 -28 14 -8 Z" fill="#e53935"/>'
        '<circle cx="-4" cy="-14" r="2.5" fill="#fff"/><circle cx="5" cy="-12" r="2" '
        'fill="#fff"/></g>'
    )  # fmt: skip


def _mountain(floor: float, height: float, dice: Dice, time: str) -> str:
    peaks = dice.numbers("peaks", 3, 150, 230)
    flag = dice.number("flag", 260, 380)
    return (
        "".join(
            f'<path d="M {i * 220 - 120} {floor:.0f} L {i * 220 + 40} {floor - p:.0f} '
            f'L {i * 220 + 200} {floor:.0f} Z" fill="#78909c" stroke="#455a64" '
            'stroke-width="2"/>'
            f'<path d="M {i * 220 + 12} {floor - p + 36:.0f} L {i * 220 + 40} {floor - p:.0f} '
            f"L {i * 220 + 68} {floor - p + 36:.0f} L {i * 220 + 52} {floor - p + 28:.0f} "
            f'L {i * 220 + 40} {floor - p + 40:.0f} L {i * 220 + 26} {floor - p + 28:.0f} Z" '
            'fill="#fff"/>'
            for i, p in enumerate(peaks)
        )
        + f'<path d="M 0 {floor - 30:.0f} L {WIDTH} {floor - 14:.0f} L {WIDTH} {height:.0f} '
        f'L 0 {height:.0f} Z" fill="#8d6e63"/>'
        + f'<path d="M {flag} {floor - 20:.0f} L {flag} {floor - 110:.0f}" stroke="#5d4037" '
        'stroke-width="4"/>'
        + f'<path d="M {flag} {floor - 110:.0f} l 36 10 l -36 10 Z" fill="#e53935"/>'
    )


# --- indoor places -----------------------------------------------------------------------


def _wall(height: float, colour: str) -> str:
    return f'<rect width="{WIDTH}" height="{height:.0f}" fill="{colour}"/>'


def _window(x: float, y: float, time: str, w: int = 110, h: int = 90) -> str:
    pane = "#1a237e" if _night(time) else "#b3e5fc"
    return (
        f'<rect x="{x:.0f}" y="{y:.0f}" width="{w}" height="{h}" fill="{pane}" '
        'stroke="#6d4c41" stroke-width="6"/>'
        f'<path d="M {x + w / 2:.0f} {y:.0f} v {h} M {x:.0f} {y + h / 2:.0f} h {w}" '
        'stroke="#6d4c41" stroke-width="4"/>'
    )


def _classroom(floor: float, height: float, dice: Dice, time: str) -> str:
    board_y = floor - 230
    shift = dice.number("chalk-x", 0, 150)
    drawing = dice.choice("chalk", CHALK)
    clock_x = dice.choice("clock-side", (76, WIDTH - 76))
    hour, minute = dice.number("hour", 0, 11), dice.number("minute", 0, 59)
    return (
        _wall(height, "#f3e5ab")
        + f'<rect x="150" y="{board_y:.0f}" width="340" height="130" fill="#2e5d3a" '
        'stroke="#6d4c41" stroke-width="8"/>'
        f'<path d="{drawing}" transform="translate({150 + shift},{board_y:.0f})" '
        'stroke="#e8f5e9" stroke-width="3" fill="none"/>'
        f'<g transform="translate({clock_x},{board_y + 36:.0f})">'
        '<circle r="24" fill="#fff" stroke="#5d4037" stroke-width="4"/>'
        f'<path d="M 0 0 L 0 -13" transform="rotate({hour * 30 + minute // 2})" '
        'stroke="#222" stroke-width="3.5" stroke-linecap="round"/>'
        f'<path d="M 0 0 L 0 -19" transform="rotate({minute * 6})" stroke="#222" '
        'stroke-width="2" stroke-linecap="round"/></g>' + _ground(floor, height, "#a1887f")
    )


# What is chalked on the blackboard, drawn from (0, 0) at the board's top left corner.
CHALK = (
    "M 30 40 q 40 -20 80 0 M 150 60 l 120 0",  # a wave and a line
    "M 60 20 l 12 30 l 32 0 l -26 18 l 10 30 l -28 -18 l -28 18 l 10 -30 l -26 -18 l 32 0 Z",
    "M 40 90 l 0 -40 l 40 -30 l 40 30 l 0 40 Z M 70 90 l 0 -22 l 20 0 l 0 22",  # a house
    "M 100 60 m -20 0 a 20 20 0 1 0 40 0 a 20 20 0 1 0 -40 0 M 100 20 l 0 -12 M 100 100 "
    "l 0 12 M 60 60 l -12 0 M 140 60 l 12 0",  # a sun
)


def _ring(floor: float, height: float, dice: Dice, time: str) -> str:
    rows = dice.numbers("crowd", 16, 0, 16)
    hues = dice.numbers("crowd-hues", 16, 0, 359)
    crowd = "".join(
        f'<circle cx="{24 + i * 40}" cy="{floor - 156 + rows[i]:.0f}" r="14" '
        f'fill="{hsl(hues[i], 30, 55)}" fill-opacity="0.5"/>'
        for i in range(16)
    )
    spots = dice.numbers("flashes", 6, 0, 580)
    flashes = "".join(  # a camera's flash: a four-pointed sparkle in the crowd
        f'<path d="M {30 + spots[i]} {floor - 185 + spots[i + 3] % 40:.0f} l 3 6 l 6 3 l -6 3 '
        'l -3 6 l -3 -6 l -6 -3 l 6 -3 Z" fill="#fffde7" stroke="#fbc02d" stroke-width="1"/>'
        for i in range(3)
    )
    ropes = "".join(
        f'<path d="M 20 {floor - d:.0f} L {WIDTH - 20} {floor - d:.0f}" stroke="#d32f2f" '
        'stroke-width="4"/>'
        for d in (40, 80, 120)
    )
    return (
        crowd + flashes + _ground(floor, height, "#5d7fb8")
        + f'<rect x="14" y="{floor - 130:.0f}" width="10" height="130" fill="#eceff1" '
        'stroke="#222"/>'
        + f'<rect x="{WIDTH - 24}" y="{floor - 130:.0f}" width="10" height="130" '
        'fill="#eceff1" stroke="#222"/>' + ropes
    )  # fmt: skip


def _hotpot(floor: float, height: float, dice: Dice, time: str) -> str:
    lanterns = dice.numbers("lanterns", 3, 40, WIDTH - 40)
    return (
        _wall(height, "#8d3b2b")
        + f'<rect y="{floor - 120:.0f}" width="{WIDTH}" height="8" fill="#5d1f14"/>'
        + _window(dice.number("window", 240, 300), floor - 250, time, 120, 80)
        + "".join(
            f'<path d="M {x} 0 v {30 + i * 14}" stroke="#3e2723" stroke-width="2"/>'
            f'<ellipse cx="{x}" cy="{52 + i * 14}" rx="24" ry="20" fill="#e53935" '
            f'stroke="#b71c1c" stroke-width="2"/><rect x="{x - 10}" y="{28 + i * 14}" '
            f'width="20" height="6" fill="#ffca28"/><path d="M {x} {72 + i * 14} v 16" '
            'stroke="#ffca28" stroke-width="3"/>'
            for i, x in enumerate(lanterns)
        )
        + _ground(floor, height, "#6d4c41")
    )


def _hotpot_table(feet: float, dice: Dice) -> str:
    """In front of the diners: the table, the pot of red and white broth, its steam,
    bowls and chopsticks."""
    top = feet - 62
    pot = dice.number("pot", 290, 350)
    steam = "".join(
        f'<path d="M {pot + dx} {top - 44:.0f} q -10 -16 0 -30 q 10 -14 0 -28" '
        'stroke="#eceff1" stroke-width="4" fill="none" stroke-linecap="round" '
        'stroke-opacity="0.85"/>'
        for dx in (-24, 0, 24)
    )
    bowls = "".join(
        f'<path d="M {x - 18} {top + 4:.0f} q 18 24 36 0 Z" fill="#fafafa" {LINE}/>'
        f'<path d="M {x - 8} {top - 2:.0f} l 30 -22 M {x - 2} {top - 2:.0f} l 30 -20" '
        'stroke="#8d6e63" stroke-width="2.5"/>'
        for x in (pot - 150, pot + 150)
    )
    return (
        '<g data-setting-front="hotpot">'
        f'<rect x="40" y="{top:.0f}" width="{WIDTH - 80}" height="20" rx="4" fill="#a1664a" '
        f"{LINE}/>"
        f'<rect x="70" y="{top + 20:.0f}" width="16" height="60" fill="#6d4c41"/>'
        f'<rect x="{WIDTH - 86}" y="{top + 20:.0f}" width="16" height="60" fill="#6d4c41"/>'
        f'<ellipse cx="{pot}" cy="{top - 8:.0f}" rx="70" ry="16" fill="#455a64" {LINE}/>'
        f'<path d="M {pot - 70} {top - 8:.0f} q 0 40 70 40 q 70 0 70 -40" fill="#607d8b" '
        f"{LINE}/>"
        f'<path d="M {pot - 62} {top - 10:.0f} a 62 12 0 0 1 62 -10 v 22 a 62 12 0 0 1 '
        f'-62 -12 Z" fill="#d84315"/>'
        f'<path d="M {pot} {top - 20:.0f} a 62 12 0 0 1 62 10 a 62 12 0 0 1 -62 12 Z" '
        'fill="#fff3e0"/>'
        f'<path d="M {pot} {top - 20:.0f} v 24" stroke="#37474f" stroke-width="3"/>'
        f'<circle cx="{pot - 30}" cy="{top - 10:.0f}" r="4" fill="#ffcc80"/>'
        f'<circle cx="{pot + 30}" cy="{top - 6:.0f}" r="4" fill="#aed581"/>'
        f"{steam}{bowls}</g>"
    )


def _handshake(floor: float, height: float, dice: Dice, time: str) -> str:
    """A signing hall: a banner, two flags, a carpet and the press's flashes."""
    flashes = dice.numbers("press", 4, 30, WIDTH - 30)
    flag = (
        '<path d="M {x} {b} L {x} {t}" stroke="#ffca28" stroke-width="4"/>'
        '<path d="M {x} {t} q 30 -10 60 0 q -4 26 0 50 q -30 -10 -60 0 Z" fill="{c}" '
        'stroke="#222" stroke-width="1.5"/>'
    )
    return (
        _wall(height, "#efe3c8")
        + f'<rect x="60" y="{floor - 270:.0f}" width="{WIDTH - 120}" height="44" fill="#c62828" '
        f"{LINE}/>"
        + "".join(
            f'<polygon points="{x - 8},{floor - 248:.0f} {x},{floor - 262:.0f} '
            f'{x + 8},{floor - 248:.0f} {x},{floor - 234:.0f}" fill="#ffd54f"/>'
            for x in range(110, WIDTH - 90, 70)
        )
        + flag.format(x=50, b=f"{floor:.0f}", t=f"{floor - 200:.0f}", c="#1565c0")
        + flag.format(x=WIDTH - 110, b=f"{floor:.0f}", t=f"{floor - 200:.0f}", c="#2e7d32")
        + _ground(floor, height, "#8d6e63")
        + f'<path d="M 200 {floor:.0f} L 440 {floor:.0f} L 520 {height:.0f} L 120 {height:.0f} '
        'Z" fill="#c62828"/>'
        + "".join(
            f'<path d="M {x} {floor - 206 + (x % 40):.0f} l 4 8 l 8 4 l -8 4 l -4 8 l -4 -8 '
            'l -8 -4 l 8 -4 Z" fill="#fffde7" stroke="#fbc02d"/>'
            for x in flashes
        )
    )


def _group_photo(floor: float, height: float, dice: Dice, time: str) -> str:
    """A photographer's backdrop: a plain sheet, two lights on stands, bunting."""
    hue = dice.number("backdrop", 180, 260)
    light = (
        '<path d="M {x} {b} L {x} {t} M {x} {b} l -16 0 M {x} {b} l 16 0" stroke="#424242" '
        'stroke-width="3"/><path d="M {x} {t} l -22 -30 l 44 0 Z" fill="#fafafa" '
        'stroke="#424242" stroke-width="2"/>'
    )
    flags = "".join(
        f'<polygon points="{x},62 {x + 30},62 {x + 15},84" '
        f'fill="{FIREWORK_COLOURS[(x // 40) % 6]}"/>'
        for x in range(40, WIDTH - 40, 40)
    )
    return (
        _wall(height, hsl(hue, 40, 80))
        + f'<path d="M 70 20 L {WIDTH - 70} 20 L {WIDTH - 40} {floor + 10:.0f} '
        f'L 40 {floor + 10:.0f} Z" fill="{hsl(hue, 35, 90)}"/>'
        + '<path d="M 20 62 Q 320 76 620 62" stroke="#5d4037" stroke-width="2" fill="none"/>'
        + flags
        + light.format(x=40, b=f"{floor:.0f}", t=f"{floor - 200:.0f}")
        + light.format(x=WIDTH - 40, b=f"{floor:.0f}", t=f"{floor - 200:.0f}")
        + _ground(floor + 10, height, "#bcaaa4")
    )


def _photo_frame(feet: float, height: float, dice: Dice) -> str:
    """In front of the group: the viewfinder's corners and a flash."""
    corner = 'stroke="#fff" stroke-width="5" fill="none" stroke-linecap="round"'
    left, top, right, bottom = 24, 60, WIDTH - 24, feet + 4
    x = dice.number("flash", 120, 520)
    return (
        '<g data-setting-front="group-photo">'
        f'<path d="M {left} {top + 30} V {top} H {left + 30} M {right - 30} {top} H {right} '
        f"V {top + 30} M {right} {bottom - 30:.0f} V {bottom:.0f} H {right - 30} "
        f'M {left + 30} {bottom:.0f} H {left} V {bottom - 30:.0f}" {corner}/>'
        f'<polygon points="{x},{top + 6} {x + 6},{top + 22} {x + 22},{top + 28} {x + 6},'
        f'{top + 34} {x},{top + 50} {x - 6},{top + 34} {x - 22},{top + 28} {x - 6},{top + 22}" '
        'fill="#fffde7" stroke="#fbc02d" stroke-width="1.5"/></g>'
    )


def _home(floor: float, height: float, dice: Dice, time: str) -> str:
    sofa = dice.number("sofa", 120, 360)
    lamp = dice.choice("home-lamp", (60, WIDTH - 60))
    return (
        _wall(height, "#fff3e0")
        + "".join(
            f'<path d="M {x} 0 v {floor:.0f}" stroke="#ffe0b2" stroke-width="10"/>'
            for x in range(20, WIDTH, 50)
        )
        + _window(dice.choice("home-window", (90, WIDTH - 200)), floor - 250, time)
        + f'<rect x="{WIDTH - lamp - 40}" y="{floor - 250:.0f}" width="70" height="50" '
        f'fill="#fff" stroke="#8d6e63" stroke-width="5"/>'
        + f'<path d="M {WIDTH - lamp - 30} {floor - 206:.0f} l 20 -26 l 14 14 l 16 -20 l 16 32 '
        'Z" fill="#81c784"/>' + f'<g transform="translate({sofa},{floor - 20:.0f})">'
        f'<rect x="0" y="-80" width="170" height="60" rx="14" fill="#5c6bc0" {LINE}/>'
        f'<rect x="-10" y="-40" width="190" height="40" rx="10" fill="#7986cb" {LINE}/>'
        f'<rect x="-16" y="-56" width="26" height="56" rx="8" fill="#5c6bc0" {LINE}/>'
        f'<rect x="160" y="-56" width="26" height="56" rx="8" fill="#5c6bc0" {LINE}/></g>'
        + f'<path d="M {lamp} {floor:.0f} V {floor - 140:.0f}" stroke="#5d4037" '
        'stroke-width="4"/>'
        + f'<path d="M {lamp - 22} {floor - 140:.0f} L {lamp - 12} {floor - 176:.0f} '
        f'L {lamp + 12} {floor - 176:.0f} L {lamp + 22} {floor - 140:.0f} Z" fill="#ffcc80" '
        f"{LINE}/>"
        + _ground(floor, height, "#bc8f6a")
        + "".join(
            f'<path d="M {x} {floor:.0f} V {height:.0f}" stroke="#a47551" stroke-width="2"/>'
            for x in range(0, WIDTH, 80)
        )
    )


def _hospital(floor: float, height: float, dice: Dice, time: str) -> str:
    bed = dice.number("bed", 60, 380)
    return (
        _wall(height, "#e0f2f1")
        + f'<rect y="{floor - 60:.0f}" width="{WIDTH}" height="60" fill="#b2dfdb"/>'
        + f'<g transform="translate({WIDTH - 120},{floor - 250:.0f})">'
        '<rect width="70" height="70" rx="8" fill="#fff" stroke="#c62828" stroke-width="3"/>'
        '<path d="M 35 12 V 58 M 12 35 H 58" stroke="#e53935" stroke-width="14"/></g>'
        + f'<g transform="translate({bed},{floor:.0f})">'
        f'<rect x="0" y="-70" width="180" height="26" rx="6" fill="#fff" {LINE}/>'
        f'<rect x="10" y="-84" width="46" height="16" rx="6" fill="#e3f2fd" {LINE}/>'
        f'<rect x="70" y="-72" width="110" height="22" fill="#90caf9" {LINE}/>'
        '<path d="M 4 -44 V 0 M 176 -44 V 0 M 0 -96 V 0" stroke="#78909c" stroke-width="5"/>'
        "</g>" + f'<g transform="translate({bed + 210},{floor:.0f})">'
        '<path d="M 0 0 V -170 M -14 0 h 28 M 0 -170 h 20" stroke="#90a4ae" stroke-width="3"/>'
        '<rect x="8" y="-166" width="22" height="32" rx="5" fill="#e1f5fe" stroke="#0288d1" '
        'stroke-width="2"/></g>' + _ground(floor, height, "#cfd8dc")
    )


def _library(floor: float, height: float, dice: Dice, time: str) -> str:
    colours = ("#c62828", "#1565c0", "#2e7d32", "#f9a825", "#6a1b9a", "#ef6c00")
    shelves = []
    for s, x in enumerate((20, 230, 440)):
        widths = dice.numbers(f"books-{s}", 24, 10, 18)
        picks = dice.numbers(f"colours-{s}", 24, 0, 5)
        shelves.append(
            f'<rect x="{x}" y="{floor - 280:.0f}" width="180" height="{280:.0f}" fill="#6d4c41" '
            f"{LINE}/>"
        )
        for row in range(4):
            y = floor - 270 + row * 68
            bx = x + 8
            for i in range(6):
                w = widths[row * 6 + i]
                shelves.append(
                    f'<rect x="{bx}" y="{y + 8:.0f}" width="{w}" height="52" '
                    f'fill="{colours[picks[row * 6 + i]]}" stroke="#3e2723" stroke-width="1"/>'
                )
                bx += w + 2
            shelves.append(
                f'<rect x="{x}" y="{y + 60:.0f}" width="180" height="8" fill="#4e342e"/>'
            )
    return _wall(height, "#d7ccc8") + "".join(shelves) + _ground(floor, height, "#8d6e63")


def _space(floor: float, height: float, dice: Dice, time: str) -> str:
    planet_x = dice.number("planet", 80, WIDTH - 80)
    craters = dice.numbers("craters", 4, 30, WIDTH - 30)
    return (
        f'<circle cx="{planet_x}" cy="80" r="38" fill="#ff8a65"/>'
        f'<ellipse cx="{planet_x}" cy="80" rx="66" ry="12" fill="none" stroke="#ffe0b2" '
        f'stroke-width="5" transform="rotate(-14 {planet_x} 80)"/>'
        + f'<circle cx="{WIDTH - planet_x}" cy="140" r="22" fill="#42a5f5"/>'
        + f'<path d="M {WIDTH - planet_x - 12} 132 q 10 -6 16 4 q -8 10 -16 -4" fill="#66bb6a"/>'
        + f'<path d="M 0 {floor - 10:.0f} Q 320 {floor - 40:.0f} {WIDTH} {floor - 10:.0f} '
        f'L {WIDTH} {height:.0f} L 0 {height:.0f} Z" fill="#9e9e9e"/>'
        + "".join(
            f'<ellipse cx="{x}" cy="{floor + 14 + i * 8:.0f}" rx="{22 - i * 3}" ry="6" '
            'fill="#757575" stroke="#616161"/>'
            for i, x in enumerate(craters)
        )
    )


PLACES: dict[str, Callable[[float, float, Dice, str], str]] = {
    "default": _outdoors,
    "beach": _beach,
    "city": _city,
    "park": _park,
    "road": _road,
    "rain": _rain,
    "rooftop": _rooftop,
    "fireworks": _fireworks,
    "forest": _forest,
    "mountain": _mountain,
    "classroom": _classroom,
    "ring": _ring,
    "hotpot": _hotpot,
    "handshake": _handshake,
    "group-photo": _group_photo,
    "home": _home,
    "hospital": _hospital,
    "library": _library,
    "space": _space,
}

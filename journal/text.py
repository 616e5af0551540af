"""Short one-line forms of what a user typed, for labels (the tree, the timeline)."""

from __future__ import annotations


def one_line(text: str, *, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters plus "…", cut at a word's end.

    A cut falls back to the character limit when the last word would lose more than a
    third of the line (a prompt with no spaces, such as Chinese, is cut mid-text).
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit * 2 // 3:
        cut = cut[:space]
    return cut.rstrip() + "…"

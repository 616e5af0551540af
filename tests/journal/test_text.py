"""One-line labels: what the tree and the timeline show of a prompt."""

from journal.text import one_line


def test_short_text_is_kept_on_one_line():
    assert one_line("draw  a\ncat\t now", limit=40) == "draw a cat now"


def test_long_text_is_cut_at_a_word_end():
    assert one_line("the laxative buff makes the hero run home", limit=20) == "the laxative buff…"


def test_text_without_spaces_is_cut_at_the_limit():
    assert one_line("画" * 30, limit=10) == "画" * 10 + "…"


def test_a_last_word_longer_than_a_third_is_cut_inside():
    assert one_line("a " + "b" * 30, limit=12) == "a " + "b" * 10 + "…"

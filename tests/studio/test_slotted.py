"""Kept fragments with slots: the slots a template marks are filled in order, a part
missing is an error, and nothing a user typed can become a slot."""

from __future__ import annotations

import pytest
from django.template import engines

from jaiweb.studio.slotted import SlotMarks, slotted


def _render(source: str, **context) -> str:
    return engines["django"].from_string(source).render({"slot": SlotMarks(), **context})


def test_each_slot_takes_its_part_wherever_it_is():
    kept = slotted(_render("<p{{ slot.mark }}>{{ slot.here }} and {{ slot.mark }}</p>"))
    assert kept.names == ("mark", "here", "mark")
    assert kept.filled({"mark": ' class="x"', "here": "<b>here</b>"}) == (
        '<p class="x"><b>here</b> and  class="x"</p>'
    )
    assert kept.filled({"mark": "", "here": "elsewhere"}) == "<p>elsewhere and </p>"


def test_html_without_slots_is_kept_as_it_is():
    assert slotted("<p>no slots</p>").filled({}) == "<p>no slots</p>"


def test_a_part_not_given_is_an_error():
    kept = slotted(_render("<p>{{ slot.here }}</p>"))
    with pytest.raises(KeyError):
        kept.filled({})


def test_a_typed_slot_stays_text():
    typed = "<jaiweb-slot here> & <jaiweb-slot mark>"
    kept = slotted(_render("<p>{{ label }}{{ slot.here }}</p>", label=typed))
    assert kept.names == ("here",)
    html = kept.filled({"here": "!"})
    assert html == "<p>&lt;jaiweb-slot here&gt; &amp; &lt;jaiweb-slot mark&gt;!</p>"

"""Hypothesis strategies the journal's property tests share: text and JSON values the
journal accepts (no NUL, no lone surrogate)."""

from __future__ import annotations

from hypothesis import strategies as st

text = st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=12)
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**9), 10**9),
    text,
    st.floats(allow_nan=False, allow_infinity=False),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=8,
)
app_value = st.dictionaries(text, json_value, max_size=3)

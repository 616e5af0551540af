"""The one cast: a name, an alias in either language or a pronoun is one character."""

from __future__ import annotations

import pytest

from journal.cast import Ambiguous, Cast, has_pronoun, new_cast, starter_names

USERS = {"Pig-Man": {}, "Super-Strong-Man": {}, "Teacher Muddle": {}}


def test_the_users_names_win_and_the_built_ins_names_are_their_aliases():
    cast = Cast.of(USERS, "en")
    for mention in ("Pig-Man", "pig man", "PIGMAN", "猪猪侠", "GG Bond", "the pig"):
        assert cast.resolve(mention) == "Pig-Man", mention
    for mention in ("Super-Strong-Man", "super strong", "超人强"):
        assert cast.resolve(mention) == "Super-Strong-Man", mention
    assert cast.resolve("迷糊老师") == "Teacher Muddle"
    assert cast.resolve("Mr Wolf") is None
    # no built-in double: the three are on stage, the built-ins nobody claimed are not
    assert [m.name for m in cast.onstage] == list(USERS)
    assert "猪猪侠" not in cast.by_name and "Pig-Man" in cast.by_name


def test_a_built_in_nobody_claimed_keeps_its_name_in_the_sessions_language():
    assert Cast.of({}, "en").resolve("菲菲") == "Feifei"
    assert Cast.of({}, "zh").resolve("Feifei") == "菲菲"
    assert Cast.of({}).resolve("Pig-Man") == "猪猪侠"  # a session from before languages


def test_a_text_names_each_character_once_in_order_the_longest_name_winning():
    cast = Cast.of(USERS, "en")
    text = "超人强 hits GG Bond; then Super-Strong-Man and Pig-Man bow to the teacher"
    assert cast.named(text) == ["Super-Strong-Man", "Pig-Man", "Teacher Muddle"]
    assert cast.named("Bring the pigment") == []  # whole English words only
    assert cast.first_spot("Now 猪猪侠 eats", "Pig-Man") == 4


def test_the_same_text_names_each_casts_own_characters():
    # a text's mentions are kept for the prompts read again every turn: by text and cast
    text = "GG Bond waves at 菲菲"
    assert Cast.of(USERS, "en").named(text) == ["Pig-Man", "Feifei"]
    assert Cast.of({"GG Bond": {}}, "zh").named(text) == ["GG Bond", "菲菲"]
    assert Cast.of({"Hero": {"aliases": ["GG Bond"]}}, "en").named(text) == ["Hero", "Feifei"]
    assert Cast.of(USERS, "en").named(text) == ["Pig-Man", "Feifei"]
    spots = Cast.of(USERS, "en").mentions(text)
    spots.clear()  # a caller's list is its own
    assert len(Cast.of(USERS, "en").mentions(text)) == 2


def test_a_mention_of_two_characters_is_asked_about_never_guessed():
    cast = Cast.of({"Pig-Man": {"aliases": ["the twin"]}, "Pig-Girl": {"aliases": ["the twin"]}})
    with pytest.raises(Ambiguous) as asked:
        cast.resolve("the twin")
    assert set(asked.value.names) == {"Pig-Man", "Pig-Girl"}
    assert cast.named("the twin waves") == []
    assert cast.ambiguous_in("the twin waves").names == ("Pig-Man", "Pig-Girl")


def test_him_is_the_last_one_named_but_not_one_the_sentence_names():
    cast = Cast.of(USERS, "en")
    assert cast.refer(["Super-Strong-Man", "Pig-Man"]) == "Pig-Man"
    assert cast.refer(["Pig-Man", "Teacher Muddle"], besides=["Teacher Muddle"]) == "Pig-Man"
    # nobody else named: in a fight, the other party is the hero's rival
    assert cast.refer(["Pig-Man"], besides=["Pig-Man"], fight=True) == "Super-Strong-Man"
    # outside a fight two others could be meant: asked
    with pytest.raises(Ambiguous):
        cast.refer(["Pig-Man"], besides=["Pig-Man"])
    # one other on stage: that one
    assert Cast.of({"A": {}, "B": {}}).refer(["A"], besides=["A"]) == "B"
    assert has_pronoun("knock him flying") and has_pronoun("把他拍飞")
    assert not has_pronoun("the hero wins") and not has_pronoun("hello")


def test_a_new_cast_is_written_in_the_sessions_language_with_the_built_ins_aliases():
    cast = new_cast(["Pig-Man", "GG Bond", "Mr Wolf"], "en")
    assert cast["Pig-Man"]["mood"] == "calm" and cast["Mr Wolf"]["buff"] == "none"
    assert "猪猪侠" in cast["Pig-Man"]["aliases"]
    assert "aliases" not in cast["GG Bond"]  # the hero is already Pig-Man: no second claim
    assert new_cast(["猪猪侠"], "zh")["猪猪侠"]["mood"] == "平静"
    assert starter_names("en")[:3] == ["Pig-Man", "Super Strong", "Teacher Muddle"]
    assert starter_names("zh")[:3] == ["猪猪侠", "超人强", "迷糊老师"]


def test_a_cast_is_built_once_per_names_and_aliases_and_moods_do_not_matter():
    state = {"猪猪侠": {"mood": "angry"}, "阿强": {"aliases": ["强哥"]}}
    cast = Cast.of(state, "zh")
    assert Cast.of({"猪猪侠": {"mood": "calm"}, "阿强": {"aliases": ["强哥"]}}, "zh") is cast
    renamed = Cast.of({"猪猪侠": {}, "阿强": {"aliases": ["强哥", "Q"]}}, "zh")
    assert renamed is not cast and renamed.resolve("Q") == "阿强"
    assert cast.resolve("Q") is None and cast.resolve("强哥") == "阿强"
    assert Cast.of(state, "en") is not cast

"""The one cast of a session: who a name, an alias or a pronoun in a prompt stands for.

A session's characters (the ``characters`` of its app state) are the single list of who is
in the story. Each has a name (the user's, which wins), aliases in both languages, and its
state. The built-in cast is a starter set: a user's "Pig-Man" *is* the built-in hero, so
猪猪侠, GG Bond and "the pig" are aliases of him and no built-in double appears. A built-in
character nobody claimed stays available under its name in the session's language.

Everything here is pure: the director, the state writes and the renderer all ask the same
``Cast`` who a text names, so they never disagree about who is who.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

LANGUAGES = ("en", "zh")


@dataclass(frozen=True)
class Starter:
    """One of the built-in characters: its role in the starter story, its name in each
    language and the other ways a prompt may say it."""

    role: str  # hero | rival | girl | small | robot | teacher
    en: str
    zh: str
    aliases: tuple[str, ...]

    def name(self, lang: str | None) -> str:
        return self.en if lang == "en" else self.zh

    @property
    def words(self) -> tuple[str, ...]:
        return (self.zh, self.en, *self.aliases)


# fmt: off
STARTERS: tuple[Starter, ...] = (
    Starter("hero", "Pig-Man", "猪猪侠",
            ("GG Bond", "ggbond", "pigman", "pig man", "the pig", "猪猪")),
    Starter("rival", "Super Strong", "超人强",
            ("Super-Strong-Man", "super strong man", "superman qiang", "chaoren qiang",
             "super qiang")),
    Starter("teacher", "Teacher Muddle", "迷糊老师",
            ("teacher mihu", "the teacher", "teacher", "professor", "老师")),
    Starter("girl", "Feifei", "菲菲", ("fei fei", "fifi")),
    Starter("small", "Daidai", "小呆呆", ("xiao daidai", "dumb-dumb", "little dai")),
    Starter("robot", "Bobby", "波比", ("bobi", "bobbi")),
)
# fmt: on
BY_ROLE = {s.role: s for s in STARTERS}

# Words that point back at a character already in the story.
PRONOUNS = ("him", "he", "his", "himself", "her", "she", "hers", "herself", "the other one",
            "the other", "他", "她", "另一个")  # fmt: skip


def starter_names(lang: str | None) -> list[str]:
    """The starter set as offered at creation, in the page's language."""
    return [s.name(lang) for s in STARTERS]


# A character's state before anything happened to it, in the session's language.
DEFAULT_STATE = {
    "zh": {"buff": "无", "skill": "无", "mood": "平静"},
    "en": {"buff": "none", "skill": "none", "mood": "calm"},
}


def new_cast(names: Iterable[str], lang: str) -> dict[str, dict[str, Any]]:
    """The ``characters`` of a new session: each name with the default state in the
    session's language and, when it is one of a built-in's names, that built-in's other
    names as its aliases (only the first name to claim a built-in gets them)."""
    out: dict[str, dict[str, Any]] = {}
    claimed: set[str] = set()
    for name in names:
        if name in out:
            continue
        fields: dict[str, Any] = dict(DEFAULT_STATE["zh" if lang == "zh" else "en"])
        starter = starter_of(name)
        if starter is not None and starter.role not in claimed:
            claimed.add(starter.role)
            fields["aliases"] = [w for w in starter.words if fold(w) != fold(name)]
        out[name] = fields
    return out


def fold(text: str) -> str:
    """A text as names are compared: case-folded, hyphens and underscores as spaces, runs
    of spaces as one ("Super-Strong-Man" is "super strong man")."""
    return " ".join(re.sub(r"[-_‐‑–]", " ", text.casefold()).split())


def starter_of(name: str) -> Starter | None:
    """The built-in character a name is one of the names of, if any."""
    folded = fold(name)
    return next((s for s in STARTERS if folded in {fold(w) for w in s.words}), None)


@dataclass(frozen=True)
class Member:
    """A character of the cast: the name its state is kept under and every way to say it."""

    name: str
    aliases: tuple[str, ...] = ()
    role: str | None = None  # the starter it stands for, if any
    offstage: bool = False  # a built-in nobody claimed: not in the state (yet)

    @property
    def words(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


@dataclass(frozen=True)
class Mention:
    """Where a text names someone, and who: one name, or several when it is ambiguous."""

    start: int
    end: int
    names: tuple[str, ...]

    @property
    def ambiguous(self) -> bool:
        return len(self.names) > 1


class Ambiguous(ValueError):
    """A mention that matches more than one character: it is asked about, never guessed."""

    def __init__(self, mention: str, names: Iterable[str]):
        self.mention = mention
        self.names = tuple(names)
        super().__init__(f"{mention!r} could be {' or '.join(self.names)}")


class Cast:
    """The characters of a state, and the built-ins nobody claimed, each with its aliases."""

    def __init__(self, members: Iterable[Member]):
        self.members = tuple(members)
        self.by_name = {m.name: m for m in self.members}
        # Each folded way to say a name, and who answers to it: read for every text
        # ``mentions`` looks at, the same for all of them.
        self._by_word: dict[str, list[str]] = {}
        for member in self.members:
            for word in member.words:
                names = self._by_word.setdefault(fold(word), [])
                if member.name not in names:
                    names.append(member.name)
        self._by_word.pop("", None)
        self._words = tuple((word, tuple(names)) for word, names in self._by_word.items())

    @classmethod
    def of(cls, characters: Mapping[str, Any] | None, lang: str | None = None) -> Cast:
        """Build the cast of an app state's ``characters``, then add the built-ins nobody claimed.

        Each character keeps the aliases stored with it (a list of strings). When its name or one
        of those aliases belongs to a built-in, it takes that built-in's names too; the first
        character to claim a built-in gets it. The unclaimed built-ins follow, named in ``lang``
        (Chinese when ``lang`` is not given)."""
        named = tuple(
            (str(name), _stored_aliases(fields)) for name, fields in (characters or {}).items()
        )
        return _cast_of(named, lang)

    @property
    def onstage(self) -> list[Member]:
        return [m for m in self.members if not m.offstage]

    def role(self, role: str) -> Member | None:
        return next((m for m in self.members if m.role == role), None)

    def resolve(self, mention: str) -> str | None:
        """The one character a whole mention ("GG Bond", "超人强") names, None for nobody;
        ``Ambiguous`` when two characters answer to it."""
        folded = fold(mention)
        if not folded:
            return None
        exact = [m.name for m in self.members if fold(m.name) == folded]
        if len(exact) == 1:
            return exact[0]
        found = [m.name for m in self.members if folded in {fold(w) for w in m.words}]
        if len(found) > 1:
            raise Ambiguous(mention, found)
        return found[0] if found else None

    def mentions(self, text: str) -> list[Mention]:
        """Every place the text names a character, in order; the longest name wins where
        two overlap ("super strong man" over "super strong")."""
        return list(_mentions_in(self._words, text)) if self._words else []

    def named(self, text: str) -> list[str]:
        """The characters a text names unambiguously, each once, in the order it names them."""
        out: list[str] = []
        for mention in self.mentions(text):
            if not mention.ambiguous and mention.names[0] not in out:
                out.append(mention.names[0])
        return out

    def ambiguous_in(self, text: str) -> Ambiguous | None:
        """The first mention in the text that could be two characters, if any."""
        for mention in self.mentions(text):
            if mention.ambiguous:
                return Ambiguous(text[mention.start : mention.end], mention.names)
        return None

    def first_spot(self, text: str, name: str) -> int:
        """Where the text first names ``name`` (``len(text)`` when it does not)."""
        return next((m.start for m in self.mentions(text) if name in m.names), len(text))

    def refer(self, recent: list[str], *, besides: Iterable[str] = (), fight: bool = False) -> str:
        """Return the character a pronoun ("him", "he", "the other one", "他") stands for.

        A pronoun means the character named last in ``recent`` (oldest first), unless that
        character is one of ``besides``: the names in the same sentence, which a pronoun cannot
        mean. When nobody in ``recent`` fits, it means the action's other party: the one other
        character on stage, or the hero's rival in a fight. Raise ``Ambiguous`` when more than one
        character is left."""
        others = set(besides)
        for name in reversed(recent):
            if name not in others and name in self.by_name:
                return name
        stage = [m for m in self.onstage if m.name not in others]
        if len(stage) == 1:
            return stage[0].name
        pool = stage or [m for m in self.members if m.name not in others]
        roles = ("rival", "hero") if fight else ("hero",) if not stage else ()
        for role in roles:
            member = next((m for m in pool if m.role == role), None)
            if member is not None:
                return member.name
        if len(pool) == 1:
            return pool[0].name
        raise Ambiguous("him", [m.name for m in pool])


def has_pronoun(text: str) -> bool:
    """Whether the text points back at someone ("him", "the other one", "他")."""
    return _matcher(tuple(fold(p) for p in PRONOUNS)).search(_folded_with_map(text)[0]) is not None


def _unique(words: Iterable[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    out = []
    for word in words:
        key = fold(word)
        if key and key not in seen:
            seen.add(key)
            out.append(word)
    return tuple(out)


def _stored_aliases(fields: Any) -> tuple[str, ...]:
    """The aliases stored with a character: its list of non-blank strings."""
    stored = fields.get("aliases") if isinstance(fields, Mapping) else None
    return tuple(a for a in stored if isinstance(a, str) and a.strip()) if stored else ()


# A state's cast is read at every model turn and tool call of a run, and its characters'
# names and aliases seldom change: one cast per set of them is built, and shared (a cast
# is never changed once built).
@functools.lru_cache(maxsize=256)
def _cast_of(named: tuple[tuple[str, tuple[str, ...]], ...], lang: str | None) -> Cast:
    members: list[Member] = []
    claimed: set[str] = set()
    for name, own in named:
        starter = next(
            (s for s in map(starter_of, (name, *own)) if s and s.role not in claimed), None
        )
        if starter is not None:
            claimed.add(starter.role)
            own = (*own, *(w for w in starter.words if fold(w) != fold(name)))
        members.append(Member(name, _unique(own), starter.role if starter else None))
    for s in STARTERS:
        if s.role not in claimed and s.name(lang) not in {m.name for m in members}:
            words = tuple(w for w in s.words if w != s.name(lang))
            members.append(Member(s.name(lang), words, s.role, offstage=True))
    return Cast(members)


# A conversation's prompts are read again at every model turn (the offline director's
# memory): the mentions of the prompts read lately are kept. A prompt's length is bounded
# by the studio, so the cache's size is too.
@functools.lru_cache(maxsize=1024)
def _mentions_in(words: tuple[tuple[str, tuple[str, ...]], ...], text: str) -> tuple[Mention, ...]:
    """Where ``text`` says one of ``words`` (each folded, with the names answering to it)."""
    by_word = dict(words)
    folded, where = _folded_with_map(text)
    return tuple(
        Mention(where[match.start()], where[match.end() - 1] + 1, by_word[match.group()])
        for match in _matcher(tuple(by_word)).finditer(folded)
    )


def _folded_with_map(text: str) -> tuple[str, list[int]]:
    """``fold`` of the text, and for each of its characters the index it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        for c in ch.casefold():
            c = " " if c in "-_‐‑–" or c.isspace() else c
            if c == " " and (not out or out[-1] == " "):
                continue
            out.append(c)
            where.append(i)
    where.append(len(text))
    return "".join(out), where


@functools.lru_cache(maxsize=512)  # one per cast seen lately: a server sees many
def _matcher(words: tuple[str, ...]) -> re.Pattern[str]:
    """Chinese words anywhere; English words and phrases whole; longest first."""
    parts = []
    for word in sorted(set(words), key=len, reverse=True):
        if word.isascii() and any(c.isalnum() for c in word):
            parts.append(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])")
        else:
            parts.append(re.escape(word))
    return re.compile("|".join(parts))

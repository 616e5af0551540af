"""Querysets compiled to SQL once and then run with new values.

Building a queryset and compiling it costs many times what running its SQL costs on
SQLite, and the live path runs the same few reads after every change a watcher hears of,
each time with other ids. A ``Prepared`` read builds its queryset once per database and
per shape, with a placeholder for each argument, keeps the compiled SQL, and from then on
puts the caller's values where the placeholders were. The rows come back as Django would
give them: each column through the converters its field asks for (JSON, dates, booleans).

Only what a queryset compiles to parameters can be an argument: ids, keys, numbers. A list
argument stands for an ``__in`` lookup, and an empty one reads nothing. It compiles once
per size class (a power of two), the list padded to it with its last value, which an
``__in`` lookup reads as it reads the list: the tree's reads take the ids of the turns
drawn, one more after each entry of a run, and compiling once per length made nearly
every pass compile its read again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import Model, QuerySet
from django.db.transaction import TransactionManagementError

_SHAPES_KEPT = 64  # compiled shapes kept per read (list arguments make one per size class)


def _placeholder(kind: type, n: int, round_: int) -> Any:
    """The value standing for argument number ``n`` in compile round ``round_``.

    A number stays inside every integer column's range (a small positive one's included):
    Django compiles a lookup on an out-of-range number to no query at all."""
    if kind is str:
        return f"\x01prepared-{round_}-{n}\x01"
    return 20_000 + 4_000 * round_ + n


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    slots: tuple[tuple[str, int | None] | None, ...]  # per parameter: (argument, item) or None
    constants: tuple[Any, ...]
    converters: dict[int, tuple[list, Any]]
    locks: bool  # a select_for_update: run only inside a transaction, as Django insists


class Prepared:
    """A read whose queryset ``build(**placeholders)`` is compiled once per shape.

    ``kinds`` names each argument and the Python type its field takes (``str`` or ``int``);
    a ``list`` argument is given as ``[str]`` or ``[int]``. ``build`` must return a
    ``values_list`` queryset: rows are tuples, in its column order."""

    def __init__(self, build: Callable[..., QuerySet], **kinds: type | list[type]) -> None:
        self._build = build
        self._kinds = kinds
        self._lists = tuple(name for name, kind in kinds.items() if isinstance(kind, list))
        self._compiled: OrderedDict[tuple, _Compiled] = OrderedDict()
        self._lock = threading.Lock()

    def rows(self, using: str = "default", **values: Any) -> list[tuple]:
        """Run the read with ``values``: every row, converted."""
        if set(values) != set(self._kinds):
            raise TypeError(f"arguments are {sorted(self._kinds)}, not {sorted(values)}")
        if any(not values[name] for name in self._lists):
            return []
        if self._lists:
            values = {**values, **{name: _padded(values[name]) for name in self._lists}}
        connection = connections[using]
        lengths = (len(values[n]) if isinstance(k, list) else None for n, k in self._kinds.items())
        shape = (using, connection.vendor, *lengths)
        compiled = self._compiled_for(shape, using)
        if compiled.locks and connection.get_autocommit():
            raise TransactionManagementError(
                "select_for_update cannot be used outside of a transaction."
            )
        params = [
            constant if slot is None else _value(values[slot[0]], slot[1])
            for slot, constant in zip(compiled.slots, compiled.constants, strict=True)
        ]
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        if not compiled.converters:
            return rows
        return [_converted(row, compiled.converters, connection) for row in rows]

    def first(self, using: str = "default", **values: Any) -> tuple | None:
        """The first row, or None (the queryset should order and slice itself)."""
        rows = self.rows(using, **values)
        return rows[0] if rows else None

    def _compiled_for(self, shape: tuple, using: str) -> _Compiled:
        with self._lock:
            compiled = self._compiled.get(shape)
            if compiled is not None:
                self._compiled.move_to_end(shape)
                return compiled
        compiled = self._compile(shape, using)
        with self._lock:
            self._compiled[shape] = compiled
            while len(self._compiled) > _SHAPES_KEPT:
                self._compiled.popitem(last=False)
        return compiled

    def _compile(self, shape: tuple, using: str) -> _Compiled:
        """Compile with two sets of placeholders: the parameters that differ between the two
        are the arguments' slots, whatever constants the query holds besides."""
        (sql, params, compiler, queryset, marks), (sql_b, params_b, *_rest) = (
            self._compiled_with(shape, using, round_) for round_ in (0, 1)
        )
        if sql != sql_b or len(params) != len(params_b):
            raise ValueError("the queryset compiles to other SQL for other values")
        slots = tuple(
            marks.get(a) if isinstance(a, (str, int)) and a != b else None
            for a, b in zip(params, params_b, strict=True)
        )
        moving = [
            a for a, b, slot in zip(params, params_b, slots, strict=True) if a != b and not slot
        ]
        if moving:  # e.g. a clock read inside ``build``: it would be frozen at its first value
            raise ValueError(f"the queryset has parameters that are no argument: {moving!r}")
        missing = set(marks.values()) - set(slots)
        if missing:
            raise ValueError(f"the queryset does not use the arguments {sorted(missing)}")
        fields = [column[0] for column in compiler.select[: compiler.col_count]]
        return _Compiled(
            sql=sql,
            slots=slots,
            constants=tuple(
                None if s is not None else p for s, p in zip(slots, params, strict=True)
            ),
            converters=compiler.get_converters(fields),
            locks=bool(queryset.query.select_for_update)
            and connections[using].features.has_select_for_update,
        )

    def _compiled_with(self, shape: tuple, using: str, round_: int) -> tuple:
        marks: dict[Any, tuple[str, int | None]] = {}
        arguments: dict[str, Any] = {}
        n = 0
        for (name, kind), length in zip(self._kinds.items(), shape[2:], strict=True):
            if isinstance(kind, list):
                arguments[name] = []
                for i in range(length or 0):
                    value = _placeholder(kind[0], n, round_)
                    marks[value], n = (name, i), n + 1
                    arguments[name].append(value)
            else:
                value = _placeholder(kind, n, round_)
                marks[value], n = (name, None), n + 1
                arguments[name] = value
        queryset = self._build(**arguments)
        compiler = queryset.query.get_compiler(using=using)
        sql, params = compiler.as_sql()
        return sql, params, compiler, queryset, marks


def _padded(items: Sequence[Any]) -> list[Any]:
    """``items`` padded with its last value to the next power of two in length."""
    items = list(items)
    size = 1 << (len(items) - 1).bit_length()
    return items + [items[-1]] * (size - len(items))


def _value(value: Any, item: int | None) -> Any:
    return value if item is None else value[item]


def _converted(row: Sequence, converters: dict, connection: Any) -> tuple:
    values = list(row)
    for i, (functions, expression) in converters.items():
        value = values[i]
        for function in functions:
            value = function(value, expression, connection)
        values[i] = value
    return tuple(values)


def model_columns(model: type[Model]) -> tuple[str, ...]:
    """The columns ``from_row`` expects for ``model``: every concrete field, in order."""
    return tuple(field.attname for field in model._meta.concrete_fields)


def from_row(model: type[Model], row: tuple | None, using: str = "default") -> Any:
    """The model instance a row of ``model_columns(model)`` holds, as a queryset makes it."""
    return None if row is None else model.from_db(using, model_columns(model), row)

"""journal.ids: the exact derivations of docs/ARCHITECTURE.md §6."""

from __future__ import annotations

import hashlib
import json

from journal.ids import (
    args_hash,
    canonical_json,
    idempotency_key,
    render_seed,
    result_entry_id,
)


def test_result_entry_id():
    expected = "r_" + hashlib.sha256(b"e2\x00call_1").hexdigest()[:24]
    assert result_entry_id("e2", "call_1") == expected
    assert len(expected) == 26


def test_idempotency_key():
    expected = "k_" + hashlib.sha256(b"op_1\x00call_1").hexdigest()[:32]
    assert idempotency_key("op_1", "call_1") == expected


def test_args_hash_ignores_key_order_and_keeps_unicode():
    a = {"prompt": "猪猪侠决战超人强", "cost": 10}
    b = {"cost": 10, "prompt": "猪猪侠决战超人强"}
    text = json.dumps(a, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert args_hash(a) == args_hash(b) == hashlib.sha256(text.encode()).hexdigest()
    assert canonical_json(a) == '{"cost":10,"prompt":"猪猪侠决战超人强"}'
    assert args_hash({"cost": 11, "prompt": a["prompt"]}) != args_hash(a)


def test_the_separator_keeps_ids_apart():
    assert result_entry_id("a", "bc") != result_entry_id("ab", "c")
    assert idempotency_key("a", "bc") != idempotency_key("ab", "c")


def test_render_seed_is_the_keys_hash_as_a_32_bit_int():
    key = idempotency_key("op_1", "call_1")
    expected = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)
    assert render_seed(key) == expected
    assert 0 <= expected < 2**32
    seeds = {render_seed(idempotency_key(f"op_{i}", "call_1")) for i in range(200)}
    assert len(seeds) == 200  # a new operation's key, a new seed
    assert render_seed("k_" + "f" * 32) != render_seed("k_" + "f" * 31 + "e")

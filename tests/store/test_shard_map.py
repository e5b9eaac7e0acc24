"""The shard map's pure parts: the `--database-url` list and rendezvous placement."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from tablier.store.shard_map import ShardConfigError, ShardSpec, parse_urls, redact, rendezvous


def test_a_list_is_split_at_commas_before_a_url_only():
    assert parse_urls("postgresql://a/db") == [ShardSpec("postgresql://a/db")]
    assert parse_urls("postgresql://a/db, postgres://b/db,east=postgresql://u:p@c/db") == [
        ShardSpec("postgresql://a/db"),
        ShardSpec("postgres://b/db"),
        ShardSpec("postgresql://u:p@c/db", "east"),
    ]
    # A multi-host URL keeps its commas; conninfo strings come one a line (repeated options).
    assert parse_urls("postgresql://h1,h2/db?target_session_attrs=read-write") == [
        ShardSpec("postgresql://h1,h2/db?target_session_attrs=read-write")
    ]
    assert parse_urls("host=/tmp/a dbname=x\nhost=/tmp/b dbname=y") == [
        ShardSpec("host=/tmp/a dbname=x"),
        ShardSpec("host=/tmp/b dbname=y"),
    ]
    with pytest.raises(ShardConfigError):
        parse_urls("postgresql://a/db\n\npostgresql://b/db")


def test_rendezvous_is_stable_even_and_moves_only_to_a_new_shard():
    ids = [str(uuid.UUID(int=i)) for i in range(3000)]
    two = {g: rendezvous(g, ["shard0", "shard1"]) for g in ids}
    assert two == {g: rendezvous(g, ["shard1", "shard0"]) for g in ids}  # order does not matter
    assert all(n > 1300 for n in Counter(two.values()).values())
    three = {g: rendezvous(g, ["shard0", "shard1", "shard2"]) for g in ids}
    moved = [g for g in ids if three[g] != two[g]]
    assert all(three[g] == "shard2" for g in moved) and 800 < len(moved) < 1200


def test_passwords_are_hidden_in_messages():
    assert redact("postgresql://user:secret@host:5432/db") == "postgresql://user:***@host:5432/db"
    assert redact("host=h password=s3cret dbname=d") == "host=h password=*** dbname=d"
    assert redact("host=h password = 'a b' dbname=d") == "host=h password = *** dbname=d"

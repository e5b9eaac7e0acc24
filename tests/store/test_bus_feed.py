"""`bus.BusFeed`, the freshness of held states with a fan-out bus: a state is current only for a
match subscribed since before it was read, with the bus connected all along and no later seq
heard; and the bus payload's encoding."""

from __future__ import annotations

import pytest

from tablier.store.bus import BusFeed, decode, encode, subject

GAME = "4f1c2a8e-0000-4000-8000-000000000001"


def test_only_a_match_subscribed_before_the_read_is_current():
    feed = BusFeed()
    feed.connected()
    before = feed.mark()
    assert not feed.current(GAME, 5, before)  # not subscribed
    feed.subscribed(GAME)
    assert not feed.current(GAME, 5, before)  # read before the subscription: a message may be missed
    after = feed.mark()
    assert feed.current(GAME, 5, after)
    feed.heard(GAME, 6)
    assert not feed.current(GAME, 5, after)
    assert feed.current(GAME, 6, after)


def test_unsubscribing_or_losing_the_bus_voids_what_was_read():
    feed = BusFeed()
    feed.connected()
    feed.subscribed(GAME)
    mark = feed.mark()
    feed.unsubscribed(GAME)
    assert not feed.current(GAME, 5, mark)
    feed.subscribed(GAME)  # again: what was said in between is unknown
    assert not feed.current(GAME, 5, mark)
    mark = feed.mark()
    feed.lost()
    assert feed.mark() is None and not feed.current(GAME, 5, mark)
    feed.connected()
    feed.subscribed(GAME)
    assert not feed.current(GAME, 5, mark)  # an older epoch
    assert feed.current(GAME, 5, feed.mark())


def test_the_payload_is_the_seq_then_the_chain_hash():
    chain = bytes(range(32))
    payload = encode(300, chain)
    assert len(payload) == 40 and payload[:8] == (300).to_bytes(8, "big")
    assert decode(payload) == (300, chain)
    assert subject(GAME) == f"tablier.events.{GAME}"
    with pytest.raises(ValueError):
        decode(b"\x00" * 7)

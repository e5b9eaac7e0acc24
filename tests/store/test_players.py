"""The player directory (`store.players`) and seats bound to players, against both stores."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from dataclasses import replace

import pytest
from storekit import WAIT, event, game
from tablier.store.players import NAMES, UnknownPlayer, colour_of, new_player


def _hash(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


async def test_a_player_and_its_credentials(backend):
    async with backend.open() as store:
        players = store.players
        alice = await players.create_player(new_player("Alice"), _hash("a1"))
        assert alice.colour == colour_of(alice.player_id) and alice.created_at is not None
        assert await players.credential_player(_hash("a1")) == alice.player_id
        assert await players.credential_player(_hash("nobody")) is None
        await players.add_credential(alice.player_id, _hash("a2"))
        assert (await players.get_player(alice.player_id)).display_name == "Alice"
        renamed = await players.rename(alice.player_id, "Alicia")
        assert renamed.display_name == "Alicia" and NAMES.get(alice.player_id) == ("Alicia", alice.colour)
        with pytest.raises(UnknownPlayer):
            await players.get_player(str(uuid.uuid4()))
        with pytest.raises(UnknownPlayer):
            await players.rename(str(uuid.uuid4()), "X")
        assert await players.revoke(_hash("a1")) == 1
        assert await players.revoke(_hash("a1")) == 0
        assert await players.credential_player(_hash("a1")) is None
        assert await players.credential_player(_hash("a2")) == alice.player_id
        await players.add_credential(alice.player_id, _hash("a3"))
        assert await players.revoke(_hash("a2"), every_credential=True) == 2
        assert await players.credential_player(_hash("a3")) is None


async def test_an_external_identity_is_one_player_even_when_first_sign_ins_race(backend):
    async with backend.open() as a, backend.open() as b:
        tries = [
            (a if i % 2 else b).players.external_player(new_player(f"Ext{i}", "https://id.example", "sub-1"), _hash(f"e{i}"))
            for i in range(6)
        ]
        results = await asyncio.wait_for(asyncio.gather(*tries), WAIT)
        assert len({p.player_id for p, _ in results}) == 1
        assert sum(created for _, created in results) == 1
        for i in range(6):
            assert await a.players.credential_player(_hash(f"e{i}")) == results[0][0].player_id


async def test_seats_bound_to_players_and_a_players_page(backend):
    async with backend.open() as store:
        alice = await store.players.create_player(new_player("Alice"), _hash("p-a"))
        bob = await store.players.create_player(new_player("Bob"), _hash("p-b"))
        record = replace(game(3), seat_players=(alice.player_id, None, None))
        record = replace(record, token_hashes=(record.token_hashes[0], b"", b""))
        await store.create_game(record, [event(1)])
        other = game(2)
        await store.create_game(other, [event(1)])
        got = await store.get_game(record.game_id)
        assert got.seat_players == (alice.player_id, None, None) and got.seats_of(alice.player_id) == [0]
        claimed = await store.claim_seat(record.game_id, 2, _hash("seat-b"), bob.player_id)
        assert claimed is not None and claimed.seat_players == (alice.player_id, None, bob.player_id)
        # A retry of the same claim finds it; another player's claim of the seat does not.
        assert await store.claim_seat(record.game_id, 2, _hash("seat-b"), bob.player_id) is not None
        assert await store.claim_seat(record.game_id, 2, _hash("seat-c"), alice.player_id) is None
        # An anonymous claim binds no one.
        anon = await store.claim_seat(record.game_id, 1, _hash("seat-anon"))
        assert anon is not None and anon.seat_players == (alice.player_id, None, bob.player_id)
        assert (await store.get_game(other.game_id)).seat_players == ()
        page = await store.game_page(10, player_id=bob.player_id)
        assert [g.game_id for g in page] == [record.game_id]
        assert page[0].seat_players == (alice.player_id, None, bob.player_id)
        assert await store.game_page(10, player_id=str(uuid.uuid4())) == []
        assert other.game_id in [g.game_id for g in await store.game_page(10)]

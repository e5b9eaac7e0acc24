"""The tablier-client SDK end to end, against a real `tablier serve`: typed per-game
handles, whole matches in every game, safe retries, refusals, and `watch()` resuming through
dropped connections without a gap or a repeat."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re
import ssl
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from tablier_client import Conflict, Refused, Retry, Unavailable, bot_seat, connect, creator_seat, games
from tablier_client.errors import InvalidArgument, NotFound, ResourceExhausted
from tablier_client.sdk import Match, Update
from tablier_client.v1 import common_pb2, qwirkle_pb2, service_pb2

from .conftest import GAME_IDS, GAME_TYPES, OPERATOR_TOKEN, ROOT, start_server

WAIT = 30.0  # seconds: the deadline of any single wait below


async def play_out(seats: list[Match], max_moves: int = 5_000) -> int:
    """Plays the bots' suggestions through `play()` until the match is over; returns the
    number of moves."""
    state = await seats[0].state()
    moves = 0
    while not state.over:
        assert moves < max_moves, "the match did not end"
        me = seats[state.to_act[0]]
        suggestion = await me.suggest()
        try:
            played = await me.play(suggestion.action, expected_seq=suggestion.seq)
        except Conflict:  # another seat of a simultaneous phase moved first
            state = await me.state()
            continue
        moves += 1
        state = played.state
    return moves


def test_every_game_has_a_typed_kind():
    assert sorted(games.BY_ID) == sorted(GAME_IDS)
    for info in GAME_TYPES:
        kind = games.BY_ID[info.id]
        assert kind.action.DESCRIPTOR.full_name == info.action_type
        assert kind.view.DESCRIPTOR.full_name == info.view_type
        assert kind.event.DESCRIPTOR.full_name == info.event_type


async def test_game_types_with_options(server):
    async with connect(server.address) as client:
        assert not client.tls  # the test server speaks plaintext: the probe found no TLS
        types = await client.game_types()
    assert [t.SerializeToString() for t in types] == [t.SerializeToString() for t in GAME_TYPES]
    assert any(t.options for t in types)
    assert all(isinstance(t, common_pb2.GameType) for t in types)


def plain(text: str) -> bool:
    """Words for people: not empty, no enum names, no Debug braces or underscores."""
    return bool(text.strip()) and not re.search(r"[{}_]|UNSPECIFIED|\b[A-Z]{3,}\b", text)


@pytest.mark.parametrize("kind", games.ALL, ids=lambda k: k.id)
async def test_a_whole_match_through_the_sdk(server, kind):
    info = {t.id: t for t in GAME_TYPES}[kind.id]
    async with connect(server.address) as client:
        created = await client.create(kind, seats=info.min_players)
        assert len(created.seats) == info.min_players
        assert isinstance(created.state.view, kind.view)
        to_act = created.seats[created.state.to_act[0]]
        first = await to_act.legal_moves()
        assert first.moves and all(isinstance(m, kind.action) for m in first.moves)
        assert first.seq == created.state.seq
        assert created.seats[0].token != created.seats[1].token
        # Every move comes with its label in the game's words, and str() of the moves gives them.
        assert len(first.labels) == len(first.moves) and all(plain(label) for label in first.labels)
        assert str(first).splitlines() == first.labels and first.label(first.moves[0]) == first.labels[0]
        assert plain(info.summary) and info.rules_path.startswith("docs/rules/")
        # Options named for people, and what the scores count, in the game's words.
        assert all(plain(o.label) for o in info.options) and plain(info.score_unit_plural)

        moves = await play_out(created.seats)

        final = await created.seats[0].state()
        assert final.over and final.outcome is not None and len(final.outcome.scores) == info.min_players
        # How it ended, in words beside the machine reason.
        assert plain(final.outcome.description) and final.outcome.reason not in final.outcome.description
        assert final.seat == 0 and isinstance(final.view, kind.view)
        events = await created.seats[1].events()
        assert [e.seq for e in events] == list(range(1, final.seq + 1))
        assert all(isinstance(e.payload, kind.event) for e in events)
        # Each event in one sentence for its viewer; a seat and a spectator are told differently
        # where the seat sees its own hidden cards.
        assert all(plain(str(e)) and str(e) == e.description for e in events)
        watched = await client.open(created.game_id)
        public = [str(e) for e in await watched.events()]
        assert all(plain(s) for s in public) and public != [str(e) for e in events]
        assert sum(e.seat is not None for e in events) >= moves
        # A spectator of the finished match, and a handle opened by id alone.
        opened = await client.open(created.game_id)
        assert opened.kind is kind
        assert (await opened.state()).seq == final.seq


async def test_a_command_id_is_applied_once_and_refusals_explain_why(server):
    async with connect(server.address) as client:
        created = await client.create(games.QWIRKLE, seats=2)
        state = created.state
        me = created.seats[state.to_act[0]]
        other = created.seats[1 - state.to_act[0]]
        move = (await me.legal_moves()).moves[0]

        with pytest.raises(Refused) as refused:
            await other.play(move)
        assert refused.value.reason == "NOT_YOUR_TURN" and refused.value.message

        command_id = str(uuid.uuid4())
        first = await me.play(move, command_id=command_id)
        again = await me.play(move, command_id=command_id)
        assert not first.replayed and again.replayed
        assert [e.seq for e in again.events] == [e.seq for e in first.events]
        assert again.state.seq == first.state.seq == (await me.state()).seq

        with pytest.raises(Conflict) as stale:
            await other.play(move, expected_seq=state.seq)
        assert stale.value.reason == "SEQ_MISMATCH"
        with pytest.raises(TypeError):
            await me.play(service_pb2.GetViewRequest())  # type: ignore[arg-type]
        with pytest.raises(NotFound):
            await client.match(str(uuid.uuid4()), games.QWIRKLE).state()
        with pytest.raises(InvalidArgument):
            await client.create("no_such_game", seats=2)


async def test_operator_seeded_match_and_evaluation(server):
    async with connect(server.address, token=OPERATOR_TOKEN) as client:
        seed = bytes(range(32))
        a = await client.create(games.QWIRKLE, seats=2, seed=seed)
        b = await client.create(games.QWIRKLE, seats=2, seed=seed)
        assert a.state.view == b.state.view  # the same seed deals the same tiles
        # A red circle on the board; a hand of red criss-cross, red diamond and orange circle.
        position = qwirkle_pb2.Position(board=[qwirkle_pb2.BoardTile(x=0, y=0, tile_type=0)],
                                        hand_types=[1, 2, 6])
        evaluation = await client.evaluate(games.QWIRKLE, position)
        assert isinstance(evaluation, qwirkle_pb2.Evaluation)
        assert evaluation.total == len(evaluation.plays) > 0 and evaluation.best_score >= 2


class Cutter:
    """A loopback TCP relay in front of a server whose open connections the test can cut."""

    def __init__(self, upstream: str) -> None:
        self.host, port = upstream.rsplit(":", 1)
        self.port = int(port)
        self.open: list[asyncio.StreamWriter] = []
        self.connections = 0

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        self.cut()
        self.server.close()
        await self.server.wait_closed()

    def cut(self) -> None:
        for writer in self.open:
            writer.transport.abort()
        self.open.clear()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        self.open += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


@pytest.mark.parametrize("batches", [False, True])
async def test_watch_resumes_after_dropped_connections_without_gaps_or_repeats(server, batches):
    async with connect(server.address) as client:
        created = await client.create(games.QWIRKLE, seats=2)
        cutter = Cutter(server.address)
        async with cutter as relay, connect(relay) as watcher_client:
            watcher = watcher_client.match(created.game_id, games.QWIRKLE, token=created.tokens[0])
            seen: list[Update] = []
            cut_at = {4, 12, 25}

            async def watch() -> None:
                async for update in watcher.watch(batches=batches):
                    seen.append(update)
                    if update.event.seq in cut_at:
                        cutter.cut()  # mid-stream, with moves still coming

            watching = asyncio.create_task(watch())
            moves = await play_out(created.seats)
            await asyncio.wait_for(watching, WAIT)

        events = await created.seats[0].events()
        assert [u.event.seq for u in seen] == [e.seq for e in events], "a gap or a repeat"
        assert [u.event.payload for u in seen] == [e.payload for e in events]
        # The state after each event; with batches, after the last event of its response.
        assert all(u.state.seq == u.event.seq if not batches else u.state.seq >= u.event.seq for u in seen)
        assert seen[-1].state.over and moves > 0
        assert all(isinstance(u.state.view, qwirkle_pb2.View) for u in seen)
        # One response may hold several cut points (a resumed stream's first batch does).
        cuts = sum(seq <= seen[-1].event.seq for seq in cut_at)
        assert cutter.connections >= 1 + (cuts if not batches else min(cuts, 1))


async def test_watch_from_a_seq_and_of_a_finished_match(server):
    async with connect(server.address) as client:
        created = await client.create(games.CARRE, seats=2)
        await play_out(created.seats)
        spectator = client.match(created.game_id, games.CARRE)
        last = (await spectator.state()).seq
        tail = [u.state.seq async for u in spectator.watch(after_seq=last - 3)]
        assert tail == list(range(last - 2, last + 1))
        assert [u async for u in spectator.watch(after_seq=last)] == []


EXAMPLE = ROOT / "clients" / "python" / "examples" / "quickstart.py"


def test_the_readme_example_is_the_shipped_one_and_plays_a_match(server):
    """README.md shows examples/quickstart.py verbatim; it plays a whole match."""
    assert EXAMPLE.read_text().strip() in (ROOT / "README.md").read_text()
    done = subprocess.run([sys.executable, str(EXAMPLE), server.address], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("qwirkle [") for line in lines)
    seqs = [int(line.split()[1].rstrip(":")) for line in lines if line.startswith("seq ")]
    assert seqs == list(range(1, len(seqs) + 1)) and seqs, done.stdout
    assert "tiles on the board:" in lines[-1] and "scores" in done.stdout


BOT_EXAMPLE = ROOT / "clients" / "python" / "examples" / "one_seat_bot.py"
CLIENT_README = ROOT / "clients" / "python" / "README.md"


def test_the_client_readme_stands_alone_with_both_examples():
    """The README a package index shows: the examples verbatim, no link into the repository."""
    import re

    text = CLIENT_README.read_text()
    assert EXAMPLE.read_text().strip() in text and BOT_EXAMPLE.read_text().strip() in text
    links = re.findall(r"\]\(([^)]*)\)", text)
    assert all(link.startswith(("https://", "#")) for link in links), links


def test_the_one_seat_bot_example_plays_against_the_servers_bot(server):
    done = subprocess.run([sys.executable, str(BOT_EXAMPLE), server.address], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    mine = int(done.stdout.split(":")[1].split()[0])
    seq = int(done.stdout.split("over at seq ")[1].split(",")[0])
    assert 0 < mine < seq, done.stdout  # the server's bot made the other moves


async def test_turns_yields_each_turn_of_one_seat_until_the_end(server):
    async with connect(server.address, tls=False) as client:
        created = await client.create(games.QWIRKLE, 0, assignments=[creator_seat(), bot_seat()])
        me = created.seats[0]
        # Created.state is the spectator's view; the creator's seat view has its hand.
        assert created.state.role == service_pb2.ROLE_SPECTATOR and not created.state.my_turn
        mine = await created.seat_state(0)
        assert mine.seat == 0 and mine.view.seats[0].hand_visible and len(mine.view.seats[0].hand_tile_types) == 6
        assert not created.state.view.seats[0].hand_visible
        assert "seat 1 (bot" in repr(created.seats[1]) and "spectator" not in repr(me)
        with pytest.raises(ValueError):
            await created.seat_state(1)
        seqs: list[int] = []
        skipped = 0
        async for turn in me.turns():
            assert turn.state.my_turn and turn.moves and turn.state.seat == 0
            if len(seqs) == 1 and not skipped:
                skipped = turn.seq  # not played: the same turn comes again
                continue
            assert turn.seq == skipped if len(seqs) == 1 else True
            assert not seqs or turn.seq > seqs[-1]  # the server's bot moved in between
            seqs.append(turn.seq)
            played = await turn.play(await turn.suggest())
            assert played.state.seq > turn.seq
        final = await me.state()
        assert final.over and len(seqs) > 3
        events = await me.events()
        assert {e.seat for e in events if e.seat is not None} == {0, 1}


async def test_connect_to_a_closed_port_raises_unavailable():
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(Unavailable) as raised:
        await connect(f"127.0.0.1:{port}", retry=Retry(attempts=2, first_delay=0.01))
    assert raised.value.code.name == "UNAVAILABLE" and f"127.0.0.1:{port}" in raised.value.message
    async with connect(f"127.0.0.1:{port}", tls=False, retry=Retry(attempts=2, first_delay=0.01)) as client:
        with pytest.raises(Unavailable):
            await client.game_types()


def self_signed(tmp_path) -> tuple[Path, Path, bytes]:
    """A certificate for 127.0.0.1 and localhost, its key, and its PEM (the client's root)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tablier test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    pem = cert.public_bytes(serialization.Encoding.PEM)
    (tmp_path / "cert.pem").write_bytes(pem)
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                         serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    return tmp_path / "cert.pem", tmp_path / "key.pem", pem


async def test_connect_uses_tls_when_the_server_offers_it(e2e_database_url, tmp_path):
    cert, key, pem = self_signed(tmp_path)
    server = start_server(e2e_database_url, tmp_path, "tls", "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        async with connect(server.address, root_certificates=pem) as client:
            assert client.tls
            created = await client.create(games.CARRE, seats=2)
            assert (await created.seats[0].state()).seat == 0
        async with connect(f"grpcs://{server.address}", root_certificates=pem) as client:
            assert client.tls and await client.game_types()
        # Offered, but not trusted: an error, never a fallback to plaintext.
        with pytest.raises(ssl.SSLCertVerificationError):
            await connect(server.address)
    finally:
        assert server.stop() == 0


async def test_a_match_crowded_with_single_event_streams_is_followed_in_batches(serving):
    """Past `--watch-unbatched-per-match`, a stream of one event per response is refused with
    WATCH_BATCHES_REQUIRED; `watch()` by default then asks for batches and misses nothing."""
    srv, _ = serving("--watch-unbatched-per-match", "1")
    async with connect(srv.address) as client:
        created = await client.create(games.QWIRKLE, seats=2)
        spectator = client.match(created.game_id, games.QWIRKLE)
        single = spectator.watch(batches=False)
        try:
            assert (await anext(single)).event.seq == 1  # the match's one unbatched place, taken
            with pytest.raises(ResourceExhausted) as refused:
                await anext(spectator.watch(batches=False))
            assert refused.value.reason == "WATCH_BATCHES_REQUIRED"
            assert "batches" in refused.value.message

            async def follow() -> list[Update]:
                return [update async for update in spectator.watch()]

            following = asyncio.create_task(follow())
            await play_out(created.seats)
            seen = await asyncio.wait_for(following, WAIT)
        finally:
            await single.aclose()
        events = await spectator.events()
        assert [u.event.seq for u in seen] == [e.seq for e in events], "a gap or a repeat"
        assert seen[-1].state.over
        # In batches: some update carries the state after a later event than its own.
        assert any(u.state.seq > u.event.seq for u in seen)

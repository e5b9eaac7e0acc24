"""Players end to end (docs/api.md "Players"): guest accounts, names checked, credentials that
work on gRPC and Connect and are refused at once on every server once revoked, seats bound to
players (rejoin from another connection with the credential alone), a player's own matches,
and sign-in with OpenID Connect against a JWKS served here on loopback."""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from tablier.v1 import players_pb2 as ppb
from tablier.v1 import players_pb2_grpc as prpc
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import GAME_IDS, OPERATOR_TOKEN, START_TIMEOUT, Server
from .helpers import INFO, expect_error, seat


def players_of(srv: Server) -> tuple[prpc.PlayerServiceStub, rpc.GameServiceStub, grpc.Channel]:
    ch = grpc.insecure_channel(srv.address)
    grpc.channel_ready_future(ch).result(timeout=START_TIMEOUT)
    return prpc.PlayerServiceStub(ch), rpc.GameServiceStub(ch), ch


@pytest.fixture(scope="module")
def stubs(server: Server) -> Iterator[tuple[prpc.PlayerServiceStub, rpc.GameServiceStub]]:
    players, games, ch = players_of(server)
    yield players, games
    ch.close()


def guest(players: prpc.PlayerServiceStub, name: str) -> ppb.CreateGuestPlayerResponse:
    return players.CreateGuestPlayer(ppb.CreateGuestPlayerRequest(display_name=name))


def test_a_guest_player_has_a_name_a_colour_and_a_credential_that_is_not_a_seat_token(stubs) -> None:
    players, _ = stubs
    made = guest(players, "  Alice  ")
    assert made.player.display_name == "Alice"  # surrounding spaces removed
    assert 0 <= made.player.colour < 12
    assert made.credential.startswith("tp1.") and len(made.credential) == 4 + 43
    me = players.GetPlayer(ppb.GetPlayerRequest(), metadata=seat(made.credential)).player
    assert (me.player_id, me.display_name, me.colour) == (made.player.player_id, "Alice", made.player.colour)
    # Anyone may read a profile by id; the colour is the same everywhere.
    other = players.GetPlayer(ppb.GetPlayerRequest(player_id=made.player.player_id)).player
    assert other.display_name == "Alice" and other.colour == made.player.colour
    renamed = players.RenamePlayer(ppb.RenamePlayerRequest(display_name="Alicia"), metadata=seat(made.credential))
    assert renamed.player.display_name == "Alicia" and renamed.player.colour == made.player.colour
    code, reason, _ = expect_error(players.GetPlayer, ppb.GetPlayerRequest())
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "PLAYER_CREDENTIAL_REQUIRED")
    code, reason, _ = expect_error(players.GetPlayer, ppb.GetPlayerRequest(player_id=str(uuid.uuid4())))
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "UNKNOWN_PLAYER")
    code, reason, _ = expect_error(players.GetPlayer, ppb.GetPlayerRequest(), metadata=seat("tp1." + "A" * 43))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN")


@pytest.mark.parametrize(
    "name, why",
    [
        ("", "at least one character"),
        ("   ", "at least one character"),
        ("x" * 33, "at most 32 characters"),
        ("Bob\x00", "control or format characters (U+0000)"),
        ("Bob\nSmith", "control or format characters (U+000A)"),
        ("\u202eevil", "control or format characters (U+202E)"),  # right-to-left override
        ("zero\u200bwidth", "control or format characters (U+200B)"),
    ],
)
def test_a_bad_display_name_is_refused_in_words_and_changes_nothing(stubs, name: str, why: str) -> None:
    players, _ = stubs
    code, reason, message = expect_error(players.CreateGuestPlayer, ppb.CreateGuestPlayerRequest(display_name=name))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_DISPLAY_NAME")
    assert why in message
    made = guest(players, "Carol")
    code, reason, _ = expect_error(
        players.RenamePlayer, ppb.RenamePlayerRequest(display_name=name), metadata=seat(made.credential)
    )
    assert reason == "BAD_DISPLAY_NAME"
    me = players.GetPlayer(ppb.GetPlayerRequest(), metadata=seat(made.credential)).player
    assert me.display_name == "Carol"


def test_names_are_kept_in_nfc_and_counted_in_characters(stubs) -> None:
    players, _ = stubs
    # "é" as e + combining acute (two code points) is kept as one: U+00E9.
    made = guest(players, "Ame\u0301lie")
    assert made.player.display_name == "Am\u00e9lie"
    assert guest(players, "é" * 32).player.display_name == "é" * 32
    assert guest(players, "李小龍").player.display_name == "李小龍"


def test_a_player_binds_the_seats_it_creates_and_joins_and_acts_for_them_with_its_credential(stubs) -> None:
    players, games = stubs
    alice, bob = guest(players, "Alice"), guest(players, "Bob")
    created = games.CreateGame(
        pb.CreateGameRequest(
            game_type="qwirkle",
            seat_assignments=[pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR), pb.SeatAssignment(kind=pb.SEAT_KIND_OPEN)],
        ),
        metadata=seat(alice.credential),
    )
    assert created.seat_tokens[0]  # the seat token still comes back
    first = created.state.seats[0].player
    assert (first.player_id, first.display_name, first.colour) == (
        alice.player.player_id,
        "Alice",
        alice.player.colour,
    )
    assert not created.state.seats[1].HasField("player")
    joined = games.JoinGame(pb.JoinGameRequest(game_id=created.game_id), metadata=seat(bob.credential))
    assert joined.seat == 1 and joined.seat_token
    assert joined.state.seats[1].player.display_name == "Bob"
    code, reason, _ = expect_error(
        games.JoinGame, pb.JoinGameRequest(game_id=created.game_id), metadata=seat(bob.credential)
    )
    assert reason in ("ALREADY_SEATED", "NO_OPEN_SEAT")
    # Another device: the credential alone acts for the player's seat (no seat token).
    view = games.GetView(pb.GetViewRequest(game_id=created.game_id), metadata=seat(bob.credential)).state
    assert (view.role, view.seat) == (pb.ROLE_SEAT, 1)
    view = games.GetView(pb.GetViewRequest(game_id=created.game_id), metadata=seat(alice.credential)).state
    assert (view.role, view.seat) == (pb.ROLE_SEAT, 0)
    mover = alice if 0 in view.to_act else bob
    moves = games.ListLegalMoves(pb.ListLegalMovesRequest(game_id=created.game_id), metadata=seat(mover.credential))
    played = games.PlayMove(
        pb.PlayMoveRequest(game_id=created.game_id, command_id="players-1", action=moves.moves[0]),
        metadata=seat(mover.credential),
    )
    assert played.state.seq > view.seq
    # A player who holds no seat of the match reads what a spectator reads.
    carol = guest(players, "Carol")
    view = games.GetView(pb.GetViewRequest(game_id=created.game_id), metadata=seat(carol.credential)).state
    assert view.role == pb.ROLE_SPECTATOR
    code, reason, _ = expect_error(
        games.PlayMove,
        pb.PlayMoveRequest(game_id=created.game_id, command_id="players-2", action=moves.moves[0]),
        metadata=seat(carol.credential),
    )
    assert code == grpc.StatusCode.UNAUTHENTICATED
    # A rename shows in the match's seats, in the lobby and in a view read before it (the
    # server's views of the same state, built once per viewer, are built again).
    before = games.GetView(pb.GetViewRequest(game_id=created.game_id), metadata=seat(bob.credential)).state
    players.RenamePlayer(ppb.RenamePlayerRequest(display_name="Robert"), metadata=seat(bob.credential))
    listed = games.ListGames(pb.ListGamesRequest(mine=True), metadata=seat(bob.credential)).games
    assert [g.game_id for g in listed] == [created.game_id]
    assert listed[0].seats[1].player.display_name == "Robert"
    after = games.GetView(pb.GetViewRequest(game_id=created.game_id), metadata=seat(bob.credential)).state
    assert after.seq == before.seq and after.seats[1].player.display_name == "Robert"


def test_my_matches_are_listed_by_player_running_waiting_and_finished_and_paged(stubs) -> None:
    players, games = stubs
    dana = guest(players, "Dana")
    ids = []
    for _ in range(3):
        made = games.CreateGame(
            pb.CreateGameRequest(
                game_type="carre",
                seat_assignments=[
                    pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR),
                    pb.SeatAssignment(kind=pb.SEAT_KIND_OPEN),
                ],
            ),
            metadata=seat(dana.credential),
        )
        ids.append(made.game_id)
    games.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2))  # not Dana's
    page = games.ListGames(pb.ListGamesRequest(mine=True, page_size=2), metadata=seat(dana.credential))
    assert [g.game_id for g in page.games] == ids[::-1][:2] and page.next_page_token
    rest = games.ListGames(
        pb.ListGamesRequest(mine=True, page_size=2, page_token=page.next_page_token), metadata=seat(dana.credential)
    )
    assert [g.game_id for g in rest.games] == ids[:1] and not rest.next_page_token
    for g in list(page.games) + list(rest.games):
        assert list(g.your_seats) == [0] and not g.over
    code, reason, _ = expect_error(games.ListGames, pb.ListGamesRequest(mine=True))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "PLAYER_CREDENTIAL_REQUIRED")


def test_a_finished_match_is_listed_with_its_result(stubs) -> None:
    players, games = stubs
    erin = guest(players, "Erin")
    made = games.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2), metadata=seat(erin.credential))
    state = made.state
    tokens = list(made.seat_tokens)
    while not state.over:
        mover = state.to_act[0]
        moves = games.ListLegalMoves(pb.ListLegalMovesRequest(game_id=made.game_id), metadata=seat(tokens[mover]))
        state = games.PlayMove(
            pb.PlayMoveRequest(game_id=made.game_id, command_id=f"m{state.seq}", action=moves.moves[0]),
            metadata=seat(tokens[mover]),
        ).state
    listed = games.ListGames(pb.ListGamesRequest(mine=True), metadata=seat(erin.credential)).games
    assert listed[0].game_id == made.game_id and listed[0].over
    assert list(listed[0].outcome.scores) == list(state.outcome.scores)


def test_a_revoked_credential_is_refused_at_once_by_every_server(server: Server, second_server: Server) -> None:
    a_players, a_games, a = players_of(server)
    b_players, b_games, b = players_of(second_server)
    try:
        made = guest(a_players, "Frank")
        keep = guest(a_players, "Grace")
        # Server B reads both credentials (and holds them in its cache).
        for cred in (made.credential, keep.credential):
            assert b_players.GetPlayer(ppb.GetPlayerRequest(), metadata=seat(cred)).player.player_id
        created = b_games.CreateGame(pb.CreateGameRequest(game_type="qwirkle", seats=2), metadata=seat(made.credential))
        b_games.GetView(pb.GetViewRequest(game_id=created.game_id), metadata=seat(made.credential))
        revoked = a_players.RevokeCredential(ppb.RevokeCredentialRequest(), metadata=seat(made.credential))
        assert revoked.revoked == 1
        # A refuses at once (it revoked it); B as soon as the notification reaches it.
        code, reason, _ = expect_error(a_players.GetPlayer, ppb.GetPlayerRequest(), metadata=seat(made.credential))
        assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN")
        deadline = time.monotonic() + 2.0
        while True:
            try:
                b_games.GetView(pb.GetViewRequest(game_id=created.game_id), metadata=seat(made.credential))
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.UNAUTHENTICATED
                break
            assert time.monotonic() < deadline, "server B still trusts a revoked credential"
        code, reason, _ = expect_error(b_players.GetPlayer, ppb.GetPlayerRequest(), metadata=seat(made.credential))
        assert reason == "BAD_TOKEN"
        # The seat token of the match still works; another player's credential too.
        assert (
            b_games.GetView(
                pb.GetViewRequest(game_id=created.game_id), metadata=seat(created.seat_tokens[0])
            ).state.role
            == pb.ROLE_SEAT
        )
        assert (
            b_players.GetPlayer(ppb.GetPlayerRequest(), metadata=seat(keep.credential)).player.display_name == "Grace"
        )
    finally:
        a.close()
        b.close()


def test_player_calls_work_over_connect(serving) -> None:
    srv, _ = serving("--web-listen", "127.0.0.1:0")

    def post(method: str, body: dict[str, object], token: str | None = None) -> tuple[int, dict[str, object]]:
        request = urllib.request.Request(
            f"{srv.web_url}/tablier.v1.PlayerService/{method}",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json", **({"authorization": f"Bearer {token}"} if token else {})},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    status, made = post("CreateGuestPlayer", {"displayName": "Heidi"})
    assert status == 200, made
    cred = str(made["credential"])
    status, me = post("GetPlayer", {}, cred)
    assert status == 200 and me["player"]["displayName"] == "Heidi"  # type: ignore[index]
    status, refused = post("CreateGuestPlayer", {"displayName": "\x07"})
    assert status == 400 and refused["code"] == "invalid_argument"
    # The same credential on GameService over Connect binds a seat.
    request = urllib.request.Request(
        f"{srv.web_url}/tablier.v1.GameService/CreateGame",
        data=json.dumps({"gameType": "qwirkle", "seats": 2}).encode(),
        headers={"content-type": "application/json", "authorization": f"Bearer {cred}"},
    )
    with urllib.request.urlopen(request, timeout=10) as r:
        state = json.loads(r.read())["state"]
    assert state["seats"][0]["player"]["displayName"] == "Heidi"


# -- OpenID Connect ----------------------------------------------------------------------------


class Issuer:
    """An OpenID Connect issuer on loopback: its discovery document and JWKS (keys may be
    added while it runs: a rotation), and ID tokens signed with any of its keys."""

    def __init__(self) -> None:
        self.keys: dict[str, tuple[str, object]] = {}  # kid -> (alg, private key)
        self.fetches = 0
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": issuer.url, "jwks_uri": f"{issuer.url}/jwks"}
                elif self.path == "/jwks":
                    issuer.fetches += 1
                    body = {"keys": [issuer.public_jwk(kid) for kid in issuer.keys]}
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def add_key(self, alg: str) -> str:
        kid = f"{alg.lower()}-{len(self.keys)}"
        if alg == "RS256":
            key: object = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        elif alg == "ES256":
            key = ec.generate_private_key(ec.SECP256R1())
        else:
            key = ed25519.Ed25519PrivateKey.generate()
        self.keys[kid] = (alg, key)
        return kid

    def public_jwk(self, kid: str) -> dict[str, object]:
        alg, key = self.keys[kid]
        algorithm = jwt.get_algorithm_by_name(alg)
        jwk = json.loads(algorithm.to_jwk(key.public_key()))  # type: ignore[attr-defined]
        return {**jwk, "kid": kid, "alg": alg, "use": "sig"}

    def token(self, kid: str, subject: str, audience: str = "tablier-test", **claims: object) -> str:
        alg, key = self.keys[kid]
        now = int(time.time())
        body = {"iss": self.url, "aud": audience, "sub": subject, "iat": now, "exp": now + 300, **claims}
        return jwt.encode(body, key, algorithm=alg, headers={"kid": kid})  # type: ignore[arg-type]

    def close(self) -> None:
        self.httpd.shutdown()


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    made = Issuer()
    yield made
    made.close()


def test_oidc_sign_in_maps_an_external_identity_to_one_player_and_follows_key_rotation(serving, issuer) -> None:
    rsa_kid = issuer.add_key("RS256")
    srv, _ = serving("--oidc-issuer", issuer.url, "--oidc-audience", "tablier-test", "--create-burst", "1000000")
    players, games, ch = players_of(srv)
    try:
        first = players.SignInWithOidc(ppb.SignInWithOidcRequest(id_token=issuer.token(rsa_kid, "user-1", name="Ivan")))
        assert first.created and first.player.display_name == "Ivan" and first.player.external
        again = players.SignInWithOidc(ppb.SignInWithOidcRequest(id_token=issuer.token(rsa_kid, "user-1")))
        assert not again.created and again.player.player_id == first.player.player_id
        assert again.credential != first.credential
        fetched = issuer.fetches
        # Rotation: keys the server has not seen, each fetched when a token names it.
        # The server fetches the set again for a key id it lacks, at most once a second.
        for alg in ("ES256", "EdDSA"):
            kid = issuer.add_key(alg)
            request = ppb.SignInWithOidcRequest(id_token=issuer.token(kid, f"user-{alg}"), display_name=f"Judy {alg}")
            deadline = time.monotonic() + 5
            while True:
                try:
                    signed = players.SignInWithOidc(request)
                    break
                except grpc.RpcError as exc:
                    assert exc.code() == grpc.StatusCode.UNAUTHENTICATED and time.monotonic() < deadline, exc
            assert signed.created and signed.player.display_name == f"Judy {alg}"
        assert issuer.fetches > fetched
        me = players.GetPlayer(ppb.GetPlayerRequest(), metadata=seat(again.credential)).player
        assert me.player_id == first.player.player_id
        # Refused: another audience, another issuer's key, expired, not signed, garbage.
        stranger = Issuer()
        try:
            other = stranger.add_key("RS256")
            forged = jwt.encode(
                {
                    "iss": issuer.url,
                    "aud": "tablier-test",
                    "sub": "user-1",
                    "iat": int(time.time()),
                    "exp": int(time.time()) + 300,
                },
                stranger.keys[other][1],
                algorithm="RS256",
                headers={"kid": rsa_kid},  # type: ignore[arg-type]
            )
        finally:
            stranger.close()
        header = base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').rstrip(b"=").decode()
        unsigned = (
            header
            + "."
            + base64.urlsafe_b64encode(json.dumps({"iss": issuer.url, "aud": "tablier-test", "sub": "user-1"}).encode())
            .rstrip(b"=")
            .decode()
            + "."
        )
        for bad in (
            issuer.token(rsa_kid, "user-1", audience="someone-else"),
            forged,
            issuer.token(rsa_kid, "user-1", exp=int(time.time()) - 3600),
            unsigned,
            "not a token",
        ):
            code, reason, _ = expect_error(players.SignInWithOidc, ppb.SignInWithOidcRequest(id_token=bad))
            assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "BAD_ID_TOKEN"), bad
    finally:
        ch.close()


def test_player_calls_are_limited_per_peer_and_per_player(serving) -> None:
    srv, games = serving("--create-burst", "3", "--create-rate", "0.01")
    players, _, ch = players_of(srv)
    try:
        made = [guest(players, f"P{i}") for i in range(3)]
        code, reason, _ = expect_error(players.CreateGuestPlayer, ppb.CreateGuestPlayerRequest(display_name="P3"))
        assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "PLAYER_RATE_LIMITED")
        # Per player: its renames (the peer's bucket is not theirs).
        cred = seat(made[0].credential)
        for i in range(3):
            players.RenamePlayer(ppb.RenamePlayerRequest(display_name=f"Q{i}"), metadata=cred)
        code, reason, _ = expect_error(players.RenamePlayer, ppb.RenamePlayerRequest(display_name="Q3"), metadata=cred)
        assert reason == "PLAYER_RATE_LIMITED"
        players.RenamePlayer(ppb.RenamePlayerRequest(display_name="R"), metadata=seat(made[1].credential))
    finally:
        ch.close()


def test_oidc_without_an_issuer_is_refused(stubs) -> None:
    players, _ = stubs
    code, reason, _ = expect_error(players.SignInWithOidc, ppb.SignInWithOidcRequest(id_token="x.y.z"))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "OIDC_NOT_CONFIGURED")


async def test_the_sdk_signs_in_lists_my_matches_and_rejoins_from_another_client(server: Server) -> None:
    from tablier_client import connect, creator_seat, open_seat

    async with connect(server.address) as phone, connect(server.address) as laptop:
        me = await phone.sign_in_guest("Kim")
        assert me.display_name == "Kim" and phone.credential
        assert (await phone.rename("Kimberly")).display_name == "Kimberly"
        created = await phone.create("qwirkle", 0, assignments=[creator_seat(), open_seat()])
        assert created.state.seats[0].player.display_name == "Kimberly"
        # Another device, the credential alone: the same player, its matches, its seat.
        assert (await laptop.use_credential(phone.credential)).player_id == me.player_id
        mine, _ = await laptop.my_matches()
        assert created.game_id in [g.game_id for g in mine]
        handle = laptop.rejoin(created.game_id)
        state = await handle.state()
        assert state.seat == 0 and state.seats[0].player.player_id == me.player_id
        assert (await laptop.me()).display_name == "Kimberly"
        assert await laptop.sign_out() == 1
        with pytest.raises(Exception) as refused:
            await phone.me()
        assert "BAD_TOKEN" in repr(refused.value) or "revoked" in str(refused.value)


def test_tablier_play_lists_my_matches_with_names_from_any_device(stubs, server: Server) -> None:
    import subprocess

    from .conftest import tablier_cmd

    players, games = stubs
    liam, mia = guest(players, "Liam"), guest(players, "Mia")
    made = games.CreateGame(
        pb.CreateGameRequest(
            game_type="qwirkle",
            seat_assignments=[pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR), pb.SeatAssignment(kind=pb.SEAT_KIND_OPEN)],
        ),
        metadata=seat(liam.credential),
    )
    waiting = games.CreateGame(
        pb.CreateGameRequest(
            game_type="carre",
            seat_assignments=[pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR), pb.SeatAssignment(kind=pb.SEAT_KIND_OPEN)],
        ),
        metadata=seat(liam.credential),
    )
    games.JoinGame(pb.JoinGameRequest(game_id=made.game_id), metadata=seat(mia.credential))
    out = subprocess.run(
        tablier_cmd("play", "--mine", "--server", server.address, "--no-tls", "--credential", liam.credential),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "Matches of Liam:"
    first = next(line for line in lines if made.game_id in line)
    assert "Liam (you), Mia" in first
    assert ("your move" in first) == (0 in made.state.to_act)
    second = next(line for line in lines if waiting.game_id in line)
    assert "waiting for 1 more player" in second and "seat 2 (open)" in second
    refused = subprocess.run(
        tablier_cmd("play", "--mine", "--server", server.address, "--no-tls", "--credential", "tp1." + "x" * 43),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1 and "BAD_TOKEN" in refused.stderr


@pytest.mark.parametrize("game", ["qwirkle", "carre", "rat_a_tat_cat", "grid_knock", "democratie"])
def test_event_sentences_name_the_players_and_number_other_seats_from_one(stubs, game: str) -> None:
    import re

    players, games = stubs
    nora = guest(players, "Nora")
    made = games.CreateGame(
        pb.CreateGameRequest(
            game_type=game,
            seat_assignments=[pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR), pb.SeatAssignment(kind=pb.SEAT_KIND_BOT)],
        ),
        metadata=seat(nora.credential),
    )
    state = made.state
    for n in range(4):
        deadline = time.monotonic() + 20
        while 0 not in state.to_act and not state.over:  # the bot's turn: wait for its move
            assert time.monotonic() < deadline, "the bot seat did not move"
            state = games.GetView(pb.GetViewRequest(game_id=made.game_id)).state
        if state.over:
            break
        moves = games.ListLegalMoves(pb.ListLegalMovesRequest(game_id=made.game_id), metadata=seat(nora.credential))
        state = games.PlayMove(
            pb.PlayMoveRequest(game_id=made.game_id, command_id=f"n{n}", action=moves.moves[0]),
            metadata=seat(nora.credential),
        ).state
    spectator = games.ListEvents(pb.ListEventsRequest(game_id=made.game_id)).events
    mine = games.ListEvents(pb.ListEventsRequest(game_id=made.game_id), metadata=seat(nora.credential)).events
    said = [e.description for e in spectator]
    assert any("Nora" in s for s in said), said
    assert not any(re.search(r"\b[Ss]eat 0\b", s) for s in said), said
    # Nora reads her own moves as "you"; her name is for the others.
    assert not any("Nora" in e.description for e in mine if e.HasField("seat") and e.seat == 0)


@pytest.mark.parametrize("game", GAME_IDS)
def test_a_players_credential_reads_its_own_seat_and_never_anothers(stubs, game: str) -> None:
    players, games = stubs
    olga, pete = guest(players, "Olga"), guest(players, "Pete")
    made = games.CreateGame(
        pb.CreateGameRequest(
            game_type=game,
            seat_assignments=[pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR), pb.SeatAssignment(kind=pb.SEAT_KIND_OPEN)],
        ),
        metadata=seat(olga.credential),
    )
    joined = games.JoinGame(pb.JoinGameRequest(game_id=made.game_id), metadata=seat(pete.credential))
    tokens = {0: made.seat_tokens[0], 1: joined.seat_token}
    creds = {0: olga.credential, 1: pete.credential}
    views = {}
    for s in (0, 1):
        by_cred = games.GetView(pb.GetViewRequest(game_id=made.game_id), metadata=seat(creds[s])).state
        by_token = games.GetView(pb.GetViewRequest(game_id=made.game_id), metadata=seat(tokens[s])).state
        assert (by_cred.role, by_cred.seat) == (pb.ROLE_SEAT, s)
        assert by_cred.view == by_token.view  # exactly the seat's own view, redacted by the core
        views[s] = by_cred.view
        events_cred = games.ListEvents(pb.ListEventsRequest(game_id=made.game_id), metadata=seat(creds[s])).events
        events_token = games.ListEvents(pb.ListEventsRequest(game_id=made.game_id), metadata=seat(tokens[s])).events
        assert [e.payload for e in events_cred] == [e.payload for e in events_token]
    assert views[0] != views[1]  # each holds hidden information the other may not read
    if INFO[game].position_type:
        code, reason, _ = expect_error(
            games.GetView,
            pb.GetViewRequest(game_id=made.game_id, with_position=True, position_seat=1),
            metadata=seat(olga.credential),
        )
        assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "POSITION_NOT_VISIBLE")
    # A stranger's credential reads what a spectator reads, and acts for no seat.
    stranger = guest(players, "Quinn")
    public = games.GetView(pb.GetViewRequest(game_id=made.game_id)).state.view
    assert (
        games.GetView(pb.GetViewRequest(game_id=made.game_id), metadata=seat(stranger.credential)).state.view == public
    )


HOSTILE = "<img src=x onerror=alert(1)>"


def test_a_hostile_name_is_text_in_events_and_in_the_web_app(serving, tmp_path) -> None:
    import os
    import shutil
    import subprocess

    from .conftest import ROOT

    web = ROOT / "clients" / "web"
    srv, games = serving("--web-listen", "127.0.0.1:0", "--web-dir", str(web / "dist"), "--create-burst", "1000")
    players, _, ch = players_of(srv)
    try:
        evil = guest(players, HOSTILE)
        assert evil.player.display_name == HOSTILE  # a legal name: it is shown as text
        made = games.CreateGame(
            pb.CreateGameRequest(
                game_type="qwirkle",
                seat_assignments=[
                    pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR),
                    pb.SeatAssignment(kind=pb.SEAT_KIND_BOT),
                ],
            ),
            metadata=seat(evil.credential),
        )
        state = made.state
        deadline = time.monotonic() + 20
        while 0 not in state.to_act:  # the bot opens: wait for its move
            assert time.monotonic() < deadline, "the bot seat did not move"
            state = games.GetView(pb.GetViewRequest(game_id=made.game_id)).state
        if 0 in state.to_act:
            moves = games.ListLegalMoves(pb.ListLegalMovesRequest(game_id=made.game_id), metadata=seat(evil.credential))
            games.PlayMove(
                pb.PlayMoveRequest(game_id=made.game_id, command_id="evil-1", action=moves.moves[0]),
                metadata=seat(evil.credential),
            )
        said = [e.description for e in games.ListEvents(pb.ListEventsRequest(game_id=made.game_id)).events]
        assert any(HOSTILE in s for s in said), said  # the API gives the name as it is: clients escape it
        chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        if not (
            (web / "dist" / "index.html").is_file()
            and (web / "node_modules" / "playwright-core").is_dir()
            and os.path.isfile(chromium)
            and shutil.which("node")
        ):
            if os.environ.get("CI"):
                pytest.fail("the web app, playwright-core, node or Chromium is missing")
            pytest.skip("the web app, playwright-core, node or Chromium is missing")
        shots = ROOT / "test-results" / "players"
        shots.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["node", str(ROOT / "tests" / "e2e" / "hostile_name.mjs"), srv.web_url, made.game_id, HOSTILE, str(shots)],
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(os.environ, CHROMIUM=chromium, WEB_DIR=str(web)),
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "hostile name shown as text" in done.stdout
    finally:
        ch.close()


# -- leaving and resigning ---------------------------------------------------------------------


def _two_seats(games, cred: str, game: str, second: int = pb.SEAT_KIND_OPEN) -> pb.CreateGameResponse:
    return games.CreateGame(
        pb.CreateGameRequest(
            game_type=game,
            seat_assignments=[pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR), pb.SeatAssignment(kind=second)],
        ),
        metadata=seat(cred),
    )


def test_a_player_leaves_a_waiting_match_and_the_seat_reopens(stubs) -> None:
    players, games = stubs
    rosa, sam = guest(players, "Rosa"), guest(players, "Sam")
    made = games.CreateGame(
        pb.CreateGameRequest(
            game_type="qwirkle",
            seat_assignments=[pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR)]
            + [pb.SeatAssignment(kind=pb.SEAT_KIND_OPEN)] * 2,
        ),
        metadata=seat(rosa.credential),
    )
    joined = games.JoinGame(pb.JoinGameRequest(game_id=made.game_id, seat=1), metadata=seat(sam.credential))
    left = games.LeaveGame(
        pb.LeaveGameRequest(game_id=made.game_id, command_id="leave-1"), metadata=seat(sam.credential)
    )
    assert [e.type for e in left.events] == ["seat_left"]
    assert left.events[0].description == "Sam left the match: seat 2 is open again."
    again = games.LeaveGame(
        pb.LeaveGameRequest(game_id=made.game_id, command_id="leave-1"), metadata=seat(sam.credential)
    )
    assert again.replayed and again.state.seq == left.state.seq
    state = games.GetView(pb.GetViewRequest(game_id=made.game_id)).state
    assert state.seats[1].status == pb.SEAT_STATUS_OPEN and not state.seats[1].HasField("player")
    # Neither Sam's token nor Sam's credential acts for the seat any more.
    code, _, _ = expect_error(
        games.ListLegalMoves, pb.ListLegalMovesRequest(game_id=made.game_id), metadata=seat(joined.seat_token)
    )
    assert code == grpc.StatusCode.UNAUTHENTICATED
    view = games.GetView(pb.GetViewRequest(game_id=made.game_id), metadata=seat(sam.credential)).state
    assert view.role == pb.ROLE_SPECTATOR
    assert made.game_id not in [
        g.game_id for g in games.ListGames(pb.ListGamesRequest(mine=True), metadata=seat(sam.credential)).games
    ]
    # The seat is open again: anyone may take it.
    tina = guest(players, "Tina")
    retaken = games.JoinGame(pb.JoinGameRequest(game_id=made.game_id, seat=1), metadata=seat(tina.credential))
    assert retaken.seat == 1 and retaken.state.seats[1].player.display_name == "Tina"
    # Once every seat is filled the match no longer waits: leaving is refused, resigning is not.
    games.JoinGame(pb.JoinGameRequest(game_id=made.game_id, seat=2))
    code, reason, _ = expect_error(
        games.LeaveGame, pb.LeaveGameRequest(game_id=made.game_id, command_id="leave-2"), metadata=seat(tina.credential)
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "MATCH_NOT_WAITING")
    code, reason, _ = expect_error(
        games.HostCommand,
        pb.HostCommandRequest(game_id=made.game_id, command_id="h", command="leave:0"),
        metadata=(("authorization", f"Bearer {OPERATOR_TOKEN}"),),
    )
    assert reason == "NOT_A_HOST_COMMAND"


@pytest.mark.parametrize("game", GAME_IDS)
def test_resigning_on_ones_turn_ends_the_match_by_the_games_forfeit_rule(stubs, game: str) -> None:
    players, games = stubs
    wes = guest(players, "Wes")
    made = _two_seats(games, wes.credential, game, pb.SEAT_KIND_BOT)
    state = made.state
    deadline = time.monotonic() + 20
    while 0 not in state.to_act:  # the bot may open: wait for Wes's turn
        assert time.monotonic() < deadline
        state = games.GetView(pb.GetViewRequest(game_id=made.game_id)).state
    done = games.ResignGame(pb.ResignGameRequest(game_id=made.game_id, command_id="r1"), metadata=seat(wes.credential))
    assert done.events[0].type == "seat_resigned" and done.state.over
    assert done.events[0].description == "Wes resigned and forfeits the match."
    assert 0 not in done.state.outcome.winners
    again = games.ResignGame(pb.ResignGameRequest(game_id=made.game_id, command_id="r1"), metadata=seat(wes.credential))
    assert again.replayed and again.state.seq == done.state.seq
    mine = games.ListEvents(pb.ListEventsRequest(game_id=made.game_id), metadata=seat(made.seat_tokens[0])).events
    assert "You resigned and forfeit the match." in [e.description for e in mine]
    code, reason, _ = expect_error(
        games.ResignGame, pb.ResignGameRequest(game_id=made.game_id, command_id="r2"), metadata=seat(wes.credential)
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER")


def test_resigning_off_ones_turn_is_refused_and_changes_nothing(stubs) -> None:
    players, games = stubs
    xia = guest(players, "Xia")
    made = _two_seats(games, xia.credential, "qwirkle")
    yan = games.JoinGame(pb.JoinGameRequest(game_id=made.game_id), metadata=seat(guest(players, "Yan").credential))
    state = games.GetView(pb.GetViewRequest(game_id=made.game_id)).state
    idle = made.seat_tokens[0] if 0 not in state.to_act else yan.seat_token
    code, reason, _ = expect_error(
        games.ResignGame, pb.ResignGameRequest(game_id=made.game_id, command_id="r1"), metadata=seat(idle)
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
    assert games.GetView(pb.GetViewRequest(game_id=made.game_id)).state.seq == state.seq


async def test_the_sdk_leaves_and_resigns(server: Server) -> None:
    from tablier_client import Refused, bot_seat, connect, creator_seat, open_seat

    async with connect(server.address) as client:
        await client.sign_in_guest("Zed")
        waiting = await client.create("qwirkle", 0, assignments=[creator_seat(), open_seat()])
        left = await waiting.seats[0].leave()
        assert [e.type for e in left.events] == ["seat_left"] and left.state.seats[0].status == 2  # open
        playing = await client.create("carre", 0, assignments=[creator_seat(), bot_seat()])
        me = client.rejoin(playing.game_id)
        state = await me.state()
        deadline = time.monotonic() + 20
        while not state.my_turn:  # the bot may open
            assert time.monotonic() < deadline
            state = await me.state()
        done = await me.resign()
        assert done.state.over and done.events[0].type == "seat_resigned"
        with pytest.raises(Refused):
            await me.resign()


def test_matches_with_a_seat_left_and_a_resignation_verify(stubs, e2e_database_url: str) -> None:
    import subprocess

    from .conftest import tablier_cmd

    players, games = stubs
    ada = guest(players, "Ada")
    waiting = _two_seats(games, ada.credential, "rat_a_tat_cat")
    games.LeaveGame(pb.LeaveGameRequest(game_id=waiting.game_id, command_id="l"), metadata=seat(ada.credential))
    made = _two_seats(games, ada.credential, "grid_knock", pb.SEAT_KIND_BOT)
    state = made.state
    deadline = time.monotonic() + 20
    while 0 not in state.to_act:
        assert time.monotonic() < deadline
        state = games.GetView(pb.GetViewRequest(game_id=made.game_id)).state
    games.ResignGame(pb.ResignGameRequest(game_id=made.game_id, command_id="r"), metadata=seat(ada.credential))
    for gid in (waiting.game_id, made.game_id):
        done = subprocess.run(
            tablier_cmd("verify", gid, "--database-url", e2e_database_url), capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr

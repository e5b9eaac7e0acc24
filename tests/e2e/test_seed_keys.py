"""Seeds sealed at rest: a database dump alone reveals no seed; the default key lives in the
data directory with owner-only permissions; keys rotate with `tablier rotate-seed-key`."""

from __future__ import annotations

import asyncio
import os
import secrets
import stat
import subprocess

import grpc
import psycopg

from tablier.app import GameApp
from tablier.seeds import key_id
from tablier.store.postgres import open_store
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import OPERATOR_TOKEN, start_server, tablier_cmd
from .helpers import OPERATOR, bot_move, expect_error


def keyed_env(current: str, *old: str) -> dict[str, str]:
    return {"TABLIER_OPERATOR_TOKEN": OPERATOR_TOKEN, "TABLIER_SEED_KEY": current,
            "TABLIER_SEED_OLD_KEYS": ",".join(old)}


def tablier(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(tablier_cmd(*args), capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env, "COLUMNS": "300"})


def rows(url: str) -> dict[str, tuple]:
    with psycopg.connect(url) as conn:
        return {str(r[0]): r[1:] for r in conn.execute(
            "SELECT game_id, seed, sealed_seed, seed_key_id FROM games")}


def test_seeds_are_sealed_and_keys_rotate(fresh_database_url, tmp_path):
    url = fresh_database_url
    a, b = secrets.token_bytes(32).hex(), secrets.token_bytes(32).hex()
    # A match of an earlier version, seed in clear (a store without a key).
    async def legacy() -> str:
        store = await open_store(url)
        try:
            return (await GameApp(store).create_game("carre", 2, {})).game_id
        finally:
            await store.close()
    old_gid = asyncio.run(legacy())

    srv = start_server(url, tmp_path, "key-a", env=keyed_env(a))
    try:
        with grpc.insecure_channel(srv.address) as ch:
            stub = rpc.GameServiceStub(ch)
            created = stub.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2))
            gid = created.game_id
            seed = stub.GetView(pb.GetViewRequest(game_id=gid), metadata=OPERATOR).state.seed
    finally:
        assert srv.stop() == 0, srv.log.read_text()
    plain, sealed, kid = rows(url)[gid]
    assert plain is None and kid == key_id(bytes.fromhex(a))
    assert len(seed) == 32 and seed not in bytes(sealed)
    assert rows(url)[old_gid][0] is not None  # the earlier match: in clear until resealed

    # Without the key, the database alone does not give the seed.
    stranger = tablier({"TABLIER_SEED_KEY": b}, "verify", gid, "--database-url", url)
    assert stranger.returncode == 1 and "does not have" in stranger.stdout, stranger.stdout

    rotated = tablier(keyed_env(b, a), "rotate-seed-key", "--database-url", url)
    assert rotated.returncode == 0 and "resealed 2 seed(s)" in rotated.stdout, rotated.stdout + rotated.stderr
    after = rows(url)
    assert after[gid][0] is None and after[gid][2] == key_id(bytes.fromhex(b)) and after[gid][1] != sealed
    assert after[old_gid][0] is None and after[old_gid][2] == key_id(bytes.fromhex(b))
    again = tablier(keyed_env(b), "rotate-seed-key", "--database-url", url)
    assert again.returncode == 0 and "resealed 0 seed(s)" in again.stdout

    for name, env, readable in (("key-b", keyed_env(b), True), ("key-a-only", keyed_env(a), False)):
        srv = start_server(url, tmp_path, name, env=env)
        try:
            with grpc.insecure_channel(srv.address) as ch:
                stub = rpc.GameServiceStub(ch)
                if readable:
                    assert stub.GetView(pb.GetViewRequest(game_id=gid), metadata=OPERATOR).state.seed == seed
                    assert bot_move(stub, created).state.seq > created.state.seq  # decides from the seed
                else:
                    code, reason, message = expect_error(stub.GetView, pb.GetViewRequest(game_id=gid))
                    assert (code, reason) == (grpc.StatusCode.DATA_LOSS, "SEED_KEY_UNKNOWN"), message
        finally:
            assert srv.stop() == 0, srv.log.read_text()
    ok = tablier(keyed_env(b), "verify", "--all", "--database-url", url)
    assert ok.returncode == 0, ok.stdout


def test_the_default_key_is_generated_owner_only(fresh_database_url, tmp_path):
    data = tmp_path / "data"
    env = {"TABLIER_OPERATOR_TOKEN": OPERATOR_TOKEN, "TABLIER_SEED_KEY": "", "TABLIER_SEED_OLD_KEYS": ""}
    srv = start_server(fresh_database_url, tmp_path, "default-key", "--data-dir", str(data), env=env)
    try:
        with grpc.insecure_channel(srv.address) as ch:
            gid = rpc.GameServiceStub(ch).CreateGame(pb.CreateGameRequest(game_type="carre", seats=2)).game_id
    finally:
        assert srv.stop() == 0, srv.log.read_text()
    key_file = data / "seed.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert rows(fresh_database_url)[gid][2] == key_id(bytes.fromhex(key_file.read_text().strip()))

    key_file.chmod(0o644)
    refused = tablier(env, "serve", "--listen", "127.0.0.1:0", "--database-url", fresh_database_url,
                      "--data-dir", str(data))
    assert refused.returncode == 2 and "readable by others" in refused.stderr
    bad = tablier({**env, "TABLIER_SEED_KEY": "not-hex"}, "serve", "--listen", "127.0.0.1:0",
                  "--database-url", fresh_database_url)
    assert bad.returncode == 2 and "64 hex digits" in bad.stderr

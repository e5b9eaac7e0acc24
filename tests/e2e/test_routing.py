"""Several servers behind one address: Debian's HAProxy with deploy/haproxy.cfg (its `server`
lines rewritten for the processes started here) in front of three `tablier serve` on one
PostgreSQL. Shown from the servers' access logs: the calls about one match land on one server
(the clients' `x-tablier-game` header, hashed consistently), different matches spread over the
servers; a server stopped mid-match hands its matches to the others, which load them from the
log with nothing lost; calls sent straight to a server that does not hold the match (or with
another match's header) are still correct: moves are checked against the log's seq, reads with
`min_seq` are fresh. The TypeScript client (the npm package's example) through the proxy's
browser address keeps its match on one server too.

Needs the `haproxy` binary (.ci/run installs Debian's); skips without it, fails under CI."""

from __future__ import annotations

import os
import re
import resource
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import yaml
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc
from tablier_client import Retry, connect, errors

from .conftest import OPERATOR_TOKEN, ROOT, Server, start_server
from .test_web_package import PACKAGE, WEB, installed  # noqa: F401  (the packed npm package, a fixture)

CONFIG = ROOT / "deploy" / "haproxy.cfg"
SERVERS = 3
MATCHES = 12
AUDITOR = (("authorization", f"Bearer {OPERATOR_TOKEN}"),)
ACCESS = re.compile(r" access (\w+) (\w+) .* game=(\S+)")


@dataclass
class Routed:
    address: str
    servers: list[Server]
    proxy: subprocess.Popen[bytes]
    haproxy: str
    log: Path
    web_url: str

    def calls(self) -> dict[str, dict[int, list[str]]]:
        """game id -> server index -> the methods that server answered about it (access logs)."""
        out: dict[str, dict[int, list[str]]] = {}
        for i, srv in enumerate(self.servers):
            for line in srv.log.read_text().splitlines():
                found = ACCESS.search(line)
                if found:
                    out.setdefault(found[3], {}).setdefault(i, []).append(found[1])
        return out

    def owners(self, game_id: str) -> set[int]:
        """The servers that answered calls about `game_id` other than its creation."""
        return {i for i, methods in self.calls().get(game_id, {}).items() if set(methods) - {"CreateGame"}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proxy_config(port: int, web_port: int, servers: list[Server]) -> str:
    """deploy/haproxy.cfg as shipped, but for these servers: its gRPC frontend on `port`, its
    browser frontend on `web_port`, each backend's `server` lines naming the servers' addresses."""
    text = CONFIG.read_text()
    text = text.replace("bind :50051 proto h2", f"bind 127.0.0.1:{port} proto h2")
    text = text.replace("bind :8080", f"bind 127.0.0.1:{web_port}")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 2 * 4096 + 100:  # what this machine allows
        text = text.replace("maxconn 4096", f"maxconn {max(64, (hard - 100) // 2)}")
    lines, backend = [], ""
    for line in text.splitlines():
        if line.startswith("backend "):
            backend = line.split()[1]
        if not line.strip().startswith("server "):
            lines.append(line)
            continue
        if line.strip().startswith("server tablier-1 "):  # once per backend: every server started here
            for i, srv in enumerate(servers):
                if backend == "tablier_grpc":
                    lines.append(f"    server tablier-{i + 1} {srv.address} proto h2")
                else:
                    lines.append(f"    server tablier-{i + 1} {srv.web_url.removeprefix('http://')}")
    return "\n".join(lines) + "\n"


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"haproxy did not listen: {log.read_text()}")


@pytest.fixture(scope="module")
def routed(e2e_database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Routed]:
    haproxy = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
    if haproxy is None:
        if os.environ.get("CI"):
            pytest.fail("no haproxy (.ci/run installs Debian's)")
        pytest.skip("no haproxy (apt-get install haproxy; .ci/run installs it)")
    tmp = tmp_path_factory.mktemp("routing")
    servers = [start_server(e2e_database_url, tmp, f"r{i}", "--web-listen", "127.0.0.1:0") for i in range(SERVERS)]
    port, web_port = free_port(), free_port()
    config = tmp / "haproxy.cfg"
    config.write_text(proxy_config(port, web_port, servers))
    checked = subprocess.run([haproxy, "-c", "-f", str(config)], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    log = tmp / "haproxy.log"
    proxy = subprocess.Popen([haproxy, "-db", "-f", str(config)], stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, proxy, log)
        wait_for_port(web_port, proxy, log)
        yield Routed(f"127.0.0.1:{port}", servers, proxy, haproxy, log, f"http://127.0.0.1:{web_port}")
    finally:
        proxy.terminate()
        proxy.wait(10)
        for srv in servers:
            if srv.proc.poll() is None:
                assert srv.stop() == 0, srv.log.read_text()


async def play(match, moves: int) -> list[tuple[str, int]]:
    """`moves` moves of a match created with every seat's token, each the server's suggestion;
    (command id, seq acknowledged) of each."""
    done = []
    state = await match.seats[0].state()
    for _ in range(moves):
        if state.over:
            break
        seat = match.seats[state.to_act[0]]
        played = await seat.play((await seat.suggest()).action)
        done.append((played.command_id, played.state.seq))
        state = played.state
    return done


async def test_a_match_stays_on_one_server_and_matches_spread(routed: Routed):
    async with connect(routed.address, tls=False) as client:
        created = [await client.create("carre", 2) for _ in range(MATCHES)]
        for match in created:
            await play(match, 4)
    owners = {m.game_id: routed.owners(m.game_id) for m in created}
    assert all(len(o) == 1 for o in owners.values()), owners
    # Every call about a match but its creation went there (the header), several servers own matches.
    for match in created:
        (owner,) = owners[match.game_id]
        methods = routed.calls()[match.game_id][owner]
        assert methods.count("PlayMove") == 4 and methods.count("SuggestMove") == 4, methods
    spread = {next(iter(o)) for o in owners.values()}
    assert len(spread) >= 2, owners


async def test_a_stopped_server_s_matches_continue_on_another_with_nothing_lost(routed: Routed):
    alive = [i for i, s in enumerate(routed.servers) if s.proc.poll() is None]
    async with connect(routed.address, tls=False, retry=Retry(attempts=10, first_delay=0.1)) as client:
        matches = [await client.create("carre", 2) for _ in range(MATCHES)]
        acked = {m.game_id: await play(m, 3) for m in matches}
        owner_of = {m.game_id: next(iter(routed.owners(m.game_id))) for m in matches}
        victim = max(alive, key=lambda i: sum(o == i for o in owner_of.values()))
        moved = [m for m in matches if owner_of[m.game_id] == victim]
        assert moved, owner_of
        assert routed.servers[victim].stop() == 0
        # Mid-match: every match goes on through the same address, the stopped server's too
        # (calls sent before the proxy's check finds it down are redispatched to another).
        for m in matches:
            acked[m.game_id] += await play(m, 3)
        down = f"tablier-{victim + 1} is DOWN"
        wait_until(lambda: down in routed.log.read_text(), f"the proxy's check to say {down}")
        # Then each of its matches settles on one other server.
        before = routed.calls()
        for m in moved:
            acked[m.game_id] += await play(m, 3)
        after = routed.calls()
        for m in moved:
            grew = {i for i, calls in after[m.game_id].items() if len(calls) > len(before[m.game_id].get(i, []))}
            assert len(grew) == 1 and victim not in grew, (m.game_id, grew)
            # The log holds every acknowledged move, at the seq it was acknowledged with.
            listed = await client.call(client.stub.ListEvents, pb.ListEventsRequest(game_id=m.game_id), AUDITOR)
            assert [e.seq for e in listed.events] == list(range(1, len(listed.events) + 1))
            by_command = {e.command_id: e.seq for e in listed.events}  # the last event of each command
            assert len(acked[m.game_id]) == 9
            assert all(by_command.get(c) == q for c, q in acked[m.game_id]), (acked[m.game_id], by_command)
        final = [await m.seats[0].state() for m in moved]
    for m, state in zip(moved, final, strict=True):
        assert state.seq == acked[m.game_id][-1][1]


async def test_calls_to_a_server_that_does_not_hold_the_match_are_still_correct(routed: Routed):
    alive = [i for i, s in enumerate(routed.servers) if s.proc.poll() is None]
    async with connect(routed.address, tls=False) as client:
        match = await client.create("carre", 2)
        await play(match, 2)
        (owner,) = routed.owners(match.game_id)
        other = next(i for i in alive if i != owner)
        async with grpc.aio.insecure_channel(routed.servers[other].address) as channel:
            stub = rpc.GameServiceStub(channel)

            def seat_md(seat: int) -> tuple[tuple[str, str], ...]:
                return (("authorization", f"Bearer {match.seats[seat].token}"),)

            # The other server reads the match now: it holds it at this seq.
            stale = (await stub.GetView(pb.GetViewRequest(game_id=match.game_id), metadata=seat_md(0))).state
            moves = await play(match, 3)  # through the proxy, on the owner
            latest = moves[-1][1]
            # A read with min_seq on the other server answers the latest seq, not its stale one.
            fresh = (
                await stub.GetView(pb.GetViewRequest(game_id=match.game_id, min_seq=latest), metadata=seat_md(0))
            ).state
            assert fresh.seq == latest > stale.seq
            # A move decided on the stale seq is refused, nothing written; one at the right seq is applied.
            to_act = fresh.to_act[0]
            suggested = await stub.SuggestMove(
                pb.SuggestMoveRequest(game_id=match.game_id, min_seq=latest), metadata=seat_md(to_act)
            )
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.PlayMove(
                    pb.PlayMoveRequest(
                        game_id=match.game_id,
                        command_id=str(uuid.uuid4()),
                        action=suggested.action,
                        expected_seq=stale.seq,
                    ),
                    metadata=seat_md(to_act),
                )
            assert refused.value.code() == grpc.StatusCode.ABORTED
            played = await stub.PlayMove(
                pb.PlayMoveRequest(
                    game_id=match.game_id, command_id=str(uuid.uuid4()), action=suggested.action, expected_seq=latest
                ),
                metadata=seat_md(to_act),
            )
            assert played.state.seq > latest
        # Back through the proxy, with another match's header: the owner of that one answers,
        # at the seq the move on the other server reached (min_seq, which the SDK sends).
        elsewhere = await client.create("carre", 2)
        await play(elsewhere, 1)
        wrong = (("x-tablier-game", elsewhere.game_id),)
        client.saw(match.game_id, played.state.seq)
        view = await client.call(
            client.stub.GetView, pb.GetViewRequest(game_id=match.game_id), (*match.seats[0].metadata, *wrong)
        )
        assert view.state.seq == played.state.seq
        # And the owner goes on from there: the next move is conflict-checked against the log.
        more = await play(match, 2)
        assert more[0][1] > played.state.seq
        with pytest.raises(errors.Conflict):
            seat = match.seats[(await match.seats[0].state()).to_act[0]]
            await seat.play((await seat.suggest()).action, expected_seq=played.state.seq)


def test_the_shipped_proxy_configurations_are_valid_and_hash_the_header(routed: Routed):
    """deploy/haproxy.cfg (compose) and the ConfigMap of deploy/k8s/proxy.yaml, as written, pass
    `haproxy -c` (names that do not resolve here wait in maintenance) and hash the header."""
    k8s = next(
        d for d in yaml.safe_load_all((ROOT / "deploy" / "k8s" / "proxy.yaml").read_text()) if d["kind"] == "ConfigMap"
    )["data"]["haproxy.cfg"]
    for name, text in (("compose", CONFIG.read_text()), ("k8s", k8s)):
        assert text.count("balance hdr(x-tablier-game)") == 2 and text.count("hash-type consistent") == 2, name
        path = Path(routed.servers[0].log).with_name(f"{name}-haproxy.cfg")
        path.write_text(text.replace("maxconn 4096", "maxconn 64"))
        checked = subprocess.run([routed.haproxy, "-c", "-f", str(path)], capture_output=True, text=True, timeout=30)
        assert checked.returncode == 0, (name, checked.stdout + checked.stderr)


@pytest.mark.skipif(
    shutil.which("npm") is None or not (WEB / "node_modules").is_dir(),
    reason="needs npm and clients/web/node_modules (`make web`, or `make test` where npm is installed)",
)
def test_the_typescript_client_names_the_match_through_the_browser_address(routed: Routed, installed: Path):  # noqa: F811
    """The npm package's README example (the Connect client: `gameClient` installs `gameHeader`)
    through the proxy's browser address: every call about its match but the creation lands on
    one server."""
    (installed / "example.mjs").write_text((PACKAGE / "example.mjs").read_text())
    done = subprocess.run(
        ["node", "example.mjs", routed.web_url], cwd=installed, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = re.search(r"match (\S+) over at seq (\d+)", done.stdout)
    assert found, done.stdout
    game_id, seq = found[1], int(found[2])
    (owner,) = routed.owners(game_id)
    assert routed.calls()[game_id][owner].count("PlayMove") > seq // 4, routed.calls()[game_id]

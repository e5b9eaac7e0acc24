"""deploy/ run for real with podman: the image built by `make image`'s script, the compose file
(PostgreSQL and tablier) on loopback ports, then the Kubernetes manifests with `podman kube play`.

In order, on one compose project: a bot match through the published gRPC port, its last receipt
signed by the key of the secret file (ListSigningKeys), and the web app in Chromium through the
published browser port; the tablier container restarted, the match still there and `tablier
verify` passing inside the container against the witness on its own volume; the PostgreSQL container killed
with SIGKILL under load (calls UNAVAILABLE, health NOT_SERVING, then SERVING and moves accepted
once it is started again, no acknowledged move lost); the manifests played against the same
database. Everything is torn down at the end. Phase times and figures are written to the log.

Needs podman, podman-compose in .tools/ and the base images (tests/deploy/setup-host.sh, which
.ci/run calls); without a podman that can run a container, these tests skip with the reason."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar

import grpc
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tablier import receipts as signed
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = ROOT / ".tools" / "bin" / "podman-compose"
PROJECT = "tablier-deploy-test"  # fixed: a run cleans up what an interrupted one left
IMAGE = "localhost/tablier-test"
BASE_IMAGES = ("docker.io/library/python:3.11-slim-bookworm", "docker.io/library/postgres:15-bookworm",
               "docker.io/library/nats:2.9")
WEB = ROOT / "clients" / "web"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
WAIT = 120.0  # seconds: the longest any single condition below is waited for
LOADERS = 4  # concurrent clients playing moves while PostgreSQL is killed


def podman(*args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done


def engine_problem() -> str | None:
    """Why containers cannot be run here, or None."""
    if not shutil.which("podman"):
        return "podman is not installed (tests/deploy/setup-host.sh installs it)"
    if not COMPOSE.exists():
        return f"no {COMPOSE.relative_to(ROOT)} (tests/deploy/setup-host.sh installs it)"
    for image in BASE_IMAGES:
        if podman("image", "exists", image, check=False).returncode != 0:
            return f"no base image {image} (tests/deploy/base-images.sh and nats-image.sh build them)"
    ran = podman("run", "--rm", "--network", "none", "--entrypoint", "true", BASE_IMAGES[0], check=False, timeout=120)
    if ran.returncode != 0:
        return f"podman cannot run a container here: {ran.stderr.strip().splitlines()[-1:]}"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


T = TypeVar("T")


def wait_for(condition: Callable[[], T | None], what: str, timeout: float = WAIT, pause: float = 0.1) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(pause)


def health_of(channel: grpc.Channel) -> str:
    try:
        status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=2).status
        return health_pb2.HealthCheckResponse.ServingStatus.Name(status)
    except grpc.RpcError as exc:
        return exc.code().name


def serving(address: str) -> bool:
    """Health SERVING, asked on a new channel: a channel kept across a restart would wait out
    gRPC's reconnect backoff (seconds) and make the measured times longer than the server's."""
    with grpc.insecure_channel(address) as channel:
        return health_of(channel) == "SERVING"


@dataclass
class Stack:
    env: dict[str, str]
    secrets: dict[str, str]
    grpc_address: str
    web_url: str
    metrics_url: str
    figures: dict[str, str] = field(default_factory=dict)
    match_id: str = ""
    match_seq: int = 0
    config: pytest.Config | None = None

    def log(self, text: str) -> None:
        log(self.config, text)

    def compose(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        cmd = [str(COMPOSE), "-p", PROJECT, "-f", str(DEPLOY / "compose.yaml"),
               "-f", str(Path(__file__).with_name("compose.test.yaml")), *args]
        done = subprocess.run(cmd, cwd=DEPLOY, env=self.env, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"{' '.join(args)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done

    def container(self, service: str) -> str:
        names = podman("ps", "-a", "--filter", f"label=io.podman.compose.project={PROJECT}",
                       "--filter", f"label=com.docker.compose.service={service}", "--format", "{{.Names}}").stdout.split()
        assert len(names) == 1, f"containers of {service}: {names}"
        return names[0]

    def channel(self) -> grpc.Channel:
        return grpc.insecure_channel(self.grpc_address)

    def auditor(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.secrets['auditor_token']}"),)


def log(config: pytest.Config | None, text: str) -> None:
    """A line in the test log as the test runs (pytest's capture set aside): CI keeps the times."""
    capture = config.pluginmanager.get_plugin("capturemanager") if config else None
    if capture is None:
        print(f"deploy: {text}", flush=True)
        return
    with capture.global_and_fixture_disabled():
        print(f"\ndeploy: {text}", flush=True)


def log_time(stamp: str) -> float:
    """Seconds since the epoch of a podman log timestamp (RFC 3339, up to nanoseconds)."""
    found = re.fullmatch(r"([^.]+?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", stamp)
    assert found, stamp
    base, fraction, zone = found.groups()
    return datetime.fromisoformat(f"{base}.{(fraction or '0')[:6]:0<6}{'+00:00' if zone == 'Z' else zone}").timestamp()


def play_to_end(stub: rpc.GameServiceStub, game: str, seats: int, receipts: list | None = None,
                created: pb.CreateGameResponse | None = None) -> pb.GameState:
    if created is None:
        created = stub.CreateGame(pb.CreateGameRequest(game_type=game, seats=seats), timeout=30)
    state = created.state
    while not state.over:
        md = (("authorization", f"Bearer {created.seat_tokens[state.to_act[0]]}"),)
        action = stub.SuggestMove(pb.SuggestMoveRequest(game_id=created.game_id), metadata=md, timeout=30).action
        reply = stub.PlayMove(pb.PlayMoveRequest(game_id=created.game_id, command_id=str(uuid.uuid4()),
                                                 action=action), metadata=md, timeout=30)
        state = reply.state
        if receipts is not None:
            receipts.append(reply.receipt)
    return state


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def engine() -> None:  # skips the module's tests where containers cannot run
    problem = engine_problem()
    if problem:
        pytest.skip(problem)


@pytest.fixture(scope="module")
def image(engine, request) -> Iterator[str]:
    """`make image`'s script, building IMAGE:latest; yields the reference."""
    started = time.monotonic()
    done = subprocess.run([str(DEPLOY / "build-image.sh")], env=dict(os.environ, IMAGE=IMAGE),
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    summary = done.stdout.strip().splitlines()[-1]
    log(request.config, f"built {summary}; {time.monotonic() - started:.0f} s with the wheel")
    yield f"{IMAGE}:latest"
    # What earlier builds left untagged: older runtime images and install stages (the wheels
    # differ from build to build, so an old install stage is never reused).
    for title in ("tablier", "tablier-install"):
        podman("image", "prune", "--force", "--filter", f"label=org.opencontainers.image.title={title}", check=False)


@pytest.fixture(scope="module")
def stack(image: str, tmp_path_factory, request) -> Iterator[Stack]:
    secrets_dir = tmp_path_factory.mktemp("secrets")
    subprocess.run([str(DEPLOY / "secrets.sh"), str(secrets_dir)], check=True, capture_output=True)
    secrets = {p.name: p.read_text().strip() for p in secrets_dir.iterdir()}
    ports = {name: free_port() for name in ("GRPC", "WEB", "METRICS")}
    env = dict(os.environ, TABLIER_IMAGE=image, TABLIER_SECRETS=str(secrets_dir), TABLIER_BIND="127.0.0.1",
               TABLIER_DRAIN="1", TABLIER_GRACE="2",
               **{f"TABLIER_{name}_PORT": str(port) for name, port in ports.items()})
    st = Stack(env, secrets, f"127.0.0.1:{ports['GRPC']}", f"http://127.0.0.1:{ports['WEB']}",
               f"http://127.0.0.1:{ports['METRICS']}/metrics",
               config=request.config)
    st.compose("down", "--volumes")  # what an interrupted run left
    started = time.monotonic()
    try:
        st.compose("up", "-d")
        wait_for(lambda: serving(st.grpc_address), "tablier SERVING after `up -d`")
        healthy = time.monotonic() - started
        # podman < 4.6 does not wait for service_healthy: tablier may exit while PostgreSQL
        # initialises (after --database-timeout) and be restarted by its restart policy.
        restarts = podman("inspect", "--format", "{{.RestartCount}}", st.container("tablier")).stdout.strip()
        st.figures["time to healthy"] = f"{healthy:.1f} s ({restarts} restarts)"
        st.log(f"compose up: SERVING on {st.grpc_address} {healthy:.1f} s after `up -d`, tablier restarted {restarts} times")
        yield st
    finally:
        for service in ("postgres", "nats", "tablier"):
            logs = podman("logs", "--tail", "30", f"{PROJECT}_{service}_1", check=False)
            (tmp_path_factory.getbasetemp() / f"{service}.log").write_text(logs.stdout + logs.stderr)
        down = time.monotonic()
        st.compose("down", "--volumes")
        left = podman("ps", "-a", "--filter", f"label=io.podman.compose.project={PROJECT}", "--format", "{{.Names}}")
        assert not left.stdout.strip(), f"left running: {left.stdout}"
        for volume in ("pgdata", "witness"):
            assert podman("volume", "exists", f"{PROJECT}_{volume}", check=False).returncode != 0, f"{volume} is left"
        st.log(f"compose down --volumes: {time.monotonic() - down:.1f} s; figures: "
               + ", ".join(f"{k} {v}" for k, v in st.figures.items()))


# --------------------------------------------------------------------------- tests


def test_image(image: str):
    """The runtime: the wheel's version in its label, a non-root user, no compiler, no pip and
    no source tree; the healthcheck and the three ports declared."""
    inspected = json.loads(podman("image", "inspect", image).stdout)[0]
    config = inspected["Config"]
    version = podman("run", "--rm", image, "--version").stdout.split()[1]
    assert config["Labels"]["org.opencontainers.image.version"] == version
    assert config["User"] == "10001:10001"
    assert set(config["ExposedPorts"]) == {"50051/tcp", "8080/tcp", "9464/tcp"}
    assert inspected["Healthcheck"]["Test"] == ["CMD", "tablier-healthcheck"]
    probe = podman("run", "--rm", "--entrypoint", "sh", image, "-c",
                   "id -u; for c in cc gcc rustc cargo pip pip3; do command -v $c || true; done; "
                   "find / -xdev \\( -name Cargo.toml -o -name '*.rs' -o -name pyproject.toml \\) -print 2>/dev/null | head -5")
    lines = probe.stdout.split()
    assert lines[0] == "10001", probe.stdout
    assert lines[1:] == [], f"a compiler, pip or a source tree in the image: {lines[1:]}"


def test_compose_bot_match_and_web_app(stack: Stack):
    """A bot match through the published gRPC port, its receipts signed by the key of the
    secret file as ListSigningKeys lists it; the web app in Chromium through the published
    browser port; the metrics port answers."""
    started = time.monotonic()
    receipts: list[pb.Receipt] = []
    with stack.channel() as channel:
        stub = rpc.GameServiceStub(channel)
        state = play_to_end(stub, "carre", 2, receipts)
        listed = stub.ListSigningKeys(pb.ListSigningKeysRequest(), timeout=10).keys
    assert state.over and state.seq > 2
    secret = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(stack.secrets["signing_key"]))
    public = secret.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert [(k.public_key, k.current) for k in listed] == [(public, True)], listed
    last = receipts[-1]
    assert (last.game_id, last.seq, last.chain_head) == (state.game_id, state.seq, state.chain_head)
    assert signed.check(last, {k.key_id: k.public_key for k in listed}) is None
    stack.match_id, stack.match_seq = state.game_id, state.seq
    stack.log(f"bot match carre {state.game_id}: {state.seq} events in {time.monotonic() - started:.1f} s")

    # The engine's healthchecks, run once by hand (podman times them with systemd, absent here).
    for service in ("postgres", "tablier"):
        ran = podman("healthcheck", "run", stack.container(service), check=False)
        assert ran.returncode == 0, f"{service} unhealthy: {ran.stdout}{ran.stderr}"
    with urllib.request.urlopen(stack.metrics_url, timeout=10) as reply:
        text = reply.read()
        assert b"tablier_rpc_duration_seconds" in text
        assert b"tablier_bus_up 1.0" in text, "tablier is not connected to the compose file's NATS"
    with urllib.request.urlopen(stack.web_url + "/", timeout=10) as reply:
        assert reply.read() == (WEB / "dist" / "index.html").read_bytes()  # the app the image was built with

    missing = [what for what, ok in (("the built web app", (WEB / "dist" / "index.html").is_file()),
                                     ("playwright-core", (WEB / "node_modules" / "playwright-core").is_dir()),
                                     (CHROMIUM, Path(CHROMIUM).is_file()), ("node", bool(shutil.which("node"))))
               if not ok]
    if missing:
        pytest.skip(f"the browser part needs {', '.join(missing)} (.ci/run installs them)")
    shots = ROOT / "test-results" / "deploy"
    shots.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["node", "test/browser.mjs", stack.web_url, "lobby", str(shots)], cwd=WEB,
                          capture_output=True, text=True, timeout=300, env=dict(os.environ, CHROMIUM=CHROMIUM))
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "scenario lobby: passed" in done.stdout


def test_restart_keeps_matches_and_verify_passes(stack: Stack):
    assert stack.match_id, "the bot match test did not run"
    tablier = stack.container("tablier")
    started = time.monotonic()
    podman("restart", "--time", "30", tablier)
    wait_for(lambda: serving(stack.grpc_address), "tablier SERVING after a restart")
    restarted = time.monotonic() - started
    with stack.channel() as channel:
        state = rpc.GameServiceStub(channel).GetView(pb.GetViewRequest(game_id=stack.match_id), timeout=10).state
    assert state.over and state.seq == stack.match_seq
    stack.figures["restart to SERVING"] = f"{restarted:.1f} s"
    # The entrypoint turns the *_FILE secrets into the environment `tablier` reads; the
    # witness's checkpoints, on their own volume, outlived the restart.
    verified = podman("exec", tablier, "tablier-entrypoint", "verify", "--all", "--witness", "/var/lib/tablier-witness")
    assert stack.match_id in verified.stdout and "ok" in verified.stdout, verified.stdout + verified.stderr
    mounts = json.loads(podman("inspect", tablier).stdout)[0]["Mounts"]
    assert any(m.get("Name") == f"{PROJECT}_witness" and m["Destination"] == "/var/lib/tablier-witness"
               for m in mounts), mounts
    stack.log(f"tablier restarted: SERVING again in {restarted:.1f} s, match intact, verify --all ok in the container")


def test_database_sigkill_under_load(stack: Stack):
    postgres = stack.container("postgres")
    acked: list[tuple[str, str, int, float]] = []  # (game_id, command_id, seq, when)
    failures: list[tuple[float, grpc.StatusCode]] = []
    statuses: list[tuple[float, str]] = []
    stop = threading.Event()
    lock = threading.Lock()

    def loader(channel: grpc.Channel) -> None:
        stub = rpc.GameServiceStub(channel)
        created = None
        command = None  # (command_id, action, token): retried as is until it is answered
        while not stop.is_set():
            try:
                if created is None:
                    created = stub.CreateGame(pb.CreateGameRequest(game_type="qwirkle", seats=2), timeout=10)
                    state = created.state
                if command is None:
                    token = created.seat_tokens[state.to_act[0]]
                    md = (("authorization", f"Bearer {token}"),)
                    action = stub.SuggestMove(pb.SuggestMoveRequest(game_id=created.game_id), metadata=md,
                                              timeout=10).action
                    command = (str(uuid.uuid4()), action, md)
                reply = stub.PlayMove(pb.PlayMoveRequest(game_id=created.game_id, command_id=command[0],
                                                         action=command[1]), metadata=command[2], timeout=10)
                with lock:
                    acked.append((created.game_id, command[0], reply.state.seq, time.monotonic()))
                state, command = reply.state, None
                if state.over:
                    created = None
            except grpc.RpcError as exc:
                with lock:
                    failures.append((time.monotonic(), exc.code()))
                time.sleep(0.05)  # a client's pause before retrying the same command

    def prober(channel: grpc.Channel) -> None:
        while not stop.is_set():
            name = health_of(channel)
            if not statuses or statuses[-1][1] != name:
                statuses.append((time.monotonic(), name))
            time.sleep(0.05)

    channels = [stack.channel() for _ in range(LOADERS + 1)]
    threads = [threading.Thread(target=loader, args=(c,)) for c in channels[:LOADERS]]
    threads.append(threading.Thread(target=prober, args=(channels[-1],)))
    for t in threads:
        t.start()
    try:
        wait_for(lambda: len(acked) >= 40, "40 moves before the kill")
        before = len(acked)
        killed_at = time.monotonic()
        podman("kill", "--signal", "KILL", postgres)
        wait_for(lambda: any(s == "NOT_SERVING" and t >= killed_at for t, s in statuses), "health NOT_SERVING")
        wait_for(lambda: any(c == grpc.StatusCode.UNAVAILABLE and t >= killed_at for t, c in failures),
                 "a call answered UNAVAILABLE")
        assert podman("inspect", "--format", "{{.State.Running}}", postgres).stdout.strip() == "false"
        unhealthy = podman("healthcheck", "run", stack.container("tablier"), check=False)
        assert unhealthy.returncode != 0, "the image's healthcheck passed with the database down"
        start_at = time.monotonic()
        podman("start", postgres)
        up_at = time.monotonic()
        serving_at = wait_for(lambda: next((t for t, s in statuses if t >= up_at and s == "SERVING"), None),
                              "health SERVING after PostgreSQL is started again")
        moved_at = wait_for(lambda: next((w for *_, w in acked[before:] if w >= up_at), None),
                            "a move accepted after PostgreSQL is started again")
        wait_for(lambda: sum(w >= up_at for *_, w in acked) >= 20, "20 moves after the restart")
    finally:
        stop.set()
        for t in threads:
            t.join(WAIT)
        for c in channels:
            c.close()

    after_kill = [c for t, c in failures if t >= killed_at]
    assert set(after_kill) <= {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}, after_kill
    assert grpc.StatusCode.INTERNAL not in {c for _, c in failures}
    not_serving_at = next(t for t, s in statuses if t >= killed_at and s == "NOT_SERVING")
    # No acknowledged move is lost: each command id is in its match's log, at the seq it was
    # acknowledged with (the events of one command end at the seq of its reply).
    with stack.channel() as channel:
        stub = rpc.GameServiceStub(channel)
        logs: dict[str, dict[str, int]] = {}
        for game_id in {a[0] for a in acked}:
            events = stub.ListEvents(pb.ListEventsRequest(game_id=game_id), metadata=stack.auditor(), timeout=30).events
            assert [e.seq for e in events] == list(range(1, len(events) + 1))
            logs[game_id] = {}
            for e in events:
                logs[game_id][e.command_id] = e.seq  # the last event of each command
    lost = [a for a in acked if logs[a[0]].get(a[1]) != a[2]]
    assert not lost, f"{len(lost)} acknowledged moves missing from the log: {lost[:5]}"
    stats = podman("stats", "--no-stream", "--format", "{{.MemUsage}}", stack.container("tablier"), check=False)
    stack.figures["tablier memory after the load"] = stats.stdout.strip().split(" /")[0] or "unknown"
    # When PostgreSQL said it was ready again (its log's timestamp), on the monotonic clock.
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - (time.monotonic() - start_at) - 1))
    logs = podman("logs", "--timestamps", "--since", since, postgres)
    ready_lines = [line for line in (logs.stdout + logs.stderr).splitlines() if "ready to accept connections" in line]
    assert ready_lines, "PostgreSQL never said it was ready"
    db_ready = log_time(ready_lines[-1].split()[0]) - time.time() + time.monotonic()
    stack.figures["database ready to SERVING"] = f"{serving_at - db_ready:.2f} s"
    stack.figures["kill to NOT_SERVING"] = f"{not_serving_at - killed_at:.2f} s"
    stack.figures["start to SERVING"] = f"{serving_at - start_at:.2f} s"
    stack.figures["start to first move"] = f"{moved_at - start_at:.2f} s"
    stack.log(f"PostgreSQL SIGKILL under {LOADERS} clients: NOT_SERVING after {not_serving_at - killed_at:.2f} s, "
              f"{len(after_kill)} calls failed ({', '.join(sorted({c.name for c in after_kill}))}); "
              f"`podman start` took {up_at - start_at:.2f} s, PostgreSQL was ready {db_ready - start_at:.2f} s, "
              f"SERVING {serving_at - start_at:.2f} s and a move accepted {moved_at - start_at:.2f} s after it began "
              f"(SERVING {serving_at - db_ready:.2f} s after PostgreSQL was ready); {len(acked)} moves acknowledged, "
              "none lost")


def bus_received(stack: Stack) -> float:
    with urllib.request.urlopen(stack.metrics_url, timeout=10) as reply:
        found = re.search(rb"^tablier_bus_received_total ([0-9.e+]+)$", reply.read(), re.M)
    return float(found.group(1)) if found else 0.0


def test_kube_play_manifests(stack: Stack, image: str, tmp_path: Path):
    """deploy/k8s/ with `podman kube play`, on the compose project's network and database: the
    ConfigMap and the Deployment as written (one replica: podman publishes each containerPort on
    the host), the Secret's keys given as a podman secret (podman 4.3 stores a played Secret as
    YAML and then cannot read it). Podman does not run the readiness probe nor check the
    Services and the PodDisruptionBudget (deploy/README.md)."""
    k8s = DEPLOY / "k8s"
    busy = []
    for port in (50051, 8080, 9464):
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                busy.append(port)
    if busy:
        pytest.skip(f"podman kube play publishes the container ports on the host, and {busy} are in use")
    keys = re.findall(r"^  ([a-z-]+): ", (k8s / "secret.yaml").read_text().split("stringData:", 1)[1], re.M)
    assert sorted(keys) == ["auditor-token", "database-url", "host-token", "seed-key", "signing-key"], keys
    values = {"database-url": f"postgresql://tablier:{stack.secrets['postgres_password']}@postgres:5432/tablier",
              "host-token": stack.secrets["host_token"], "auditor-token": stack.secrets["auditor_token"],
              "seed-key": stack.secrets["seed_key"], "signing-key": stack.secrets["signing_key"]}
    (tmp_path / "secret.json").write_text(json.dumps({k: base64.b64encode(v.encode()).decode()
                                                      for k, v in values.items()}))
    deployment = (k8s / "deployment.yaml").read_text()
    assert "replicas: 2" in deployment and "image: localhost/tablier:latest" in deployment
    deployment = deployment.replace("replicas: 2", "replicas: 1").replace("localhost/tablier:latest", image)
    play = tmp_path / "play.yaml"
    play.write_text((k8s / "configmap.yaml").read_text() + "---\n" + (k8s / "pvc.yaml").read_text() + "---\n" + deployment)

    podman("secret", "rm", "tablier-secrets", check=False)
    podman("secret", "create", "tablier-secrets", str(tmp_path / "secret.json"))
    started = time.monotonic()
    try:
        podman("kube", "play", "--replace", "--network", f"{PROJECT}_default", str(play))
        wait_for(lambda: serving("127.0.0.1:50051"), "the pod SERVING")
        ready = time.monotonic() - started
        # A watcher on the compose instance of a match played on the pod: the moves reach it over
        # the bus (the ConfigMap's TABLIER_BUS, the compose file's NATS on the shared network).
        received = bus_received(stack)
        with grpc.insecure_channel("127.0.0.1:50051") as channel, stack.channel() as watching:
            pod_stub = rpc.GameServiceStub(channel)
            created = pod_stub.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2), timeout=30)
            watch = rpc.GameServiceStub(watching).WatchGame(pb.WatchGameRequest(game_id=created.game_id), timeout=WAIT)
            seqs = [next(watch).event.seq]  # the watch is on before the first move
            state = play_to_end(pod_stub, "carre", 2, created=created)
            while seqs[-1] < state.seq:
                seqs.append(next(watch).event.seq)
            watch.cancel()
        assert seqs == list(range(1, state.seq + 1)), seqs
        assert bus_received(stack) > received, "the watcher was not told over the bus"
        with stack.channel() as channel:  # the compose instance sees the pod's match: one database
            seen = rpc.GameServiceStub(channel).GetView(pb.GetViewRequest(game_id=state.game_id), timeout=10).state
        assert seen.seq == state.seq and seen.over
        wait_for(lambda: podman("exec", "tablier-pod-0-tablier", "test", "-s", "/var/lib/tablier-witness/checkpoints.jsonl",
                                check=False).returncode == 0, "a checkpoint on the pod's witness volume")
        pod = json.loads(podman("inspect", "tablier-pod-0-tablier").stdout)[0]
        assert pod["Config"]["User"] == "10001:10001"
        assert pod["HostConfig"]["ReadonlyRootfs"] is True
        assert not pod["EffectiveCaps"], pod["EffectiveCaps"]
        assert pod["Config"]["Env"].count("TABLIER_DRAIN=10") == 1  # from the ConfigMap
        assert any(m.get("Name") == "tablier-witness" and m["Destination"] == "/var/lib/tablier-witness"
                   for m in pod["Mounts"]), pod["Mounts"]
        stop_timeout = pod["Config"].get("StopTimeout")
    finally:
        downed = time.monotonic()
        podman("kube", "play", "--down", str(play), check=False)
        podman("secret", "rm", "tablier-secrets", check=False)
        podman("volume", "rm", "--force", "tablier-witness", check=False)
        down = time.monotonic() - downed
    stack.figures["kube pod to SERVING"] = f"{ready:.1f} s"
    stack.log(f"kube play: pod SERVING in {ready:.1f} s, a match played through it and seen through compose; "
              f"stop timeout {stop_timeout} s (terminationGracePeriodSeconds 30), down in {down:.1f} s")

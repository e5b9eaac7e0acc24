"""The `tablier` command: serve, replay, verify, protoset, and the subcommands other
installed distributions register in the `tablier.commands` entry-point group (tablier-client:
`bots`). Both distributions install a `tablier` script; each gathers the other's commands.

Environment: TABLIER_LISTEN (default 127.0.0.1:50051), TABLIER_DATA_DIR (default ./.tablier),
TABLIER_DATABASE_URL (unset: an embedded PostgreSQL in <data dir>/pgdata),
TABLIER_HOST_TOKEN (bearer token of the host: host commands), TABLIER_AUDITOR_TOKEN (bearer
token of the auditor: reads everything), TABLIER_OPERATOR_TOKEN (deprecated: both roles),
TABLIER_SEED_KEY / TABLIER_SEED_OLD_KEYS (keys sealing seeds at rest, see tablier.seeds; unset:
a key generated in <data dir>/seed.key),
TABLIER_WEB_LISTEN (the browser address; unset: none), TABLIER_WEB_DIR, TABLIER_CORS_ORIGINS,
TABLIER_CREATOR_TOKEN (bearer token that may create matches under `--create-policy token`),
and one TABLIER_<OPTION> per `serve` option below (docs/operations.md, "Limits and operations").
A bad value, from an option or the environment, is a one-line error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import inspect
import logging
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from dataclasses import replace
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tablier.cli_options import (
    DEFAULT_DATA_DIR,
    LOG_LEVELS,
    ConfigError,
    DatabaseUrls,
    OneLineParser,
    Subcommands,
    _host_port,
    _VersionAction,
    add_command,
    err_console,
    open_database,
    serve_options,
)

if TYPE_CHECKING:
    from tablier.api.metrics import Metrics
    from tablier.api.server import TlsFiles
    from tablier.app import GameApp
    from tablier.app.limits import Limits
    from tablier.web import WebServer

# The embedded PostgreSQL runs pg_ctl in subprocesses; gRPC's fork handlers are not needed.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

DEFAULT_LISTEN = "127.0.0.1:50051"
ENTRY_POINTS = "tablier.commands"
PROTOSET = Path(__file__).resolve().parent / "v1" / "tablier.protoset"


# --------------------------------------------------------------------------- serve


def limits_of(args: argparse.Namespace) -> Limits:
    from tablier.app.limits import Limits

    return Limits(
        watch_per_peer=args.watch_per_peer,
        watch_per_match=args.watch_per_match,
        watch_unbatched_per_match=args.watch_unbatched_per_match,
        watch_buffer=args.watch_buffer,
        watch_pace=args.watch_pace,
        create_policy=args.create_policy,
        create_rate=args.create_rate,
        create_burst=args.create_burst,
        bad_credential_rate=args.bad_credential_rate,
        bad_credential_burst=args.bad_credential_burst,
    )


def serve(args: argparse.Namespace) -> int | Coroutine[Any, Any, int]:
    """One server process, or with --workers N a parent supervising N of them."""
    if args.workers < 1:
        err_console.print("[red]refusing to start: --workers is at least 1[/red]")
        return 2
    if args.workers == 1:
        return serve_one(args)
    from tablier import workers

    dsn, pg = workers.start_database(args)
    try:
        return workers.supervise(args, dsn, err_console)
    finally:
        if pg is not None:
            pg.stop()


# The youngest generation is collected after this many new container objects (net of those
# freed) instead of CPython's 700. Under 16 moves in flight that was a collection every ~18
# moves and a full one (~30 ms, the whole cache) every ~2,500; at 10,000 it is one young
# collection every ~1,200 moves (docs/load-testing.md measures the difference).
YOUNG_GC_THRESHOLD = 10_000


def settle_heap() -> None:
    """Once the server is built: what start-up made (modules, protos, the catalogue, the pool)
    lives as long as the process, so it is moved out of the collector's reach (`gc.freeze`),
    and the youngest generation is collected less often (`YOUNG_GC_THRESHOLD`). Cycles are
    still collected; only how often the collector looks changes."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_GC_THRESHOLD, *gc.get_threshold()[1:])


async def serve_one(args: argparse.Namespace) -> int:
    from tablier.api import GameServer
    from tablier.api.metrics import MeteredStore, Metrics
    from tablier.api.observe import configure_access_log
    from tablier.api.server import ListenError, TlsFiles
    from tablier.app import GameApp
    from tablier.app.auth import check_role_tokens

    host, auditor, operator = (
        os.environ.get(name) or None
        for name in ("TABLIER_HOST_TOKEN", "TABLIER_AUDITOR_TOKEN", "TABLIER_OPERATOR_TOKEN")
    )
    problems = check_role_tokens(host, auditor, operator)
    if bool(args.tls_cert) != bool(args.tls_key):
        problems.append("--tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        problems.append("--tls-client-ca needs --tls-cert and --tls-key")
    if problems:
        for problem in problems:
            err_console.print(f"[red]refusing to start: {problem}[/red]")
        return 2
    if operator:
        err_console.print(
            "[yellow]TABLIER_OPERATOR_TOKEN is one credential for host and auditor: "
            "prefer TABLIER_HOST_TOKEN and TABLIER_AUDITOR_TOKEN[/yellow]"
        )
    creator = os.environ.get("TABLIER_CREATOR_TOKEN") or None
    if args.create_policy == "token" and not (creator or host or operator):
        raise ConfigError("--create-policy token needs TABLIER_CREATOR_TOKEN (or the host token)")
    if bool(args.oidc_issuer) != bool(args.oidc_audience):
        raise ConfigError("--oidc-issuer and --oidc-audience go together")
    limits = limits_of(args)
    tls = None
    if args.tls_cert:
        tls = TlsFiles(
            Path(args.tls_cert), Path(args.tls_key), Path(args.tls_client_ca) if args.tls_client_ca else None
        )
    configure_access_log(args.access_log)
    metrics = Metrics(shared=args.shared_metrics)
    from tablier.receipts import SigningKeys

    signing = SigningKeys.from_env(args.data_dir)
    from tablier.cli_audit import open_witness

    witness = open_witness(args, signing)  # ConfigError when it cannot be opened
    async with open_database(args) as store:
        app = GameApp(
            MeteredStore(store, metrics),
            operator_token=operator,
            host_token=host,
            auditor_token=auditor,
            limits=limits,
            creator_token=creator,
            cache_size=args.held_matches,
        )
        app.signing = signing
        app.queue.settings = replace(app.queue.settings, bot_after=args.queue_bot_after)
        if args.oidc_issuer:
            from tablier.app.players import Oidc

            app.players.oidc = Oidc(args.oidc_issuer, args.oidc_audience)
        witnessing = None
        if witness is not None:
            app.repository.witness = witness
            witnessing = asyncio.create_task(witness.run(args.witness_every))
        app.repository.start_rechecks(args.recheck_every)
        metrics.watch_app(app)
        server = GameServer(
            app, args.listen, tls, reuse_port=args.reuse_port, max_request_bytes=args.max_request_bytes, metrics=metrics
        )
        try:
            await server.start()
        except ListenError as exc:
            err_console.print(f"[red]refusing to start: {exc}[/red]")
            await app.close()
            return 2
        if args.metrics_listen:
            try:
                where = metrics.serve(args.metrics_listen)
            except OSError as exc:
                await server.stop(0)
                raise ConfigError(f"--metrics-listen {args.metrics_listen}: {exc.strerror or exc}") from None
            print(f"tablier metrics on http://{where}/metrics", file=sys.stderr, flush=True)
        stop = asyncio.Event()
        hurry = asyncio.Event()
        loop = asyncio.get_running_loop()

        def signalled() -> None:
            # The first signal starts the drain; a second one cuts it short.
            (hurry if stop.is_set() else stop).set()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, signalled)
        web = await start_web(app, args, tls, metrics)
        if web is False:
            await server.stop(0)
            await app.close()
            return 2
        settle_heap()
        # Tests and scripts wait for this exact line (with the bound port).
        print(f"tablier listening on {server.address}", flush=True)
        if web is not None:
            print(f"tablier web on {'https' if tls else 'http'}://{web.address}/", flush=True)
        await stop.wait()
        err_console.print(f"draining: NOT_SERVING for {args.drain:g} s, then grace {args.grace:g} s")
        await server.drain(args.drain, cut_short=hurry)
        if web is not None:
            await asyncio.gather(server.stop(args.grace), web.stop(args.grace))
        else:
            await server.stop(args.grace)
        await app.close()
        if witnessing is not None:
            witnessing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await witnessing
        metrics.close()
        err_console.print("stopped")
    return 0


def web_dir(args: argparse.Namespace) -> Path | None:
    """`--web-dir`, else the web app built in the source tree (clients/web/dist), if any."""
    if args.web_dir:
        return Path(args.web_dir)
    built = Path(__file__).resolve().parents[2] / "clients" / "web" / "dist"
    return built if (built / "index.html").is_file() else None


async def start_web(
    app: GameApp, args: argparse.Namespace, tls: TlsFiles | None = None, metrics: Metrics | None = None
) -> WebServer | None | Literal[False]:
    """The browser address (Connect / gRPC-Web, and the web app's files), if one is asked;
    False (reported) when it cannot listen there."""
    if not args.web_listen:
        return None
    from tablier.web import WebServer

    origins = [o.strip() for item in args.cors_origin for o in item.split(",") if o.strip()]
    web = WebServer(
        app,
        args.web_listen,
        web_dir(args),
        origins,
        tls,
        reuse_port=args.reuse_port,
        max_request_bytes=args.max_request_bytes,
        metrics=metrics,
    )
    try:
        await web.start()
    except OSError as exc:
        err_console.print(f"[red]refusing to start: cannot listen on {args.web_listen}: {exc.strerror or exc}[/red]")
        return False
    return web


# --------------------------------------------------------------------------- main


def register(sub: Subcommands) -> None:
    """The server's subcommands (also the `tablier.commands` entry point `server`)."""
    from tablier import cli_audit

    def database_options(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--database-url",
            action=DatabaseUrls,
            default=os.environ.get("TABLIER_DATABASE_URL"),
            metavar="[NAME=]URL",
            help="PostgreSQL URL (env TABLIER_DATABASE_URL); default: embedded server. Given several times"
            " (or comma-separated), the shards matches are spread over, the first the directory"
            " (docs/architecture.md, Shards)",
        )
        sp.add_argument(
            "--data-dir",
            default=os.environ.get("TABLIER_DATA_DIR", DEFAULT_DATA_DIR),
            help="where the embedded PostgreSQL keeps its data (env TABLIER_DATA_DIR)",
        )

    sp = add_command(sub, "serve", help="run the gRPC server")
    if sp is not None:
        sp.add_argument(
            "--listen",
            type=_host_port,
            default=os.environ.get("TABLIER_LISTEN", DEFAULT_LISTEN),
            help="host:port (env TABLIER_LISTEN); port 0 picks a free port",
        )
        serve_options(sp)
        sp.add_argument(
            "--witness-dir",
            default=os.environ.get("TABLIER_WITNESS_DIR"),
            metavar="DIR",
            help="where signed checkpoints of the match heads are appended, outside the database "
            "(env TABLIER_WITNESS_DIR; default <data dir>/witness; '' for none)",
        )
        sp.add_argument(
            "--witness-url",
            default=os.environ.get("TABLIER_WITNESS_URL"),
            metavar="URL",
            help="the witness elsewhere than a directory: postgresql://... (another database) or "
            "s3://bucket/prefix (env TABLIER_WITNESS_URL; instead of --witness-dir)",
        )
        sp.add_argument(
            "--witness-every", type=float, default=2.0, metavar="SECONDS", help="checkpoint interval (default 2)"
        )
        sp.add_argument(
            "--workers", type=int, default=1, help="server processes sharing the address and the database (default 1)"
        )
        # Set by `--workers` for its processes only: they share the address among themselves.
        sp.add_argument("--reuse-port", action="store_true", help=argparse.SUPPRESS)
        # Set by `--workers` when it serves the metrics: write them for the parent to serve.
        sp.add_argument("--shared-metrics", action="store_true", help=argparse.SUPPRESS)
        sp.add_argument(
            "--tls-cert",
            default=os.environ.get("TABLIER_TLS_CERT"),
            metavar="PEM",
            help="serve TLS with this certificate chain (env TABLIER_TLS_CERT)",
        )
        sp.add_argument(
            "--tls-key",
            default=os.environ.get("TABLIER_TLS_KEY"),
            metavar="PEM",
            help="the certificate's private key (env TABLIER_TLS_KEY)",
        )
        sp.add_argument(
            "--tls-client-ca",
            default=os.environ.get("TABLIER_TLS_CLIENT_CA"),
            metavar="PEM",
            help="require client certificates signed by this CA (env TABLIER_TLS_CLIENT_CA)",
        )
        sp.add_argument(
            "--web-listen",
            default=os.environ.get("TABLIER_WEB_LISTEN"),
            metavar="HOST:PORT",
            help="browser address: the API over Connect/gRPC-Web and the web app "
            "(env TABLIER_WEB_LISTEN; default: none)",
        )
        sp.add_argument(
            "--web-dir",
            default=os.environ.get("TABLIER_WEB_DIR"),
            help="built web app served at / (env TABLIER_WEB_DIR; default: clients/web/dist "
            "of the source tree when built)",
        )
        sp.add_argument(
            "--cors-origin",
            action="append",
            default=[os.environ["TABLIER_CORS_ORIGINS"]] if os.environ.get("TABLIER_CORS_ORIGINS") else [],
            help="an origin allowed to call the browser address from another site; repeatable, "
            "or comma-separated in env TABLIER_CORS_ORIGINS (default: none)",
        )
        database_options(sp)
        sp.set_defaults(run=serve)

    sp = add_command(
        sub,
        "rotate-seed-key",
        help="reseal every stored seed with TABLIER_SEED_KEY (old keys in TABLIER_SEED_OLD_KEYS)",
    )
    if sp is not None:
        database_options(sp)
        sp.set_defaults(run=cli_audit.rotate_seed_key)

    sp = add_command(sub, "replay", help="print a match at a seq, from the database")
    if sp is not None:
        sp.add_argument("game_id")
        sp.add_argument("--at", type=int, default=None, metavar="SEQ", help="default: the last event")
        sp.add_argument("--values", action="store_true", help="each legal move's value at SEQ (finished matches only)")
        sp.add_argument("--seat", type=int, default=None, help="with --values: whose moves (default: the seat awaited)")
        sp.add_argument("--rollouts", type=int, default=200, help="with --values: rollouts per move (default 200)")
        sp.add_argument("--seed", type=int, default=0, help="with --values: the rollouts' seed (default 0)")
        database_options(sp)
        sp.set_defaults(run=cli_audit.replay)

    def receipt_options(sp: argparse.ArgumentParser, keys: str) -> None:
        sp.add_argument(
            "--receipts",
            action="append",
            default=[],
            metavar="FILE",
            help="signed receipts a client kept (a ReceiptList, protobuf JSON): the log must still "
            "hold each receipt's chain head at its seq; repeatable",
        )
        sp.add_argument(
            "--receipt-key",
            action="append",
            default=[],
            metavar="HEX",
            help=f"a trusted public key of the receipts (ListSigningKeys); repeatable; {keys}",
        )

    sp = add_command(sub, "verify", help="replay matches and check every state hash and the hash chain")
    if sp is not None:
        which = sp.add_mutually_exclusive_group(required=True)
        which.add_argument("game_id", nargs="?")
        which.add_argument("--all", action="store_true")
        sp.add_argument(
            "--transcript",
            action="append",
            default=[],
            metavar="FILE",
            help="a MatchLog a client kept (tablier export): every chain hash it received must "
            "still be in the log; repeatable",
        )
        receipt_options(sp, "default: this server's signing keys (TABLIER_SIGNING_KEY, TABLIER_SIGNING_OLD_KEYS)")
        witness = sp.add_mutually_exclusive_group()
        witness.add_argument(
            "--witness",
            default=None,
            metavar="DIR|URL",
            help="the witness (tablier serve --witness-dir or --witness-url): its checkpoints must "
            "chain and be signed, and the log must reach, and hold, the latest head they name for "
            "the match, which must be in the last checkpoint's tree. Default: where tablier serve "
            "keeps it (env TABLIER_WITNESS_URL, else TABLIER_WITNESS_DIR, else <data dir>/witness), "
            "if it is there, read as a server loading a match cold reads it (the chain's own "
            "problems are warnings)",
        )
        witness.add_argument(
            "--no-witness", action="store_true", help="do not consult the witness where the server keeps it"
        )
        database_options(sp)
        sp.set_defaults(run=cli_audit.verify)

    sp = add_command(
        sub,
        "verify-public",
        help="check a finished match's public log against its revealed "
        "seed, with no database and no trust in the server",
    )
    if sp is not None:
        sp.add_argument("log", help="the match's MatchLog as its auditor view (tablier export --auditor)")
        sp.add_argument("--seed", default="", metavar="HEX", help="the revealed seed (default: the one in the log)")
        sp.add_argument(
            "--transcript",
            action="append",
            default=[],
            metavar="FILE",
            help="a MatchLog a seat or spectator kept during the match; repeatable",
        )
        sp.add_argument(
            "--parent",
            action="append",
            default=[],
            metavar="FILE",
            help="for a fork: its parent's MatchLog (tablier export --auditor), to check its lineage; "
            "repeatable, for a fork of a fork",
        )
        receipt_options(sp, "needed with --receipts")
        sp.set_defaults(run=cli_audit.verify_public)

    sp = add_command(sub, "export", help="write a match's log as a viewer receives it (a MatchLog, protobuf JSON)")
    if sp is not None:
        sp.add_argument("game_id")
        sp.add_argument("--server", default=os.environ.get("TABLIER_LISTEN", DEFAULT_LISTEN))
        sp.add_argument("--token", default="", help="a seat token, or a role token (default: a spectator)")
        sp.add_argument(
            "--auditor", action="store_true", help="ask for the auditor view (anyone may, once the match is over)"
        )
        sp.add_argument("--tls-ca", default="", metavar="PEM", help="connect with TLS, trusting this CA")
        sp.add_argument("-o", "--output", default="-", help="file to write (default: standard output)")
        sp.set_defaults(run=cli_audit.export)

    cli_audit.add_witness_proof(sub, add_command)

    from tablier import cli_ratings, cli_shards

    cli_ratings.add_ratings(sub, add_command, database_options)
    cli_shards.add_shards(sub, add_command, database_options)

    from tablier import bench

    bench.add_parser(sub, add_command)

    from tablier import bench_scale

    bench_scale.add_parser(sub, add_command)

    sp = add_command(
        sub,
        "protoset",
        help="print the path of the FileDescriptorSet of tablier.v1 (for ghz --protoset, grpcurl -protoset)",
    )
    if sp is not None:
        sp.set_defaults(run=lambda args: print(PROTOSET) or 0)


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="tablier", description="tablier game server and clients")
    p.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    registers: list[Callable[[Subcommands], None]] = [register]
    for entry in sorted(metadata.entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
        try:
            registers.append(entry.load())
        except ImportError as exc:  # a half-installed plugin must not break the command
            logging.getLogger(__name__).warning("tablier command %s unavailable: %s", entry.name, exc)
    for add in registers:
        add(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    level = os.environ.get("TABLIER_LOG_LEVEL", "WARNING").strip().upper()
    if level not in LOG_LEVELS:
        print(
            f"tablier: error: TABLIER_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, not {level[:40]!r}",
            file=sys.stderr,
        )
        return 2
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = parser().parse_args(argv)
    from tablier.seeds import SeedKeyError

    try:
        result = args.run(args)
        if inspect.iscoroutine(result):
            result = asyncio.run(result)
    except SeedKeyError as exc:
        err_console.print(f"[red]{exc}[/red]")
        return 2
    except ConfigError as exc:
        print(f"tablier: error: {exc}", file=sys.stderr)
        return 2
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())

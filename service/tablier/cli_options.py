"""What every `tablier` command shares: the consoles, the database (`open_database`), the
parsing (one-line errors, option types, `--version`) and the options of `serve` (each also read
from a TABLIER_<OPTION> variable). `cli` (the entry point and `serve`) and `cli_audit` (the
commands that read a match's log) both import it, and neither imports the other's module at
import time (`cli.register` imports `cli_audit` when it builds the parser)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias, TypeVar

from rich.console import Console

if TYPE_CHECKING:
    from tablier.store.base import EventStore

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

DEFAULT_DATA_DIR = "./.tablier"


@contextlib.asynccontextmanager
async def open_database(args: argparse.Namespace) -> AsyncIterator[EventStore]:
    """The event store of `--database-url`, or of the embedded server in the data dir
    (started here, or joined if another process runs it), migrations applied."""
    from tablier import embedded
    from tablier.seeds import SeedKeys
    from tablier.store import open_store
    from tablier.store.base import StoreUnavailable
    from tablier.store.shard_map import ShardConfigError

    keys = SeedKeys.from_env(args.data_dir)
    pg = None
    dsn = args.database_url
    if not dsn:
        pg = await asyncio.to_thread(embedded.start, Path(args.data_dir) / "pgdata", temporary=False)
        dsn = pg.dsn
    try:
        serving = args.command == "serve"
        try:
            store = await open_store(
                dsn,
                seed_keys=keys,
                timeout=getattr(args, "database_timeout", 5.0),
                monitor=serving,
                bus=getattr(args, "bus", None) if serving else None,
            )
        except (ShardConfigError, StoreUnavailable) as exc:
            # A shard misnamed, misplaced or unreachable at start (`store.shard_map`).
            raise ConfigError(str(exc)) from None
        try:
            yield store
        finally:
            await store.close()
    finally:
        if pg is not None:
            await asyncio.to_thread(pg.stop)


_N = TypeVar("_N", int, float)


class DatabaseUrls(argparse.Action):
    """`--database-url`, which may be given several times (or as one comma-separated list):
    the databases the matches are spread over, the first the directory (`store.shard_map`).
    The value is one string, one URL (or conninfo) per line, as `store.open_store` takes it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        given = f"_{self.dest}_given"
        if getattr(namespace, given, False):
            values = f"{getattr(namespace, self.dest)}\n{values}"
        setattr(namespace, given, True)
        setattr(namespace, self.dest, values)


# The `tablier` command's subcommand table, as `register` functions (entry points) receive it.
Subcommands: TypeAlias = "argparse._SubParsersAction[Any]"


class ConfigError(Exception):
    """A configuration value the server cannot use: reported as one line, exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    """Reports a bad option or environment value in one line, not usage and a traceback."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _env(name: str, default: object) -> object:
    return os.environ.get(f"TABLIER_{name}", default)


def _positive(kind: Callable[[str], _N]) -> Callable[[str], _N]:
    def parse(text: str) -> _N:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0 or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{text!r} must be a positive number")
        return value

    parse.__name__ = kind.__name__
    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more seconds")
    return value


def _milliseconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of milliseconds") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more milliseconds")
    return value


def _bus_url(text: str) -> str | None:
    if not text:
        return None
    if not text.startswith("nats://") or not text[len("nats://") :]:
        raise argparse.ArgumentTypeError(f"{text!r} is not nats://HOST:PORT")
    return text


def _host_port(text: str) -> str:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    return text


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    from tablier import _core

    try:
        dist = version("tablier")
    except PackageNotFoundError:
        dist = "unknown"
    return f"tablier {dist} (core {_core.CORE_VERSION})"


class _VersionAction(argparse.Action):
    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: Any = argparse.SUPPRESS,
        help: str | None = None,
    ) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(_version())
        parser.exit()


def add_command(sub: Subcommands, name: str, **kwargs: Any) -> argparse.ArgumentParser | None:
    """A new subcommand, or None when another distribution registered `name` first."""
    if name in sub.choices:
        return None
    parser: argparse.ArgumentParser = sub.add_parser(name, **kwargs)
    return parser


def serve_options(sp: argparse.ArgumentParser) -> None:
    """Shutdown, observability and the per-peer limits of `serve` (each also from the environment)."""
    sp.add_argument(
        "--bus",
        type=_bus_url,
        default=_env("BUS", ""),
        metavar="nats://HOST:PORT",
        help="announce committed appends to the other servers over this NATS server instead of the"
        " database's LISTEN/NOTIFY (env TABLIER_BUS; default: none)",
    )
    sp.add_argument(
        "--grace",
        type=_seconds,
        default=_env("GRACE", "5"),
        help="seconds in-flight calls get on shutdown, after the drain (env TABLIER_GRACE)",
    )
    sp.add_argument(
        "--drain",
        type=_seconds,
        default=_env("DRAIN", "5"),
        help="seconds health reports NOT_SERVING while calls are still served, before new calls"
        " are refused (env TABLIER_DRAIN; a second signal cuts it short)",
    )
    sp.add_argument(
        "--oidc-issuer",
        default=_env("OIDC_ISSUER", None),
        metavar="URL",
        help="trust ID tokens of this OpenID Connect issuer (PlayerService.SignInWithOidc): its keys are read"
        " from the JWKS its discovery document names (env TABLIER_OIDC_ISSUER)",
    )
    sp.add_argument(
        "--oidc-audience",
        default=_env("OIDC_AUDIENCE", None),
        help="the audience (client id) an ID token must be issued for; needed with --oidc-issuer"
        " (env TABLIER_OIDC_AUDIENCE)",
    )
    sp.add_argument(
        "--queue-bot-after",
        type=_positive(float),
        default=_env("QUEUE_BOT_AFTER", "30"),
        metavar="SECONDS",
        help="a player waiting this long in the matchmaking queue (RankedService.FindMatch) gets a server bot"
        " of near rating in each empty seat (env TABLIER_QUEUE_BOT_AFTER)",
    )
    sp.add_argument(
        "--recheck-every",
        type=_positive(float),
        default=_env("RECHECK_EVERY", "5"),
        metavar="SECONDS",
        help="a match read from the state held in memory has its last events in the database checked"
        " again within this many seconds: a row changed under a running server is refused (DATA_LOSS)"
        " at most this long after (env TABLIER_RECHECK_EVERY)",
    )
    sp.add_argument(
        "--metrics-listen",
        type=_host_port,
        default=_env("METRICS_LISTEN", None),
        help="serve Prometheus metrics at http://HOST:PORT/metrics (env TABLIER_METRICS_LISTEN)",
    )
    sp.add_argument(
        "--access-log",
        choices=("off", "text", "json"),
        default=_env("ACCESS_LOG", "text"),
        help="one line per call on stderr (env TABLIER_ACCESS_LOG)",
    )
    sp.add_argument(
        "--max-request-bytes",
        type=_positive(int),
        default=_env("MAX_REQUEST_BYTES", "65536"),
        help="largest request accepted (env TABLIER_MAX_REQUEST_BYTES)",
    )
    sp.add_argument(
        "--database-timeout",
        type=_positive(float),
        default=_env("DATABASE_TIMEOUT", "5"),
        help="seconds a database operation may take before the call is UNAVAILABLE (env TABLIER_DATABASE_TIMEOUT)",
    )
    sp.add_argument(
        "--watch-per-peer",
        type=_positive(int),
        default=_env("WATCH_PER_PEER", "64"),
        help="WatchGame streams one peer (address) may hold open (env TABLIER_WATCH_PER_PEER)",
    )
    sp.add_argument(
        "--held-matches",
        type=_positive(int),
        default=_env("HELD_MATCHES", "1024"),
        help="matches whose verified state the server holds in memory (least recently used"
        " dropped first); a move on a match not held reads and verifies its log first. Size it to"
        " the matches this server plays at once (docs/scaling.md) (env TABLIER_HELD_MATCHES)",
    )
    sp.add_argument(
        "--watch-per-match",
        type=_positive(int),
        default=_env("WATCH_PER_MATCH", "1000"),
        help="WatchGame streams on one match, per server (env TABLIER_WATCH_PER_MATCH)",
    )
    sp.add_argument(
        "--watch-unbatched-per-match",
        type=_positive(int),
        default=_env("WATCH_UNBATCHED_PER_MATCH", "16"),
        help="of those, streams without WatchGameRequest.batches (one write per event each);"
        " past it a stream is told to ask for batches (env TABLIER_WATCH_UNBATCHED_PER_MATCH)",
    )
    sp.add_argument(
        "--watch-buffer",
        type=_positive(int),
        default=_env("WATCH_BUFFER", "256"),
        help="events buffered for a watcher that does not read (env TABLIER_WATCH_BUFFER)",
    )
    sp.add_argument(
        "--watch-pace",
        type=_milliseconds,
        default=_env("WATCH_PACE", "1"),
        help="milliseconds between two sends to a watcher per watcher in the process: 1 sends to"
        " 2,000 watchers every 2 s, to one at once; 0 sends every event at once"
        " (env TABLIER_WATCH_PACE)",
    )
    sp.add_argument(
        "--create-policy",
        choices=("open", "token"),
        default=_env("CREATE_POLICY", "open"),
        help="who may create matches: anyone at --create-rate per peer, or holders of"
        " TABLIER_CREATOR_TOKEN / the operator token (env TABLIER_CREATE_POLICY)",
    )
    sp.add_argument(
        "--create-rate",
        type=_positive(float),
        default=_env("CREATE_RATE", "1"),
        help="matches per second one peer may create, after --create-burst (env TABLIER_CREATE_RATE)",
    )
    sp.add_argument(
        "--create-burst",
        type=_positive(int),
        default=_env("CREATE_BURST", "30"),
        help="matches one peer may create at once (env TABLIER_CREATE_BURST)",
    )
    sp.add_argument(
        "--bad-credential-rate",
        type=_positive(float),
        default=_env("BAD_CREDENTIAL_RATE", "2"),
        help="wrong credentials per second one peer may present, after --bad-credential-burst"
        " (env TABLIER_BAD_CREDENTIAL_RATE)",
    )
    sp.add_argument(
        "--bad-credential-burst",
        type=_positive(int),
        default=_env("BAD_CREDENTIAL_BURST", "20"),
        help="wrong credentials one peer may present at once (env TABLIER_BAD_CREDENTIAL_BURST)",
    )

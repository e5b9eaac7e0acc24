"""The `tablier` command as the client distribution installs it: `tablier bots`,
`tablier protoset`, and every subcommand other installed distributions register in the
`tablier.commands` entry-point group (the server's `serve`, `replay`, `verify`).

Both distributions install a `tablier` script; each gathers the other's subcommands, so the
command is the same whichever script is on the path.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import inspect
import logging
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]

ENTRY_POINTS = "tablier.commands"
DEFAULT_SERVER = "127.0.0.1:50051"
PROTOSET = Path(__file__).resolve().parent / "v1" / "tablier.protoset"


def add_command(sub: Subcommands, name: str, **kwargs: Any) -> argparse.ArgumentParser | None:
    """A new subcommand, or None when another distribution registered `name` first."""
    if name in sub.choices:
        return None
    parser: argparse.ArgumentParser = sub.add_parser(name, **kwargs)
    return parser


def require_extra(command: str, extra: str, modules: tuple[str, ...]) -> None:
    """Exits with the install line when a module of an optional part of tablier-client
    (`pip install 'tablier-client[EXTRA]'`) is missing: the base install holds what a bot
    needs, `play` and `loadtest` bring their own dependencies."""
    missing = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    if missing:
        raise SystemExit(
            f"tablier {command} needs the {extra!r} extra of tablier-client (missing: "
            f"{', '.join(missing)}): pip install 'tablier-client[{extra}]'"
        )


def register_protoset(sub: Subcommands) -> None:
    sp = add_command(
        sub,
        "protoset",
        help="print the path of the FileDescriptorSet of tablier.v1 (for ghz --protoset, grpcurl -protoset)",
    )
    if sp is not None:
        sp.set_defaults(run=lambda args: print(PROTOSET) or 0)


def register(sub: Subcommands) -> None:
    """The client's subcommands (also the `tablier.commands` entry point `client`)."""
    from .bots import register as register_bots

    register_bots(sub)
    register_protoset(sub)


def register_all(sub: Subcommands) -> None:
    """This distribution's subcommands first, then every installed distribution's."""
    register(sub)
    for entry in sorted(metadata.entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
        try:
            entry_register = entry.load()
        except ImportError as exc:  # a half-installed plugin must not break the command
            logging.getLogger(__name__).warning("tablier command %s unavailable: %s", entry.name, exc)
            continue
        entry_register(sub)


def run(args: argparse.Namespace) -> int:
    result = args.run(args)
    if inspect.iscoroutine(result):
        result = asyncio.run(result)
    return int(result or 0)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tablier", description="tablier game server and clients")
    sub = p.add_subparsers(dest="command", required=True)
    register_all(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(
        level=os.environ.get("TABLIER_LOG_LEVEL", "WARNING"), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    return run(parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

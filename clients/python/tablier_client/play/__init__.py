"""`tablier play`: a terminal player for every game of a tablier server (textual).

    tablier play [--server HOST:PORT] [--tls | --no-tls] [--ca FILE]
                 [--watch GAME_ID | --join CODE | --replay GAME_ID | --game GAME_ID --token TOKEN
                  | --fork GAME_ID [--at SEQ]]
                 [--leaderboard GAME | --ranked GAME --seats N]

Registered in the `tablier.commands` entry-point group, so whichever distribution's `tablier`
script runs has it. textual is imported only when the command runs."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..cli import Subcommands


def register(sub: Subcommands) -> None:
    from ..cli import DEFAULT_SERVER, add_command

    sp = add_command(sub, "play", help="play, watch or replay matches in the terminal")
    if sp is None:
        return
    sp.add_argument(
        "--server",
        default=os.environ.get("TABLIER_SERVER", DEFAULT_SERVER),
        help="host:port of the server (grpcs://host:port asks for TLS)",
    )
    tls = sp.add_mutually_exclusive_group()
    tls.add_argument(
        "--tls",
        dest="tls",
        action="store_const",
        const=True,
        default=None,
        help="require TLS (default: TLS when the server offers it)",
    )
    tls.add_argument("--no-tls", dest="tls", action="store_const", const=False, help="plaintext only")
    sp.add_argument("--ca", type=Path, help="PEM file of the root certificates to trust for TLS")
    sp.add_argument("--watch", default="", metavar="GAME_ID", help="watch a match as a spectator")
    sp.add_argument("--join", default="", metavar="CODE", help="take a seat: an invite code, or a game id (open seat)")
    sp.add_argument("--replay", default="", metavar="GAME_ID", help="step through a finished match")
    sp.add_argument("--game", default="", metavar="GAME_ID", help="play a match you hold a seat of (with --token)")
    sp.add_argument("--token", default=os.environ.get("TABLIER_SEAT_TOKEN", ""), help="the seat's token")
    sp.add_argument(
        "--name", default="", help="sign in as a new guest player with this display name (its credential is printed)"
    )
    sp.add_argument(
        "--credential",
        default=os.environ.get("TABLIER_PLAYER_CREDENTIAL", ""),
        help="sign in as the player of this credential, on any device (env TABLIER_PLAYER_CREDENTIAL);"
        " --game then needs no --token",
    )
    sp.add_argument("--mine", action="store_true", help="list the signed-in player's matches and exit")
    sp.add_argument("--leaderboard", default="", metavar="GAME", help="print a game type's leaderboard and exit")
    sp.add_argument("--page", type=int, default=0, help="with --leaderboard: the page, from 0")
    sp.add_argument(
        "--ranked",
        default="",
        metavar="GAME",
        help="queue for a ranked match of GAME (with --credential or --name), then play it",
    )
    sp.add_argument("--seats", type=int, default=2, help="with --ranked: the number of seats (default 2)")
    sp.add_argument(
        "--fork",
        default="",
        metavar="GAME_ID",
        help="play on from a match (a fork of it at --at SEQ, default its latest event): never rated, bots at the other seats",
    )
    sp.add_argument("--at", type=int, default=0, metavar="SEQ", help="with --fork: the event to play on from")
    sp.set_defaults(run=run)


# What `pip install 'tablier-client[play]'` brings (see pyproject.toml).
MODULES = ("textual", "rich")


def run(args: argparse.Namespace) -> int:
    from ..cli import require_extra

    if args.mine:
        import asyncio

        from .mine import print_my_matches

        return asyncio.run(print_my_matches(args.server, args.credential, tls=args.tls))
    if args.leaderboard:
        import asyncio

        from .ranked import print_leaderboard

        return asyncio.run(print_leaderboard(args.server, args.leaderboard, args.page, tls=args.tls))
    require_extra("play", "play", MODULES)
    if args.ranked:
        import asyncio

        from .ranked import find_ranked

        found = asyncio.run(find_ranked(args.server, args.ranked, args.seats, args.credential, args.name, tls=args.tls))
        if found is None:
            return 1
        args.game, args.credential, args.name = found[0], found[1], ""
    from .app import PlayApp, Start

    app = PlayApp(
        args.server,
        tls=args.tls,
        root_certificates=args.ca.read_bytes() if args.ca else None,
        auditor_token=os.environ.get("TABLIER_AUDITOR_TOKEN") or os.environ.get("TABLIER_OPERATOR_TOKEN") or None,
        start=Start(
            watch=args.watch,
            join=args.join,
            replay=args.replay,
            game_id=args.game,
            token=args.token,
            name=args.name,
            credential=args.credential,
            fork=args.fork,
            at=args.at,
        ),
    )
    app.run()
    return app.return_code or 0

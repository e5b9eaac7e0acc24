"""`tablier loadtest`: load-tests a tablier server, whichever address its user names.

    tablier loadtest evaluate --server HOST:PORT --concurrency 16 --duration 30
    tablier loadtest evaluate --rate 500 --duration 20             # open loop
    tablier loadtest play --game qwirkle --stages 10:4,10:16 --moves client
    tablier loadtest watch --game qwirkle --spectators 8
    tablier loadtest mix --mix evaluate=3,play=1,watch=1
    tablier loadtest queue --players 1000 --game carre --seats 2   # ranked matchmaking (see `queue`)
    tablier loadtest compare A.json B.json

Scenarios (see `scenarios`), load shapes (see `drive`), and the report: live progress, then
a table of p50/p90/p99/p99.9/max per RPC with counts per status and reason, a JSON report
(`--json`) and a PNG (`--plot`).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..cli import Subcommands
    from .drive import Stage

SCENARIOS = ("evaluate", "play", "watch", "mix")


def _common(p: argparse.ArgumentParser) -> None:
    from ..cli import DEFAULT_SERVER

    p.add_argument(
        "--server",
        default=os.environ.get("TABLIER_LISTEN", DEFAULT_SERVER),
        help="HOST:PORT (grpcs:// for TLS); any address",
    )
    tls = p.add_mutually_exclusive_group()
    tls.add_argument(
        "--tls",
        dest="tls",
        action="store_const",
        const=True,
        default=None,
        help="require TLS (default: TLS when the server offers it)",
    )
    tls.add_argument("--no-tls", dest="tls", action="store_const", const=False, help="plaintext only")
    p.add_argument("--ca", type=Path, help="PEM roots to verify the server's certificate")
    p.add_argument(
        "--token",
        default=_env("TABLIER_HOST_TOKEN", "TABLIER_CREATOR_TOKEN", "TABLIER_OPERATOR_TOKEN"),
        help="the host's or creator's token, for CreateGame: exempt from the server's creation rate "
        "(default $TABLIER_HOST_TOKEN, $TABLIER_CREATOR_TOKEN or $TABLIER_OPERATOR_TOKEN). "
        "Without one, matches are created at the rate the server allows one peer, waiting "
        "as it asks. Moves use the seats' own tokens",
    )
    p.add_argument(
        "--auditor-token",
        default=_env("TABLIER_AUDITOR_TOKEN", "TABLIER_OPERATOR_TOKEN"),
        help="seeded (reproducible) matches: CreateGame takes a seed only with the auditor token, "
        "which then creates them (at the server's creation rate unless it is the operator "
        "token); default $TABLIER_AUDITOR_TOKEN or $TABLIER_OPERATOR_TOKEN; '' for unseeded",
    )
    shape = p.add_argument_group("load shape")
    shape.add_argument(
        "--concurrency", type=int, default=8, help="closed loop: workers; open loop: units in flight at most"
    )
    shape.add_argument("--rate", type=float, help="open loop: units started per second")
    shape.add_argument("--duration", type=float, default=10.0, help="seconds (ends the run)")
    shape.add_argument(
        "--stages",
        help="SECONDS:LEVEL[-LEVEL],... (concurrency, or rate with --open-loop/--rate; "
        "LEVEL-LEVEL ramps linearly); replaces --duration",
    )
    shape.add_argument("--open-loop", action="store_true", help="--stages are rates")
    shape.add_argument("--requests", type=int, help="stop after this many units instead of at the duration's end")
    shape.add_argument(
        "--seed", type=int, default=1, help="derives the matches' seeds (with --auditor-token) and the client's choices"
    )
    out = p.add_argument_group("output")
    out.add_argument("--json", type=Path, help="write the JSON report here")
    out.add_argument(
        "--plot",
        type=Path,
        help="write a PNG: latency over time with the errors, its distribution, throughput and errors per second",
    )
    out.add_argument(
        "--quiet", action="store_true", help="no live progress (there is none when stderr is not a terminal)"
    )
    games = p.add_argument_group("scenario")
    games.add_argument(
        "--game", default="", help="game type id (play, watch; evaluate: default every game with an evaluator)"
    )
    games.add_argument("--seats", type=int, default=0, help="seats per match (default: the game's minimum)")
    games.add_argument("--bot", default="", help="bot for SuggestMove (default: the strongest)")
    games.add_argument(
        "--moves",
        choices=("suggest", "client"),
        default="suggest",
        help="who chooses moves: SuggestMove, or the client among ListLegalMoves",
    )
    games.add_argument("--spectators", type=int, default=4, help="watch: spectators per match")
    games.add_argument("--max-moves", type=int, default=2000, help="a new match after this many moves")
    games.add_argument("--positions", type=Path, help="evaluate: JSON file of positions (see --save-positions)")
    games.add_argument(
        "--position-matches", type=int, default=1, help="evaluate: bot matches per game to take positions from"
    )
    games.add_argument("--positions-per-game", type=int, default=64)
    games.add_argument("--save-positions", type=Path, help="evaluate: write the positions used as JSON")
    games.add_argument(
        "--rollouts",
        type=int,
        default=0,
        help="evaluate: also value every move by this many rollouts (RolloutSettings, one thread, "
        "seeded by --seed); 0: immediate effects only",
    )
    games.add_argument(
        "--screen-to",
        type=int,
        default=0,
        help="evaluate: with --rollouts, screen the moves by successive halving and give the "
        "rollouts to the best this many (RolloutSettings.screen_to); 0: every move gets them",
    )


def _env(*names: str) -> str | None:
    return next((os.environ[n] for n in names if os.environ.get(n)), None)


def register(sub: Subcommands) -> None:
    """`tablier loadtest` (entry point `loadtest` of `tablier.commands`)."""
    from ..cli import add_command

    sp = add_command(sub, "loadtest", help="load-test a tablier server (evaluate, play, watch, mix, queue; compare)")
    if sp is None:
        return
    scenarios = sp.add_subparsers(dest="scenario", required=True)
    for name in SCENARIOS:
        s = scenarios.add_parser(name, help=f"the {name} scenario")
        _common(s)
        if name == "mix":
            s.add_argument("--mix", default="evaluate=1,play=1,watch=1", help="SCENARIO=WEIGHT,...")
        s.set_defaults(run=run)
    from . import queue

    queue.add_parser(scenarios)
    c = scenarios.add_parser("compare", help="compare two JSON reports")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    c.set_defaults(run=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    from ..cli import require_extra

    require_extra("loadtest compare", "loadtest", MODULES)
    from rich.console import Console

    from .report import compare, read_json

    a, b = read_json(args.a), read_json(args.b)
    Console(highlight=False).print(compare(a, b, str(args.a), str(args.b)))
    return 0


def _mix(args: argparse.Namespace) -> dict[str, float]:
    if args.scenario != "mix":
        return {args.scenario: 1.0}
    mix = {}
    for part in args.mix.split(","):
        name, _, weight = part.partition("=")
        if name not in SCENARIOS[:3]:
            raise SystemExit(f"unknown scenario {name!r} in --mix")
        mix[name] = float(weight or 1)
    return {k: v for k, v in mix.items() if v > 0}


# What `pip install 'tablier-client[loadtest]'` brings (see pyproject.toml).
MODULES = ("rich", "hdrh", "matplotlib")


async def run(args: argparse.Namespace) -> int:
    from .. import errors
    from ..cli import require_extra

    require_extra("loadtest", "loadtest", MODULES)
    from .drive import Stage, denied_hint, parse_stages

    mix = _mix(args)
    open_loop = args.rate is not None or args.open_loop
    if args.stages:
        try:
            stages = parse_stages(args.stages)
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
    else:
        stages = [Stage(args.duration, args.rate if open_loop and args.rate else float(args.concurrency))]
        if open_loop and not args.rate:
            raise SystemExit("an open loop needs --rate or --stages")
    try:
        return await _run(args, stages, mix, open_loop)
    except (errors.PermissionDenied, errors.Unauthenticated) as exc:
        raise SystemExit(f"tablier loadtest: {exc}: {denied_hint(exc)}") from None
    except errors.TablierError as exc:
        raise SystemExit(f"tablier loadtest: {exc}") from None


async def _run(args: argparse.Namespace, stages: list[Stage], mix: dict[str, float], open_loop: bool) -> int:
    from rich.console import Console
    from rich.live import Live

    from ..sdk import Client, Retry, connect
    from .drive import Run, drive
    from .pacing import creation_line, creation_notes
    from .report import build, plot, rpc_table, write_json
    from .scenarios import Context, generate_positions, read_positions, with_rollouts, write_positions
    from .stats import Recorder, limited

    console = Console(highlight=False, stderr=True)
    root = args.ca.read_bytes() if args.ca else None
    seeded = bool(args.auditor_token)
    async with connect(
        args.server, token=args.token, tls=args.tls, root_certificates=root, retry=Retry(attempts=1), timeout=60.0
    ) as client:
        # CreateGame carries one credential: the auditor's when it takes a seed, else --token.
        creator = (
            Client(client.channel, token=args.auditor_token, retry=client.retry, timeout=client.timeout, tls=client.tls)
            if seeded
            else client
        )
        types = {t.id: t for t in await client.game_types()}
        game = args.game
        if ({"play", "watch"} & set(mix)) and not game:
            game = next(iter(types))
        if game and game not in types:
            raise SystemExit(f"the server has no game type {game!r} (it has {', '.join(types)})")
        positions = None
        if "evaluate" in mix:
            if args.positions:
                positions = read_positions(args.positions, types)
            else:
                chosen = [types[args.game]] if args.game else [t for t in types.values() if t.position_type]
                chosen = [t for t in chosen if t.position_type]
                if not chosen:
                    raise SystemExit("no game on this server has a position evaluator")
                console.print(f"generating positions from bot matches of {', '.join(t.id for t in chosen)} ...")
                positions = await generate_positions(
                    creator,
                    chosen,
                    seed=args.seed,
                    per_game=args.positions_per_game,
                    matches=args.position_matches,
                    seeded=seeded,
                )
            if not positions.requests:
                raise SystemExit(f"no position the server accepts: {positions.describe()}")
            if args.save_positions:
                write_positions(args.save_positions, positions)
            with_rollouts(positions, args.rollouts, args.seed, args.screen_to)
        seats = args.seats or (types[game].min_players if game else 2) or 2
        loop = asyncio.get_running_loop()
        rec = Recorder(loop.time(), args.seed)
        ctx = Context(
            client,
            creator,
            rec,
            game,
            seats,
            args.bot,
            args.moves,
            positions,
            args.spectators,
            args.max_moves,
            args.seed,
            seeded,
        )
        run_ = Run(open_loop, stages, args.requests, mix, max(1, args.concurrency), args.seed)
        title = (
            f"{'+'.join(mix)} on {args.server}: "
            + (f"open loop {stages[0].level:g}/s" if open_loop else f"{int(stages[0].level)} workers")
            + ("" if len(stages) == 1 else f" ({len(stages)} stages)")
        )
        started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        if args.quiet or not console.is_terminal:
            await drive(ctx, run_)
        else:
            # Drawn in place on the terminal and cleared at the end: the table is printed once, below.
            with Live(console=console, refresh_per_second=4, transient=True) as live:

                def tick() -> None:
                    live.update(
                        rpc_table(
                            rec,
                            loop.time() - rec.start,
                            f"{title}  {loop.time() - rec.start:.1f} s, {run_.finished} units ({run_.failed} failed)",
                        )
                    )

                await drive(ctx, run_, tick)
    meta: dict[str, Any] = {
        "scenario": args.scenario,
        "server": args.server,
        "started_at": started_at,
        "game": game or None,
        "seats": seats if game else None,
        "moves": args.moves,
        "spectators": args.spectators if "watch" in mix else None,
        "positions": positions.describe() if positions else None,
        "seeded": seeded,
    }
    if {"play", "watch"} & set(mix):
        meta["creation"] = ctx.pacer.describe(bool(args.token))
    report = build(run_, rec, meta)
    if {"play", "watch"} & set(mix):
        report["notes"] += creation_notes(ctx.pacer, bool(args.token), run_.seconds * run_.max_in_flight)
    out = Console(highlight=False)
    if not out.is_terminal:
        out = Console(highlight=False, width=160)  # a file or a pipe: no terminal width to fit
    out.print(rpc_table(rec, run_.seconds, title))
    for rpc, r in report["rpcs"].items():
        bad = {k: n for k, n in r["statuses"].items() if k != "OK" and not limited(k)}
        if bad:
            out.print(f"{rpc} errors: " + ", ".join(f"{k} x{n}" for k, n in bad.items()))
    rate = f"{report['achieved_rate']:.1f} completed units/s"
    if report["target_rate"]:
        rate += f" of {report['target_rate']:.1f} targeted"
    out.print(
        f"{run_.finished} units in {run_.seconds:.2f} s: {run_.completed} completed, {run_.failed} failed; {rate}"
    )
    if "creation" in meta:
        out.print(creation_line(ctx.pacer))
    for note in report["notes"]:
        if note != run_.stopped:
            out.print(f"note: {note}")
    if args.json:
        write_json(args.json, report)
    if args.plot:
        plot(args.plot, rec, title, run_.seconds)
    if run_.stopped:
        print(f"tablier loadtest: {run_.stopped}", file=sys.stderr)  # one line, unwrapped
        return 2
    return 0 if run_.completed and not run_.failed else 1


def main(argv: list[str] | None = None) -> int:
    from ..cli import main as tablier_main

    return tablier_main(["loadtest", *(sys.argv[1:] if argv is None else argv)])

"""`tablier ratings`: the rating streams checked and the projection recomputed from them
(docs/verifying.md "Ratings"). Registered by `tablier.cli.register`.

- `tablier ratings verify`: every game type's stream chained from its genesis, each event
  recomputed from the ones before it (same model, version and parameters) and equal byte for
  byte, and the `ratings` rows equal to what the stream gives. Exit 1 on any difference.
- `tablier ratings rebuild`: the same, then, with `--write`, the projection written anew from
  the stream (after a tampered row, say). Without `--write` it changes nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from tablier.cli_options import Subcommands, console, err_console, open_database


def add_ratings(
    sub: Subcommands,
    add_command: Callable[..., argparse.ArgumentParser | None],
    database_options: Callable[[argparse.ArgumentParser], None],
) -> None:
    sp = add_command(sub, "ratings", help="check the rating streams and recompute the ratings from them")
    if sp is None:
        return
    what = sp.add_subparsers(dest="ratings_command", required=True)
    for name, help_text in (
        ("verify", "check every rating stream's chain and the ratings table against it"),
        ("rebuild", "recompute every rating from the rating streams and compare (--write: replace the table)"),
    ):
        p = what.add_parser(name, help=help_text)
        p.add_argument("--game-type", default=None, help="one game type (default: every rated one)")
        if name == "rebuild":
            p.add_argument("--write", action="store_true", help="write the recomputed ratings into the table")
        database_options(p)
        p.set_defaults(run=ratings)


async def ratings(args: argparse.Namespace) -> int:
    from tablier.app.ranked import rebuild
    from tablier.store.ratings import PgRatings

    async with open_database(args) as store:
        directory: PgRatings | None = getattr(store, "ratings", None)
        if directory is None:
            err_console.print("[red]ratings live in PostgreSQL: this store has none[/red]")
            return 2
        types = [args.game_type] if args.game_type else await directory.game_types()
        bad = 0
        for game_type in types:
            stream = await directory.events(game_type)
            stored = await directory.ratings(game_type)
            found = rebuild(game_type, stream, stored)
            for problem in found.problems:
                err_console.print(f"[red]{problem}[/red]", markup=True, highlight=False)
            bad += len(found.problems)
            console.print(
                f"{game_type}: {found.events} rating events, {len(found.rows)} ratings, "
                + ("identical" if not found.problems else f"{len(found.problems)} differences"),
                markup=False,
            )
            if args.ratings_command == "rebuild" and getattr(args, "write", False) and found.problems:
                await directory.replace(game_type, found.rows)
                console.print(f"{game_type}: ratings table rewritten from the stream", markup=False)
        return 1 if bad else 0

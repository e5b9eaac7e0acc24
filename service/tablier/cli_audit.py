"""The `tablier` subcommands that read a match's log: replay, verify, verify-public, export;
and the seed keys' rotation (`rotate-seed-key`). Registered by `tablier.cli.register`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from tablier.cli_options import DEFAULT_DATA_DIR, ConfigError, Subcommands, console, err_console, open_database

if TYPE_CHECKING:
    from tablier import _core
    from tablier.receipts import SigningKeys
    from tablier.store.base import StoredCommand
    from tablier.witness import Chain, Witness

# --------------------------------------------------------------------------- replay


async def replay(args: argparse.Namespace) -> int:
    from tablier import _core
    from tablier.seeds import SeedUnreadable
    from tablier.store.base import UnknownGame
    from tablier.v1.common_pb2 import Outcome

    async with open_database(args) as store:
        try:
            game = await store.get_game(args.game_id)
        except UnknownGame:
            err_console.print(f"[red]no match {args.game_id}[/red]")
            return 2
        except SeedUnreadable as exc:
            err_console.print(f"[red]{exc}[/red]")
            return 1
        events = await store.load_events(game.game_id, upto_seq=args.at)
        if args.values:
            every = await store.load_events(game.game_id)
            commands = await store.commands(game.game_id)
    match = _core.Match(game.game_type, game.seats, dict(game.options))
    match.apply_all([e.payload for e in events], [e.kind for e in events])
    seq = events[-1].seq if events else 0
    console.rule(f"{game.game_type} {game.game_id} at seq {seq}")
    console.print(match.render(auditor=True), markup=False)
    for ev in events[-5:]:
        said = match.event_sentence(ev.payload, auditor=True, kind=ev.kind)
        console.print(f"{ev.seq:>5}  {said}", markup=False)
    console.print(f"to act: {match.to_act() or '-'}")
    outcome = match.outcome()
    if outcome is not None:
        o = Outcome.FromString(outcome)
        console.print(
            f"over: scores {list(o.scores)}, winners {list(o.winners)}, reason {o.reason or '-'}"
            + (" (lower is better)" if o.lower_is_better else "")
        )
    else:
        console.print("over: no")
    if args.values:
        final = _core.Match(game.game_type, game.seats, dict(game.options))
        final.apply_all([e.payload for e in every], [e.kind for e in every])
        if final.outcome() is None:
            err_console.print(
                f"[red]match {game.game_id} is not over: move values are shown in the replay of a finished "
                "match only (no assistance during play)[/red]"
            )
            return 1
        return _print_values(args, match, seq, commands)
    return 0


def _print_values(args: argparse.Namespace, match: _core.Match, seq: int, commands: list[StoredCommand]) -> int:
    """Each legal move of the seat awaited at `seq` (or `--seat`) with its value over
    `--rollouts` deals of what that seat could not see; `*` marks the best, `>` the one played."""
    import pkgutil
    from importlib import import_module

    from google.protobuf import descriptor_pool, message_factory

    import tablier.v1
    from tablier import _core
    from tablier.v1.common_pb2 import GameType, MoveValue, RolloutSettings

    assert isinstance(match, _core.Match)
    to_act = match.to_act()
    seat = args.seat if args.seat is not None else (to_act[0] if to_act else None)
    if seat is None or match.outcome() is not None:
        err_console.print(f"[red]no seat is awaited at seq {seq}: no move to value[/red]")
        return 1
    if args.rollouts <= 0:
        err_console.print("[red]--rollouts must be positive[/red]")
        return 2
    info = next(t for t in map(GameType.FromString, _core.game_types()) if t.id == match.game_type)
    if not info.evaluation_type:
        err_console.print(f"[red]{info.name} has no move evaluator[/red]")
        return 1
    try:
        position = match.position(seat, auditor=True)
        settings = RolloutSettings(rollouts=args.rollouts, seed=args.seed, threads=1)
        raw = _core.evaluate(match.game_type, position, settings.SerializeToString())
    except _core.CoreError as exc:
        err_console.print(f"[red]{exc}[/red]")
        return 1
    for module in pkgutil.iter_modules(tablier.v1.__path__):
        if module.name.endswith("_pb2"):
            import_module(f"tablier.v1.{module.name}")
    descriptor = descriptor_pool.Default().FindMessageTypeByName(info.evaluation_type)
    evaluation = message_factory.GetMessageClass(descriptor).FromString(raw)
    valued: list[Any] = next(
        (
            getattr(evaluation, f.name)
            for f in descriptor.fields
            if f.message_type is not None
            and {"action", "value"} <= set(f.message_type.fields_by_name)
            and f.message_type.fields_by_name["value"].message_type is MoveValue.DESCRIPTOR
        ),
        [],
    )
    labels = dict(match.legal_moves(seat))
    played = next(
        (c.input.action for c in commands if c.first_seq == seq + 1 and c.input is not None and c.input.seat == seat),
        None,
    )
    values = [m.value for m in valued]
    best = max(range(len(values)), key=lambda i: (values[i].win_probability, values[i].margin), default=None)
    console.print(f"values of seat {seat}'s moves at seq {seq}: {args.rollouts} rollouts, seed {args.seed}")
    for i, m in enumerate(valued):
        action = m.action.SerializeToString()
        mark = ("*" if i == best else " ") + (">" if action == played else " ")
        v = m.value
        console.print(
            f"{mark} win {v.win_probability:5.3f} ± {v.win_stderr:5.3f}  margin {v.margin:+7.2f} ± "
            f"{v.margin_stderr:5.2f}  {labels.get(action, '?')}",
            markup=False,
        )
    return 0


# --------------------------------------------------------------------------- verify


async def verify(args: argparse.Namespace) -> int:
    from tablier import receipts as signed
    from tablier.public_verify import read_log
    from tablier.verify import verify_game

    transcripts = [read_log(path) for path in args.transcript]
    kept = [r for path in args.receipts for r in signed.read_receipts(path)]
    keys = signed.parse_public_keys(args.receipt_key)
    if kept and not keys:
        keys = signed.SigningKeys.from_env(args.data_dir).listed()
    witnessed = None
    where = None if args.no_witness else args.witness or default_witness(args)
    if where is not None:
        given = args.witness is not None
        witnessed = read_witness(where, keys or signed.SigningKeys.from_env(args.data_dir).listed(), strict=given)
        if witnessed is None and given:
            return 1
    async with open_database(args) as store:
        ids = await store.list_games() if args.all else [args.game_id]
        results = [await verify_game(store, gid, transcripts, kept, keys, witnessed) for gid in ids]
    table = Table(title=f"verified {len(results)} match(es)")

    for col in ("match", "game", "events", "re-decided", "result"):
        table.add_column(col)
    bad = 0
    for r in results:
        bad += not r.ok
        shown = "\n".join(r.problems[:5]) + (f"\n(+{len(r.problems) - 5} more)" if len(r.problems) > 5 else "")
        if r.lineage:
            shown = f"{r.lineage}:\n{shown}" if not r.ok else shown
        verdict = Text(f"ok ({r.lineage}: lineage checked)" if r.lineage else "ok", style="green")
        if not r.ok:
            verdict = Text(shown, style="red")
        redecided = str(r.redecided) + (f" ({r.without_input} without input)" if r.without_input else "")
        table.add_row(r.game_id, r.game_type, str(r.events), redecided, verdict)
    console.print(table)
    if witnessed is not None:
        console.print(f"against the witness {where}", markup=False, soft_wrap=True)
    if bad:
        err_console.print(f"[red]{bad} match(es) failed verification[/red]")
        return 1
    return 0


def default_witness(args: argparse.Namespace) -> str | None:
    """Where `tablier serve` keeps its witness when given no option (TABLIER_WITNESS_URL, else
    TABLIER_WITNESS_DIR, '' for none, else <data dir>/witness), if it is there."""
    import os

    if os.environ.get("TABLIER_WITNESS_URL"):
        return os.environ["TABLIER_WITNESS_URL"]
    directory = os.environ.get("TABLIER_WITNESS_DIR")
    if directory == "":
        return None
    path = Path(directory) if directory else Path(args.data_dir) / "witness"
    return str(path) if path.is_dir() else None


def read_witness(location: str, keys: dict[str, bytes], strict: bool = True) -> Chain | None:
    """The witness's chain of checkpoints, checked; None (the problems printed) when a record is
    not a valid link, or the heads do not hash to the last root. Not `strict` (the witness
    found where the server keeps it, not one asked for): as a server loading cold reads it, the
    heads of the checkpoints signed by a trusted key count, and the chain's own problems are
    warnings; one that cannot be read is a warning and None."""
    from tablier import witness
    from tablier.witness_backends import open_backend

    try:
        backend = open_backend(location)
        try:
            chain = witness.read_chain(backend, keys)
        finally:
            backend.close()
    except Exception as exc:  # any backend's error, said in one line
        if strict:
            raise
        err_console.print(f"[yellow]witness {location} cannot be read, not consulted: {exc}[/yellow]")
        return None
    style = "red" if strict else "yellow"
    for problem in chain.problems:
        err_console.print(f"[{style}]witness {backend.where}: {problem}[/{style}]")
    if chain.last is None and not chain.problems:
        if strict:
            err_console.print(f"[red]witness {backend.where}: no checkpoint[/red]")
        return None
    return None if chain.problems and strict else chain


def open_witness(args: argparse.Namespace, signing: SigningKeys) -> Witness | None:
    """`tablier serve`'s witness (--witness-url, else --witness-dir, '' for none)."""
    from tablier.witness import Witness
    from tablier.witness_backends import open_backend

    if args.witness_url and "://" not in args.witness_url:
        raise ConfigError("--witness-url takes postgresql://..., s3://bucket/prefix or file://DIR")
    if not args.witness_url and args.witness_dir == "":
        return None
    try:
        return Witness(open_backend(args.witness_url or args.witness_dir or Path(args.data_dir) / "witness"), signing)
    except Exception as exc:  # any store's error, said in one line
        raise ConfigError(f"the witness cannot be opened: {exc}") from None


def add_witness_proof(sub: Subcommands, add_command: Callable[..., Any]) -> None:
    import os

    sp = add_command(
        sub,
        "witness-proof",
        help="one match's witnessed head with its inclusion proof in the last signed checkpoint (JSON)",
    )
    if sp is None:
        return
    sp.add_argument("game_id")
    sp.add_argument("--witness", required=True, metavar="DIR|URL", help="the witness (as for verify)")
    sp.add_argument(
        "--receipt-key",
        action="append",
        default=[],
        metavar="HEX",
        help="a trusted public key (ListSigningKeys); repeatable; default: this server's signing keys",
    )
    sp.add_argument(
        "--data-dir",
        default=os.environ.get("TABLIER_DATA_DIR", DEFAULT_DATA_DIR),
        help="where this server's signing key file is, if TABLIER_SIGNING_KEY is unset (env TABLIER_DATA_DIR)",
    )
    sp.add_argument("-o", "--output", default="-", help="file to write (default: standard output)")
    sp.set_defaults(run=witness_proof)


def witness_proof(args: argparse.Namespace) -> int:
    import json

    from tablier import receipts as signed
    from tablier import witness

    keys = signed.parse_public_keys(args.receipt_key) or signed.SigningKeys.from_env(args.data_dir).listed()
    chain = read_witness(args.witness, keys)
    if chain is None:
        return 1
    proof = witness.prove(chain, args.game_id)
    if proof is None:
        err_console.print(f"[red]the witness names no head of {args.game_id}[/red]")
        return 1
    text = json.dumps(proof, indent=1)
    if args.output == "-":
        print(text)
    else:
        Path(args.output).write_text(text + "\n")
    return 0


def verify_public(args: argparse.Namespace) -> int:
    from tablier.public_verify import read_log, verify_log

    try:
        seed = bytes.fromhex(args.seed)
    except ValueError:
        err_console.print("[red]--seed must be hex[/red]")
        return 2
    from tablier import receipts as signed

    kept = [r for path in args.receipts for r in signed.read_receipts(path)]
    keys = signed.parse_public_keys(args.receipt_key)
    if kept and not keys:
        err_console.print("[red]--receipts needs the public keys you trust (--receipt-key HEX)[/red]")
        return 2
    parents = [read_log(p) for p in args.parent]
    r = verify_log(read_log(args.log), seed or None, [read_log(p) for p in args.transcript], kept, keys, parents)
    console.print(
        f"{r.game_type} {r.game_id}: {r.events} events, {r.redecided} commands decided again "
        f"from the seed, {r.transcript_events} viewer events checked"
    )
    if r.lineage:
        console.print(r.lineage)
    for problem in r.problems:
        console.print(f"[red]{problem}[/red]")
    console.print("[green]ok[/green]" if r.ok else f"[red]{len(r.problems)} problem(s)[/red]")
    return 0 if r.ok else 1


def export(args: argparse.Namespace) -> int:
    import grpc

    from tablier.api.server import load_protos
    from tablier.public_verify import write_log
    from tablier.v1 import service_pb2 as pb
    from tablier.v1 import service_pb2_grpc as rpc

    load_protos()  # every game's messages, to write the Any payloads as JSON

    metadata = []
    if args.token:
        metadata.append(("authorization", f"Bearer {args.token}"))
    if args.auditor:
        metadata.append(("x-tablier-role", "auditor"))
    channel = (
        grpc.secure_channel(args.server, grpc.ssl_channel_credentials(Path(args.tls_ca).read_bytes()))
        if args.tls_ca
        else grpc.insecure_channel(args.server)
    )
    with channel:
        stub = rpc.GameServiceStub(channel)  # type: ignore[no-untyped-call]  # generated, unannotated
        try:
            listed = stub.ListEvents(pb.ListEventsRequest(game_id=args.game_id), metadata=metadata)
            state = stub.GetView(
                pb.GetViewRequest(game_id=args.game_id, at_seq=listed.last_seq), metadata=metadata
            ).state
        except grpc.RpcError as exc:
            err_console.print(f"[red]{exc.code().name}: {exc.details()}[/red]")
            return 1
    log = pb.MatchLog(state=state, events=listed.events, pinned_commitment=state.seed_commitment)
    if args.output == "-":
        from google.protobuf import json_format

        print(json_format.MessageToJson(log, indent=1))
    else:
        write_log(args.output, log)
    return 0


# --------------------------------------------------------------------------- seed keys


async def rotate_seed_key(args: argparse.Namespace) -> int:
    from tablier.seeds import SeedUnreadable
    from tablier.store.postgres import PostgresStore
    from tablier.store.sharded import ShardedStore

    async with open_database(args) as store:
        if not isinstance(store, PostgresStore | ShardedStore):
            err_console.print("[red]seeds are sealed at rest in PostgreSQL only[/red]")
            return 1
        try:
            n = await store.reseal_seeds()
        except SeedUnreadable as exc:
            err_console.print(f"[red]{exc}[/red]")
            return 1
    from tablier.seeds import SeedKeys

    console.print(f"resealed {n} seed(s) with key {SeedKeys.from_env(args.data_dir).current_id}")
    return 0

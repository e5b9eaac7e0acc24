"""What one viewer may see of a match: its state at a seq (`match_state`) and each event
(`event_out`), built by the core's `view` / `redact` for that viewer and nothing else."""

from __future__ import annotations

from tablier import _core
from tablier._core import Match
from tablier.store.base import GameRecord, StoredCommand, StoredEvent, seed_commitment

from .auth import Principal
from .catalogue import Catalogue
from .clocks import seat_clocks
from .model import CommandOut, EventOut, ForkInfo, MatchState, Payload
from .seats import seat_infos, seat_names


def event_out(
    catalogue: Catalogue,
    game: GameRecord,
    match: Match,
    ev: StoredEvent,
    who: Principal,
    command: StoredCommand | None = None,
) -> EventOut | None:
    """`ev` as `who` may see it (None: not at all); `match` is any state of the match (the
    redaction depends on the game's rules, not on the state)."""
    redacted = match.redact(ev.payload, seat=who.seat, auditor=who.auditor, kind=ev.kind)
    if redacted is None:
        return None
    event_type = _core.GENERIC_EVENTS.get(ev.kind) or catalogue.get(game.game_type).event_type
    described = match.event_sentence(redacted, seat=who.seat, auditor=who.auditor, kind=ev.kind, names=seat_names(game))
    if not who.auditor:
        return EventOut(
            ev.seq,
            ev.kind,
            ev.seat,
            Payload(event_type, redacted),
            ev.recorded_at,
            ev.chain_hash if game.hash_scheme >= 2 else None,
            description=described,
        )
    given = command.input if command is not None else None
    asked = (
        None
        if given is None
        else CommandOut(
            given.seat,
            None if given.action is None else Payload(catalogue.get(game.game_type).action_type, given.action),
            given.host_command,
        )
    )
    return EventOut(
        ev.seq,
        ev.kind,
        ev.seat,
        Payload(event_type, redacted),
        ev.recorded_at,
        ev.chain_hash,
        ev.command_id,
        ev.core_version,
        asked,
        ev.state_hash,
        described,
    )


def match_state(
    catalogue: Catalogue, game: GameRecord, seq: int, match: Match, who: Principal, chain: bytes | None = None
) -> MatchState:
    """The match at `seq` (`match`, whose last event has the chain hash `chain`) as `who` may
    see it; its seats as `game`, the match record, says they are filled."""
    info = catalogue.get(game.game_type)
    over = match.is_over()
    # Chain hashes of matches stored before state hashes were salted could be checked
    # against guessed hidden cards: those go to the auditor, or to anyone once it is over.
    published = game.hash_scheme >= 2 or who.auditor or over
    return MatchState(
        chain_head=chain if published else None,
        seed_commitment=seed_commitment(game.game_id, game.seed),
        seed=game.seed if over or who.auditor else None,
        options=dict(game.options),
        integrity_scheme=game.hash_scheme,
        game_id=game.game_id,
        game_type=game.game_type,
        seq=seq,
        principal=who,
        to_act=match.to_act(),
        over=over,
        outcome=match.outcome(),
        view=Payload(info.view_type, match.view(seat=who.seat, auditor=who.auditor)),
        seat_count=game.seats,
        seats=seat_infos(game),
        clocks=seat_clocks(match),
        ranked=game.ranked,
        fork=ForkInfo.of(game),
    )

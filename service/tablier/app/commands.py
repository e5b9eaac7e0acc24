"""Command handling: create and join a match, a seat's move, a host command. Each is decided by
the core on the repository's verified state and appended to the log at the next seq; the
repository then holds the new state (and tells its listeners, the scheduler among them)."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import uuid
from collections.abc import Callable

from tablier import _core
from tablier._core import Match
from tablier.store.base import (
    HASH_SCHEME,
    CommandInput,
    GameRecord,
    NewEvent,
    SeqConflict,
    StoredCommand,
    StoredEvent,
    stored_state_hash,
)
from tablier.v1.common_pb2 import GameType

from .access import Access, acting_seat
from .auth import (
    ANONYMOUS,
    AUDITOR,
    SPECTATOR,
    Credential,
    Principal,
    Role,
    new_seat_token,
    seat_of,
    token_game_id,
    token_hash,
)
from .clocks import awaits_server
from .errors import (
    AlreadyExists,
    AppError,
    BadRequest,
    Conflict,
    NotAllowedNow,
    PermissionDenied,
    Unauthenticated,
)
from .limits import Limiter
from .model import (
    BOT_COMMAND_PREFIX,
    Created,
    EventOut,
    Joined,
    MatchState,
    Payload,
    Played,
    check_command_id,
    check_type,
)
from .repository import Repository
from .seats import (
    SeatAssignment,
    SeatKind,
    SeatPlan,
    SeatStatus,
    bot_seed,
    bound_players,
    invited_seat,
    join_token,
    plan_seats,
    seat_infos,
)
from .views import event_out, match_state

# (the match's state, its seq, who acts) -> the core's events; must not change the state.
Decide = Callable[[Match, int, Principal], list[tuple[str, bytes]]]


class Commands:
    def __init__(self, repository: Repository, access: Access, limiter: Limiter) -> None:
        self.repo = repository
        self.access = access
        self.limiter = limiter
        self.catalogue = repository.catalogue

    def _state(self, game: GameRecord, seq: int, match: Match, who: Principal, chain: bytes | None) -> MatchState:
        return match_state(self.catalogue, game, seq, match, who, chain)

    def _event_out(
        self, game: GameRecord, match: Match, ev: StoredEvent, who: Principal, command: StoredCommand | None = None
    ) -> EventOut | None:
        return event_out(self.catalogue, game, match, ev, who, command)

    # ----------------------------------------------------------------- create

    async def create_game(
        self,
        game_type: str,
        seats: int,
        options: dict[str, str],
        seed: bytes = b"",
        cred: Credential = ANONYMOUS,
        assignments: list[SeatAssignment] | None = None,
        peer: str | None = None,
        ranked: bool = False,
    ) -> Created:
        """A new match (`ranked`: rated when it ends, `ranked.Ranked`). `assignments` says who fills each seat (`seats` may be 0 then); none:
        the creator holds every seat. A match of bots only needs the host token: the server
        would play all of it for one cheap call."""
        if not game_type:
            raise BadRequest("game_type is required", "MISSING_FIELD")
        info = self.catalogue.get(game_type)
        self.limiter.check_options(options)
        self._admit_creator(cred, peer)
        if assignments and not seats:
            seats = len(assignments)
        if ranked:
            check_ranked(info, seats, options, assignments or [], cred, seed)
        if not seed:
            seed = secrets.token_bytes(32)
        elif len(seed) != 32:
            raise BadRequest(f"a seed is 32 bytes, not {len(seed)}", "BAD_SEED")
        elif not self.access.is_auditor(cred):
            # Whoever knows the seed can compute every hidden card of the match: only the
            # auditor, who sees every card anyway, may choose it.
            raise PermissionDenied(
                "choosing the seed needs the auditor token: the seed decides every hidden card", "SEED_NEEDS_OPERATOR"
            )
        match = Match(game_type, seats, dict(options))
        game_id = str(uuid.uuid4())
        plan = plan_seats(game_id, seats, assignments or [], list(info.bots))
        if all(plan.bots) and len(plan.bots) == seats and not self.access.is_host(cred):
            raise PermissionDenied("a match of bots only needs the host token", "BOTS_ONLY_NEEDS_HOST")
        record = GameRecord(
            game_id=game_id,
            game_type=game_type,
            seats=seats,
            options=dict(options),
            seed=seed,
            token_hashes=plan.token_hashes,
            invite_hashes=plan.invite_hashes,
            bots=plan.bots,
            hash_scheme=HASH_SCHEME,
            # Indexed for the scheduler's `resume` at start-up while the match may await the server.
            clocked=awaits_server(info, match, plan.bots),
            seat_players=bound_players(plan, cred.player_id),
            ranked=ranked,
        )
        return await self.open_match(record, match, match.start(seed, 1), plan)

    async def open_match(
        self, record: GameRecord, match: Match, opening: list[tuple[str, bytes]], plan: SeatPlan
    ) -> Created:
        """Stores a new match (`record`, its state before anything happened `match`, changed
        here) with its opening events, as the core decided them, and holds its state."""
        game_id = record.game_id
        events = self._evolve(record, match, opening, seat=None)
        stored, match = await self.repo.create(record, events, match)
        seq = stored[-1].seq if stored else 0
        return Created(
            game_id,
            plan.tokens,
            self._state(record, seq, match, SPECTATOR, stored[-1].chain_hash if stored else None),
            plan.invite_codes,
        )

    async def create_matched(
        self, game_type: str, players: list[str | None], bots: list[str], game_id: str | None = None
    ) -> str:
        """A ranked match the queue made (`queue.Matchmaker`): per seat, its player (bound to
        the seat: the player's credential acts for it) or, where None, the bot `bots[seat]`
        plays it. The game's default options; a seed from a CSPRNG. `game_id`: the id the
        queue planned it under (a second creation raises DuplicateGame). Returns its id."""
        info = self.catalogue.get(game_type)
        seats = len(players)
        match = Match(game_type, seats, {})
        game_id = game_id or str(uuid.uuid4())
        named = tuple(b if p is None else "" for p, b in zip(players, bots, strict=True))
        record = GameRecord(
            game_id=game_id,
            game_type=game_type,
            seats=seats,
            options={},
            seed=secrets.token_bytes(32),
            # A seat bound to a player is held (not open); its token is never shown: the player's
            # credential acts for it.
            token_hashes=tuple(b"" if p is None else token_hash(new_seat_token(game_id)) for p in players),
            bots=named if any(named) else (),
            hash_scheme=HASH_SCHEME,
            clocked=awaits_server(info, match, named),
            seat_players=tuple(players),
            ranked=True,
        )
        opening = match.start(record.seed, 1)
        events = self._evolve(record, match, opening, seat=None)
        await self.repo.create(record, events, match)
        return game_id

    # ----------------------------------------------------------------- join

    async def join_game(
        self, game_id: str, cred: Credential, invite_code: str = "", seat: int | None = None, join_key: str = ""
    ) -> Joined:
        """Takes a seat nobody holds: the one `invite_code` is for, else `seat` if it is open,
        else the lowest open seat. Returns the seat's new token (shown once). Of several joins
        racing for one seat, one wins; the others get SEAT_TAKEN (or, asking for any open
        seat, the next open seat). With a `join_key` the token derives from the key, so the
        same join repeated returns the same seat and token."""
        if not game_id and invite_code:
            game_id = token_game_id(invite_code) or ""
        if invite_code and seat is not None:
            raise BadRequest("give an invite code or a seat, not both: the code names its seat", "BAD_JOIN")
        game = await self.repo.game(game_id)
        if game.ranked and cred.player_id is None:
            raise Unauthenticated(
                "a ranked match's seats are for signed-in players: join with a player credential",
                "PLAYER_CREDENTIAL_REQUIRED",
            )
        if cred.player_id is not None and game.seats_of(cred.player_id):
            raise NotAllowedNow(
                f"this player holds seat {game.seats_of(cred.player_id)[0] + 1} of the match already", "ALREADY_SEATED"
            )
        if cred.token and cred.player_id is None:
            held = seat_of(cred.token, game.token_hashes)
            if held is not None:
                raise NotAllowedNow(f"this token holds seat {held} of the match already", "ALREADY_SEATED")
        invited = invited_seat(invite_code, game) if invite_code else None
        if invite_code and invited is None:
            raise PermissionDenied("the invite code is not valid for this match", "BAD_INVITE_CODE")
        token = join_token(game.game_id, join_key) if join_key else new_seat_token(game.game_id)
        held = seat_of(token, game.token_hashes) if join_key else None
        if held is not None:
            wanted = invited if invite_code else seat
            if wanted is not None and wanted != held:
                raise AlreadyExists(f"this join_key joined seat {held} of the match, not {wanted}", "JOIN_KEY_REUSED")
            seq, match = await self.repo.load(game)
            state = self._state(game, seq, match, Principal(Role.SEAT, held), await self.repo.chain_at(game, seq))
            return Joined(held, token, state, replayed=True)
        if invited is not None:
            candidates = [invited]
        elif seat is not None:
            if not 0 <= seat < game.seats:
                raise BadRequest(f"the match has seats 0..{game.seats - 1}, not {seat}", "BAD_SEAT")
            if seat < len(game.invite_hashes) and game.invite_hashes[seat]:
                raise NotAllowedNow(f"seat {seat} is for whoever holds its invite code", "SEAT_NOT_OPEN")
            if game.bot(seat):
                raise NotAllowedNow(f"seat {seat} is played by the server's bot", "SEAT_NOT_OPEN")
            candidates = [seat]
        else:
            candidates = [s for s, i in enumerate(seat_infos(game)) if i.status is SeatStatus.OPEN]
            if not candidates:
                raise NotAllowedNow("the match has no open seat", "NO_OPEN_SEAT")
        seq, match = await self.repo.load(game)
        if match.is_over():
            raise NotAllowedNow("the match is over", "GAME_OVER")
        for s in candidates:
            claimed = await self.repo.claim_seat(game, s, token_hash(token), cred.player_id)
            if claimed is not None:
                state = self._state(
                    claimed, seq, match, Principal(Role.SEAT, s), await self.repo.chain_at(claimed, seq)
                )
                return Joined(s, token, state)
        if len(candidates) > 1 or not (invite_code or seat is not None):
            raise NotAllowedNow("every open seat was taken meanwhile", "NO_OPEN_SEAT")
        raise NotAllowedNow(f"seat {candidates[0]} is taken", "SEAT_TAKEN")

    def _admit_creator(self, cred: Credential, peer: str | None) -> None:
        """The creation policy: the creator, host or operator token passes; otherwise `open`
        admits anyone at the peer's creation rate and `token` no one."""
        creator = self.access.is_creator(cred)
        if cred.token and not creator and self.limiter.limits.create_policy == "token":
            raise Unauthenticated("this token is not the creator token", "BAD_CREATOR_TOKEN")
        self.limiter.admit_create(peer, creator, cred.player_id)

    # ----------------------------------------------------------------- reads

    # ----------------------------------------------------------------- play

    async def play(
        self,
        game_id: str,
        cred: Credential,
        command_id: str,
        action: Payload | None,
        expected_seq: int | None = None,
    ) -> Played:
        check_command_id(command_id)
        if action is None:
            raise BadRequest("action is required", "MISSING_FIELD")
        game = await self.repo.game(game_id)
        # What is decided and stored is what the rules decode of the action, never padding.
        given_action = bytes(self._canonical(game, action).data)
        action_type = self.catalogue.get(game.game_type).action_type

        def decide(match: Match, seq: int, principal: Principal) -> list[tuple[str, bytes]]:
            check_type(action, action_type, "action")
            # No turn check here: the core refuses a seat that is not awaited, with the game's
            # own reason where it has a more precise one than NOT_YOUR_TURN (e.g. ALREADY_COMMITTED).
            return match.decide(acting_seat(principal), given_action, game.seed, seq + 1)

        def given(principal: Principal) -> CommandInput:
            return CommandInput(seat=acting_seat(principal), action=given_action)

        return await self.command(game, cred, command_id, expected_seq, decide, given)

    async def host_command(
        self,
        game_id: str,
        cred: Credential,
        command_id: str,
        command: str,
        expected_seq: int | None = None,
    ) -> Played:
        """A command of the table's host (GameType.host_commands), given with the operator
        token; recorded like a move, with no acting seat."""
        check_command_id(command_id)
        if not command:
            raise BadRequest("command is required (one of the game type's host_commands)", "MISSING_FIELD")
        if command.startswith(_core.TIMEOUT_COMMAND):
            raise BadRequest(
                "timeouts are the server's own command, given when a seat's clock runs out", "NOT_A_HOST_COMMAND"
            )
        if command.startswith(("resign:", "leave:")):
            raise BadRequest(
                "resigning and leaving are the seat's own commands (ResignGame, LeaveGame)", "NOT_A_HOST_COMMAND"
            )
        # The credential first: whether a match exists is not for anyone to probe.
        if not self.access.is_host(cred):
            if not cred.token:
                raise Unauthenticated("host commands need 'authorization: Bearer <host token>'", "MISSING_TOKEN")
            raise PermissionDenied("host commands need the host token", "NOT_OPERATOR")
        game = await self.repo.game(game_id)
        # The host sees what a spectator sees (unless the same token is also the auditor's).
        viewer = AUDITOR if self.access.is_auditor(cred) else SPECTATOR
        return await self.host(game, command_id, command, expected_seq, viewer)

    async def seat_command(self, game_id: str, cred: Credential, command_id: str, verb: str) -> Played:
        """`resign` or `leave` for the caller's own seat (a seat token, or a player credential):
        decided by the core (`<verb>:<seat>`, recorded like a host command), then the seat's
        record follows: left, the seat is vacant again; resigned in a match that goes on, the
        server's strongest bot plays it. Either way the caller's token and player no longer act
        for it, so the answer is a spectator's. The same command id again: the first result."""
        check_command_id(command_id)
        game = await self.repo.game(game_id)
        prior = await self.repo.command_events(game.game_id, command_id)
        if prior is not None:
            first = await self.repo.command(game.game_id, command_id)
            if first is None or first.input is None or not (first.input.host_command or "").startswith(f"{verb}:"):
                raise AlreadyExists(f"command_id {command_id[:64]!r} was used for another command of this match")
            return await self._replayed(game, prior, SPECTATOR)
        seq, match = await self.repo.get(game)
        seat = acting_seat(self.access.principal(game, cred, over=match.is_over(), read_only=False))
        if match.is_over():
            raise NotAllowedNow("the match is over", "GAME_OVER")
        if verb == "leave" and not any(game.vacant(s) for s in range(game.seats) if s != seat):
            raise NotAllowedNow(
                "every seat of the match is filled: it no longer waits for players (resign instead)",
                "MATCH_NOT_WAITING",
            )
        played = await self.host(game, command_id, f"{verb}:{seat}", None, SPECTATOR)
        changed: GameRecord | None = None
        if verb == "leave":
            changed = await self.repo.release_seat(game, seat, b"")
        elif not played.state.over:
            bots = self.catalogue.get(game.game_type).bots
            changed = await self.repo.hand_to_bot(game, seat, bots[-1] if bots else "random")
        if changed is None:
            return played
        return dataclasses.replace(played, state=dataclasses.replace(played.state, seats=seat_infos(changed)))

    async def host(
        self,
        game: GameRecord,
        command_id: str,
        command: str,
        expected_seq: int | None = None,
        viewer: Principal = AUDITOR,
    ) -> Played:
        def decide(match: Match, seq: int, principal: Principal) -> list[tuple[str, bytes]]:
            return match.host_command(command, game.seed, seq + 1)

        return await self.command(
            game, viewer, command_id, expected_seq, decide, lambda principal: CommandInput(host_command=command)
        )

    async def command(
        self,
        game: GameRecord,
        who: Credential | Principal,
        command_id: str,
        expected_seq: int | None,
        decide: Callable[[Match, int, Principal], list[tuple[str, bytes]]],
        given: Callable[[Principal], CommandInput],
    ) -> Played:
        """Decides a command on the cached (verified) state and appends what the core decided
        at the next seq, in one statement that also finds a command id used before. The log is
        read only when the cache has no state, when the state is known to be behind (the client
        expects a later seq), or when something failed: the append at a seq taken since (a move
        made through another process), or a refusal (which the current state, or an earlier use
        of the command id, may explain). A command without `expected_seq` is then decided again
        on the current state; one with `expected_seq` gets ABORTED when the match is elsewhere.

        `who` is the caller's credential, or the principal the server itself acts and answers as
        (host commands, timers); `decide(match, seq, principal)` returns the core's events and
        must not change `match`."""
        gid = game.game_id
        entry = self.repo.cached(gid)
        fresh = entry is None or (expected_seq is not None and expected_seq > entry[0])
        seq, match = await self.repo.load(game) if fresh or entry is None else entry
        for _ in range(3):
            principal = (
                who
                if isinstance(who, Principal)
                else self.access.principal(game, who, over=match.is_over(), read_only=False)
            )
            try:
                if expected_seq is not None and expected_seq != seq:
                    raise Conflict(f"the match is at seq {seq}, not {expected_seq}", "SEQ_MISMATCH")
                decided = decide(match, seq, principal)
            except (AppError, _core.CoreError):
                # A refusal: a retry of a command that was applied, or a state behind the log?
                prior = await self.repo.command_events(gid, command_id)
                if prior is not None:
                    return await self._repeated(game, command_id, given(principal), prior, principal)
                if fresh:
                    raise
                seq, match = await self.repo.load(game)
                fresh = True
                continue
            try:
                return await self._commit(game, match, seq, decided, principal, command_id, given(principal))
            except SeqConflict:
                if expected_seq is not None:
                    raise Conflict(
                        "another move was applied first: reload the match and retry", "SEQ_CONFLICT"
                    ) from None
                seq, match = await self.repo.load(game)
                fresh = True
        raise Conflict("other moves kept being applied first: reload the match and retry", "SEQ_CONFLICT")

    async def _commit(
        self,
        game: GameRecord,
        match: Match,
        seq: int,
        decided: list[tuple[str, bytes]],
        principal: Principal,
        command_id: str,
        given: CommandInput,
    ) -> Played:
        """Appends what the core decided at seq+1.. and swaps the evolved state into the cache
        only once the append committed. SeqConflict when the match is no longer at seq."""
        if not decided:
            raise RuntimeError(f"the core decided no events for a command in {game.game_id}")
        after = match.copy()
        events = self._evolve(game, after, decided, seat=given.seat)
        stored, after = await self.repo.save(game, seq, match, after, events, command_id, given)
        if not stored.written:
            return await self._repeated(game, command_id, given, stored, principal)
        last = stored[-1].seq
        return Played(
            events=[e for e in (self._event_out(game, after, ev, principal) for ev in stored) if e],
            state=self._state(game, last, after, principal, stored[-1].chain_hash),
            replayed=False,
        )

    def _canonical(self, game: GameRecord, action: Payload) -> Payload:
        """The action as the rules decode it, re-encoded by the core: what is decided and
        stored is what the rules read, never padding a client added (unknown fields)."""
        action_type = self.catalogue.get(game.game_type).action_type
        if action.type_name != action_type:
            return action  # refused below as WRONG_PAYLOAD_TYPE
        try:
            return Payload(action_type, _core.canonical_action(game.game_type, bytes(action.data)))
        except _core.MalformedInput:
            return action  # refused by the core's decide (or as another command under a used id)

    async def bot_move(self, game: GameRecord, seq: int, match: Match, seat: int) -> None:
        """The bot's move for `seat` at `seq`, recorded as that seat's command."""
        command_id = f"{BOT_COMMAND_PREFIX}{seat}:{seq}"
        if await self.repo.command_events(game.game_id, command_id) is not None:
            return  # another server played it
        action = await asyncio.to_thread(match.bot_action, seat, game.bot(seat), bot_seed(game.seed, seat), seq + 1)
        decided = match.decide(seat, action, game.seed, seq + 1)
        given = CommandInput(seat=seat, action=bytes(action))
        try:
            await self._commit(game, match, seq, decided, Principal(Role.SEAT, seat), command_id, given)
        except SeqConflict:
            raise Conflict("another move was applied first", "SEQ_CONFLICT") from None

    @staticmethod
    def _evolve(game: GameRecord, match: Match, decided: list[tuple[str, bytes]], seat: int | None) -> list[NewEvent]:
        events = []
        for kind, payload in decided:
            match.apply(payload, kind)
            events.append(
                NewEvent(kind, payload, seat, _core.CORE_VERSION, stored_state_hash(game, match.state_hash()))
            )
        return events

    async def _repeated(
        self, game: GameRecord, command_id: str, given: CommandInput, prior: list[StoredEvent], principal: Principal
    ) -> Played:
        """A command id used before in this match: a retry of the same command gets the first
        result; another command under that id is refused (an id names one command)."""
        first = await self.repo.command(game.game_id, command_id)
        if first is not None and first.input is not None and first.input != given:
            raise AlreadyExists(f"command_id {command_id[:64]!r} was used for another command of this match")
        return await self._replayed(game, prior, principal)

    async def _replayed(self, game: GameRecord, prior: list[StoredEvent], principal: Principal) -> Played:
        match = await self.repo.state_after(game, prior)
        last = prior[-1].seq
        return Played(
            events=[e for e in (self._event_out(game, match, ev, principal) for ev in prior) if e],
            state=self._state(game, last, match, principal, prior[-1].chain_hash),
            replayed=True,
        )


def check_ranked(
    info: GameType,
    seats: int,
    options: dict[str, str],
    assignments: list[SeatAssignment],
    cred: Credential,
    seed: bytes,
) -> None:
    """A ranked match: a signed-in creator, the game's default options, one seat for the
    creator and the others open, invited or bots (only signed-in players join a ranked match),
    and a seed nobody chose."""
    if cred.player_id is None:
        raise Unauthenticated(
            "a ranked match needs 'authorization: Bearer <player credential>' (PlayerService.CreateGuestPlayer)",
            "PLAYER_CREDENTIAL_REQUIRED",
        )
    defaults = {o.name: o.default_value for o in info.options}
    custom = sorted(k for k, v in options.items() if defaults.get(k) != v)
    if custom:
        raise BadRequest(
            f"a ranked match is played with the game's default options; custom: {', '.join(custom)[:200]}",
            "RANKED_OPTIONS",
        )
    creators = sum(1 for a in assignments if a.kind is SeatKind.CREATOR) if assignments else seats
    if creators != 1:
        raise BadRequest(
            "in a ranked match the creator holds exactly one seat; the others are open, invited or bots",
            "RANKED_SEATS",
        )
    if seed:
        raise BadRequest("a ranked match's seed is the server's to choose", "RANKED_SEED")

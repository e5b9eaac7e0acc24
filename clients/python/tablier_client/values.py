"""Move values in a finished match's replay: what each move a seat could make at one seq was
worth, estimated by the server's evaluator from what that seat could see then.

    async with connect("127.0.0.1:50051") as client:
        values = await client.move_values(game_id, at_seq=12, rollouts=200, seed=1)
        for move in values.moves:
            print(move.label, move.value.win_probability, "(played)" if move.played else "")

Only for a match that is over: during play it would be assistance, and the server keeps the
auditor's view of a match in progress to the auditor token. The SDK refuses a live match
itself (`MatchNotOver`) before asking anything of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import grpc
from google.protobuf import text_format
from google.protobuf.message import Message

from . import errors
from .v1 import common_pb2, service_pb2

if TYPE_CHECKING:
    from .sdk import Client

ROLE_HEADER = "x-tablier-role"
_AUDITOR = ((ROLE_HEADER, "auditor"),)


class MatchNotOver(errors.Refused):
    """`move_values` of a match still in progress: values are for replays of finished matches."""

    def __init__(self, game_id: str) -> None:
        super().__init__(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"match {game_id} is not over: move values are shown in the replay of a finished match only "
            "(no assistance during play)",
            "MATCH_NOT_OVER",
        )


@dataclass(frozen=True)
class ValuedMove:
    """One legal move of the seat at that seq, with its value at the end of the match."""

    action: Message
    # The action in one line (protobuf text), or the server's sentence for the move played.
    label: str
    value: common_pb2.MoveValue
    # True for the move the seat actually made next.
    played: bool


@dataclass(frozen=True)
class MoveValues:
    """What `Client.move_values` gives: every legal move of `seat` at `seq`, in the order the
    rules list them, each valued over `rollouts` deals of what the seat could not see."""

    game_id: str
    game_type: str
    seq: int
    seat: int
    moves: tuple[ValuedMove, ...]
    # Index in `moves` of the move of highest value (win share, then margin); None if no move.
    best: int | None
    # Index in `moves` of the move played next; None when the next event was not that seat's
    # move (a timeout, a host command) or the match ended at `seq`.
    played: int | None
    rollouts: int
    seed: int

    def __str__(self) -> str:
        lines = [
            f"seat {self.seat} at seq {self.seq}: {len(self.moves)} moves, {self.rollouts} rollouts, seed {self.seed}"
        ]
        for i, m in enumerate(self.moves):
            mark = ("*" if i == self.best else " ") + (">" if m.played else " ")
            v = m.value
            lines.append(
                f"{mark} win {v.win_probability:5.3f} ± {v.win_stderr:5.3f}  "
                f"margin {v.margin:+7.2f} ± {v.margin_stderr:5.2f}  {m.label}"
            )
        return "\n".join(lines)


def valued_moves(evaluation: Message) -> list[tuple[Message, common_pb2.MoveValue]]:
    """The (action, value) pairs of any game's Evaluation: the repeated field whose entries
    carry an `action` and a `value` (`moves`, or Qwirkle's `actions`), in order."""
    for field in evaluation.DESCRIPTOR.fields:
        entry = field.message_type
        if not field.is_repeated or entry is None:
            continue
        names = entry.fields_by_name
        if "action" in names and "value" in names and names["value"].message_type is common_pb2.MoveValue.DESCRIPTOR:
            return [(e.action, e.value) for e in getattr(evaluation, field.name)]
    return []


def best_index(values: Sequence[common_pb2.MoveValue]) -> int | None:
    """The move of highest value (win share, then margin) among those valued on at least three
    quarters of the deals of the most valued one (screening, RolloutSettings.screen_to, values
    the moves it drops early on a few deals only), as the core names `best`."""
    if not values:
        return None
    most = max(v.samples for v in values)
    valued = [i for i in range(len(values)) if values[i].samples * 4 >= most * 3]
    return max(valued, key=lambda i: (values[i].win_probability, values[i].margin))


async def move_values(
    client: Client,
    game_id: str,
    at_seq: int,
    *,
    seat: int | None = None,
    rollouts: int = 200,
    seed: int = 0,
    threads: int = 1,
    screen_to: int = 0,
    token: str | None = None,
) -> MoveValues:
    from .sdk import unpack

    if rollouts <= 0:
        raise ValueError("rollouts must be positive")
    # A fork (never rated) is an analysis board: its seat's own positions may be valued while
    # it runs, read with that seat's token.
    reader = client._metadata(token) if token else _AUDITOR
    try:
        now = await client.call(client.stub.GetView, service_pb2.GetViewRequest(game_id=game_id), reader)
    except errors.PermissionDenied as exc:
        if exc.reason == "MATCH_NOT_OVER":
            raise MatchNotOver(game_id) from None
        raise
    if not now.state.over and not (token and now.state.HasField("fork")):
        raise MatchNotOver(game_id)
    request = service_pb2.GetViewRequest(game_id=game_id, at_seq=at_seq, with_position=True)
    if seat is not None:
        request.position_seat = seat
    at = await client.call(client.stub.GetView, request, reader)
    game_type = at.state.game_type
    settings = common_pb2.RolloutSettings(rollouts=rollouts, seed=seed, threads=threads, screen_to=screen_to)
    evaluated = await client.call(
        client.stub.EvaluatePosition,
        service_pb2.EvaluatePositionRequest(game_type=game_type, position=at.position, rollouts=settings),
        client._metadata(client.token),
    )
    pairs = valued_moves(unpack(evaluated.evaluation))
    # The move made next: the auditor sees each command's input on its first event.
    following = await client.call(
        client.stub.ListEvents,
        service_pb2.ListEventsRequest(game_id=game_id, after_seq=at_seq, limit=1),
        reader,
    )
    played_action: Message | None = None
    description = ""
    for event in following.events:
        command = event.command
        if command.HasField("action") and command.HasField("seat") and command.seat == at.position_seat:
            played_action = unpack(command.action)
            description = event.description
    played = None
    if played_action is not None:
        played = next((i for i, (a, _) in enumerate(pairs) if a == played_action), None)
    moves = tuple(
        ValuedMove(
            action=a,
            label=description if i == played and description else text_format.MessageToString(a, as_one_line=True),
            value=v,
            played=i == played,
        )
        for i, (a, v) in enumerate(pairs)
    )
    return MoveValues(
        game_id=game_id,
        game_type=game_type,
        seq=at.state.seq,
        seat=at.position_seat,
        moves=moves,
        best=best_index([m.value for m in moves]),
        played=played,
        rollouts=rollouts,
        seed=seed,
    )

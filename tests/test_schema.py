"""The schema (proto/) keeps its rules, and each game's proto lists what the core really says.

- `buf lint` (the STANDARD rules of proto/buf.yaml) passes, and `buf breaking` (FILE) finds
  nothing against proto/baseline.binpb, the image of the settled schema. buf comes from the web
  client's npm dependencies (`make web`; CI runs it before `make test`) or from PATH; without it
  these two tests skip, saying so.
- Each game's RuleReason enum names exactly the rule reasons its Rust file gives (every
  `rule("REASON", ...)` there) plus the core's shared ones; each OutcomeReason names a reason
  its Rust file spells, and the kinds its `event_type` returns are exactly the field names of
  its Event `kind`. Bot matches through the core check the same from the other side: every
  event's stored kind is the field set in its payload, every outcome reason is listed.
"""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from tablier import _core
from tablier.v1 import common_pb2

ROOT = Path(__file__).resolve().parents[1]
PROTO = ROOT / "proto"
BASELINE = PROTO / "baseline.binpb"
# Every registered game and its generated module: its messages are `tablier.<game>.v1.*`, in the
# flat module `tablier.v1.<game>_pb2` (a new game needs no line here).
GAMES = {
    t.id: importlib.import_module(f"tablier.v1.{t.view_type.split('.')[1]}_pb2")
    for t in (common_pb2.GameType.FromString(b) for b in _core.game_types())
}
# Reasons the core gives for every game (rust_core/src/error.rs).
SHARED_RULE_REASONS = {"NOT_YOUR_TURN", "GAME_OVER"}
RULE_CALL = re.compile(r'(?:\brule\(|Rule\s*\{\s*reason:)\s*"([A-Z][A-Z0-9_]+)"')


def buf() -> str:
    local = ROOT / "clients" / "web" / "node_modules" / ".bin" / "buf"
    found = str(local) if local.exists() else shutil.which("buf")
    if found is None:
        pytest.skip("buf is not installed: run `make web` (npm installs @bufbuild/buf) or put buf on PATH")
    return found


def run_buf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([buf(), *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_buf_lint_passes() -> None:
    result = run_buf("lint", "proto")
    assert result.returncode == 0, result.stdout + result.stderr


def test_buf_breaking_finds_nothing_against_the_baseline() -> None:
    result = run_buf("breaking", "proto", "--against", str(BASELINE.relative_to(ROOT)))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_baseline_is_an_image_of_the_schema() -> None:
    image = descriptor_pb2.FileDescriptorSet.FromString(BASELINE.read_bytes())
    names = {f.name for f in image.file}
    assert {f"tablier/{g}/v1/{g}.proto" for g in GAMES} | {"tablier/v1/common.proto", "tablier/v1/service.proto"} <= names


def rust_source(game: str) -> str:
    """The game's Rust module (`rust_core/src/games/<game>/`) without its tests (`tests/`)."""
    module = ROOT / "rust_core" / "src" / "games" / game
    files = [f for f in sorted(module.rglob("*.rs")) if "tests" not in f.relative_to(module).parts]
    assert files, f"no Rust source for {game}"
    return "\n".join(f.read_text() for f in files)


def enum_names(pb2, enum: str, prefix: str) -> set[str]:
    values = pb2.DESCRIPTOR.enum_types_by_name[enum].values
    assert values[0].number == 0 and values[0].name == f"{prefix}UNSPECIFIED"
    return {v.name.removeprefix(prefix) for v in values[1:]}


def event_kinds(pb2) -> set[str]:
    return {f.name for f in pb2.Event.DESCRIPTOR.oneofs_by_name["kind"].fields}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_rule_reasons_are_listed_in_the_proto(game: str) -> None:
    in_rust = set(RULE_CALL.findall(rust_source(game))) | SHARED_RULE_REASONS
    listed = enum_names(GAMES[game], "RuleReason", "RULE_REASON_")
    assert listed == in_rust, f"only in the proto: {listed - in_rust}; only in Rust: {in_rust - listed}"


@pytest.mark.parametrize("game", sorted(GAMES))
def test_outcome_reasons_and_event_kinds_are_the_cores(game: str) -> None:
    source = rust_source(game)
    for reason in enum_names(GAMES[game], "OutcomeReason", "OUTCOME_REASON_"):
        assert f'"{reason}"' in source, f"{game}: OutcomeReason {reason} is not a reason of the core"
    body = re.search(r"fn event_type\(.*?\n    }\n", source, re.S)
    assert body, f"{game}: no event_type in the Rust file"
    returned = set(re.findall(r'"([a-z_]+)"', body.group(0))) - {"unknown", "empty"}
    assert returned == event_kinds(GAMES[game])


@pytest.mark.parametrize("game", sorted(GAMES))
def test_bot_matches_speak_the_protos_words(game: str) -> None:
    pb2 = GAMES[game]
    outcomes = enum_names(pb2, "OutcomeReason", "OUTCOME_REASON_")
    bot = "random"
    for seats in (2, 3):
        info = next(t for t in (common_pb2.GameType.FromString(b) for b in _core.game_types()) if t.id == game)
        if seats > info.max_players:
            continue
        seed = bytes([seats]) * 32
        match = _core.Match(game, seats)
        events = match.start(seed, 1)
        seq = len(events)
        for step in range(20_000):
            for kind, payload in events:
                assert kind == pb2.Event.FromString(payload).WhichOneof("kind"), kind
                match.apply(payload, kind)
            if match.is_over():
                break
            seat = match.to_act()[0]
            action = match.bot_action(seat, bot, seed, seq + 1 + step)
            events = match.decide(seat, action, seed, seq + 1)
            seq += len(events)
        outcome = common_pb2.Outcome.FromString(match.outcome())
        assert outcome.reason in outcomes, outcome.reason


def test_views_name_their_viewer_one_way() -> None:
    """Every game's View says who it was computed for in the one field `viewer`."""
    for game, pb2 in GAMES.items():
        field = pb2.View.DESCRIPTOR.fields_by_name["viewer"]
        assert field.message_type.full_name == "tablier.v1.Viewer", game
        match = _core.Match(game, 2)
        match.apply_all([p for _, p in match.start(bytes(32), 1)])
        for kwargs, which in (({"seat": 1}, "seat"), ({}, "spectator"), ({"auditor": True}, "auditor")):
            view = pb2.View.FromString(match.view(**kwargs))
            assert view.viewer.WhichOneof("kind") == which, (game, kwargs)
        assert pb2.View.FromString(match.view(seat=1)).viewer.seat == 1

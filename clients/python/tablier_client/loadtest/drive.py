"""Load shapes: a closed loop (N workers, each starting its next unit when the last one is
answered) or an open loop (units started at a target rate whatever the answers; a unit's
latency counts from its intended start, so time spent queued behind a slow server is
measured, not hidden: no coordinated omission). Both follow stages (seconds at a concurrency
or a rate); the duration alone ends the run, unless a unit count is given."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from .. import errors
from .scenarios import UNITS, Context, Slot


@dataclass(frozen=True)
class Stage:
    seconds: float
    level: float  # workers (closed loop) or units per second (open loop)
    # A ramp: the level goes linearly from `level` to `to` over the stage.
    to: float | None = None


def parse_stages(text: str) -> list[Stage]:
    """ "5:4,10:4-16" -> 5 s at 4, then 10 s ramping from 4 to 16."""
    stages = []
    try:
        for part in text.split(","):
            seconds, _, level = part.partition(":")
            first, _, last = level.partition("-")
            stages.append(Stage(float(seconds.rstrip("s")), float(first), float(last) if last else None))
    except ValueError:
        stages = []
    if not stages or any(s.seconds <= 0 or s.level <= 0 or (s.to is not None and s.to <= 0) for s in stages):
        raise ValueError(f"bad stages {text!r}: expected SECONDS:LEVEL[-LEVEL][,...], all > 0")
    return stages


def level_at(stages: list[Stage], t: float) -> float | None:
    for s in stages:
        if t < s.seconds:
            return s.level if s.to is None else s.level + (s.to - s.level) * t / s.seconds
        t -= s.seconds
    return None


@dataclass
class Run:
    open_loop: bool
    stages: list[Stage]
    units: int | None  # stop after this many units (None: the stages' duration alone)
    mix: dict[str, float]
    max_in_flight: int
    seed: int
    intended: int = 0
    started: int = 0
    completed: int = 0
    failed: int = 0
    unsent: int = 0  # open loop: units still queued when the run ended
    cancelled: int = 0  # units in flight when the run ended
    seconds: float = 0.0
    slots: list[dict[str, Slot]] = field(default_factory=list)
    # Units refused for their credential (PERMISSION_DENIED, UNAUTHENTICATED) since the last
    # one that completed; at DENIED_LIMIT the run stops, `stopped` saying why.
    denied_in_a_row: int = 0
    stopped: str = ""

    @property
    def finished(self) -> int:
        """Units that ended during the run: completed or failed."""
        return self.completed + self.failed

    @property
    def duration(self) -> float:
        return sum(s.seconds for s in self.stages)


def _picker(mix: dict[str, float], rng: random.Random) -> Callable[[], str]:
    names, weights = list(mix), list(mix.values())
    if len(names) == 1:
        return lambda: names[0]
    return lambda: rng.choices(names, weights)[0]


# Credential refusals in a row after which a run stops: the token is wrong, more load would
# only repeat the refusal.
DENIED_LIMIT = 5


def denied_hint(exc: errors.TablierError) -> str:
    """What to do about a refusal of the load test's credentials, in a sentence."""
    if exc.reason == "SEED_NEEDS_OPERATOR":
        return (
            "a seeded match needs the auditor token and the server did not take this one as it "
            "(--auditor-token, default $TABLIER_AUDITOR_TOKEN; --auditor-token '' for unseeded matches)"
        )
    if exc.reason == "CREATOR_TOKEN_REQUIRED":
        return (
            "this server creates matches only for the creator, host or operator token (--create-policy token): "
            "pass one with --token (default $TABLIER_HOST_TOKEN or $TABLIER_CREATOR_TOKEN)"
        )
    if exc.reason == "BOTS_ONLY_NEEDS_HOST":
        return "a match of bots only needs the host token (--token, default $TABLIER_HOST_TOKEN)"
    return "the server does not accept this token: check --token and --auditor-token (or leave them out)"


async def _unit(ctx: Context, run: Run, slots: dict[str, Slot], name: str, started: float) -> None:
    run.started += 1
    try:
        await UNITS[name](ctx, slots[name], started)
        run.completed += 1
        run.denied_in_a_row = 0
    except (errors.PermissionDenied, errors.Unauthenticated) as exc:
        run.failed += 1
        run.denied_in_a_row += 1
        if run.denied_in_a_row >= DENIED_LIMIT and not run.stopped:
            run.stopped = f"stopped after {run.denied_in_a_row} refused units in a row ({exc}): {denied_hint(exc)}"
    except errors.TablierError:
        run.failed += 1


def _slots(run: Run, index: int) -> dict[str, Slot]:
    slots = {name: Slot(index, random.Random(f"{run.seed}:{index}:{name}")) for name in run.mix}
    run.slots.append(slots)
    return slots


async def drive(ctx: Context, run: Run, on_tick: Callable[[], None] | None = None) -> None:
    loop = asyncio.get_running_loop()
    start = ctx.rec.start = loop.time()
    pick = _picker(run.mix, random.Random(run.seed))
    stop = asyncio.Event()

    def more() -> bool:
        if stop.is_set() or run.stopped:
            return False
        if run.units is not None:
            return run.intended < run.units
        return level_at(run.stages, loop.time() - start) is not None

    async def ticker() -> None:
        while not stop.is_set():
            if on_tick is not None:
                on_tick()
            if run.stopped or (run.units is None and loop.time() - start >= run.duration):
                stop.set()
            try:
                await asyncio.wait_for(stop.wait(), 0.25)
            except TimeoutError:
                pass

    tasks: set[asyncio.Task[None]] = set()
    tick = asyncio.create_task(ticker())
    if run.open_loop:
        # The schedule: unit i is meant to start at times[i]. Each of `max_in_flight` workers
        # takes the next intended time, waits for it if it is ahead, else starts at once; the
        # latency counts from the intended time (what a user arriving then would see).
        schedule = {"next": start}

        def next_time() -> float | None:
            if not more():
                return None
            t = schedule["next"]
            level = level_at(run.stages, t - start)
            if level is None:
                if run.units is None:
                    return None
                level = run.stages[-1].level
            schedule["next"] = t + 1.0 / level
            run.intended += 1
            return t

        async def open_worker(i: int) -> None:
            slots = _slots(run, i)
            while (intended := next_time()) is not None:
                delay = intended - loop.time()
                if delay > 0:
                    try:
                        await asyncio.wait_for(stop.wait(), delay)
                        return
                    except TimeoutError:
                        pass
                await _unit(ctx, run, slots, pick(), intended)

        workers = [asyncio.create_task(open_worker(i)) for i in range(run.max_in_flight)]
        tasks.update(workers)
        if run.units is None:
            await stop.wait()
            # Units whose intended time has passed but that no worker could start yet.
            t, end = schedule["next"], loop.time()
            while t <= end and (level := level_at(run.stages, t - start)) is not None:
                run.unsent += 1
                t += 1.0 / level
        else:
            await asyncio.gather(*workers, return_exceptions=True)
    else:
        top = int(max(max(s.level, s.to or 0) for s in run.stages))

        async def worker(i: int) -> None:
            slots = _slots(run, i)
            while more():
                level = level_at(run.stages, loop.time() - start)
                if level is not None and i >= level:
                    try:
                        await asyncio.wait_for(stop.wait(), 0.05)  # not active in this stage
                    except TimeoutError:
                        pass
                    continue
                run.intended += 1
                await _unit(ctx, run, slots, pick(), loop.time())

        workers = [asyncio.create_task(worker(i)) for i in range(top)]
        tasks.update(workers)
        if run.units is None:
            await stop.wait()
        else:
            await asyncio.gather(*workers, return_exceptions=True)
    run.seconds = loop.time() - start
    stop.set()
    pending = [t for t in tasks if not t.done()]
    run.cancelled = max(0, run.started - run.completed - run.failed)
    for task in pending:
        task.cancel()
    for slots in run.slots:
        for slot in slots.values():
            for spectator in slot.spectators:
                spectator.cancel()
            pending += slot.spectators
    await asyncio.gather(*pending, return_exceptions=True)
    await tick
    if on_tick is not None:
        on_tick()

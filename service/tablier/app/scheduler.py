"""The scheduler: what happens in a match without a call asking for it. A core timer gives its
host command when its wait runs out, a match clock times out the seat whose time is up, and the
server plays its bot seats when the match awaits them.

It reacts to states, never to reads: the repository tells it each state that was saved or
resumed (`arm`), and each state a watch feed of this process applied from the log, which another
server appended (`seen`: a bot seat still awaited after a grace period is resumed here, in case
that server stopped). Timers, clocks and bot players live in the process; a server that starts
resumes every match in the store's index of waits (`resume`: those with a clock, a core timer
or a bot seat, until they are over), and counts their deadlines from the recorded times.
Several servers may run the same wait: its command id (`timer:`, `timeout:`, `bot:`) makes it
happen once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime

from tablier import _core
from tablier._core import Match
from tablier.store.base import CommandInput, GameRecord
from tablier.v1.common_pb2 import GameType

from .auth import AUDITOR, Principal
from .clocks import TIMEOUT_COMMAND_PREFIX, awaits_server, ms, next_timeout, timeout_command
from .commands import Commands
from .errors import AlreadyExists, AppError, Conflict, NotAllowedNow
from .model import SERVER_COMMAND_PREFIX
from .repository import Repository

log = logging.getLogger(__name__)

# Seconds after which a server watching a match plays a bot seat still awaited (the server that
# appended the move before it should have, but may have stopped); and after which a timer, a
# timeout or a bot move that failed (the store, say) is tried again.
BOT_BACKSTOP_SECONDS = 5.0


class Scheduler:
    def __init__(self, repository: Repository, commands: Commands) -> None:
        self.repo = repository
        self.commands = commands
        # Per match, the core timer running now and the task that gives its host command.
        self._timers: dict[str, tuple[tuple[str, int, int], asyncio.Task[None]]] = {}
        # Per match with a clock, the wait that times out first ((seq, deadline ms, seat)) and
        # the task that gives its timeout; and the task arming the running clocks at start.
        self._clocks: dict[str, tuple[tuple[int, int, int], asyncio.Task[None]]] = {}
        self._clock_scan: asyncio.Task[None] | None = None
        # Per match, the task playing its bot seats, and the matches it must look at again.
        self._bots: dict[str, asyncio.Task[None]] = {}
        self._bots_again: set[str] = set()
        # Per match, the task that looks at it again later (`_look_later`).
        self._later: dict[str, asyncio.Task[None]] = {}
        self._later_again: set[str] = set()
        repository.on_state(self.arm)
        repository.on_seen(self.seen)

    @property
    def timers(self) -> int:
        """Core timers running now."""
        return len(self._timers)

    async def close(self) -> None:
        """Stops the running timers and bot seats (their waits resume when a server loads the
        match again)."""
        tasks = [task for _, task in self._timers.values()] + list(self._bots.values())
        tasks += self._later.values()
        tasks += [task for _, task in self._clocks.values()]
        if self._clock_scan is not None:
            tasks.append(self._clock_scan)
            self._clock_scan = None
        self._clocks.clear()
        self._timers.clear()
        self._bots.clear()
        self._later.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _look(self, game: GameRecord) -> None:
        """Resumes the match (`Repository.resume`): its state, loaded, goes to `arm`."""
        await self.repo.resume(game)

    # ----------------------------------------------------------------- core timers

    def arm(self, game: GameRecord, seq: int, match: Match) -> None:
        """Keeps the match's timer in step with its latest state: a new wait (a new key) starts
        the clock, a wait that ended stops it. The clock lives in this process: a server that
        starts finds a wait still open when it loads the match, and gives its command at the
        deadline counted from the recorded time the wait started. Several servers may run the
        same timer; its command id makes it happen once.
        Match clocks (`_arm_clock`) and bot seats (`_wake_bots`) are armed here too."""
        self._arm_clock(game, match, seq)
        timer = match.timer()
        armed = self._timers.get(game.game_id)
        if armed is not None:
            if armed[0] == timer:
                return
            armed[1].cancel()
            del self._timers[game.game_id]
        if timer is not None:
            task = asyncio.get_running_loop().create_task(self._expire(game, timer, match.timer_started_ms()))
            self._timers[game.game_id] = (timer, task)
        self._wake_bots(game, match)

    async def _expire(self, game: GameRecord, timer: tuple[str, int, int], started_ms: int | None) -> None:
        """Gives the timer's command `seconds` after the recorded time its wait started (after
        a restart too), or, when that time is not known (a state this server just decided),
        `seconds` from now."""
        command, seconds, key = timer
        left = seconds if started_ms is None else (started_ms + seconds * 1000 - ms(datetime.now(UTC))) / 1000
        await asyncio.sleep(max(left, 0))
        if self._timers.get(game.game_id, (None,))[0] == timer:
            del self._timers[game.game_id]
        try:
            await self.commands.host(game, f"{SERVER_COMMAND_PREFIX}{command}:{key}", command)
        except (AppError, _core.RuleViolation) as exc:
            # The wait ended another way meanwhile (a last answer, the host, another server).
            log.info("timer %s of %s not given: %s", command, game.game_id, exc)
        except Exception:
            log.exception("timer %s of %s failed (looked at again later)", command, game.game_id)
            self._look_later(game)

    # ----------------------------------------------------------------- match clocks

    def resume(self) -> None:
        """Resumes every match that may await the server (`Repository.resume_all`: a starting
        server): clocks, core timers and bot seats, their deadlines from the recorded times, so
        a wait open across a restart keeps its original deadline."""
        if self._clock_scan is None:
            self._clock_scan = asyncio.get_running_loop().create_task(self.repo.resume_all())

    def _arm_clock(self, game: GameRecord, match: Match, seq: int) -> None:
        """Gives the timeout of the wait that ends first, at its deadline (from the recorded
        times, not from now). A newer state re-arms it; several servers may give the same
        timeout: its command id (`timeout:<seat>:<seq>`) and expected seq make it happen once."""
        gid = game.game_id
        if match.clock() is None:
            if match.is_over() and gid not in self._clocks and awaits_server(self._info(game), match, game.bots):
                # Out of the index of waits (a timer's or a bot's match, over).
                task = asyncio.get_running_loop().create_task(self._clock_stopped(gid))
                self._clocks[gid] = ((seq, 0, -1), task)
            return
        due = next_timeout(match)
        armed = self._clocks.get(gid)
        key = None if due is None else (seq, *due)
        if armed is not None:
            if armed[0] == key or armed[0][0] > seq:
                return
            if armed[1] is not asyncio.current_task():
                armed[1].cancel()
            del self._clocks[gid]
        if due is None:
            if match.is_over():
                task = asyncio.get_running_loop().create_task(self._clock_stopped(gid))
                self._clocks[gid] = ((seq, 0, -1), task)
            return
        key = (seq, *due)
        self._clocks[gid] = (key, asyncio.get_running_loop().create_task(self._timeout(game, *key)))

    async def _clock_stopped(self, gid: str) -> None:
        try:
            await self.repo.settled(gid)
        except Exception:
            log.exception("could not mark the clock of %s stopped (the next scan does)", gid)

    async def _timeout(self, game: GameRecord, seq: int, deadline: int, seat: int) -> None:
        gid = game.game_id
        me = asyncio.current_task()
        try:
            # Until the recorded deadline, not a guess; one millisecond past it, as the deadline
            # counts from the wait's start in whole milliseconds (cut, not rounded).
            while (left := deadline + 1 - ms(datetime.now(UTC))) > 0:
                await asyncio.sleep(left / 1000)

            ready = await self._timeout_off_loop(game, seq, seat)

            def decide(match: Match, at: int, principal: Principal) -> list[tuple[str, bytes]]:
                due = next_timeout(match)
                if at != seq or due is None or due[1] != seat or due[0] > ms(datetime.now(UTC)):
                    raise NotAllowedNow(f"seat {seat} has time left at seq {at}", "TIMEOUT_NOT_DUE")
                if ready is not None:
                    return ready  # decided on the state at this same seq, off the loop
                return match.host_command(timeout_command(seat), game.seed, at + 1)

            command = timeout_command(seat)
            await self.commands.command(
                game,
                AUDITOR,
                f"{TIMEOUT_COMMAND_PREFIX}{seat}:{seq}",
                seq,
                decide,
                lambda principal: CommandInput(seat=seat, host_command=command),
            )
        except Conflict as exc:
            # The wait ended another way meanwhile (the seat moved, another server timed it out).
            log.info("timeout of seat %d in %s at seq %d not given: %s", seat, gid, seq, exc)
            if self._clocks.get(gid, (None, None))[1] is me:
                del self._clocks[gid]
            with contextlib.suppress(AppError):
                await self._look(game)  # arms the next wait
            return
        except (AppError, _core.CoreError) as exc:
            log.warning("timeout of seat %d in %s at seq %d refused: %s", seat, gid, seq, exc)
        except Exception:
            log.exception("timeout of seat %d in %s failed (looked at again later)", seat, gid)
            self._look_later(game)
        if self._clocks.get(gid, (None, None))[1] is me:
            del self._clocks[gid]

    async def _timeout_off_loop(self, game: GameRecord, seq: int, seat: int) -> list[tuple[str, bytes]] | None:
        """The timeout's events decided in a worker thread on the cached state at `seq`, when the
        cache holds that state and the seat's time is up there: the `evaluator` policy spends up
        to 50 ms of CPU deciding, which the event loop should not wait through. The core gives
        the same events for the same state, seed, command and seq, so the command uses them when
        it is decided on the state at `seq`; None (decided on the loop as before) otherwise."""
        entry = self.repo.cached(game.game_id)
        if entry is None or entry[0] != seq:
            return None
        match = entry[1]  # states are copied before events are applied: this one stays as it is
        due = next_timeout(match)
        if due is None or due[1] != seat or due[0] > ms(datetime.now(UTC)):
            return None
        try:
            return await asyncio.to_thread(match.host_command, timeout_command(seat), game.seed, seq + 1)
        except _core.CoreError:
            return None  # decided (and refused) again on the loop, with its usual handling

    def _info(self, game: GameRecord) -> GameType:
        return self.repo.catalogue.get(game.game_type)

    # ----------------------------------------------------------------- bot seats

    def _wake_bots(self, game: GameRecord, match: Match) -> None:
        """Starts this process's player of the match's bot seats when the match awaits one.
        Like a timer, it lives in the process: after a restart, the next load of the match
        starts it again. Several servers may play the same bot move; its command id
        (`bot:<seat>:<seq>`) makes it happen once."""
        if not game.bots or match.is_over() or not any(game.bot(s) for s in match.to_act()):
            return
        if game.game_id in self._bots:
            self._bots_again.add(game.game_id)  # the running player looks again before it stops
            return
        self._bots[game.game_id] = asyncio.get_running_loop().create_task(self._play_bots(game))

    async def _play_bots(self, game: GameRecord) -> None:
        gid = game.game_id
        me = asyncio.current_task()
        try:
            while True:
                self._bots_again.discard(gid)
                seq, match = await self.repo.load(game)
                awaited = [] if match.is_over() else [s for s in match.to_act() if game.bot(s)]
                if not awaited:
                    if gid in self._bots_again:
                        continue
                    return
                try:
                    await self.commands.bot_move(game, seq, match, awaited[0])
                except (Conflict, AlreadyExists) as exc:
                    # Another server or a seat moved first: look at the match again.
                    log.info("bot move in %s at seq %d not given: %s", gid, seq, exc)
        except Exception:
            # A core refusal or a store failure: tried again later, or at the match's next state.
            log.exception("bot seats of %s stopped", gid)
            self._look_later(game)
        finally:
            if self._bots.get(gid) is me:
                del self._bots[gid]
            self._bots_again.discard(gid)

    def seen(self, game: GameRecord, seq: int, match: Match) -> None:
        """A watcher here saw the match come to await a bot seat. The server that appended the
        last move plays the bot at once; in case it stopped before, this server looks at the
        match again after BOT_BACKSTOP_SECONDS, which plays the bot if it is still awaited."""
        if not game.bots or match.is_over() or not any(game.bot(s) for s in match.to_act()):
            return
        self._look_later(game)

    def _look_later(self, game: GameRecord) -> None:
        """Looks at the match again after BOT_BACKSTOP_SECONDS (once, however often asked
        meanwhile, and again if asked while it looked)."""
        if game.game_id in self._later:
            self._later_again.add(game.game_id)
            return
        self._later[game.game_id] = asyncio.get_running_loop().create_task(self._later_look(game))

    async def _later_look(self, game: GameRecord) -> None:
        gid = game.game_id
        me = asyncio.current_task()
        try:
            while True:
                self._later_again.discard(gid)
                await asyncio.sleep(BOT_BACKSTOP_SECONDS)  # a grace period, not a wait for a condition
                await self._look(game)  # starts this server's bot player if a bot seat is awaited
                if gid not in self._later_again:
                    return
        except Exception:
            log.exception("looking again at %s failed", gid)
        finally:
            if self._later.get(gid) is me:
                del self._later[gid]

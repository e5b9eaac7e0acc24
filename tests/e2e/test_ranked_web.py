"""Ranked play in the web app, in a real browser (clients/web/test/ranked.mjs: Debian's Chromium
driven by playwright-core) against a real `tablier serve --web-listen` serving the built app
with a short bot wait: "Play ranked" in the lobby (the queue's status, Cancel), the match a bot
of near rating fills, played to its end, whose end screen shows each seat's rating change
("+23 → 1,540") once the server rated it, the same numbers as the rating stream's; and the
leaderboard page; screenshots at phone and desktop sizes in
test-results/ranked/. Skips as tests/e2e/test_browser.py does without the built app."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from .conftest import ROOT, start_server
from .test_browser import CHROMIUM, WEB, _missing
from .test_ranked import GAME, Stubs, ranked_match_with_bot, rated
from tablier.v1 import ranked_pb2 as rk
from tablier.v1 import service_pb2 as pb

SHOTS = ROOT / "test-results" / "ranked"


def test_play_ranked_and_the_leaderboard_in_a_browser(e2e_database_url: str, tmp_path) -> None:
    missing = _missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    srv = start_server(
        e2e_database_url,
        tmp_path,
        "ranked-web",
        "--web-listen",
        "127.0.0.1:0",
        "--web-dir",
        str(WEB / "dist"),
        "--queue-bot-after",
        "2",
    )
    try:
        s = Stubs(srv)
        try:  # someone on the leaderboard
            who, game_id = ranked_match_with_bot(s, "Olga")
            rated(s.ranked, f"player:{who.player.player_id}", game_id)
        finally:
            s.channel.close()
        done = subprocess.run(
            ["node", "test/ranked.mjs", srv.web_url, str(SHOTS)],
            cwd=WEB,
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(os.environ, CHROMIUM=CHROMIUM),
        )
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        # The end screen's words are the rating stream's numbers.
        shown = json.loads(next(x for x in done.stdout.splitlines() if x.startswith("rated "))[len("rated ") :])
        s = Stubs(srv)
        try:
            seats = s.games.GetView(pb.GetViewRequest(game_id=shown["gameId"])).state.seats
            subject = f"player:{seats[0].player.player_id}" if seats[0].HasField("player") else f"bot:{seats[0].bot}"
            history = s.ranked.GetRatingHistory(rk.GetRatingHistoryRequest(game_type=GAME, subject=subject, limit=100))
        finally:
            s.channel.close()
        event = next(e.event for e in history.entries if e.event.game_id == shown["gameId"])
        words = {c.seat: f"{c.rating_after - c.rating_before:+d} → {c.rating_after:,}" for c in event.changes}
        assert {seat: text for seat, text in shown["changes"]} == words, (shown, words)
        for name in ("ranked-queue", "ranked-match", "ranked-end", "leaderboard"):
            for size in ("phone", "desktop"):
                assert (SHOTS / f"{name}-{size}.png").is_file()
    finally:
        assert srv.stop() == 0, srv.log.read_text()

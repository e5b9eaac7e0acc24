// Ranked play in the web app: "Play ranked" in the lobby (a guest player, the matchmaking
// queue's status in words, cancel) and the leaderboard page (#/leaderboard/<game>).
// tablier.v1.RankedService and PlayerService over Connect, as the rest of the app calls
// GameService.

import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { h } from "./dom";
import { refusal, type GameType, type Player } from "./api";
import { credential, signedIn, signInAsGuest, types } from "./session";
import "./ranked.css";
import { RankedService, type RatingChange } from "./gen/tablier/v1/ranked_pb.js";

const transport = createConnectTransport({ baseUrl: location.origin, useBinaryFormat: true });
const ranked: Client<typeof RankedService> = createClient(RankedService, transport);

// The queue acts as the player this browser signed in as (session.ts: the one credential it
// keeps); the first "Play ranked" signs in as a guest with the name given.
const asPlayer = (c: string) => ({ headers: { authorization: `Bearer ${c}` } });

const thousands = (n: number) => n.toLocaleString("en-US");

/** The lobby's "Play ranked" panel: a game, its seats, a name the first time; then the queue's
 *  status until the match is found (the match page opens), or Cancel. */
export function rankedPanel(list: GameType[], known: Player | undefined): HTMLElement {
  const game = h("select", { id: "ranked-game", "aria-label": "ranked game" },
    list.map((t) => h("option", { value: t.id }, t.name))) as HTMLSelectElement;
  const seats = h("select", { id: "ranked-seats", "aria-label": "ranked seats" }) as HTMLSelectElement;
  const drawSeats = () => {
    const t = list.find((x) => x.id === game.value);
    seats.replaceChildren(...(t ? Array.from({ length: t.maxPlayers - t.minPlayers + 1 }, (_, i) => t.minPlayers + i) : [2])
      .map((n) => h("option", { value: n }, `${n} players`)));
  };
  game.addEventListener("change", drawSeats);
  drawSeats();
  const name = h("input", { id: "ranked-name", placeholder: "your name", maxlength: 32, "aria-label": "your name",
    value: known?.displayName ?? "", hidden: !!known }) as HTMLInputElement;
  const who = h("span", { class: "caption", id: "ranked-who" }, known ? `as ${known.displayName}` : "");
  const play = h("button", { type: "button", id: "play-ranked" }, "Play ranked") as HTMLButtonElement;
  const cancel = h("button", { type: "button", id: "cancel-ranked", hidden: true }, "Cancel") as HTMLButtonElement;
  const status = h("p", { class: "queue-status", id: "queue-status", role: "status", "aria-live": "polite" });
  const board = h("a", { href: `#/leaderboard/${list[0]?.id ?? ""}`, id: "leaderboard-link" }, "Leaderboard");
  game.addEventListener("change", () => { board.setAttribute("href", `#/leaderboard/${game.value}`); });
  let stop: AbortController | undefined;
  let ticket = "";
  play.addEventListener("click", async () => {
    status.className = "queue-status";
    try {
      if (!credential()) {
        const made = await signInAsGuest(name.value);
        name.hidden = true;
        who.textContent = `as ${made.displayName}`;
      }
      const c = credential()!;
      stop = new AbortController();
      play.disabled = true;
      cancel.hidden = false;
      status.textContent = "Joining the queue…";
      for await (const msg of ranked.findMatch({ gameType: game.value, seats: Number(seats.value) },
        { ...asPlayer(c), signal: stop.signal })) {
        if (msg.status.case === "waiting") {
          ticket = msg.status.value.ticket;
          status.replaceChildren(msg.status.value.message, h("span", { class: "caption" }, ` · your rating ${thousands(msg.status.value.rating)}`));
        } else if (msg.status.case === "matched") {
          const found = msg.status.value;
          status.textContent = found.message;
          // The credential acts for the seat the queue gave the player: nothing else is kept.
          location.hash = `#/game/${found.gameId}`;
          return;
        }
      }
    } catch (err) {
      if (!stop?.signal.aborted) {
        status.textContent = `Not queued: ${refusal(err).message}`;
        status.className = "queue-status refusal";
      }
    } finally {
      play.disabled = false;
      cancel.hidden = true;
    }
  });
  cancel.addEventListener("click", async () => {
    const c = credential();
    stop?.abort();
    if (c && ticket) { try { await ranked.cancelFind({ ticket }, asPlayer(c)); } catch { /* closing the stream left the queue */ } }
    status.textContent = "Left the queue.";
  });
  return h("section", { class: "ranked", id: "ranked" },
    h("div", { class: "filter" }, h("h1", {}, "Play ranked"), board),
    h("p", { class: "summary" }, "Matched with players of near rating; a bot of near rating takes an empty seat after a while. Rated when it ends."),
    h("div", { class: "ranked-row" }, game, seats, name, who, play, cancel),
    status);
}

/** How a ranked match changed its subjects' ratings (its RatingEvent), read from the history
 *  of `subject` (one subject of the match: the event holds every subject's change); `rank`:
 *  that subject's place on the leaderboard now. Undefined until the server rated the match. */
export async function ratingOf(gameType: string, gameId: string, subject: string): Promise<{ changes: RatingChange[]; rank: number } | undefined> {
  const got = await ranked.getRatingHistory({ gameType, subject, limit: 100 });
  const entry = got.entries.find((e) => e.event?.gameId === gameId);
  return entry?.event ? { changes: entry.event.changes, rank: got.current?.rank ?? 0 } : undefined;
}

/** A change as the terminal player says it: "+23 → 1,540". */
export const changeWords = (c: RatingChange) => {
  const delta = c.ratingAfter - c.ratingBefore;
  return `${delta >= 0 ? "+" : "-"}${Math.abs(delta)} → ${thousands(c.ratingAfter)}`;
};

/** #/leaderboard/<game>: the best ratings of a game, a page at a time. */
export async function leaderboardPage(gameId: string): Promise<HTMLElement> {
  const [list, mine] = await Promise.all([types(), signedIn()]);
  const chosen = list.find((t) => t.id === gameId) ?? list[0];
  const chooser = h("select", { id: "board-game", "aria-label": "leaderboard of" },
    list.map((t) => h("option", { value: t.id, selected: t.id === chosen?.id }, t.name))) as HTMLSelectElement;
  chooser.addEventListener("change", () => { location.hash = `#/leaderboard/${chooser.value}`; });
  const body = h("tbody", {});
  const more = h("button", { type: "button", id: "more-ratings", hidden: true }, "more") as HTMLButtonElement;
  const total = h("p", { class: "caption", id: "board-total" });
  let page = 0;
  const load = async () => {
    const answer = await ranked.getLeaderboard({ gameType: chosen?.id ?? "", page, pageSize: 20 });
    for (const r of answer.ratings) {
      const you = mine && r.subject === `player:${mine.playerId}`;
      body.append(h("tr", { class: you ? "mine" : "", "data-subject": r.subject },
        h("td", { class: "rank" }, String(r.rank)),
        h("td", { class: "name" }, r.displayName + (you ? " (you)" : "")),
        h("td", { class: "rating" }, thousands(r.rating)),
        h("td", { class: "count" }, String(r.matches))));
    }
    total.textContent = answer.total ? `${thousands(answer.total)} rated` : "Nobody is rated in this game yet: play a ranked match.";
    page += 1;
    more.hidden = page * 20 >= answer.total;
  };
  more.addEventListener("click", () => { load().catch(() => undefined); });
  await load();
  return h("section", { class: "leaderboard" },
    h("div", { class: "filter" }, h("h1", {}, "Leaderboard"), h("label", {}, "of ", chooser)),
    total,
    h("table", { class: "board" },
      h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "player"), h("th", {}, "rating"), h("th", {}, "rated matches"))),
      body),
    h("div", { class: "more-row" }, more),
    h("a", { href: "#/" }, "back to the lobby"));
}

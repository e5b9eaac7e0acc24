// The web app: lobby, match page (live through WatchGame), invite links, replay viewer.
// Routes live in the URL hash, so the server only serves static files:
//   #/                          lobby
//   #/game/<id>                 a match (as the seats this browser holds)
//   #/join/<invite code>        an invite link: JoinGame with the code, then the match
//   #/open/<id>                 a link to a match's open seats: JoinGame, then the match
//   #/replay/<id>               a finished match, seq by seq

import "./style.css";
import { h } from "./dom";
import { anyJson, asAuditorRole, asSeat, gameClient, packAction, refusal, SeatKind, SeatStatus, type GameState, type GameSummary, type GameType } from "./api";
import { evaluatedMoves, eventSeat, gameUI, type Memory } from "./games";
import type { Any } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";

const client = gameClient();
const app = document.getElementById("app")!;
const status = document.getElementById("status")!;

let gameTypes: GameType[] = [];
async function types(): Promise<GameType[]> {
  if (!gameTypes.length) gameTypes = (await client.listGameTypes({})).gameTypes;
  return gameTypes;
}

// ------------------------------------------------------------------ seats this browser holds

// The seat tokens this browser holds, per match (the tokens are shown once by the server),
// with the match's game type and when this browser took its seat, for the lobby.
type Held = { tokens: Record<number, string>; mine: number[]; invites: Record<number, string>; gameType?: string; at?: number };

function held(gameId: string): Held {
  const raw = localStorage.getItem(`tablier:match:${gameId}`);
  return raw ? JSON.parse(raw) : { tokens: {}, mine: [], invites: {} };
}
function keep(gameId: string, record: Held) {
  localStorage.setItem(`tablier:match:${gameId}`, JSON.stringify(record));
}

function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** JoinGame (safe to repeat: one join key for every try), then the match page. */
async function join(request: { gameId?: string; inviteCode?: string }) {
  const joinKey = randomKey();
  let joined;
  for (let attempt = 0; ; attempt++) {
    try {
      joined = await client.joinGame({ ...request, joinKey });
      break;
    } catch (err) {
      if (attempt >= 2 || refusal(err).code !== String(Code.Unavailable)) throw err;
    }
  }
  const gameId = joined.state!.gameId;
  const record = held(gameId);
  record.gameType = joined.state!.gameType;
  record.at ??= Date.now();
  record.tokens[joined.seat] = joined.seatToken;
  record.mine = [joined.seat, ...record.mine.filter((s) => s !== joined.seat)];
  keep(gameId, record);
  location.replace(`#/game/${gameId}`);
}

function say(text: string, kind: "info" | "error" = "info") {
  status.textContent = text;
  status.className = kind;
}

// ------------------------------------------------------------------ lobby

/** The matches this browser holds seats in (their tokens are in local storage), newest first. */
function heldMatches(): { gameId: string; record: Held }[] {
  const out: { gameId: string; record: Held }[] = [];
  for (let i = 0; i < localStorage.length; i++) {
    const k = localStorage.key(i) ?? "";
    if (k.startsWith("tablier:match:")) out.push({ gameId: k.slice("tablier:match:".length), record: held(k.slice("tablier:match:".length)) });
  }
  return out.sort((a, b) => (b.record.at ?? 0) - (a.record.at ?? 0));
}

const when = (g: GameSummary) => g.createdAt ? new Date(Number(g.createdAt.seconds) * 1000).toLocaleString() : "";
// Matches per ListGames page ("more" asks for the next one).
const LOBBY_PAGE = 20;
// Own matches shown before "all N".
const OWN_SHORT = 8;

/** The server's matches (ListGames, a page at a time, optionally of one game): open seats to
 *  take, running matches to watch, finished ones to replay; and the ones this browser plays
 *  in (local storage), to resume. */
function matchList(names: Map<string, string>): HTMLElement {
  const filter = h("select", { id: "game-filter", "aria-label": "show matches of" },
    h("option", { value: "" }, "every game"), [...names].map(([id, name]) => h("option", { value: id }, name))) as HTMLSelectElement;
  const lists = h("div", { class: "match-lists" });
  const more = h("button", { type: "button", id: "more-matches", hidden: true }, "more matches") as HTMLButtonElement;
  const note = h("p", { class: "refusal", role: "alert" });
  const box = h("section", { class: "lobby-matches" },
    h("div", { class: "filter" }, h("h1", {}, "Matches"), h("label", {}, "of ", filter)), lists, h("div", { class: "more-row" }, more), note);
  const mine = new Map(heldMatches().map((x) => [x.gameId, x.record]));
  const seen = new Map<string, GameSummary>();
  let token = "";
  let showAllOwn = false;
  let generation = 0;
  const line = (id: string, type: string, what: string, at: string, action: HTMLElement) => h("li", { "data-game-id": id, "data-game-type": type },
    h("span", { class: "what" }, `${names.get(type) ?? (type || "a match")}${what}`), h("span", { class: "when" }, at), action);
  const list = (title: string, id: string, items: HTMLElement[], empty: string, extra?: HTMLElement | null) =>
    h("div", { class: "list", id }, h("h2", {}, title), items.length ? h("ul", {}, items) : h("p", { class: "caption" }, empty), extra);
  const drawLists = () => {
    const games = [...seen.values()];
    const type = filter.value;
    // (A seat kept before the game type was recorded: the type from a page, if listed there.)
    const typeOf = (id: string, r: Held) => r.gameType ?? seen.get(id)?.gameType ?? "";
    const own = [...mine].filter(([id, r]) => !type || typeOf(id, r) === type);
    const ownItems = (showAllOwn ? own : own.slice(0, OWN_SHORT)).map(([id, r]) => {
      const g = seen.get(id);
      return line(id, typeOf(id, r), r.mine.length ? ` · seat ${r.mine.join(", ")}` : "", r.at ? new Date(r.at).toLocaleString() : "",
        h("a", { href: `#/game/${id}`, class: "resume" }, g?.over ? "See the end" : "Resume"));
    });
    const others = games.filter((g) => !mine.has(g.gameId));
    const seats = (g: GameSummary) => ` · ${g.seats.length} seats`;
    lists.replaceChildren(
      list("Your matches", "my-matches", ownItems, "None yet: start one below.",
        !showAllOwn && own.length > OWN_SHORT ? h("button", { type: "button", class: "all-own", onclick: () => { showAllOwn = true; drawLists(); } }, `all ${own.length}`) : null),
      list("Open seats", "open-seats", others.filter((g) => !g.over && g.openSeats > 0).map((g) => line(g.gameId, g.gameType, seats(g), when(g),
        h("a", { href: `#/open/${g.gameId}`, class: "join" }, `Join (${g.openSeats} open seat${g.openSeats > 1 ? "s" : ""})`))), "No match is waiting for players."),
      list("Running matches", "running", others.filter((g) => !g.over && g.openSeats === 0).map((g) => line(g.gameId, g.gameType, seats(g), when(g),
        h("a", { href: `#/game/${g.gameId}`, class: "watch" }, "Watch"))), "No match is running."),
      list("Finished matches", "finished", others.filter((g) => g.over).map((g) => line(g.gameId, g.gameType, seats(g), when(g),
        h("a", { href: `#/replay/${g.gameId}`, class: "replay" }, "Replay"))), "None finished yet."));
  };
  const page = async () => {
    const at = generation;
    more.disabled = true;
    box.setAttribute("aria-busy", "true");
    try {
      const got = await client.listGames({ pageSize: LOBBY_PAGE, pageToken: token, gameType: filter.value });
      if (at !== generation) return;
      for (const g of got.games) seen.set(g.gameId, g);
      token = got.nextPageToken;
      note.textContent = "";
    } catch (err) {
      if (at === generation) note.textContent = `The list of matches is not available: ${refusal(err).message}`;
    } finally {
      if (at === generation) {
        more.hidden = !token;
        more.disabled = false;
        box.removeAttribute("aria-busy");
        drawLists();
      }
    }
  };
  more.onclick = page;
  filter.onchange = () => { generation++; seen.clear(); token = ""; page(); };
  drawLists();
  page();
  return box;
}

async function lobby(): Promise<HTMLElement> {
  const list = await types();
  const names = new Map(list.map((t) => [t.id, t.name]));
  return h("section", { class: "lobby" },
    matchList(names),
    h("h1", {}, "New match"),
    list.map((t) => {
      const seatsSel = h("select", { name: "seats", "aria-label": `${t.name} seats` },
        Array.from({ length: t.maxPlayers - t.minPlayers + 1 }, (_, i) => t.minPlayers + i).map((n) => h("option", { value: n }, `${n} players`))) as HTMLSelectElement;
      const seatRoles = h("div", { class: "seat-roles" });
      const drawRoles = () => {
        seatRoles.replaceChildren(...Array.from({ length: Number(seatsSel.value) }, (_, s) =>
          h("label", {}, `seat ${s} `, h("select", { "data-seat": s, "aria-label": `seat ${s}` },
            h("option", { value: "me", selected: s === 0 }, "you"),
            // "bot": the strongest (the last listed); or a chosen one.
            h("option", { value: "bot", selected: s !== 0 }, "server bot (strongest)"),
            t.bots.map((b) => h("option", { value: `bot:${b}` }, `server bot: ${b.replace(/_/g, " ")}`)),
            h("option", { value: "invite" }, "invite a friend"),
            h("option", { value: "open" }, "open to anyone")))));
      };
      seatsSel.addEventListener("change", drawRoles);
      drawRoles();
      const options = t.options.map((o) => h("label", { class: "option" },
        h("span", { class: "option-words" }, o.description || o.name.replace(/_/g, " ")), " ",
        o.allowedValues.length
          ? h("select", { name: o.name, "aria-label": o.description || o.name }, h("option", { value: "" }, `default: ${(o.defaultValue || "none").replace(/_/g, " ")}`),
            o.allowedValues.map((v) => h("option", { value: v }, v.replace(/_/g, " "))))
          : h("input", { name: o.name, placeholder: `default: ${o.defaultValue || "none"}`, size: 10, "aria-label": o.description || o.name })));
      const formError = h("p", { class: "refusal form-error", role: "alert" });
      const form = h("form", { class: "game-type", "data-game": t.id },
        h("h2", {}, t.name),
        t.summary ? h("p", { class: "summary" }, t.summary) : null,
        h("div", {}, `${t.minPlayers === t.maxPlayers ? t.minPlayers : `${t.minPlayers} to ${t.maxPlayers}`} players`),
        seatsSel, seatRoles,
        options.length ? h("details", {}, h("summary", {}, "options"), options) : null,
        formError,
        h("button", { type: "submit" }, `Create ${t.name} match`)) as HTMLFormElement;
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        formError.textContent = "";
        const opts: Record<string, string> = {};
        for (const o of t.options) {
          const input = form.querySelector(`[name="${o.name}"]`) as HTMLInputElement | null;
          if (input && input.value) opts[o.name] = input.value;
        }
        try {
          const roles = [...seatRoles.querySelectorAll("select")].map((sel) => (sel as HTMLSelectElement).value);
          const kinds: Record<string, SeatKind> = {
            me: SeatKind.CREATOR, bot: SeatKind.BOT, invite: SeatKind.INVITE, open: SeatKind.OPEN,
          };
          const created = await client.createGame({
            gameType: t.id, options: opts,
            seatAssignments: roles.map((r) => ({ kind: kinds[r.split(":")[0]], bot: r.startsWith("bot:") ? r.slice(4) : "" })),
          });
          const record: Held = { tokens: {}, mine: [], invites: {}, gameType: t.id, at: Date.now() };
          roles.forEach((role, s) => {
            if (role === "me") { record.tokens[s] = created.seatTokens[s]; record.mine.push(s); }
            if (role === "invite") record.invites[s] = created.inviteCodes[s];
          });
          keep(created.gameId, record);
          location.hash = `#/game/${created.gameId}`;
        } catch (err) {
          // Next to the form it is about.
          formError.textContent = `Not created: ${refusal(err).message}`;
          formError.dataset.reason = refusal(err).reason;
        }
      });
      return form;
    }));
}

// ------------------------------------------------------------------ match page

let stopCurrent: (() => void) | undefined;
// Moves listed before "all N moves" (pick on the table to narrow them instead).
const SHORT_LIST = 12;

async function matchPage(gameId: string): Promise<HTMLElement> {
  const record = held(gameId);
  const viewer = record.mine[0];
  const token = viewer !== undefined ? record.tokens[viewer] : undefined;
  const first = (await client.getView({ gameId }, asSeat(token))).state!;
  const ui = gameUI(first.gameType);
  const info = (await types()).find((t) => t.id === first.gameType);
  const board = h("div", { class: "board" });
  const moves = h("div", { class: "moves", "aria-label": "legal moves" });
  const refused = h("p", { class: "refusal", id: "refusal", role: "alert" });
  // data-follow: opened on its latest entry (`route`), as it is scrolled to each new one.
  const log = h("ol", { class: "log", "aria-label": "move log", "aria-live": "polite", "data-follow": "" });
  const header = h("div", { class: "match-head" });
  const banner = h("div", { class: "banner", id: "turn-banner", role: "status" });
  const clocks = h("div", { class: "clocks" });
  const result = h("div", { class: "result" });
  const shareLink = (label: string, link: string, attrs: Record<string, unknown>) =>
    h("div", { class: "invite" }, label,
      h("input", { readonly: true, value: link, size: 30, ...attrs, onclick: (e: Event) => (e.target as HTMLInputElement).select() }),
      h("button", { type: "button", onclick: () => navigator.clipboard?.writeText(link) }, "copy"));
  const here = `${location.origin}${location.pathname}`;
  // Invite links while their seats are still free (redrawn with every state).
  const invitesBox = h("div", { class: "invites" });
  const drawInvites = (st: GameState) => {
    const links = Object.entries(record.invites)
      .filter(([s]) => st.seats[Number(s)]?.status === SeatStatus.INVITED)
      .map(([s, code]) => shareLink(`Invite for seat ${s}: `, `${here}#/join/${encodeURIComponent(code)}`, { "data-invite-seat": s }));
    if (st.seats.some((x) => x.status === SeatStatus.OPEN)) {
      links.push(shareLink("Open seats, for anyone: ", `${here}#/open/${gameId}`, { "data-open-link": "" }));
    }
    invitesBox.replaceChildren(...links);
  };
  drawInvites(first);
  const page = h("section", { class: "match", "data-game": first.gameType },
    header, banner, clocks, invitesBox, result, board, refused, moves,
    h("h2", { class: "log-title" }, "Moves"), log);

  let state: GameState = first;
  // The seat's legal moves at `seq`; `shared`: other seats were awaited too (their choices
  // move the seq without changing these moves).
  let legal: { seq: bigint; moves: Any[]; json: any[]; labels: string[]; shared: boolean } | undefined;
  // Every event in the game's own words, as the server told them to this viewer; what the
  // seat privately learnt from its own events (a peek) is kept in `memory` for the drawing.
  const memory: Memory = new Map();
  let lastTold = 0;
  let lastKeys: string[] = [];
  // The end screen's breakdown: points per seat under each row (a round), from the events.
  const breakdown = new Map<string, number[]>();
  // The seat's own Evaluation at its legal moves' seq (no rollouts): a built play's score.
  let evaluation: { seq: bigint; json: any } | undefined;
  const tell = (events: { seq: bigint; description: string; type: string; seat?: number; payload?: Any }[]) => {
    let grew = false;
    for (const e of events) {
      if (Number(e.seq) <= lastTold) continue;
      lastTold = Number(e.seq);
      const payload = e.payload ? anyJsonOrUndefined(e.payload) : undefined;
      if (viewer !== undefined) ui.learn?.(memory, { type: e.type, seat: e.seat, payload }, viewer);
      const scored = payload && ui.score?.(payload, first.seatCount);
      if (scored) {
        const row = breakdown.get(scored.row) ?? Array.from({ length: first.seatCount }, () => 0);
        breakdown.set(scored.row, row.map((x, s) => x + (scored.points[s] ?? 0)));
      }
      if (!e.description) continue;
      // The board marks the latest event that touched it (a draw from the bag does not).
      const touched = payload && ui.eventKeys ? ui.eventKeys(payload) : [];
      if (touched.length) lastKeys = touched;
      log.querySelector("li.last")?.classList.remove("last");
      // Whose entry: the seat that moved, or the seat an automatic event is for, or the table.
      const seat = eventSeat(e.seat, payload, ui);
      const mine = seat !== undefined && seat === viewer;
      log.append(h("li", { class: `last${mine ? " mine" : ""}`, "data-seq": String(e.seq), "data-seat": seat },
        h("span", { class: "who" }, seat === undefined ? "table" : mine ? "you" : `seat ${seat}`), " ", e.description));
      grew = true;
    }
    if (grew) log.scrollTop = log.scrollHeight;
  };
  let picked: string[] = [];
  let showAll = false;
  // A move of this seat is on its way (from its click until its PlayMove answered).
  let busy = false;
  // The seat's moves sent so far: a move list asked for before the latest of them was sent
  // may be from before that move was applied (a card it played, a trick it ended).
  let sent = 0;
  let closed = false;
  const abort = new AbortController();
  stopCurrent = () => { closed = true; abort.abort(); clearInterval(ticker); };

  const draw = () => {
    const view = anyJson(state.view);
    drawInvites(state);
    drawBanner();
    header.replaceChildren(
      h("h1", {}, info?.name ?? state.gameType),
      h("div", { class: "seq" }, `move ${state.seq}`),
      viewer === undefined ? h("div", {}, "watching as a spectator") : h("div", {}, `you are seat ${viewer}`),
      h("div", { class: "seats" }, state.seats.map((x, s) => h("span", { class: "seat", "data-seat": s },
        `seat ${s}: ${s === viewer ? "you" : x.status === SeatStatus.BOT ? `bot (${x.bot})` :
          x.status === SeatStatus.OPEN ? "open" : x.status === SeatStatus.INVITED ? "invited" : "player"}`))));
    // Highlight what the seat's legal moves touch; the picked elements narrow the list.
    const shown = legal;
    const all = (shown?.json ?? []).map((m, i) => ({ i, m, keys: viewer === undefined ? [] : ui.keys(m, viewer) }));
    const candidates = all.filter((c) => covers(c.keys, picked) && (ui.fits?.(c.m, picked) ?? true));
    board.replaceChildren(ui.draw(view, viewer, all.flatMap((c) => c.keys), memory));
    if (picked.length) ui.preview?.(board, picked);
    // The last move on the table (what the game's drawing can point at).
    board.querySelectorAll<HTMLElement>("[data-key]").forEach((e) => e.classList.toggle("last-move", lastKeys.includes(e.dataset.key!)));
    // Elements with the same key (two identical tiles) are told apart by order: the first ones
    // are the picked ones; the others stay targets while some candidate needs one more.
    const need = new Map<string, number>();
    for (const c of candidates) for (const k of new Set(c.keys)) need.set(k, Math.max(need.get(k) ?? 0, count(c.keys, k) - count(picked, k)));
    const seen = new Map<string, number>();
    board.querySelectorAll<HTMLElement>("[data-key]").forEach((e) => {
      const key = e.dataset.key!;
      const nth = seen.get(key) ?? 0;
      seen.set(key, nth + 1);
      const isPicked = nth < count(picked, key);
      const isLegal = !isPicked && (need.get(key) ?? 0) > 0;
      e.classList.toggle("legal", isLegal);
      e.classList.toggle("picked", isPicked);
      e.onclick = () => pick(key, isPicked);
      if (isLegal || isPicked) {
        // Reachable by keyboard: Tab to a target, Enter (or Space) to pick it.
        e.tabIndex = 0;
        e.setAttribute("role", "button");
        e.onkeydown = (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); pick(key, isPicked); } };
      }
    });
    // A move built on the table (ui.build): previewed, then confirmed or cancelled.
    const built = ui.build && picked.length ? candidates.filter((c) => c.keys.length === picked.length) : [];
    // What the play scores at once, from the seat's own Evaluation of this position.
    const points = built.length === 1 && evaluation && evaluation.seq === shown?.seq ? ui.playScore?.(evaluation.json, built[0].m) : undefined;
    const builder = ui.build && picked.length ? h("div", { class: "builder", id: "builder" },
      built.length === 1 ? h("button", { type: "button", class: "confirm", onclick: () => play(shown!.moves[built[0].i]) }, `Confirm: ${shown!.labels[built[0].i] ?? "play"}`)
        : h("span", { class: "caption" }, candidates.length ? "Keep picking: tiles, then where they go" : "No legal move with these"),
      points !== undefined ? h("span", { class: "preview-score", id: "preview-score", "data-points": points }, `scores ${points} point${points === 1 ? "" : "s"}`) : null,
      h("button", { type: "button", class: "cancel", onclick: () => { picked = []; draw(); } }, "Cancel")) : null;
    moves.replaceChildren(...[
      busy ? h("p", { class: "caption sending" }, "Sending your move…") : null,
      builder,
      legal && legal.moves.length ? h("div", { class: "caption" }, picked.length ? "moves with your choice" : "your legal moves") : null,
      (showAll ? candidates : candidates.slice(0, SHORT_LIST)).map((c) => h("button", { type: "button", class: "move", "data-move": c.i, "data-keys": c.keys.join(" "), onclick: () => play(shown!.moves[c.i]) }, shown!.labels[c.i] ?? "move")),
      !showAll && candidates.length > SHORT_LIST
        ? h("button", { type: "button", class: "more", onclick: () => { showAll = true; draw(); } }, `all ${candidates.length} moves`) : null,
      picked.length && !ui.build ? h("button", { type: "button", class: "clear", onclick: () => { picked = []; draw(); } }, "clear choice") : null,
    ].flat().filter((x): x is HTMLElement => !!x));
    if (state.over) {
      const o = state.outcome;
      const winners = o?.winners ?? [];
      const verdict = o?.aborted ? "The match was stopped." : viewer === undefined
        ? (winners.length ? `${winners.map((s) => `Seat ${s}`).join(" and ")} won.` : "Nobody won.")
        : winners.includes(viewer) ? (winners.length > 1 ? "You share the win!" : "You won!") : "You lost.";
      result.replaceChildren(
        h("h2", { class: "verdict" }, verdict),
        h("table", { class: "scores" }, (o?.scores ?? []).map((sc, s) => h("tr", { class: winners.includes(s) ? "winner" : "", "data-seat": s, "data-score": String(sc) },
          h("td", {}, s === viewer ? `seat ${s} (you)` : `seat ${s}`), h("td", {}, `${sc} point${sc === 1n || sc === -1n ? "" : "s"}`),
          h("td", {}, winners.includes(s) ? "winner" : "")))),
        ...(breakdown.size ? [breakdownTable(breakdown, state.seatCount, viewer)!] : []),
        h("div", {}, `${o?.lowerIsBetter ? "Fewest points wins. " : ""}${o?.reason ? `Ended: ${o.reason.toLowerCase().replace(/_/g, " ")}.` : ""}`),
        h("div", { class: "end-actions" },
          viewer !== undefined ? h("button", { type: "button", class: "rematch", onclick: rematch }, "Rematch") : null,
          h("a", { href: `#/replay/${gameId}`, class: "replay-link" }, "Replay this match"),
          h("a", { href: "#/" }, "Lobby")));
    }
  };

  // Whose turn, in a banner; a seat nobody has taken yet is waited for by name.
  const drawBanner = () => {
    let text: string, cls: string;
    if (state.over) { text = "Match over"; cls = "over"; }
    else if (busy) { text = "Sending your move…"; cls = "sending"; }
    else if (viewer !== undefined && state.toAct.includes(viewer)) {
      text = state.toAct.length > 1 ? "Your turn (everyone chooses at once)" : "Your turn"; cls = "mine";
    } else {
      const free = state.toAct.filter((s) => [SeatStatus.OPEN, SeatStatus.INVITED].includes(state.seats[s]?.status));
      text = free.length ? `Waiting for seat ${free.join(" and seat ")} to join`
        : `Waiting for ${state.toAct.map((s) => state.seats[s]?.status === SeatStatus.BOT ? `seat ${s} (bot)` : `seat ${s}`).join(" and ")}`;
      cls = "theirs";
    }
    banner.className = `banner ${cls}`;
    banner.textContent = text;
  };

  // Clocks: each awaited seat's time left to its deadline (GameState.clocks), every second.
  const tick = () => {
    if (!state.clocks.length || state.over) { clocks.replaceChildren(); return; }
    clocks.replaceChildren(...state.clocks.map((c, s) => {
      const left = c.deadline ? Math.max(0, Number(c.deadline.seconds) * 1000 + c.deadline.nanos / 1e6 - Date.now()) : undefined;
      const bank = c.bank ? Number(c.bank.seconds) : undefined;
      const who = s === viewer ? "you" : `seat ${s}`;
      return h("span", { class: `clock${left !== undefined ? " running" : ""}${left !== undefined && left < 10_000 ? " low" : ""}`, "data-seat": s },
        `${who}: `, left !== undefined ? clockText(left) : bank !== undefined ? `${clockText(bank * 1000)} left` : "waiting");
    }));
  };
  // A join appends no event: while a seat is still free, the seats are read again now and then.
  let seatsPolled = 0;
  const ticker = setInterval(async () => {
    tick();
    const free = !state.over && state.seats.some((x) => x.status === SeatStatus.OPEN || x.status === SeatStatus.INVITED);
    if (!free || ++seatsPolled % 3 !== 0) return;
    try {
      const now = (await client.getView({ gameId }, asSeat(token))).state!;
      if (now.seq >= state.seq && now.seats.some((x, s) => x.status !== state.seats[s]?.status)) { state = now; draw(); }
    } catch { /* the next tick tries again */ }
  }, 1000);

  // A new match like this one: the same game and options, this browser in its seat, the
  // server's bots where bots played, the other players invited again.
  const rematch = async () => {
    try {
      const seats = state.seats.map((x, s) => s === viewer ? { kind: SeatKind.CREATOR, bot: "" }
        : x.status === SeatStatus.BOT ? { kind: SeatKind.BOT, bot: x.bot } : { kind: SeatKind.INVITE, bot: "" });
      const created = await client.createGame({ gameType: state.gameType, options: state.options, seatAssignments: seats });
      const next: Held = { tokens: {}, mine: [], invites: {}, gameType: state.gameType, at: Date.now() };
      seats.forEach((a, s) => {
        if (a.kind === SeatKind.CREATOR) { next.tokens[s] = created.seatTokens[s]; next.mine.push(s); }
        if (a.kind === SeatKind.INVITE) next.invites[s] = created.inviteCodes[s];
      });
      keep(created.gameId, next);
      location.hash = `#/game/${created.gameId}`;
    } catch (err) {
      refused.textContent = `Rematch refused: ${refusal(err).message}`;
    }
  };

  const pick = async (key: string, wasPicked = false) => {
    if (viewer === undefined || state.over || busy) return;
    if (wasPicked) { const at = picked.lastIndexOf(key); picked = picked.filter((_, i) => i !== at); }
    else picked = [...picked, key];
    const shown = legal;
    const matching = (shown?.json ?? []).map((m, i) => ({ i, m, keys: ui.keys(m, viewer) }))
      .filter((c) => covers(c.keys, picked) && (ui.fits?.(c.m, picked) ?? true));
    const exact = matching.filter((c) => c.keys.length === picked.length);
    if (exact.length === 1 && !ui.build) return play(shown!.moves[exact[0].i]);
    if (!matching.length && ui.compose) {
      // No legal move has that: let the server say why (the rules are its, not ours).
      const tried = ui.compose(picked, anyJson(state.view), viewer);
      if (tried) return play(packAction(info!.actionType, tried));
    }
    draw();
  };

  // The seat's own position, evaluated without rollouts: the immediate points of every legal
  // move, for the preview of a move being built. Without it the builder simply shows no score.
  const evaluate = async (seq: bigint) => {
    try {
      const got = await client.getView({ gameId, withPosition: true }, asSeat(token));
      if (got.state?.seq !== seq) return;
      const ev = await client.evaluatePosition({ gameType: state.gameType, position: got.position });
      evaluation = { seq, json: anyJson(ev.evaluation) };
      if (picked.length && !busy) draw();
    } catch { /* no preview score */ }
  };

  // Draws the table of `state` with the seat's legal moves, asked for now. A list is drawn
  // only if it is from after every move this seat sent: one asked for before (a refresh from
  // the watch while the move was on its way) can answer after the move was applied, and in a
  // simultaneous phase nothing else would stop a click on the card just played (refused as
  // not in hand). Nor does an older list replace a newer one. No list is asked for while a
  // move is on its way: the refresh after it asks, at least at the seq it answered.
  const refresh = async () => {
    let next: typeof legal = undefined;
    if (viewer !== undefined && !state.over && state.toAct.includes(viewer) && !busy) {
      const asked = sent;
      const got = await client.listLegalMoves({ gameId, minSeq: state.seq }, asSeat(token));
      // Stale: the table of `state` is drawn with the list already there (none while a move is on its way).
      if (asked !== sent || busy || (legal && got.seq < legal.seq)) { draw(); return; }
      next = { seq: got.seq, moves: got.moves, json: got.moves.map(anyJson), labels: got.labels, shared: state.toAct.length > 1 };
      if (ui.playScore && info?.positionType && evaluation?.seq !== got.seq) evaluate(got.seq);
    }
    legal = next;
    showAll = false;
    picked = [];
    draw();
  };

  const play = async (action: Any) => {
    if (busy) return;
    busy = true;
    sent++;
    refused.textContent = "";
    // Nothing more to pick until the table after this move is drawn with a list from after it.
    const chosenFrom = legal;
    legal = undefined;
    picked = [];
    draw();
    try {
      // In a simultaneous phase (other seats awaited too) their choices move the seq at any
      // time without changing this seat's decision, and the match cannot pass that decision
      // without this seat: the move goes without an expected seq (pinning one made a race
      // with every other seat's choice, refused as ABORTED, a 409 in the console). With a
      // clock a timeout may decide for the seat, so there the seq is pinned and re-checked.
      const simultaneous = !!chosenFrom?.shared && !state.clocks.length;
      let expectedSeq = simultaneous ? undefined : chosenFrom?.seq;
      if (!simultaneous && (chosenFrom?.shared || state.seq !== chosenFrom?.seq)) {
        // The move is checked against the latest seq first, and sent at that seq if still legal.
        const now = await client.listLegalMoves({ gameId }, asSeat(token));
        if (!now.moves.some((m) => m.typeUrl === action.typeUrl && sameBytes(m.value, action.value))) {
          refused.textContent = "The table changed before your move: choose again.";
          refused.dataset.reason = "SEQ_MISMATCH";
          return;
        }
        expectedSeq = now.seq;
      }
      for (let attempt = 0; ; attempt++) {
        try {
          const done = await client.playMove({ gameId, commandId: crypto.randomUUID(), action, expectedSeq }, asSeat(token));
          if (done.state && done.state.seq >= state.seq) state = done.state;
          tell(done.events);
          break;
        } catch (err) {
          // Another seat moved first (simultaneous phases): if the chosen move is still
          // legal now, play it at the new seq; otherwise the refusal stands.
          if (attempt > 2 || refusal(err).code !== String(Code.Aborted)) throw err;
          const now = await client.listLegalMoves({ gameId }, asSeat(token));
          if (!now.moves.some((m) => m.typeUrl === action.typeUrl && sameBytes(m.value, action.value))) throw err;
          expectedSeq = now.seq;
        }
      }
    } catch (err) {
      const r = refusal(err);
      refused.textContent = r.code === String(Code.Aborted)
        ? `The table changed before your move arrived (${r.message}): choose again.`
        : `Refused: ${r.message}`;
      refused.dataset.reason = r.reason;
    } finally {
      busy = false;
      picked = [];
      await refresh();
    }
  };

  try {
    const all = await client.listEvents({ gameId, afterSeq: 0n }, asSeat(token));
    tell(all.events);
  } catch { /* the board still works without the latest events */ }
  // Live: every event anyone causes reaches this page through WatchGame (in batches: the page
  // only needs the state after the last).
  (async () => {
    try {
      for await (const item of client.watchGame({ gameId, afterSeq: first.seq, batches: true }, { ...asSeat(token), signal: abort.signal })) {
        tell(item.events.length ? item.events : item.event ? [item.event] : []);
        if (item.state && item.state.seq > state.seq) {
          state = item.state;
          await refresh();
        }
      }
    } catch (err) {
      if (!closed) say(`live updates stopped: ${refusal(err).message}`, "error");
    }
  })();
  await refresh();
  tick();
  return page;
}

const count = (keys: string[], k: string) => keys.reduce((n, x) => n + (x === k ? 1 : 0), 0);
/** `keys` holds every picked key, as many times as picked. */
const covers = (keys: string[], picked: string[]) => picked.every((p) => count(keys, p) >= count(picked, p));

/** The end screen's points per seat per round (rows from GameUI.score), with their sums. */
function breakdownTable(rows: Map<string, number[]>, seats: number, viewer: number | undefined): HTMLElement | null {
  if (!rows.size) return null;
  const seatCols = Array.from({ length: seats }, (_, s) => s);
  const cells = (points: number[], cls: string) => seatCols.map((s) => h("td", { class: cls, "data-seat": s, "data-points": points[s] ?? 0 }, String(points[s] ?? 0)));
  const total = seatCols.map((s) => [...rows.values()].reduce((n, p) => n + (p[s] ?? 0), 0));
  return h("table", { class: "breakdown", id: "breakdown", "aria-label": "points per round" },
    h("thead", {}, h("tr", {}, h("th", {}, ""), seatCols.map((s) => h("th", { scope: "col" }, s === viewer ? "you" : `seat ${s}`)))),
    h("tbody", {}, [...rows].map(([row, points]) => h("tr", { class: "round" }, h("th", { scope: "row" }, row), cells(points, "points")))),
    h("tfoot", {}, h("tr", { class: "sum" }, h("th", { scope: "row" }, "sum"), cells(total, "sum"))));
}

function clockText(ms: number): string {
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function anyJsonOrUndefined(a: Any): any {
  try { return anyJson(a); } catch { return undefined; }
}

// ------------------------------------------------------------------ replay viewer

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { all.set(p, at); at += p.length; }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", all));
}
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

// Rollouts per move for the replay's move values, from a fixed seed (the same values every
// time), within a time budget so that a position with many moves still answers.
const VALUE_ROLLOUTS = 200;
const VALUE_SEED = 1n;
const VALUE_BUDGET_MS = 15_000;

/** A game message as JSON without its type, to compare actions from different messages. */
const actionKey = (json: any) => { const { ["@type"]: _t, ...rest } = json ?? {}; return JSON.stringify(rest); };
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The value of each legal move of the seat to act at `seq` of a finished match, for its
 *  auditor: GetView(at_seq, with_position) as the auditor, then EvaluatePosition with rollouts.
 *  Best first; the move the seat actually played is marked. */
async function moveValues(gameId: string, gameType: string, seq: number, events: { seq: bigint; command?: { seat?: number; action?: Any } }[]): Promise<HTMLElement> {
  const at = (await client.getView({ gameId, atSeq: BigInt(seq) }, asAuditorRole)).state!;
  const seat = at.toAct[0];
  if (seat === undefined) return h("p", { class: "caption" }, "No seat decides anything here.");
  const got = await client.getView({ gameId, atSeq: BigInt(seq), withPosition: true, positionSeat: seat }, asAuditorRole);
  const labels = new Map(got.positionMoves.map((m, i) => [actionKey(anyJson(m)), got.positionMoveLabels[i]]));
  const ev = await client.evaluatePosition({ gameType, position: got.position,
    rollouts: { rollouts: VALUE_ROLLOUTS, seed: VALUE_SEED, timeBudgetMs: VALUE_BUDGET_MS, threads: 1 } });
  // The move played from here: the next seat action of that seat in the log.
  const next = events.slice(seq).find((e) => e.command?.action && e.command.seat === seat);
  const played = next?.command?.action ? actionKey(anyJson(next.command.action)) : undefined;
  const rows = evaluatedMoves(anyJson(ev.evaluation)).map((m) => ({ key: actionKey(m.action), v: m.value ?? {} }))
    .sort((a, b) => (b.v.winProbability ?? 0) - (a.v.winProbability ?? 0) || (b.v.margin ?? 0) - (a.v.margin ?? 0));
  if (!rows.length) return h("p", { class: "caption" }, `Seat ${seat} has no choice here.`);
  const samples = Math.min(...rows.map((r) => r.v.samples ?? 0));
  return h("div", {},
    h("p", { class: "caption" }, `Seat ${seat} to act: each move's chance of winning and final margin over ${samples} simulated endings (± standard error), best first.`),
    h("table", { class: "values" },
      h("thead", {}, h("tr", {}, h("th", {}, "move"), h("th", {}, "win chance"), h("th", {}, "margin"), h("th", {}, ""))),
      h("tbody", {}, rows.map((r) => h("tr", { class: `value-row${r.key === played ? " was-played" : ""}` },
        h("td", {}, labels.get(r.key) ?? "a move"),
        h("td", { class: "num" }, `${pct(r.v.winProbability ?? 0)} ± ${pct(r.v.winStderr ?? 0)}`),
        h("td", { class: "num" }, `${(r.v.margin ?? 0).toFixed(1)} ± ${(r.v.marginStderr ?? 0).toFixed(1)}`),
        h("td", {}, r.key === played ? "played" : ""))))));
}

async function replayPage(gameId: string): Promise<HTMLElement> {
  const last = (await client.getView({ gameId }, asAuditorRole)).state!;
  const ui = gameUI(last.gameType);
  const events = (await client.listEvents({ gameId }, asAuditorRole)).events;
  // What a browser can check by itself: the revealed seed matches the commitment published
  // at creation, the log is gapless, and its last chain hash is the state's chain head.
  const problems: string[] = [];
  if (!last.over) problems.push("the match is not over (the seed is not revealed yet)");
  if (last.seed.length) {
    const enc = new TextEncoder();
    const got = await sha256(enc.encode("tablier/seed-commitment\0"), enc.encode(gameId), last.seed);
    if (!sameBytes(got, last.seedCommitment)) problems.push("the revealed seed does not match its commitment");
  } else problems.push("no seed revealed");
  events.forEach((e, i) => { if (e.seq !== BigInt(i + 1)) problems.push(`event ${i + 1} has seq ${e.seq}`); });
  const tail = events[events.length - 1];
  if (!tail || (last.chainHead.length && !sameBytes(tail.chainHash, last.chainHead))) problems.push("the chain head is not the last event's hash");
  const verdict = h("p", { class: `verify ${problems.length ? "bad" : "ok"}`, id: "verification" },
    problems.length ? `Not verified: ${problems.join("; ")}` : `Verified: seed matches its commitment, ${events.length} events, chain head matches`);
  const max = Number(last.seq);
  const slider = h("input", { type: "range", min: 1, max, value: max, id: "seq-slider", "aria-label": "move number" }) as HTMLInputElement;
  const label = h("span", { class: "seq" });
  const board = h("div", { class: "board" });
  const eventLine = h("div", { class: "event", "aria-live": "polite" });
  const loading = h("span", { class: "loading", hidden: true }, "loading…");
  let shown = 0;
  // Move values: only for a finished match (the auditor role is allowed on it alone).
  const valuesBox = h("div", { class: "move-values", id: "move-values", "aria-live": "polite" });
  let valuesFor = 0;
  const valuesBtn = last.over && (await types()).find((t) => t.id === last.gameType)?.positionType
    ? h("button", { type: "button", id: "move-values-btn", onclick: async () => {
      const seq = shown;
      valuesFor = seq;
      valuesBtn!.setAttribute("disabled", "");
      valuesBox.setAttribute("aria-busy", "true");
      valuesBox.replaceChildren(h("p", { class: "loading", id: "values-loading" }, "Computing the value of each move… (a few seconds)"));
      try {
        const table = await moveValues(gameId, last.gameType, seq, events);
        if (valuesFor === seq) valuesBox.replaceChildren(table);
      } catch (err) {
        if (valuesFor === seq) valuesBox.replaceChildren(h("p", { class: "refusal" }, `No values: ${refusal(err).message}`));
      } finally {
        if (valuesFor === seq) { valuesBox.removeAttribute("aria-busy"); valuesBtn!.removeAttribute("disabled"); }
      }
    } }, "Value of the moves here") : null;
  const eventList = h("ol", { class: "log replay-log", "aria-label": "every event" },
    events.map((e) => {
      const seat = eventSeat(e.seat, e.payload ? anyJsonOrUndefined(e.payload) : undefined, ui);
      return h("li", { "data-seq": String(e.seq), "data-seat": seat }, h("span", { class: "who" }, seat === undefined ? "table" : `seat ${seat}`), " ",
        h("a", { href: "#", onclick: (ev: Event) => { ev.preventDefault(); stop(); go(Number(e.seq)); } }, e.description || e.type.replace(/_/g, " ")));
    }));
  const show = async () => {
    const seq = Number(slider.value);
    loading.hidden = false;
    try {
      const st = (await client.getView({ gameId, atSeq: BigInt(seq) }, asAuditorRole)).state!;
      if (Number(slider.value) !== seq) return;
      if (shown !== seq) { valuesFor = 0; valuesBox.replaceChildren(); valuesBox.removeAttribute("aria-busy"); valuesBtn?.removeAttribute("disabled"); }
      shown = seq;
      label.textContent = `seq ${seq} / ${max}`;
      // The auditor's view: every hand is in it, and the drawing shows each one.
      board.replaceChildren(ui.draw(anyJson(st.view), undefined));
      const ev = events[seq - 1];
      // What the event shown touched, marked on the table as on the match page.
      const payload = ev?.payload ? anyJsonOrUndefined(ev.payload) : undefined;
      const touched = payload && ui.eventKeys ? ui.eventKeys(payload) : [];
      board.querySelectorAll<HTMLElement>("[data-key]").forEach((e) => e.classList.toggle("last-move", touched.includes(e.dataset.key!)));
      eventLine.textContent = ev?.description ?? "";
      // The event shown, marked in the list of every event.
      eventList.querySelector("li.last")?.classList.remove("last");
      const at = eventList.querySelector<HTMLElement>(`li[data-seq="${seq}"]`);
      at?.classList.add("last");
      if (at) eventList.scrollTop = at.offsetTop - eventList.offsetTop - eventList.clientHeight / 2;
    } finally {
      if (Number(slider.value) === seq) loading.hidden = true;
    }
  };
  const go = (seq: number) => { slider.value = String(Math.max(1, Math.min(max, seq))); return show(); };
  let playing: ReturnType<typeof setInterval> | undefined;
  const playBtn = h("button", { type: "button", id: "replay-play", "aria-label": "play" }, "▶ play") as HTMLButtonElement;
  const stop = () => { clearInterval(playing); playing = undefined; playBtn.textContent = "▶ play"; playBtn.setAttribute("aria-label", "play"); };
  playBtn.onclick = () => {
    if (playing) return stop();
    if (Number(slider.value) >= max) slider.value = "1";
    playBtn.textContent = "❚❚ pause";
    playBtn.setAttribute("aria-label", "pause");
    playing = setInterval(() => { if (shown >= max) stop(); else if (shown === Number(slider.value)) go(shown + 1); }, 700);
    show();
  };
  stopCurrent = stop;
  slider.addEventListener("input", () => { stop(); show(); });
  await show();
  const step = (label: string, id: string, to: () => number) =>
    h("button", { type: "button", id, "aria-label": label, onclick: () => { stop(); go(to()); } }, label);
  return h("section", { class: "replay" }, h("h1", {}, `Replay · ${(await types()).find((t) => t.id === last.gameType)?.name ?? last.gameType}`), verdict,
    h("div", { class: "replay-controls" },
      step("« start", "replay-first", () => 1), step("◀ back", "replay-back", () => shown - 1), playBtn,
      step("next ▶", "replay-next", () => shown + 1), step("end »", "replay-last", () => max), loading),
    h("div", { class: "slider" }, slider, label), eventLine, board,
    valuesBtn ? h("div", { class: "values-row" }, valuesBtn) : null, valuesBox,
    h("h2", {}, "Every event"), eventList,
    h("a", { href: `#/game/${gameId}` }, "back to the match"));
}

// ------------------------------------------------------------------ routing

async function route() {
  stopCurrent?.();
  stopCurrent = undefined;
  say("");
  app.setAttribute("aria-busy", "true");
  app.replaceChildren(h("p", { class: "loading", id: "loading" }, "Loading…"));
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  try {
    let page: HTMLElement;
    if (parts[0] === "game" && parts[1]) page = await matchPage(parts[1]);
    else if (parts[0] === "replay" && parts[1]) page = await replayPage(parts[1]);
    else if (parts[0] === "join" && parts[1]) return await join({ inviteCode: decodeURIComponent(parts[1]) });
    else if (parts[0] === "open" && parts[1]) return await join({ gameId: parts[1] });
    else page = await lobby();
    app.replaceChildren(page);
    // A list built before the page was shown had no height to scroll: it starts at its end now.
    page.querySelectorAll<HTMLElement>("[data-follow]").forEach((e) => { e.scrollTop = e.scrollHeight; });
    app.removeAttribute("aria-busy");
  } catch (err) {
    const r = refusal(err);
    app.replaceChildren(h("p", { class: "refusal" }, `${r.message}`), h("a", { href: "#/" }, "back to the lobby"));
  }
}

window.addEventListener("hashchange", route);
route();

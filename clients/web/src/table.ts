// The match page (#/game/<id>): the table as this browser's seat sees it, live through
// WatchGame; its legal moves played by pointer or keyboard; the log; clocks; the end screen.

import { h } from "./dom";
import { anyJson, asSeat, packAction, refusal, Role, SeatKind, SeatStatus, type GameState, type GameType } from "./api";
import { MoveLog } from "./log";
import { gameUI, type Memory } from "./games/index";
import { seatBadge, seatLabel, setSeats } from "./games/shared";
import { forkRefused, playOn } from "./fork";
import { changeWords, ratingOf } from "./ranked";
import { anyJsonOrUndefined, callerToken, client, credential, current, held, invitesMade, keep, sameBytes, say, types, type Held } from "./session";
import type { Any } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";

// Moves narrowed by a pick are listed in sight up to this many (else folded with the rest).
const NARROWED = 8;

export async function matchPage(gameId: string): Promise<HTMLElement> {
  const record = held(gameId);
  // This browser's seat token (anonymous play), else the player credential: the server acts
  // for the seat the player holds here (from any device), else reads as a spectator.
  const token = callerToken(gameId);
  const first = (await client.getView({ gameId }, asSeat(token))).state!;
  const viewer = record.mine[0] ?? (first.role === Role.SEAT ? first.seat : undefined);
  setSeats(first.seats);
  const invites = { ...record.invites, ...(invitesMade.get(gameId) ?? {}) };
  const ui = gameUI(first.gameType);
  const info = (await types()).find((t) => t.id === first.gameType);
  // The unit of the game's scores, in the game's words (GameType.score_unit: Démocratie counts tribes).
  const unit = [info?.scoreUnit || "point", info?.scoreUnitPlural || "points"];
  const board = h("div", { class: "board" });
  const moves = h("div", { class: "moves", "aria-label": "legal moves" });
  const refused = h("p", { class: "refusal", id: "refusal", role: "alert" });
  // data-follow: opened on its latest entry (`route`), as it is scrolled to each new one.
  const moveLog = new MoveLog(ui, viewer, { "aria-label": "move log", "aria-live": "polite", "data-follow": "" });
  const log = moveLog.el;
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
    const links = Object.entries(invites)
      .filter(([s]) => st.seats[Number(s)]?.status === SeatStatus.INVITED)
      .map(([s, code]) => shareLink(`Invite for Seat ${Number(s) + 1}: `, `${here}#/join/${encodeURIComponent(code)}`, { "data-invite-seat": s }));
    if (st.seats.some((x) => x.status === SeatStatus.OPEN)) {
      links.push(shareLink("Open seats, for anyone: ", `${here}#/open/${gameId}`, { "data-open-link": "" }));
    }
    invitesBox.replaceChildren(...links);
  };
  drawInvites(first);
  // Leaving a match still waiting for players, resigning a running one: asked twice.
  const quit = h("div", { class: "quit", id: "quit" });
  // A seat of a running match plays on from here (a fork from what it knows now, bots at the
  // other seats: fork.ts) or replays the match so far.
  const analysis = h("div", { class: "analysis", id: "analysis" });
  const page = h("section", { class: "match", "data-game": first.gameType },
    header, banner, clocks, invitesBox, result, board, refused, moves, quit, analysis,
    h("h2", { class: "log-title" }, "What happened"), log);
  page.insertBefore(help(info), banner);

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
  // A ranked match's rating changes, once the server rated it (its RatingEvent: written when
  // the match ends, a moment after the last move), with the viewer's place on the leaderboard.
  let rating: { changes: { seat: number; text: string }[]; rank: number; subject: string } | "waiting" | "none" | undefined;
  // The server's sentence of a resignation that ended the match, said on the end screen (the
  // outcome's own sentence names the forfeit rule, which speaks of time).
  let resigned = "";
  const tell = (events: { seq: bigint; description: string; type: string; seat?: number; payload?: Any }[]) => {
    let grew = false;
    for (const e of events) {
      if (Number(e.seq) <= lastTold) continue;
      lastTold = Number(e.seq);
      if (e.type === "seat_resigned" && e.description) resigned = e.description;
      const payload = e.payload ? anyJsonOrUndefined(e.payload) : undefined;
      if (viewer !== undefined) ui.learn?.(memory, { type: e.type, seat: e.seat, payload }, viewer);
      const scored = payload && ui.score?.(payload, first.seatCount);
      if (scored) {
        const row = breakdown.get(scored.row) ?? Array.from({ length: first.seatCount }, () => 0);
        breakdown.set(scored.row, row.map((x, s) => x + (scored.points[s] ?? 0)));
      }
      // The board marks the latest event that touched it (a draw from the bag does not).
      const touched = payload && ui.eventKeys ? ui.eventKeys(payload) : [];
      if (e.description && touched.length) lastKeys = touched;
      if (moveLog.add({ ...e, payload })) grew = true;
    }
    if (grew) moveLog.follow();
  };
  let picked: string[] = [];
  // The list of every move (the board's fallback for keyboard and screen readers) left open.
  let listOpen = false;
  // The board element that had the keyboard focus (its key, and which of that key), given
  // back to it, or to the first target, after each redraw.
  let boardFocus: { key: string; nth: number } | undefined;
  // A move of this seat is on its way (from its click until its PlayMove answered).
  let busy = false;
  // The seat's moves sent so far: a move list asked for before the latest of them was sent
  // may be from before that move was applied (a card it played, a trick it ended).
  let sent = 0;
  // A leave or resign sent: from then on the page no longer asks for the seat's moves (once it
  // is done the credential no longer acts for that seat, and a list asked for meanwhile, on the
  // state the watch brings first, would be refused); refused, the seat plays on.
  let quitting = false;
  let closed = false;
  const abort = new AbortController();
  const stop = () => { closed = true; abort.abort(); clearInterval(ticker); };
  current.stop = stop;

  const draw = () => {
    const view = anyJson(state.view);
    setSeats(state.seats);
    drawInvites(state);
    drawQuit();
    drawAnalysis();
    drawBanner();
    header.replaceChildren(
      h("h1", {}, info?.name ?? state.gameType),
      h("div", { class: "seq", title: "steps recorded in the match so far" }, `step ${state.seq}`),
      ...(state.fork ? [h("div", { class: "fork", id: "fork-of" }, "a fork of ",
        h("a", { href: `#/replay/${state.fork.parentGameId}` }, `match ${state.fork.parentGameId.slice(0, 8)}`),
        ` from step ${state.fork.parentSeq}: never rated`)] : []),
      viewer === undefined ? h("div", {}, "watching as a spectator") : h("div", { class: "you-are" }, `you are ${seatLabel(viewer)}`),
      // Each seat: its player's name in its colour, else its number and who fills it.
      h("div", { class: "seats" }, state.seats.map((x, s) => seatBadge(s, x.player
        ? `${x.player.displayName}${s === viewer ? " (you)" : ""}`
        : `Seat ${s + 1}: ${s === viewer ? "you" : x.status === SeatStatus.BOT ? botWords(x.bot) :
          x.status === SeatStatus.OPEN ? "open" : x.status === SeatStatus.INVITED ? "invited" : "player"}`, "seat"))));
    // Highlight what the seat's legal moves touch; the picked elements narrow the list.
    const shown = legal;
    const all = (shown?.json ?? []).map((m, i) => ({ i, m, keys: viewer === undefined ? [] : ui.keys(m, viewer) }));
    const candidates = all.filter((c) => covers(c.keys, picked) && (ui.fits?.(c.m, picked) ?? true));
    const active = document.activeElement as HTMLElement | null;
    if (active && board.contains(active) && active.dataset.key) {
      const key = active.dataset.key;
      boardFocus = { key, nth: [...board.querySelectorAll<HTMLElement>("[data-key]")].filter((e) => e.dataset.key === key).indexOf(active) };
    } else if (active && board.contains(active) && active.classList.contains("zoom-box")) boardFocus = { key: "", nth: 0 };
    else if (active && active !== document.body && !board.contains(active)) boardFocus = undefined;
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
    if (boardFocus?.key === "") board.querySelector<HTMLElement>(".zoom-box")?.focus({ preventScroll: true });
    else if (boardFocus) {
      const targets = [...board.querySelectorAll<HTMLElement>("[data-key][tabindex='0']")];
      const same = targets.filter((e) => e.dataset.key === boardFocus!.key);
      (same[Math.min(boardFocus.nth, same.length - 1)] ?? targets[0])?.focus({ preventScroll: true });
    }
    // A move built on the table (ui.build): previewed, then confirmed or cancelled.
    const built = ui.build && picked.length ? candidates.filter((c) => c.keys.length === picked.length) : [];
    // What the play scores at once, from the seat's own Evaluation of this position.
    const points = built.length === 1 && evaluation && evaluation.seq === shown?.seq ? ui.playScore?.(evaluation.json, built[0].m) : undefined;
    const builder = ui.build && picked.length ? h("div", { class: "builder", id: "builder" },
      built.length === 1 ? h("button", { type: "button", class: "confirm", onclick: () => play(shown!.moves[built[0].i]) }, `Confirm: ${shown!.labels[built[0].i] ?? "play"}`)
        : h("span", { class: "caption" }, candidates.length ? "Keep picking: tiles, then where they go" : "No legal move with these"),
      points !== undefined ? h("span", { class: "preview-score", id: "preview-score", "data-points": points }, `scores ${points} point${points === 1 ? "" : "s"}`) : null,
      h("button", { type: "button", class: "cancel", onclick: () => { picked = []; draw(); } }, "Cancel")) : null;
    // The board is the interface: what it can play is played there. In sight: the moves it
    // cannot show (no element to click), and once a pick narrows them, the few left. The rest
    // is folded in a list, for the keyboard and screen readers. One button per label.
    const onBoard = new Set([...board.querySelectorAll<HTMLElement>("[data-key]")].map((e) => e.dataset.key!));
    const labelled = new Map<string, (typeof candidates)[number]>();
    for (const c of candidates) { const l = shown!.labels[c.i] ?? "move"; if (!labelled.has(l)) labelled.set(l, c); }
    const listed = [...labelled.values()];
    const loose = listed.filter((c) => !c.keys.length || c.keys.some((k) => !onBoard.has(k)));
    const inSight = picked.length && listed.length <= NARROWED ? listed : loose;
    const folded = listed.filter((c) => !inSight.includes(c));
    const button = (c: (typeof candidates)[number]) => h("button", { type: "button", class: "move", "data-move": c.i, "data-keys": c.keys.join(" "), onclick: () => play(shown!.moves[c.i]) }, shown!.labels[c.i] ?? "move");
    const list = folded.length ? h("details", { class: "move-list", id: "move-list", open: listOpen, ontoggle: (ev: Event) => { listOpen = (ev.target as HTMLDetailsElement).open; } },
      h("summary", {}, inSight.length ? `the other ${folded.length} moves as a list` : `all ${folded.length} moves as a list`), h("div", { class: "move-buttons" }, folded.map(button))) : null;
    moves.replaceChildren(...[
      busy ? h("p", { class: "caption sending" }, "Sending your move…") : null,
      builder,
      legal && legal.moves.length ? h("div", { class: "caption" }, picked.length ? "Moves with your choice: pick on the table or here." : onBoard.size && folded.length ? "Your move: pick one of the lit places on the table." : "Your move:") : null,
      inSight.length ? h("div", { class: "move-buttons in-sight" }, inSight.map(button)) : null,
      list,
      picked.length && !ui.build ? h("button", { type: "button", class: "clear", onclick: () => { picked = []; draw(); } }, "clear choice") : null,
    ].flat().filter((x): x is HTMLElement => !!x));
    if (state.over) {
      if (state.ranked && rating === undefined) { rating = "waiting"; queueMicrotask(watchRating); }
      const o = state.outcome;
      const winners = o?.winners ?? [];
      const verdict = o?.aborted ? "The match was stopped." : viewer === undefined
        ? (winners.length ? `${winners.map(seatLabel).join(" and ")} won.` : "Nobody won.")
        : winners.includes(viewer) ? (winners.length > 1 ? "You share the win!" : "You won!") : "You lost.";
      result.replaceChildren(
        h("h2", { class: "verdict" }, verdict),
        h("table", { class: `scores${typeof rating === "object" ? " rated" : ""}` },
          typeof rating === "object" ? h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", {}, ""), h("th", {}, ""), h("th", { scope: "col", class: "rating-change" }, "rating"))) : null,
          (o?.scores ?? []).map((sc, s) => h("tr", { class: winners.includes(s) ? "winner" : "", "data-seat": s, "data-score": String(sc) },
          h("td", {}, seatBadge(s, s === viewer ? `${seatLabel(s)} (you)` : seatLabel(s), "seat"),
            state.seats[s]?.status === SeatStatus.BOT ? h("span", { class: "bot-name" }, botWords(state.seats[s].bot)) : null),
          h("td", {}, `${sc} ${sc === 1n || sc === -1n ? unit[0] : unit[1]}`),
          h("td", {}, winners.includes(s) ? "winner" : ""),
          typeof rating === "object" ? h("td", { class: "rating-change", "data-seat": s }, rating.changes.find((c) => c.seat === s)?.text ?? "") : null))),
        ...[ratingLine()].filter((x): x is HTMLElement => !!x),
        ...(breakdown.size ? [breakdownTable(breakdown, state.seatCount, viewer)!] : []),
        h("div", { class: "how-ended" }, `${o?.lowerIsBetter ? `Fewest ${unit[1]} wins. ` : ""}${resigned || o?.description || ""}`),
        h("div", { class: "end-actions" },
          viewer !== undefined ? h("button", { type: "button", class: "rematch", onclick: rematch }, "Rematch") : null,
          h("a", { href: `#/replay/${gameId}`, class: "replay-link" }, "Replay this match"),
          h("a", { href: "#/" }, "Lobby")));
    }
  };

  // The rated subject whose history is read: the viewer's player, else a seat's player or bot.
  const subjectOf = (s: number) => state.seats[s]?.player ? `player:${state.seats[s].player!.playerId}` : state.seats[s]?.bot ? `bot:${state.seats[s].bot}` : "";
  const ratingLine = () => {
    if (rating === "waiting") return h("p", { class: "rating-line caption", id: "rating-pending", role: "status" }, "Rating the match…");
    if (rating === "none") return h("p", { class: "rating-line caption", id: "rating-none" }, "Not rated yet: see the leaderboard later.");
    if (typeof rating !== "object") return null;
    const mine = viewer !== undefined ? rating.changes.find((c) => c.seat === viewer) : undefined;
    return h("p", { class: "rating-line", id: "rating-line", role: "status" }, mine
      ? `Your rating ${mine.text}${rating.subject === subjectOf(viewer!) && rating.rank ? ` (rank ${rating.rank})` : ""}. `
      : "Rated. ", h("a", { href: `#/leaderboard/${state.gameType}` }, "Leaderboard"));
  };
  // Asked again every half second until the event is there (at most a minute), while the page is shown.
  const watchRating = async () => {
    const order = [viewer, ...state.seats.map((_, s) => s)].filter((s): s is number => s !== undefined && !!subjectOf(s));
    const subject = order.length ? subjectOf(order[0]) : "";
    if (!subject) { rating = "none"; draw(); return; }
    for (let tries = 0; tries < 120 && !closed; tries++) {
      try {
        const got = await ratingOf(state.gameType, gameId, subject);
        if (got) {
          rating = { subject, rank: got.rank, changes: got.changes.map((c) => ({ seat: c.seat, text: changeWords(c) })) };
          draw();
          return;
        }
      } catch { /* asked again */ }
      await new Promise((r) => setTimeout(r, 500));
    }
    rating = "none";
    if (!closed) draw();
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
      text = free.length ? `Waiting for ${free.map(seatLabel).join(" and ")} to join`
        : `Waiting for ${state.toAct.map((s) => state.seats[s]?.status === SeatStatus.BOT ? `${seatLabel(s)} (bot)` : seatLabel(s)).join(" and ")}`;
      cls = "theirs";
    }
    banner.className = `banner ${cls}`;
    banner.textContent = text;
  };

  // Leave (the match still waits for a player) or resign (it runs): a button, then "Yes" to
  // confirm or "No"; the match page shows what the server answered.
  let asking: "leave" | "resign" | undefined;
  const drawQuit = () => {
    if (viewer === undefined || state.over) { quit.replaceChildren(); return; }
    const waiting = state.seats.some((x) => x.status === SeatStatus.OPEN || x.status === SeatStatus.INVITED);
    const what = waiting ? "leave" : "resign";
    if (asking && asking !== what) asking = undefined;
    quit.replaceChildren(...(asking
      ? [h("span", { class: "confirm-quit" }, asking === "leave" ? "Leave this match? Your seat opens to anyone." : "Resign? The match is lost for you."),
        h("button", { type: "button", class: "yes", id: "quit-yes", onclick: () => quitNow(asking!) }, asking === "leave" ? "Yes, leave" : "Yes, resign"),
        h("button", { type: "button", class: "no", id: "quit-no", onclick: () => { asking = undefined; drawQuit(); } }, "No")]
      : [h("button", { type: "button", class: what, id: `quit-${what}`, onclick: () => { asking = what; drawQuit(); quit.querySelector<HTMLElement>("#quit-no")?.focus(); } },
        waiting ? "Leave this match" : "Resign")]));
  };
  const drawAnalysis = () => {
    const waiting = state.seats.some((x) => x.status === SeatStatus.OPEN || x.status === SeatStatus.INVITED);
    if (viewer === undefined || state.over || waiting) { analysis.replaceChildren(); return; }
    if (analysis.childElementCount) return;
    analysis.replaceChildren(
      h("button", { type: "button", id: "play-on-table", onclick: async () => {
        refused.textContent = "";
        try {
          await playOn(gameId, state.gameType, state.seatCount, Number(state.seq), { auditor: false, seat: viewer }, token);
        } catch (err) {
          refused.textContent = forkRefused(err);
          refused.dataset.reason = refusal(err).reason;
        }
      } }, "Play on from here"),
      h("a", { href: `#/replay/${gameId}`, id: "replay-so-far" }, "Replay so far"));
  };
  const quitNow = async (what: "leave" | "resign") => {
    asking = undefined;
    refused.textContent = "";
    quitting = true;
    try {
      const req = { gameId, commandId: crypto.randomUUID() };
      const done = what === "leave" ? await client.leaveGame(req, asSeat(token)) : await client.resignGame(req, asSeat(token));
      tell(done.events);
      if (record.mine.length) localStorage.removeItem(`tablier:match:${gameId}`);
      if (what === "leave") { stop(); say("You left the match."); location.hash = "#/"; return; }
      if (done.state && done.state.seq >= state.seq) state = done.state;
      await refresh();
    } catch (err) {
      quitting = false;
      const r = refusal(err);
      refused.textContent = `Refused: ${r.message}`;
      refused.dataset.reason = r.reason;
      drawQuit();
      await refresh();
    }
  };

  // Clocks: each awaited seat's time left to its deadline (GameState.clocks), every second.
  // Clocks: every seat's per-move time and bank, drawn the same way, counting down for the
  // seats awaited (GameState.clocks, with the match's clock options), every second.
  const tick = () => {
    if (!state.clocks.length || state.over) { clocks.replaceChildren(); return; }
    const moveMs = Number(state.options["clock_move_seconds"] ?? 0) * 1000;
    clocks.replaceChildren(...state.clocks.map((c, s) => {
      const deadline = c.deadline ? Number(c.deadline.seconds) * 1000 + c.deadline.nanos / 1e6 : undefined;
      const bankMs = c.bank ? Number(c.bank.seconds) * 1000 + c.bank.nanos / 1e6 : undefined;
      // An awaited seat's wait started at its deadline less the smaller of the two limits.
      const limit = Math.min(moveMs || Infinity, bankMs ?? Infinity);
      const spent = deadline !== undefined && Number.isFinite(limit) ? Math.max(0, Date.now() - (deadline - limit)) : 0;
      const move = moveMs ? Math.max(0, moveMs - spent) : undefined;
      const bank = bankMs !== undefined ? Math.max(0, bankMs - spent) : undefined;
      const left = Math.min(move ?? Infinity, bank ?? Infinity);
      const running = deadline !== undefined;
      return h("span", { class: `clock${running ? " running" : ""}${running && left < 10_000 ? " low" : ""}`, "data-seat": s,
        "aria-label": `${s === viewer ? "your" : `${seatLabel(s)}'s`} clock${running ? ", running" : ""}` },
        seatBadge(s, s === viewer ? "you" : seatLabel(s)),
        bank !== undefined ? h("span", { class: "bank", title: "time bank" }, `bank ${clockText(bank)}`) : null,
        move !== undefined ? h("span", { class: "per-move", title: "time for this move" }, `move ${clockText(move)}`) : null);
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
      const created = await client.createGame({ gameType: state.gameType, options: state.options, seatAssignments: seats }, asSeat(credential()));
      if (credential()) {
        // Bound to the player: nothing kept here but the invites, for this page's life.
        invitesMade.set(created.gameId, Object.fromEntries(seats.flatMap((a, s) => a.kind === SeatKind.INVITE ? [[s, created.inviteCodes[s]]] : [])));
        location.hash = `#/game/${created.gameId}`;
        return;
      }
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
    // The picks name one move and no other move goes on from them: it is played.
    if (exact.length === 1 && matching.length === 1 && !ui.build) return play(shown!.moves[exact[0].i]);
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
    if (viewer !== undefined && !state.over && state.toAct.includes(viewer) && !busy && !quitting) {
      const asked = sent;
      const got = await client.listLegalMoves({ gameId, minSeq: state.seq }, asSeat(token));
      // Stale: the table of `state` is drawn with the list already there (none while a move is on its way).
      if (asked !== sent || busy || (legal && got.seq < legal.seq)) { draw(); return; }
      next = { seq: got.seq, moves: got.moves, json: got.moves.map(anyJson), labels: got.labels, shared: state.toAct.length > 1 };
      if (ui.playScore && info?.positionType && evaluation?.seq !== got.seq) evaluate(got.seq);
    }
    legal = next;
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
        if (closed) break;
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

/** A bot seat's words: "bot (greedy rollout)". */
const botWords = (bot: string) => `bot (${bot.replace(/_/g, " ")})`;

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
    h("thead", {}, h("tr", {}, h("th", {}, ""), seatCols.map((s) => h("th", { scope: "col" }, seatBadge(s, s === viewer ? "you" : seatLabel(s), "seat"))))),
    h("tbody", {}, [...rows].map(([row, points]) => h("tr", { class: "round" }, h("th", { scope: "row" }, row), cells(points, "points")))),
    h("tfoot", {}, h("tr", { class: "sum" }, h("th", { scope: "row" }, "sum"), cells(total, "sum"))));
}

/** The game's summary (its own words, GameType.summary) and how this page is played. */
function help(info: GameType | undefined): HTMLElement {
  return h("details", { class: "help", id: "help" }, h("summary", {}, "How to play"),
    info?.summary ? h("p", { class: "summary" }, info.summary) : null,
    h("ul", {},
      h("li", {}, "When it is your turn, what you may play is lit on the table: click it (or Tab to it and press Enter). A move that needs two picks (a card, then where it goes) lights the second once you made the first; pick again to take a pick back."),
      h("li", {}, "Moves the table cannot show are buttons under it; every move is also in the folded list, for the keyboard and screen readers."),
      h("li", {}, "“What happened” tells every step in words, a turn per line, the steps that followed by themselves folded; yours are marked “you”."),
      h("li", {}, "A step is one thing recorded in the match (a move, a draw, a score): the replay goes through them one by one."),
      info?.rulesPath ? h("li", {}, `The full rules: ${info.rulesPath} in tablier's source.`) : null));
}

function clockText(ms: number): string {
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

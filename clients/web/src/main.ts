// The web app: lobby, match page (live through WatchGame), invite links, replay viewer.
// Routes live in the URL hash, so the server only serves static files:
//   #/                          lobby
//   #/game/<id>                 a match (as the seats this browser holds)
//   #/join/<invite code>        an invite link: JoinGame with the code, then the match
//   #/open/<id>                 a link to a match's open seats: JoinGame, then the match
//   #/replay/<id>               a finished match, seq by seq

import "./style.css";
import { h } from "./dom";
import { anyJson, asAuditorRole, asSeat, gameClient, packAction, refusal, SeatKind, SeatStatus, type GameState, type GameType } from "./api";
import { gameUI } from "./games";
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

// The seat tokens this browser holds, per match (the tokens are shown once by the server).
type Held = { tokens: Record<number, string>; mine: number[]; invites: Record<number, string> };

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

async function lobby(): Promise<HTMLElement> {
  const list = await types();
  return h("section", { class: "lobby" },
    h("h1", {}, "New match"),
    list.map((t) => {
      const seatsSel = h("select", { name: "seats", "aria-label": `${t.name} seats` },
        Array.from({ length: t.maxPlayers - t.minPlayers + 1 }, (_, i) => t.minPlayers + i).map((n) => h("option", { value: n }, `${n} players`))) as HTMLSelectElement;
      const seatRoles = h("div", { class: "seat-roles" });
      const drawRoles = () => {
        seatRoles.replaceChildren(...Array.from({ length: Number(seatsSel.value) }, (_, s) =>
          h("label", {}, `seat ${s} `, h("select", { "data-seat": s, "aria-label": `seat ${s}` },
            h("option", { value: "me", selected: s === 0 }, "you"),
            h("option", { value: "bot", selected: s !== 0 }, "server bot"),
            h("option", { value: "invite" }, "invite a friend"),
            h("option", { value: "open" }, "open to anyone")))));
      };
      seatsSel.addEventListener("change", drawRoles);
      drawRoles();
      const options = t.options.map((o) => h("label", { class: "option", title: o.description },
        `${o.name.replace(/_/g, " ")} `,
        o.allowedValues.length
          ? h("select", { name: o.name }, h("option", { value: "" }, `default (${o.defaultValue || "none"})`), o.allowedValues.map((v) => h("option", { value: v }, v)))
          : h("input", { name: o.name, placeholder: o.defaultValue || "", size: 8 }),
        h("small", {}, o.description)));
      const form = h("form", { class: "game-type", "data-game": t.id },
        h("h2", {}, t.name),
        t.summary ? h("p", { class: "summary" }, t.summary) : null,
        h("div", {}, `${t.minPlayers === t.maxPlayers ? t.minPlayers : `${t.minPlayers} to ${t.maxPlayers}`} players · bots: ${t.bots.join(", ") || "none"}`),
        seatsSel, seatRoles,
        options.length ? h("details", {}, h("summary", {}, "options"), options) : null,
        h("button", { type: "submit" }, `Create ${t.name} match`)) as HTMLFormElement;
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
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
            gameType: t.id, options: opts, seatAssignments: roles.map((r) => ({ kind: kinds[r], bot: "" })),
          });
          const record: Held = { tokens: {}, mine: [], invites: {} };
          roles.forEach((role, s) => {
            if (role === "me") { record.tokens[s] = created.seatTokens[s]; record.mine.push(s); }
            if (role === "invite") record.invites[s] = created.inviteCodes[s];
          });
          keep(created.gameId, record);
          location.hash = `#/game/${created.gameId}`;
        } catch (err) {
          const r = refusal(err);
          say(`${r.message} (${r.reason})`, "error");
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
  const log = h("ul", { class: "log", "aria-label": "latest events" });
  const header = h("div", { class: "match-head" });
  const result = h("div", { class: "result" });
  const shareLink = (label: string, link: string, attrs: Record<string, unknown>) =>
    h("div", { class: "invite" }, label,
      h("input", { readonly: true, value: link, size: 30, ...attrs, onclick: (e: Event) => (e.target as HTMLInputElement).select() }),
      h("button", { type: "button", onclick: () => navigator.clipboard?.writeText(link) }, "copy"));
  const here = `${location.origin}${location.pathname}`;
  const invites = Object.entries(record.invites)
    .filter(([s]) => first.seats[Number(s)]?.status === SeatStatus.INVITED)
    .map(([s, code]) => shareLink(`Invite for seat ${s}: `, `${here}#/join/${encodeURIComponent(code)}`, { "data-invite-seat": s }));
  if (first.seats.some((x) => x.status === SeatStatus.OPEN)) {
    invites.push(shareLink("Open seats, for anyone: ", `${here}#/open/${gameId}`, { "data-open-link": "" }));
  }
  const page = h("section", { class: "match", "data-game": first.gameType },
    header, invites, board, refused, moves, log, result);

  let state: GameState = first;
  let legal: { seq: bigint; moves: Any[]; json: any[]; labels: string[] } | undefined;
  // The latest events in the game's own words, as the server told them to this viewer.
  const told: string[] = [];
  const tell = (events: { seq: bigint; description: string }[]) => {
    for (const e of events) if (e.description && Number(e.seq) > lastTold) { told.push(e.description); lastTold = Number(e.seq); }
    told.splice(0, Math.max(0, told.length - 6));
    log.replaceChildren(h("li", { class: "caption" }, "latest events"), ...told.map((t) => h("li", {}, t)));
  };
  let lastTold = 0;
  let picked: string[] = [];
  let showAll = false;
  let busy = false;
  let closed = false;
  const abort = new AbortController();
  stopCurrent = () => { closed = true; abort.abort(); };

  const draw = () => {
    const view = anyJson(state.view);
    header.replaceChildren(
      h("h1", {}, info?.name ?? state.gameType),
      h("div", { class: "seq" }, `seq ${state.seq} · `, state.over ? "match over" :
        `to act: ${state.toAct.map((s) => (s === viewer ? "you" : `seat ${s}`)).join(", ")}`),
      viewer === undefined ? h("div", {}, "watching as a spectator") : h("div", {}, `you are seat ${viewer}`),
      h("div", { class: "seats" }, state.seats.map((x, s) => h("span", { class: "seat", "data-seat": s },
        `seat ${s}: ${s === viewer ? "you" : x.status === SeatStatus.BOT ? `bot ${x.bot}` :
          x.status === SeatStatus.OPEN ? "open" : x.status === SeatStatus.INVITED ? "invited" : "player"}`))));
    // Highlight what the seat's legal moves touch; the picked elements narrow the list.
    const shown = legal;
    const all = (shown?.json ?? []).map((m, i) => ({ i, m, keys: viewer === undefined ? [] : ui.keys(m, viewer) }));
    const candidates = all.filter((c) => picked.every((p) => c.keys.includes(p)));
    board.replaceChildren(ui.draw(view, viewer, all.flatMap((c) => c.keys)));
    const lit = new Set(candidates.flatMap((c) => c.keys));
    board.querySelectorAll<HTMLElement>("[data-key]").forEach((e) => {
      const key = e.dataset.key!;
      e.classList.toggle("legal", lit.has(key) && !picked.includes(key));
      e.classList.toggle("picked", picked.includes(key));
      e.onclick = () => pick(key);
    });
    moves.replaceChildren(...[
      legal && legal.moves.length ? h("div", { class: "caption" }, picked.length ? "moves with your choice" : "your legal moves") : null,
      (showAll ? candidates : candidates.slice(0, SHORT_LIST)).map((c) => h("button", { type: "button", class: "move", "data-move": c.i, onclick: () => play(shown!.moves[c.i]) }, shown!.labels[c.i] ?? "move")),
      !showAll && candidates.length > SHORT_LIST
        ? h("button", { type: "button", class: "more", onclick: () => { showAll = true; draw(); } }, `all ${candidates.length} moves`) : null,
      picked.length ? h("button", { type: "button", class: "clear", onclick: () => { picked = []; draw(); } }, "clear choice") : null,
    ].flat().filter((x): x is HTMLElement => !!x));
    if (state.over) {
      const o = state.outcome;
      result.replaceChildren(
        h("h2", {}, "Final scores"),
        h("table", { class: "scores" }, (o?.scores ?? []).map((sc, s) => h("tr", {},
          h("td", {}, s === viewer ? `seat ${s} (you)` : `seat ${s}`), h("td", {}, String(sc)),
          h("td", {}, o?.winners.includes(s) ? "winner" : "")))),
        h("div", {}, `${o?.lowerIsBetter ? "lower is better · " : ""}${o?.reason ? o.reason.toLowerCase().replace(/_/g, " ") : ""}`),
        h("a", { href: `#/replay/${gameId}`, class: "replay-link" }, "Replay this match"));
    }
  };

  const pick = async (key: string) => {
    if (viewer === undefined || state.over) return;
    picked = picked.includes(key) ? picked.filter((p) => p !== key) : [...picked, key];
    const shown = legal;
    const matching = (shown?.json ?? []).map((m, i) => ({ i, keys: ui.keys(m, viewer) }))
      .filter((c) => picked.every((p) => c.keys.includes(p)));
    const exact = matching.filter((c) => c.keys.length === picked.length);
    if (exact.length === 1) return play(shown!.moves[exact[0].i]);
    if (!matching.length && ui.compose) {
      // No legal move has that: let the server say why (the rules are its, not ours).
      const tried = ui.compose(picked, anyJson(state.view), viewer);
      if (tried) return play(packAction(info!.actionType, tried));
    }
    draw();
  };

  const refresh = async () => {
    let next: typeof legal = undefined;
    if (viewer !== undefined && !state.over && state.toAct.includes(viewer)) {
      const got = await client.listLegalMoves({ gameId }, asSeat(token));
      next = { seq: got.seq, moves: got.moves, json: got.moves.map(anyJson), labels: got.labels };
    }
    legal = next;
    showAll = false;
    picked = [];
    draw();
  };

  const play = async (action: Any) => {
    if (busy) return;
    busy = true;
    refused.textContent = "";
    try {
      let expectedSeq = legal?.seq;
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
    const recent = await client.listEvents({ gameId, afterSeq: first.seq > 6n ? first.seq - 6n : 0n }, asSeat(token));
    tell(recent.events);
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
  return page;
}

// ------------------------------------------------------------------ replay viewer

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { all.set(p, at); at += p.length; }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", all));
}
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

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
  const slider = h("input", { type: "range", min: 1, max, value: max, id: "seq-slider", "aria-label": "seq" }) as HTMLInputElement;
  const label = h("span", { class: "seq" });
  const board = h("div", { class: "board" });
  const eventLine = h("div", { class: "event" });
  const show = async () => {
    const seq = Number(slider.value);
    const st = (await client.getView({ gameId, atSeq: BigInt(seq) }, asAuditorRole)).state!;
    if (Number(slider.value) !== seq) return;
    label.textContent = `seq ${seq} / ${max}`;
    board.replaceChildren(ui.draw(anyJson(st.view), undefined));
    const ev = events[seq - 1];
    eventLine.textContent = ev?.description ?? "";
  };
  slider.addEventListener("input", show);
  await show();
  return h("section", { class: "replay" }, h("h1", {}, `Replay · ${last.gameType}`), verdict,
    h("div", { class: "slider" }, slider, label), eventLine, board,
    h("a", { href: `#/game/${gameId}` }, "back to the match"));
}

// ------------------------------------------------------------------ routing

async function route() {
  stopCurrent?.();
  stopCurrent = undefined;
  say("");
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  try {
    let page: HTMLElement;
    if (parts[0] === "game" && parts[1]) page = await matchPage(parts[1]);
    else if (parts[0] === "replay" && parts[1]) page = await replayPage(parts[1]);
    else if (parts[0] === "join" && parts[1]) return await join({ inviteCode: decodeURIComponent(parts[1]) });
    else if (parts[0] === "open" && parts[1]) return await join({ gameId: parts[1] });
    else page = await lobby();
    app.replaceChildren(page);
  } catch (err) {
    const r = refusal(err);
    app.replaceChildren(h("p", { class: "refusal" }, `${r.message}`), h("a", { href: "#/" }, "back to the lobby"));
  }
}

window.addEventListener("hashchange", route);
route();

// How each game is drawn. The rules stay in the core: a drawing shows what the view (already
// redacted for this viewer) contains, and marks with `data-key` the things a legal move
// touches (`keys`), so the page can highlight the seat's legal moves and play them by pointer.
// Views and actions arrive as protobuf JSON (every field present, enums by name).

import { h, words } from "./dom";

/** What a seat privately learnt from its own events and the view no longer shows (e.g. the
 *  cards of a peek), by the drawing's data-key. */
export type Memory = Map<string, string>;

/** One event as the page received it: its kind (Event.type), seat and payload as JSON. */
export interface SeenEvent { type: string; seat?: number; payload: any }

export interface GameUI {
  /** The table as `viewer` (a seat, or undefined) sees it; `hints` are the keys of the
   *  seat's legal moves (a board may need to grow to show where they go); `memory` what
   *  the seat learnt from its own events (see `learn`). */
  draw(view: any, viewer: number | undefined, hints?: string[], memory?: Memory): HTMLElement;
  /** Keeps in `memory` what `viewer` may be shown of its own events beyond the view. */
  learn?(memory: Memory, event: SeenEvent, viewer: number): void;
  /** Moves are built on the table (picked elements, previewed, then confirmed) rather than
   *  played as soon as the picks name one move. */
  build?: boolean;
  /** Whether a legal move fits the picks beyond holding their keys (e.g. which tile goes where). */
  fits?(action: any, picked: string[]): boolean;
  /** Shows the picks on the drawn table (e.g. tiles placed in their cells). */
  preview?(board: HTMLElement, picked: string[]): void;
  /** The seat an event (payload JSON) belongs to when its payload names it otherwise than by
   *  a `seat` field (see eventSeat). */
  actor?(event: any): number | undefined;
  /** The drawn elements an event (payload JSON) touched: the last move, highlighted. */
  eventKeys?(event: any): string[];
  /** The points an event (payload JSON) scores, per seat, under a row of the end screen's
   *  breakdown (events of the same row add up): the round-scoring events. */
  score?(event: any, seats: number): { row: string; points: number[] } | undefined;
  /** The immediate points of a legal move (action JSON) in an Evaluation without rollouts
   *  (EvaluatePosition JSON), for the preview of a move being built. */
  playScore?(evaluation: any, action: any): number | undefined;
  /** The drawn elements (data-key) a legal move of seat `viewer` involves. */
  keys(action: any, viewer: number): string[];
  /** An action built from picked elements, when the game lets a player try one (the server
   *  decides whether it is legal). */
  compose?(picked: string[], view: any, viewer: number | undefined): any | undefined;
}

const SUITS: Record<string, [string, boolean]> = {
  SUIT_SPADES: ["♠", false], SUIT_HEARTS: ["♥", true], SUIT_DIAMONDS: ["♦", true], SUIT_CLUBS: ["♣", false],
};

/** The oneof case of an action and its body: {"place": {...}} -> ["place", {...}]. */
function kind(action: any): [string, any] {
  const k = Object.keys(action).find((x) => x !== "@type") ?? "";
  return [k, action[k] ?? {}];
}

function card(label: string, opts: { key?: string; red?: boolean; down?: boolean; cls?: string; title?: string } = {}) {
  return h("span", {
    class: `card${opts.red ? " red" : ""}${opts.down ? " down" : ""}${opts.cls ? " " + opts.cls : ""}`,
    "data-key": opts.key, title: opts.title, role: "img",
    "aria-label": opts.title ?? (opts.down || !label ? "face-down card" : `card ${label}`),
  }, opts.down ? "" : label);
}

function seatName(seat: number, viewer: number | undefined): string {
  return seat === viewer ? `seat ${seat} (you)` : `seat ${seat}`;
}

/** A seat's hand (or rack) in a row: "your hand" for the viewer, "seat N's hand" for the
 *  others (the auditor of a replay sees every one). `data-hand` names the seat. */
function hand(seat: number, viewer: number | undefined, what: string, items: HTMLElement[], ...extra: HTMLElement[]) {
  return h("div", { class: "hand", "data-hand": seat }, seat === viewer ? `your ${what} ` : `${seatName(seat, viewer)}'s ${what} `, ...extra, items);
}

/** A seat's line in the list of players; `data-score` for the end screen and the tests. */
function player(seat: number, viewer: number | undefined, active: boolean, text: string, score?: unknown) {
  return h("div", { class: `player${active ? " active" : ""}`, "data-seat": seat, "data-score": score === undefined ? undefined : String(score) },
    `${seatName(seat, viewer)}: ${text}`);
}

/** "1 card", "2 cards". */
const count = (n: unknown, word: string) => `${n} ${word}${Number(n) === 1 ? "" : "s"}`;

/** Per-seat points from a list of {seat, points} (seats not listed score 0). */
function perSeat(seats: number, list: { seat: number; points: unknown }[]): number[] {
  const out = Array.from({ length: seats }, () => 0);
  for (const x of list) if (x.seat < seats) out[x.seat] += Number(x.points ?? 0);
  return out;
}

/** The seat an event belongs to: the seat its payload names (`seat`, or the game's own field:
 *  GameUI.actor), so an automatic draw is the drawer's though another seat's move caused it;
 *  undefined for the table's own events (a deal, a reveal, a trick won, a score), which
 *  Event.seat would put on the seat whose command set them off. Event.seat only when the
 *  payload cannot be read. */
export function eventSeat(seat: number | undefined, payload: any, ui?: GameUI): number | undefined {
  if (payload === undefined) return seat;
  if (typeof payload.seat === "number") return payload.seat; // a shared message (a timeout)
  const [, b] = kind(payload);
  if (typeof b?.seat === "number") return b.seat;
  return ui?.actor?.(payload);
}

/** The moves of an Evaluation (EvaluatePosition JSON) that carry an action and its value: the
 *  repeated field whose entries have an `action` (every game's Evaluation has one). */
export function evaluatedMoves(evaluation: any): { action: any; value?: any }[] {
  for (const v of Object.values(evaluation ?? {})) {
    if (Array.isArray(v) && v.length && typeof v[0] === "object" && v[0] && "action" in v[0]) return v;
  }
  return [];
}

// ------------------------------------------------------------------ Carré

const RANKS = ["", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const RANK_NAMES = ["", "RANK_ACE", "RANK_TWO", "RANK_THREE", "RANK_FOUR", "RANK_FIVE", "RANK_SIX", "RANK_SEVEN",
  "RANK_EIGHT", "RANK_NINE", "RANK_TEN", "RANK_JACK", "RANK_QUEEN", "RANK_KING"];

function carreCard(c: any): [string, boolean] {
  if (!c || !c.rank || c.rank === "RANK_UNSPECIFIED") return ["", false];
  const [s, red] = SUITS[c.suit] ?? ["?", false];
  return [RANKS[RANK_NAMES.indexOf(c.rank)] + s, red];
}
const carreKey = (c: any) => `card:${c.rank}:${c.suit}`;

const carre: GameUI = {
  // A face-down card the seat placed stays known to it (and only to it) until the round ends
  // or a card covers it.
  learn(memory, e, viewer) {
    const [k, b] = kind(e.payload ?? {});
    if (k === "roundDealt") memory.clear();
    else if (k === "cardPlaced") {
      const key = `cell:${b.squareOwner}:${b.cell}`;
      if (b.faceDown && b.seat === viewer && b.card?.rank && b.card.rank !== "RANK_UNSPECIFIED") memory.set(key, JSON.stringify(b.card));
      else memory.delete(key);
    }
  },
  score(e, seats) {
    const [k, b] = kind(e);
    if (k !== "roundScored") return undefined;
    return { row: `round ${b.round}`, points: perSeat(seats, (b.scores ?? []).map((x: any) => ({ seat: x.seat, points: x.roundScore }))) };
  },
  draw(v, viewer, _hints, memory) {
    const me = viewer ?? -1;
    const squares = (v.squares ?? []).map((sq: any) =>
      h("div", { class: "square-wrap" },
        h("div", { class: "caption" }, `${seatName(sq.owner, viewer)} · ${sq.rawPoints} pts`),
        h("div", { class: "grid3" }, (sq.cells ?? []).map((cell: any) => {
          const top = cell.pile?.[cell.pile.length - 1];
          const key = `cell:${sq.owner}:${cell.cell}`;
          const down = cell.state === "CELL_STATE_FACE_DOWN";
          const remembered = down && memory?.get(key);
          const [label, red] = carreCard(top?.card ?? (remembered ? JSON.parse(remembered) : undefined));
          return h("div", { class: "cell", "data-key": key },
            h("small", {}, cell.cell),
            cell.state === "CELL_STATE_EMPTY" ? null : card(label, {
              red, down: down && !label, cls: down ? (label ? "facedown known" : "facedown") : "",
              title: down && label ? (viewer === undefined ? `face down: ${label}` : `your face-down card ${label} (only you see it)`) : undefined,
            }),
            cell.pile?.length > 1 ? h("sub", {}, `×${cell.pile.length}`) : null);
        }))));
    const players = (v.players ?? []).map((p: any) =>
      player(p.seat, viewer, (v.toAct ?? []).includes(p.seat), `${count(p.handCount, "card")}, total ${p.total}`, p.total));
    const mine = (v.players ?? []).find((p: any) => p.seat === me);
    const top = v.discard?.[v.discard.length - 1];
    const [dl, dr] = carreCard(top);
    return h("div", { class: "table carre" },
      h("div", { class: "info" }, `round ${v.round}/${v.roundsPerMatch} · stock ${v.stockSize}`),
      h("div", { class: "players" }, players),
      h("div", { class: "squares" }, squares),
      h("div", { class: "row" },
        h("span", { class: "pile", "data-key": "discard" }, "discard ", top ? card(dl, { red: dr }) : "—"),
        v.canGoOut ? h("span", { class: "pile", "data-key": "goout" }, "go out") : null),
      mine && mine.hand?.length ? hand(me, viewer, "hand",
        mine.hand.map((c: any) => { const [l, r] = carreCard(c); return card(l, { red: r, key: carreKey(c) }); })) : null,
      // The auditor (a replay) sees every hand.
      (v.players ?? []).filter((p: any) => p.seat !== me && p.hand?.length).map((p: any) => hand(p.seat, viewer, "hand",
        p.hand.map((c: any) => { const [l, r] = carreCard(c); return card(l, { red: r }); }))),
    );
  },
  eventKeys(e) {
    const [k, b] = kind(e);
    if (k === "cardPlaced") return [`cell:${b.squareOwner}:${b.cell}`];
    if (k === "cardDiscarded") return ["discard"];
    return [];
  },
  keys(a, viewer) {
    const [k, b] = kind(a);
    if (k === "place") return [carreKey(b.card), `cell:${b.square === "TARGET_SQUARE_OWN" ? viewer : 1 - viewer}:${b.cell}`];
    if (k === "discard") return [carreKey(b.card), "discard"];
    if (k === "goOut") return ["goout"];
    return [];
  },
  compose(picked, v, viewer) {
    const c = picked.find((p) => p.startsWith("card:"));
    const cell = picked.find((p) => p.startsWith("cell:"));
    if (!c || !cell) return undefined;
    const [, rank, suit] = c.split(":");
    const [, owner, n] = cell.split(":");
    return { place: { card: { rank, suit }, square: Number(owner) === viewer ? "TARGET_SQUARE_OWN" : "TARGET_SQUARE_OPPONENT", cell: Number(n) } };
  },
};

// ------------------------------------------------------------------ Qwirkle

const COLOURS = ["#d62728", "#ff7f0e", "#e6c700", "#2ca02c", "#1f77b4", "#9467bd"];
const SHAPES = ["●", "✖", "◆", "■", "✸", "✤"];

const COLOUR_NAMES = ["red", "orange", "yellow", "green", "blue", "purple"];
const SHAPE_NAMES = ["circle", "cross", "diamond", "square", "star", "clover"];

function tile(type: number, key?: string) {
  const name = `${COLOUR_NAMES[Math.floor(type / 6)]} ${SHAPE_NAMES[type % 6]}`;
  return h("span", { class: "tile", style: { color: COLOURS[Math.floor(type / 6)] }, "data-key": key,
    title: name, role: "img", "aria-label": name }, SHAPES[type % 6]);
}

/** Qwirkle picks in pairs: a tile, then its cell (or a cell, then its tile). */
function qwirklePairs(picked: string[]): { tile?: number; at?: string }[] {
  const pairs: { tile?: number; at?: string }[] = [];
  for (const p of picked) {
    const open = pairs.find((q) => (p.startsWith("tile:") ? q.tile === undefined : q.at === undefined) && (q.tile !== undefined) !== (q.at !== undefined));
    const into = open ?? (pairs.push({}), pairs[pairs.length - 1]);
    if (p.startsWith("tile:")) into.tile = Number(p.slice(5));
    else if (p.startsWith("at:")) into.at = p.slice(3);
  }
  return pairs;
}

/** A play as a set of "tile@x,y", to compare plays whatever their order. */
const playSet = (placements: any[]) => (placements ?? []).map((p: any) => `${p.tileType}@${p.x},${p.y}`).sort().join(" ");

const qwirkle: GameUI = {
  build: true,
  playScore(evaluation, a) {
    const [k, b] = kind(a);
    if (k !== "play") return undefined;
    const want = playSet(b.placements);
    const found = (evaluation?.plays ?? []).find((p: any) => playSet(p.placements) === want);
    return found ? Number(found.score) : undefined;
  },
  score(e, seats) {
    const [k, b] = kind(e);
    if (k === "placed") return { row: "tiles laid", points: perSeat(seats, [{ seat: b.seat, points: b.points }]) };
    if (k === "ended" && Number(b.bonus) > 0 && b.reason !== "END_REASON_FORFEIT") {
      return { row: "end bonus", points: perSeat(seats, [{ seat: b.bonusSeat, points: b.bonus }]) };
    }
    return undefined;
  },
  fits(a, picked) {
    const [k, b] = kind(a);
    if (k !== "play") return true;
    const placed = (b.placements ?? []).map((p: any) => `${p.tileType}@${p.x},${p.y}`);
    return qwirklePairs(picked).every((q) => q.tile === undefined || q.at === undefined || placed.includes(`${q.tile}@${q.at}`));
  },
  preview(board, picked) {
    for (const q of qwirklePairs(picked)) {
      if (q.tile === undefined || q.at === undefined) continue;
      const cell = board.querySelector<HTMLElement>(`[data-key="at:${q.at}"]`);
      const t = tile(q.tile);
      t.classList.add("ghost");
      t.removeAttribute("data-key");
      cell?.replaceChildren(t);
    }
  },
  draw(v, viewer, hints = []) {
    const board: any[] = v.board ?? [];
    const spots = hints.filter((k) => k.startsWith("at:")).map((k) => k.slice(3).split(",").map(Number));
    const xs = [...board.map((t) => t.x), ...spots.map((p) => p[0])], ys = [...board.map((t) => t.y), ...spots.map((p) => p[1])];
    const [x0, x1, y0, y1] = xs.length ? [Math.min(...xs) - 1, Math.max(...xs) + 1, Math.min(...ys) - 1, Math.max(...ys) + 1] : [0, 5, 0, 0];
    const at = new Map(board.map((t) => [`${t.x},${t.y}`, t.tileType]));
    // Coordinates along the top and the left: the moves' words name cells by them.
    const rows = [h("div", { class: "qrow" }, h("div", { class: "qcoord" }, ""),
      Array.from({ length: x1 - x0 + 1 }, (_, i) => h("div", { class: "qcoord" }, String(x0 + i))))];
    for (let y = y0; y <= y1; y++) {
      const row = [h("div", { class: "qcoord" }, String(y))];
      for (let x = x0; x <= x1; x++) {
        const t = at.get(`${x},${y}`);
        row.push(h("div", { class: "qcell", "data-key": `at:${x},${y}`, "aria-label": t === undefined ? `empty cell ${x}, ${y}` : `cell ${x}, ${y}` },
          t === undefined ? "" : tile(t)));
      }
      rows.push(h("div", { class: "qrow" }, row));
    }
    const seats = (v.seats ?? []).map((s: any) =>
      player(s.seat, viewer, (v.toAct ?? []).includes(s.seat), `${count(s.score, "pt")}, ${count(s.handCount, "tile")}`, s.score));
    const mine = (v.seats ?? []).find((s: any) => s.seat === viewer && s.handVisible);
    return h("div", { class: "table qwirkle" },
      h("div", { class: "info" }, `bag ${v.bagCount} · turn ${v.turns}`),
      h("div", { class: "players" }, seats),
      h("div", { class: "board-scroll" }, h("div", { class: "qboard" }, rows)),
      mine ? hand(mine.seat, viewer, "tiles", (mine.handTileTypes ?? []).map((t: number) => tile(t, `tile:${t}`)),
        h("span", { "data-key": "bag", class: "pile" }, "bag")) : null,
      (v.seats ?? []).filter((s: any) => s.seat !== viewer && s.handVisible && s.handTileTypes?.length).map((s: any) =>
        hand(s.seat, viewer, "tiles", s.handTileTypes.map((t: number) => tile(t)))),
    );
  },
  eventKeys(e) {
    const [k, b] = kind(e);
    return k === "placed" ? (b.placements ?? []).map((p: any) => `at:${p.x},${p.y}`) : [];
  },
  keys(a) {
    const [k, b] = kind(a);
    if (k === "play") return (b.placements ?? []).flatMap((p: any) => [`tile:${p.tileType}`, `at:${p.x},${p.y}`]);
    if (k === "opening") return (b.tileTypes ?? []).map((t: number) => `tile:${t}`);
    if (k === "exchange") return ["bag", ...(b.tileTypes ?? []).map((t: number) => `tile:${t}`)];
    return [];
  },
};

// ------------------------------------------------------------------ Rat-a-Tat Cat

/** Not known to this viewer: a face-down card of a row, or nothing sent. */
const ratUnseen = (c: string | undefined) => !c || c === "CARD_UNSPECIFIED" || c === "CARD_FACE_DOWN";

function ratCard(c: string): [string, boolean] {
  if (ratUnseen(c)) return ["", true];
  if (c === "CARD_HIDDEN_NUMBER") return ["#", false];
  const n = ["ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"].indexOf(c.slice(5));
  return [n >= 0 ? String(n) : words(c, "CARD_"), false];
}

const ratATatCat: GameUI = {
  // A seat sees its peeks (the two outer cards at the deal, a Peek card) until its next
  // move: then they are face down again and the seat has to remember them (unless the table
  // plays with memory_aid=on, where the view lists them).
  learn(memory, e, viewer) {
    const [k, b] = kind(e.payload ?? {});
    if (k === "roundDealt") memory.clear();
    else if (k === "initialPeek" && b.seat === viewer) {
      memory.clear();
      memory.set(`slot:${viewer}:1`, b.slot1);
      memory.set(`slot:${viewer}:4`, b.slot4);
    } else if (k === "cardPeeked" && b.seat === viewer) memory.set(`slot:${viewer}:${b.slot}`, b.card);
    else if (e.seat === viewer) memory.clear();
  },
  score(e, seats) {
    const [k, b] = kind(e);
    if (k !== "roundScored") return undefined;
    return { row: `round ${b.round}`, points: perSeat(seats, (b.scores ?? []).map((x: any) => ({ seat: x.seat, points: x.roundScore }))) };
  },
  eventKeys(e) {
    const [k, b] = kind(e);
    if (k === "discardTaken" || k === "cardReplaced" || k === "cardPeeked") return [`slot:${b.seat}:${b.slot}`];
    if (k === "cardsSwapped") return [`slot:${b.seat}:${b.ownSlot}`, `slot:${b.targetSeat}:${b.targetSlot}`];
    if (k === "cardDrawn") return ["pile"];
    if (k === "drawnDiscarded" || k === "powerUsed") return ["discard"];
    return [];
  },
  draw(v, viewer, _hints, memory) {
    const rows = (v.players ?? []).map((p: any) =>
      h("div", { class: `player-row${(v.toAct ?? []).includes(p.seat) ? " active" : ""}`, "data-hand": p.seat, "data-seat": p.seat, "data-score": p.totalScore },
        h("div", { class: "caption" }, `${seatName(p.seat, viewer)} · total ${p.totalScore}${p.active ? "" : " (out)"}`),
        h("div", { class: "row" }, (v.over && p.lastRoundRow?.length ? p.lastRoundRow : p.row ?? []).map((c: string, i: number) => {
          const peeked = memory?.get(`slot:${p.seat}:${i + 1}`);
          const known = !ratUnseen(p.known?.[i]) ? p.known[i] : peeked;
          const [l, down] = ratCard(!ratUnseen(c) ? c : known ?? c);
          return card(l, {
            down: down && !l, key: `slot:${p.seat}:${i + 1}`,
            cls: ratUnseen(c) && !ratUnseen(known) ? (peeked && known === peeked ? "known peek" : "known") : "",
            title: ratUnseen(c) && !ratUnseen(known) ? `your card ${i + 1}: ${l} (face down, only you see it)` : undefined,
          });
        }))));
    const [pl] = ratCard(v.pending);
    const top = v.discardPile?.[v.discardPile.length - 1];
    return h("div", { class: "table ratcat" },
      h("div", { class: "info" }, `round ${v.round} · ${words(v.phase, "PHASE_")}${v.hasCaller ? ` · seat ${v.caller} called` : ""}`),
      memory?.size ? h("div", { class: "peek-note", id: "peek-note" }, "You peek at your cards: remember them, they turn face down after your move.") : null,
      h("div", { class: "row" },
        h("span", { class: "pile", "data-key": "pile" }, `draw pile (${v.drawPileSize})`),
        h("span", { class: "pile", "data-key": "discard" }, "discard ", top ? card(ratCard(top)[0]) : "—"),
        pl ? h("span", { class: "pile", "data-key": "pending" }, "in hand ", card(pl)) : null),
      rows);
  },
  keys(a, viewer) {
    const [k, b] = kind(a);
    const me = viewer;
    if (k === "takeDiscard") return ["discard", `slot:${me}:${b.slot}`];
    if (k === "drawFromPile") return ["pile"];
    if (k === "replaceCard") return ["pending", `slot:${me}:${b.slot}`];
    if (k === "discardDrawn") return ["discard"];
    if (k === "usePower") return ["pending"];
    if (k === "peekCard") return [`slot:${me}:${b.slot}`];
    if (k === "swapCards") return [`slot:${me}:${b.ownSlot}`, `slot:${b.targetSeat}:${b.targetSlot}`];
    return [];
  },
};

// ------------------------------------------------------------------ Démocratie

const DEMO_SUITS: Record<string, string> = { C: "♣", D: "♦", H: "♥", S: "♠" };
function demoCard(c: string): [string, boolean] {
  if (!c || c === "CARD_UNSPECIFIED") return ["", false];
  const s = c.slice(5);
  if (s.startsWith("X")) return ["🃏", false];
  const suit = s.slice(-1), rank = s.slice(0, -1);
  return [`${rank === "T" ? "10" : rank}${DEMO_SUITS[suit] ?? suit}`, suit === "D" || suit === "H"];
}

const demoCards = (cards: string[], key = false) =>
  (cards ?? []).map((c: string) => { const [l, r] = demoCard(c); return card(l, { red: r, key: key ? `card:${c}` : undefined }); });

const democratie: GameUI = {
  score(e, seats) {
    const [k, b] = kind(e);
    if (k !== "dealScored") return undefined;
    return { row: `deal ${b.dealNo}`, points: perSeat(seats, (b.seats ?? []).map((x: any) => ({ seat: x.seat, points: x.tribesGained }))) };
  },
  draw(v, viewer) {
    const seats = (v.seatInfo ?? []).map((s: any) =>
      player(s.seat, viewer, s.awaited, `${count(s.handCount, "card")}, ${count(s.tribes, "tribe")}, ${s.capturedCount} captured${s.committed ? " · sealed" : ""}`, s.tribes));
    // The auditor (a replay) sees every hand and every sealed card.
    const hidden = v.hidden ?? {};
    const [vl, vr] = demoCard(v.voteCard);
    const last = v.lastTrick;
    return h("div", { class: "table democratie" },
      h("div", { class: "info" }, `deal ${v.dealNo} · day ${v.day} · trick ${v.trickNo}/${v.tricksInDay} · target ${v.target}`),
      h("div", { class: "row" }, "vote card ", vl ? card(vl, { red: vr }) : "—", !v.trump || v.trump === "SUIT_UNSPECIFIED" ? "" : v.trump === "SUIT_NONE" ? " · no trump" : ` · ${words(v.trump, "SUIT_")} are trump`),
      h("div", { class: "players" }, seats),
      last && last.played?.length ? h("div", { class: "trick-summary" },
        h("div", { class: "caption" }, `last trick (day ${last.day}, trick ${last.trickNo}): ${last.tie ? "a tie, " : ""}won by ${seatName(last.winner, viewer)}`),
        h("div", { class: "row" }, last.played.map((c: string, s: number) => {
          const [l, r] = demoCard(c);
          return h("span", { class: `played${s === last.winner ? " won" : ""}` }, `${seatName(s, viewer)} `, card(l, { red: r }));
        }))) : null,
      v.myCommit && v.myCommit !== "CARD_UNSPECIFIED" ? h("div", { class: "row" }, "you sealed ", card(demoCard(v.myCommit)[0], { red: demoCard(v.myCommit)[1] })) : null,
      v.viewer?.seat !== undefined && v.hand?.length ? hand(v.viewer.seat, viewer, "hand", demoCards(v.hand, true)) : null,
      (hidden.hands ?? []).filter((d: any) => d.seat !== viewer && d.cards?.length).map((d: any) => {
        const sealed = hidden.commits?.[d.seat];
        return hand(d.seat, viewer, "hand", demoCards(d.cards),
          ...(sealed && sealed !== "CARD_UNSPECIFIED" ? [h("span", { class: "pile" }, "sealed ", demoCards([sealed]))] : []));
      }),
    );
  },
  keys(a) {
    const [k, b] = kind(a);
    return k === "commitCard" ? [`card:${b.card}`] : [];
  },
};

// ------------------------------------------------------------------ Grid Knock

const gridKnock: GameUI = {
  actor(e) {
    const [, b] = kind(e);
    return typeof b.knocker === "number" ? b.knocker : undefined;
  },
  // The seat's two sealed initial choices, known only to it until every seat has chosen.
  learn(memory, e, viewer) {
    const [k, b] = kind(e.payload ?? {});
    if (k === "dealt" || k === "initialRevealed") memory.clear();
    else if (k === "initialChosen" && b.seat === viewer && b.slot) memory.set(`slot:${b.slot.owner}:${b.slot.row}:${b.slot.col}`, "chosen");
  },
  score(e, seats) {
    const [k, b] = kind(e);
    if (k !== "roundScored") return undefined;
    return { row: `round ${b.round}`, points: perSeat(seats, (b.roundScores ?? []).map((p: unknown, seat: number) => ({ seat, points: p }))) };
  },
  draw(v, viewer, _hints, memory) {
    const n = v.seats;
    const blocks = [];
    for (let o = 0; o < n; o++) {
      const cells = [];
      for (let r = 1; r <= 3; r++) for (let c = 1; c <= 4; c++) {
        const s = v.slots?.[o * 12 + (r - 1) * 4 + (c - 1)] ?? {};
        const key = `slot:${o}:${r}:${c}`;
        // The auditor sees face-down values: drawn, marked as face down to the players.
        const seenDown = s.value !== undefined && s.state === "SLOT_STATE_FACE_DOWN";
        const up = s.state === "SLOT_STATE_FACE_UP" || seenDown;
        const chosen = memory?.get(key) === "chosen";
        cells.push(h("div", { class: "gcell", "data-key": key },
          s.state === "SLOT_STATE_EMPTY" ? "" : card(up ? String(s.value) : "", {
            down: !up, cls: [c === 4 ? "shared" : "", seenDown ? "known" : "", chosen ? "chosen" : ""].filter(Boolean).join(" "),
            title: chosen ? "you chose to turn this card up" : seenDown ? `face down: ${s.value}` : undefined,
          })));
      }
      blocks.push(h("div", { class: `block${(v.toAct ?? []).includes(o) ? " active" : ""}`, "data-hand": o, "data-seat": o, "data-score": v.totals?.[o] ?? 0 },
        h("div", { class: "caption" }, `${seatName(o, viewer)} · total ${v.totals?.[o] ?? 0}`),
        h("div", { class: "grid4" }, cells)));
    }
    const top = v.discardPile?.[v.discardPile.length - 1];
    return h("div", { class: "table gridknock" },
      h("div", { class: "info" }, `round ${v.round} · ${words(v.phase, "PHASE_")} · target ${v.targetScore}`),
      h("div", { class: "row" },
        h("span", { class: "pile", "data-key": "pile" }, `draw pile (${v.drawPileSize})`),
        h("span", { class: "pile", "data-key": "discard" }, "discard ", top !== undefined ? card(String(top)) : "—"),
        v.drawnCard !== undefined ? h("span", { class: "pile" }, "drawn ", card(String(v.drawnCard))) : null,
        v.takenCard !== undefined ? h("span", { class: "pile" }, "taken ", card(String(v.takenCard))) : null,
        v.knockerHoldsCard && v.heldCard !== undefined ? h("span", { class: "pile" }, `held by ${seatName(v.knocker, viewer)} `, card(String(v.heldCard))) : null),
      memory?.size ? h("div", { class: "peek-note", id: "peek-note" }, "Your chosen cards are marked: they turn up once every seat has chosen two.") : null,
      h("div", { class: "blocks" }, blocks));
  },
  eventKeys(e) {
    const [k, b] = kind(e);
    if (b.slot) return [`slot:${b.slot.owner}:${b.slot.row}:${b.slot.col}`];
    if (k === "drawn") return ["pile"];
    if (k === "tookDiscard") return ["discard"];
    return [];
  },
  keys(a) {
    const [k, b] = kind(a);
    const slot = (s: any) => `slot:${s.owner}:${s.row}:${s.col}`;
    if (b.slot) return [slot(b.slot)];
    if (k === "discardTriple") return (b.cells ?? []).map(slot);
    if (k === "drawFromPile") return ["pile"];
    if (k === "takeFromDiscard") return ["discard"];
    return [];
  },
};

export const GAMES: Record<string, GameUI> = {
  carre, qwirkle, rat_a_tat_cat: ratATatCat, democratie, grid_knock: gridKnock,
};

/** The UI of a game type, or a plain one (every move as a button) for a game added later. */
export function gameUI(id: string): GameUI {
  return GAMES[id] ?? {
    draw: (v) => h("pre", { class: "raw" }, JSON.stringify(v, null, 1)),
    keys: () => [],
  };
}

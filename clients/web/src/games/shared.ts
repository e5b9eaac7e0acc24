// How each game is drawn. The rules stay in the core: a drawing shows what the view (already
// redacted for this viewer) contains, and marks with `data-key` the things a legal move
// touches (`keys`), so the page can highlight the seat's legal moves and play them by pointer.
// Views and actions arrive as protobuf JSON (every field present, enums by name).

import { h } from "../dom";

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
  /** The heading of the log's part that an event (payload JSON) begins: "round 2" at a
   *  round's deal. */
  round?(event: any): string | undefined;
  /** Whether an event (payload JSON) is a step the table took by itself after a seat's move
   *  (a turn ending, a card turned up by the rules): folded in the log under that move. */
  follows?(event: any): boolean;
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

export const SUITS: Record<string, [string, boolean]> = {
  SUIT_SPADES: ["♠", false], SUIT_HEARTS: ["♥", true], SUIT_DIAMONDS: ["♦", true], SUIT_CLUBS: ["♣", false],
};

/** The oneof case of an action and its body: {"place": {...}} -> ["place", {...}]. */
export function kind(action: any): [string, any] {
  const k = Object.keys(action).find((x) => x !== "@type") ?? "";
  return [k, action[k] ?? {}];
}

export function card(label: string, opts: { key?: string; red?: boolean; down?: boolean; cls?: string; title?: string } = {}) {
  return h("span", {
    class: `card${opts.red ? " red" : ""}${opts.down ? " down" : ""}${opts.cls ? " " + opts.cls : ""}`,
    "data-key": opts.key, title: opts.title, role: "img",
    "aria-label": opts.title ?? (opts.down || !label ? "face-down card" : `card ${label}`),
  }, opts.down ? "" : label);
}

// Who sits in each seat, as the page last read it (GameState.seats): a signed-in player's
// display name and colour (SeatInfo.player), else the seat's number. Seats are 0-based on the
// wire and 1-based for people ("Seat 1").
let sitting: { name?: string; colour?: number }[] = [];
export function setSeats(seats: { player?: { displayName: string; colour: number } }[]) {
  sitting = seats.map((x) => (x.player ? { name: x.player.displayName, colour: x.player.colour } : {}));
}

/** A player's colour (Player.colour, 0 to 11), readable under white text. */
export const COLOURS = ["#b03a2e", "#c0561a", "#8a6d0b", "#6b7a12", "#1e7d45", "#137566",
  "#1f6fa5", "#2c4a9a", "#7a3d9a", "#a8245f", "#6d4c41", "#4e5f69"];
export const colourOf = (c: number) => COLOURS[c % COLOURS.length];

/** The seat as people call it: its player's name, else "Seat N" (1-based). */
export function seatLabel(seat: number): string {
  return sitting[seat]?.name ?? `Seat ${seat + 1}`;
}

export function seatName(seat: number, viewer: number | undefined): string {
  return seat === viewer ? `${seatLabel(seat)} (you)` : seatLabel(seat);
}

/** The seat's name as a badge in its player's colour (text, never markup); `text` replaces the
 *  words (e.g. "you"). */
export function seatBadge(seat: number, text = seatLabel(seat), cls = "who"): HTMLElement {
  const c = sitting[seat]?.colour;
  return h("span", { class: `${cls}${c !== undefined ? " named" : ""}`, "data-seat": seat,
    style: c !== undefined ? { background: colourOf(c), color: "#fff" } : undefined, title: seatLabel(seat) }, text);
}

/** A seat's hand (or rack) in a row: "your hand" for the viewer, "seat N's hand" for the
 *  others (the auditor of a replay sees every one). `data-hand` names the seat. */
export function hand(seat: number, viewer: number | undefined, what: string, items: HTMLElement[], ...extra: HTMLElement[]) {
  return h("div", { class: "hand", "data-hand": seat }, seat === viewer ? `your ${what} ` : `${seatName(seat, viewer)}'s ${what} `, ...extra, items);
}

/** A seat's line in the list of players; `data-score` for the end screen and the tests. */
export function player(seat: number, viewer: number | undefined, active: boolean, text: string, score?: unknown) {
  return h("div", { class: `player${active ? " active" : ""}`, "data-seat": seat, "data-score": score === undefined ? undefined : String(score) },
    `${seatName(seat, viewer)}: ${text}`);
}

/** "1 card", "2 cards". */
export const count = (n: unknown, word: string) => `${n} ${word}${Number(n) === 1 ? "" : "s"}`;

/** Per-seat points from a list of {seat, points} (seats not listed score 0). */
export function perSeat(seats: number, list: { seat: number; points: unknown }[]): number[] {
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

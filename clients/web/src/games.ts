// How each game is drawn. The rules stay in the core: a drawing shows what the view (already
// redacted for this viewer) contains, and marks with `data-key` the things a legal move
// touches (`keys`), so the page can highlight the seat's legal moves and play them by pointer.
// Views and actions arrive as protobuf JSON (every field present, enums by name).

import { h, words } from "./dom";

export interface GameUI {
  /** The table as `viewer` (a seat, or undefined) sees it; `hints` are the keys of the
   *  seat's legal moves (a board may need to grow to show where they go). */
  draw(view: any, viewer: number | undefined, hints?: string[]): HTMLElement;
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
    "data-key": opts.key, title: opts.title,
  }, opts.down ? "" : label);
}

function seatName(seat: number, viewer: number | undefined): string {
  return seat === viewer ? `seat ${seat} (you)` : `seat ${seat}`;
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
  draw(v, viewer) {
    const me = viewer ?? -1;
    const squares = (v.squares ?? []).map((sq: any) =>
      h("div", { class: "square-wrap" },
        h("div", { class: "caption" }, `${seatName(sq.owner, viewer)} · ${sq.rawPoints} pts`),
        h("div", { class: "grid3" }, (sq.cells ?? []).map((cell: any) => {
          const top = cell.pile?.[cell.pile.length - 1];
          const [label, red] = carreCard(top?.card);
          const down = cell.state === "CELL_STATE_FACE_DOWN";
          return h("div", { class: "cell", "data-key": `cell:${sq.owner}:${cell.cell}` },
            h("small", {}, cell.cell),
            cell.state === "CELL_STATE_EMPTY" ? null : card(label, { red, down: down && !label, cls: down ? "facedown" : "" }),
            cell.pile?.length > 1 ? h("sub", {}, `×${cell.pile.length}`) : null);
        }))));
    const players = (v.players ?? []).map((p: any) =>
      h("div", { class: `player${(v.toAct ?? []).includes(p.seat) ? " active" : ""}` },
        `${seatName(p.seat, viewer)}: ${p.handCount} cards, total ${p.total}`));
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
      mine && mine.hand?.length ? h("div", { class: "hand" }, "your hand ",
        mine.hand.map((c: any) => { const [l, r] = carreCard(c); return card(l, { red: r, key: carreKey(c) }); })) : null,
    );
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

function tile(type: number, key?: string) {
  return h("span", { class: "tile", style: { color: COLOURS[Math.floor(type / 6)] }, "data-key": key,
    title: `tile ${type}` }, SHAPES[type % 6]);
}

const qwirkle: GameUI = {
  draw(v, viewer, hints = []) {
    const board: any[] = v.board ?? [];
    const spots = hints.filter((k) => k.startsWith("at:")).map((k) => k.slice(3).split(",").map(Number));
    const xs = [...board.map((t) => t.x), ...spots.map((p) => p[0])], ys = [...board.map((t) => t.y), ...spots.map((p) => p[1])];
    const [x0, x1, y0, y1] = xs.length ? [Math.min(...xs) - 1, Math.max(...xs) + 1, Math.min(...ys) - 1, Math.max(...ys) + 1] : [0, 5, 0, 0];
    const at = new Map(board.map((t) => [`${t.x},${t.y}`, t.tileType]));
    const rows = [];
    for (let y = y0; y <= y1; y++) {
      const row = [];
      for (let x = x0; x <= x1; x++) {
        const t = at.get(`${x},${y}`);
        row.push(h("div", { class: "qcell", "data-key": `at:${x},${y}` }, t === undefined ? "" : tile(t)));
      }
      rows.push(h("div", { class: "qrow" }, row));
    }
    const seats = (v.seats ?? []).map((s: any) =>
      h("div", { class: `player${(v.toAct ?? []).includes(s.seat) ? " active" : ""}` },
        `${seatName(s.seat, viewer)}: ${s.score} pts, ${s.handCount} tiles`));
    const mine = (v.seats ?? []).find((s: any) => s.seat === viewer && s.handVisible);
    return h("div", { class: "table qwirkle" },
      h("div", { class: "info" }, `bag ${v.bagCount} · turn ${v.turns}`),
      h("div", { class: "players" }, seats),
      h("div", { class: "board-scroll" }, h("div", { class: "qboard" }, rows)),
      mine ? h("div", { class: "hand" }, "your tiles ", h("span", { "data-key": "bag", class: "pile" }, "bag"),
        (mine.handTileTypes ?? []).map((t: number) => tile(t, `tile:${t}`))) : null,
    );
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
  draw(v, viewer) {
    const rows = (v.players ?? []).map((p: any) =>
      h("div", { class: `player-row${(v.toAct ?? []).includes(p.seat) ? " active" : ""}` },
        h("div", { class: "caption" }, `${seatName(p.seat, viewer)} · total ${p.totalScore}${p.active ? "" : " (out)"}`),
        h("div", { class: "row" }, (v.over && p.lastRoundRow?.length ? p.lastRoundRow : p.row ?? []).map((c: string, i: number) => {
          const known = p.known?.[i];
          const [l, down] = ratCard(!ratUnseen(c) ? c : known ?? c);
          return card(l, { down: down && !l, key: `slot:${p.seat}:${i + 1}`, cls: ratUnseen(c) && !ratUnseen(known) ? "known" : "" });
        }))));
    const [pl] = ratCard(v.pending);
    const top = v.discardPile?.[v.discardPile.length - 1];
    return h("div", { class: "table ratcat" },
      h("div", { class: "info" }, `round ${v.round} · ${words(v.phase, "PHASE_")}${v.hasCaller ? ` · seat ${v.caller} called` : ""}`),
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

const democratie: GameUI = {
  draw(v, viewer) {
    const seats = (v.seatInfo ?? []).map((s: any) =>
      h("div", { class: `player${s.awaited ? " active" : ""}` },
        `${seatName(s.seat, viewer)}: ${s.handCount} cards, ${s.tribes} tribes, ${s.capturedCount} captured${s.committed ? " · sealed" : ""}`));
    const [vl, vr] = demoCard(v.voteCard);
    const last = v.lastTrick;
    return h("div", { class: "table democratie" },
      h("div", { class: "info" }, `deal ${v.dealNo} · day ${v.day} · trick ${v.trickNo}/${v.tricksInDay} · target ${v.target}`),
      h("div", { class: "row" }, "vote card ", vl ? card(vl, { red: vr }) : "—", !v.trump || v.trump === "SUIT_UNSPECIFIED" ? "" : v.trump === "SUIT_NONE" ? " · no trump" : ` · ${words(v.trump, "SUIT_")} are trump`),
      h("div", { class: "players" }, seats),
      last && last.played?.length ? h("div", { class: "row" }, `last trick (won by seat ${last.winner}${last.tie ? ", tie" : ""}): `,
        last.played.map((c: string) => { const [l, r] = demoCard(c); return card(l, { red: r }); })) : null,
      v.myCommit && v.myCommit !== "CARD_UNSPECIFIED" ? h("div", { class: "row" }, "you sealed ", card(demoCard(v.myCommit)[0], { red: demoCard(v.myCommit)[1] })) : null,
      v.viewer?.seat !== undefined ? h("div", { class: "hand" }, "your hand ",
        (v.hand ?? []).map((c: string) => { const [l, r] = demoCard(c); return card(l, { red: r, key: `card:${c}` }); })) : null,
    );
  },
  keys(a) {
    const [k, b] = kind(a);
    return k === "commitCard" ? [`card:${b.card}`] : [];
  },
};

// ------------------------------------------------------------------ Grid Knock

const gridKnock: GameUI = {
  draw(v, viewer) {
    const n = v.seats;
    const blocks = [];
    for (let o = 0; o < n; o++) {
      const cells = [];
      for (let r = 1; r <= 3; r++) for (let c = 1; c <= 4; c++) {
        const s = v.slots?.[o * 12 + (r - 1) * 4 + (c - 1)] ?? {};
        const up = s.state === "SLOT_STATE_FACE_UP" || (s.value !== undefined && s.state === "SLOT_STATE_FACE_DOWN");
        cells.push(h("div", { class: "gcell", "data-key": `slot:${o}:${r}:${c}` },
          s.state === "SLOT_STATE_EMPTY" ? "" : card(up ? String(s.value) : "", { down: !up, cls: c === 4 ? "shared" : "" })));
      }
      blocks.push(h("div", { class: `block${(v.toAct ?? []).includes(o) ? " active" : ""}` },
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
        v.takenCard !== undefined ? h("span", { class: "pile" }, "taken ", card(String(v.takenCard))) : null),
      h("div", { class: "blocks" }, blocks));
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

import { h } from "../dom";
import { zoomable } from "../zoom";
import { count, hand, kind, perSeat, player, type GameUI } from "./shared";

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
      player(s.seat, viewer, (v.toAct ?? []).includes(s.seat), `${count(s.score, "point")}, ${count(s.handCount, "tile")} in hand`, s.score));
    const mine = (v.seats ?? []).find((s: any) => s.seat === viewer && s.handVisible);
    return h("div", { class: "table qwirkle" },
      h("div", { class: "info" }, `bag ${v.bagCount} · turn ${v.turns}`),
      h("div", { class: "players" }, seats),
      zoomable("qwirkle", h("div", { class: "qboard" }, rows), "the board"),
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

export default qwirkle;

import { h } from "../dom";
import { card, count, hand, kind, perSeat, player, seatName, SUITS, type GameUI } from "./shared";

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
  round(e) {
    const [k, b] = kind(e);
    return k === "roundDealt" ? `round ${b.round}` : undefined;
  },
  follows(e) {
    return ["turnPassed", "matchEnded"].includes(kind(e)[0]);
  },
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
        // The round's value of the square as it stands (what it would score if the round ended
        // now), apart from the match total of the rounds before.
        h("div", { class: "caption" }, `${seatName(sq.owner, viewer)} · this round: ${count(sq.baseScore, "point")}`),
        h("div", { class: "grid3" }, (sq.cells ?? []).map((cell: any) => {
          const pile = cell.pile ?? [];
          const top = pile[pile.length - 1];
          const key = `cell:${sq.owner}:${cell.cell}`;
          const down = cell.state === "CELL_STATE_FACE_DOWN";
          const remembered = down && memory?.get(key);
          const [label, red] = carreCard(top?.card ?? (remembered ? JSON.parse(remembered) : undefined));
          // The card just under the top, when this viewer may see it (face up, or its own).
          const [under, underRed] = pile.length > 1 ? carreCard(pile[pile.length - 2]?.card) : ["", false];
          return h("div", { class: "cell", "data-key": key },
            h("span", { class: "cell-head" }, h("small", {}, cell.cell),
              pile.length > 1 ? h("span", { class: "stack", title: `${pile.length} cards stacked here` }, `×${pile.length}`) : null),
            cell.state === "CELL_STATE_EMPTY" ? null : card(label, {
              red, down: down && !label, cls: down ? (label ? "facedown known" : "facedown") : "",
              title: down && label ? (viewer === undefined ? `face down: ${label}` : `your face-down card ${label} (only you see it)`) : undefined,
            }),
            under ? h("span", { class: `under${underRed ? " red" : ""}`, title: `covers ${under}` }, `on ${under}`) : null);
        }))));
    const players = (v.players ?? []).map((p: any) =>
      player(p.seat, viewer, (v.toAct ?? []).includes(p.seat), `${count(p.handCount, "card")} · match total ${count(p.total, "point")}`, p.total));
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
        p.hand.map((c: any) => { const [l, r] = carreCard(c); return card(l, { red: r, key: carreKey(c) }); }))),
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

export default carre;

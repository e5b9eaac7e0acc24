import { h, words } from "../dom";
import { card, count, kind, perSeat, seatName, type GameUI } from "./shared";

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
  round(e) {
    const [k, b] = kind(e);
    return k === "roundDealt" ? `round ${b.round}` : undefined;
  },
  follows(e) {
    return ["turnEnded", "pileReshuffled", "roundRevealed", "matchEnded"].includes(kind(e)[0]);
  },
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
    // What the seat peeked at stays in sight until its turn ends (the rules let it look then).
    else if (k === "turnEnded" && b.seat === viewer) memory.clear();
    // A card that left its slot is no longer the one peeked at.
    else if ((k === "discardTaken" || k === "cardReplaced") && b.seat === viewer) memory.delete(`slot:${viewer}:${b.slot}`);
    else if (k === "cardsSwapped") { memory.delete(`slot:${b.seat}:${b.ownSlot}`); memory.delete(`slot:${b.targetSeat}:${b.targetSlot}`); }
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
        h("div", { class: "caption" }, `${seatName(p.seat, viewer)} · match total ${count(p.totalScore, "point")}${v.round > 1 ? ` (last round ${p.lastRoundScore})` : ""}${p.active ? "" : " (out)"}`),
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
      h("div", { class: "info" }, `round ${v.round} · ${words(v.phase, "PHASE_")}${v.hasCaller ? ` · ${seatName(v.caller, viewer)} called` : ""}`),
      memory?.size ? h("div", { class: "peek-note", id: "peek-note" }, "You peek at your cards: remember them, they turn face down when your turn ends.") : null,
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

export default ratATatCat;

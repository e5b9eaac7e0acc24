import { h, words } from "../dom";
import { card, count, kind, perSeat, seatName, type GameUI } from "./shared";

// ------------------------------------------------------------------ Grid Knock

const gridKnock: GameUI = {
  round(e) {
    const [k, b] = kind(e);
    return k === "dealt" ? `round ${b.round}` : undefined;
  },
  follows(e) {
    return ["triplesEnded", "turnEnded", "exchangedCardDiscarded", "knockWindowClosed", "reshuffled", "initialRevealed", "emptyPassed"].includes(kind(e)[0]);
  },
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
      // The round as it shows: the sum of this block's face-up cards (the auditor's face-down
      // values are not counted), apart from the match total of the rounds before.
      let showing = 0;
      for (let r = 1; r <= 3; r++) for (let c = 1; c <= 4; c++) {
        const s = v.slots?.[o * 12 + (r - 1) * 4 + (c - 1)] ?? {};
        const key = `slot:${o}:${r}:${c}`;
        // The auditor sees face-down values: drawn, marked as face down to the players.
        const seenDown = s.value !== undefined && s.state === "SLOT_STATE_FACE_DOWN";
        const up = s.state === "SLOT_STATE_FACE_UP" || seenDown;
        const chosen = memory?.get(key) === "chosen";
        if (s.state === "SLOT_STATE_FACE_UP") showing += Number(s.value ?? 0);
        cells.push(h("div", { class: "gcell", "data-key": key },
          s.state === "SLOT_STATE_EMPTY" ? "" : card(up ? String(s.value) : "", {
            down: !up, cls: [c === 4 ? "shared" : "", seenDown ? "known" : "", chosen ? "chosen" : ""].filter(Boolean).join(" "),
            title: chosen ? "you chose to turn this card up" : seenDown ? `face down: ${s.value}` : undefined,
          })));
      }
      blocks.push(h("div", { class: `block${(v.toAct ?? []).includes(o) ? " active" : ""}`, "data-hand": o, "data-seat": o, "data-score": v.totals?.[o] ?? 0 },
        h("div", { class: "caption" }, `${seatName(o, viewer)} · showing ${showing} · match ${count(v.totals?.[o] ?? 0, "point")}`),
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

export default gridKnock;

import { h, words } from "../dom";
import { card, count, hand, kind, perSeat, player, seatName, type GameUI } from "./shared";

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
  round(e) {
    const [k, b] = kind(e);
    return k === "deckShuffled" ? `deal ${b.dealNo}` : undefined;
  },
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

export default democratie;

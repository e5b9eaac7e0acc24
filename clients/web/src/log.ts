// The move log of a match and of its replay, grouped: a heading per round (GameUI.round), one
// entry per turn (consecutive events of one seat's commands, Event.seat), the turn's own lines
// shown and the steps that followed by themselves (the table's events, other seats' draws)
// folded under it. A round's scoring stays in sight. The viewer's own turns are marked
// `mine`; the latest line is marked `last`.

import { h } from "./dom";
import { eventSeat, type GameUI } from "./games/index";
import { seatBadge } from "./games/shared";

export interface LogEvent { seq: bigint; description: string; type: string; seat?: number; payload?: any }

export class MoveLog {
  readonly el: HTMLElement;
  private rounds: HTMLElement;
  private list?: HTMLElement; // the current round's list of turns
  private turn?: { el: HTMLElement; lines: HTMLElement; folded?: HTMLElement; key: string; count: number };
  private last?: HTMLElement;
  private round?: string;

  /** `link`: each line becomes a link that calls it with the line's seq (the replay). */
  constructor(private ui: GameUI, private viewer: number | undefined, attrs: Record<string, unknown>,
    private link?: (seq: number) => void) {
    this.rounds = h("div", { class: "rounds" });
    this.el = h("div", { class: "log", ...attrs }, this.rounds);
  }

  /** Adds one event (its payload as JSON); events without words are not shown. */
  add(e: LogEvent): boolean {
    if (!e.description) return false;
    const payload = e.payload;
    const seat = eventSeat(e.seat, payload, this.ui);
    const scored = payload !== undefined && !!this.ui.score?.(payload, 64);
    const round = payload !== undefined ? this.ui.round?.(payload) : undefined;
    if (round !== undefined && round !== this.round) { this.round = round; this.list = undefined; }
    if (!this.list) {
      this.list = h("ol", { class: "turns" });
      this.rounds.append(h("section", { class: "round", "data-round": this.round ?? "" },
        this.round !== undefined ? h("h3", {}, this.round) : null, this.list));
      this.turn = undefined;
    }
    // A turn: the events of consecutive commands of one seat (Event.seat); automatic events
    // (no command seat) make a turn of the table's.
    const key = e.seat === undefined ? "table" : `seat:${e.seat}`;
    if (!this.turn || this.turn.key !== key) {
      const owner = e.seat ?? seat;
      const mine = owner !== undefined && owner === this.viewer;
      const lines = h("span", { class: "lines" });
      const el = h("li", { class: `turn${mine ? " mine" : ""}`, "data-seat": owner, "data-seq": String(e.seq) },
        // Whose turn: the player's name in its colour, else "Seat N"; the viewer's own, "you".
        owner === undefined ? h("span", { class: "who" }, "table") : seatBadge(owner, mine ? "you" : undefined), lines);
      this.list.append(el);
      this.turn = { el, lines, key, count: 0 };
    }
    const text = this.link
      ? h("a", { href: "#", onclick: (ev: Event) => { ev.preventDefault(); this.link!(Number(e.seq)); } }, e.description)
      : e.description;
    const line = h("span", { class: `line${scored ? " scored" : ""}`, "data-seq": String(e.seq), "data-seat": seat }, text);
    // The turn's own lines (its first, and what its seat did) stay in sight, and a scoring;
    // what followed by itself is folded.
    const own = this.turn.count === 0 || scored || (e.seat !== undefined && seat === e.seat && !(payload !== undefined && this.ui.follows?.(payload)));
    if (own) this.turn.lines.append(line);
    else {
      if (!this.turn.folded) {
        this.turn.folded = h("span", { class: "steps" });
        this.turn.el.append(h("details", { class: "auto" }, h("summary", {}, "more"), this.turn.folded));
      }
      this.turn.folded.append(line);
      const n = this.turn.folded.childElementCount;
      this.turn.el.querySelector("details.auto > summary")!.textContent = `${n} more step${n === 1 ? "" : "s"}`;
    }
    this.turn.count++;
    this.last?.classList.remove("last");
    this.turn.el.parentElement?.querySelector("li.last")?.classList.remove("last");
    this.el.querySelector("li.turn.last")?.classList.remove("last");
    line.classList.add("last");
    this.turn.el.classList.add("last");
    this.last = line;
    return true;
  }

  /** Marks the line of `seq` (the replay's step shown) and scrolls it into the box. */
  mark(seq: number) {
    this.last?.classList.remove("last");
    this.el.querySelector("li.turn.last")?.classList.remove("last");
    const line = this.el.querySelector<HTMLElement>(`.line[data-seq="${seq}"]`);
    if (!line) return;
    line.classList.add("last");
    line.closest("li.turn")?.classList.add("last");
    const fold = line.closest("details");
    if (fold) (fold as HTMLDetailsElement).open = true;
    this.last = line;
    this.el.scrollTop += line.getBoundingClientRect().top - this.el.getBoundingClientRect().top - this.el.clientHeight / 2;
  }

  follow() { this.el.scrollTop = this.el.scrollHeight; }
}

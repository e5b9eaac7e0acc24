// The replay (#/replay/<id>): a finished match seq by seq as its auditor sees it, checked
// in the browser, with the value of each move at a step where a seat decides; a running match
// so far as this browser's seat saw it (the auditor role is refused while it runs), with
// "Play on from here" from that seat's knowledge, and on a running fork (never rated, an
// analysis board) the value of that seat's own moves.

import { h } from "./dom";
import { anyJson, asAuditorRole, refusal } from "./api";
import { evaluatedMoves, gameUI } from "./games/index";
import { MoveLog } from "./log";
import { seatBadge, seatLabel, setSeats } from "./games/shared";
import { anyJsonOrUndefined, callerToken, client, credential, current, sameBytes, types } from "./session";
import { asSeat, Role } from "./api";
import { forkRefused, playOn } from "./fork";
import type { Any } from "@bufbuild/protobuf/wkt";

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { all.set(p, at); at += p.length; }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", all));
}

// Rollouts per move for the replay's move values, from a fixed seed (the same values every
// time), within a time budget so that a position with many moves still answers. The moves are
// screened by successive halving (RolloutSettings.screen_to): the best VALUE_SCREEN_TO get every
// rollout, on two threads; a Qwirkle table of ~100 moves then costs a sixth of valuing them all.
const VALUE_ROLLOUTS = 200;
const VALUE_SCREEN_TO = 8;
const VALUE_SEED = 1n;
const VALUE_BUDGET_MS = 15_000;

/** A game message as JSON without its type, to compare actions from different messages. */
const actionKey = (json: any) => { const { ["@type"]: _t, ...rest } = json ?? {}; return JSON.stringify(rest); };
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

// Moves of the value table in sight before "the other N moves" (the move played always is).
const BEST_FEW = 5;

type CallOptions = { headers: Record<string, string> };

/** The value of each legal move of the seat to act at `seq`, read as `reader`: the auditor of
 *  a finished match (any seat), or the seat `only` of a running fork (its own positions alone):
 *  GetView(at_seq, with_position), then EvaluatePosition with rollouts.
 *  Best first, the few best in sight and the rest folded; the move the seat actually played is
 *  marked. Hovering, focusing or selecting a row shows its move on the board (`show`, with the
 *  drawing's keys of the move; undefined: back to the selected one). */
async function moveValues(gameId: string, gameType: string, seq: number, events: { seq: bigint; command?: { seat?: number; action?: Any } }[],
  reader: CallOptions, only: number | undefined,
  show: (action: any | undefined, seat: number) => void, choose: (action: any | undefined, seat: number) => void): Promise<HTMLElement> {
  const at = (await client.getView({ gameId, atSeq: BigInt(seq) }, reader)).state!;
  const seat = only === undefined ? at.toAct[0] : at.toAct.find((s) => s === only);
  if (seat === undefined) return h("p", { class: "caption" }, only === undefined ? "No seat decides anything here." : "You do not decide here: the values are of your own moves.");
  const got = await client.getView({ gameId, atSeq: BigInt(seq), withPosition: true, positionSeat: seat }, reader);
  const labels = new Map(got.positionMoves.map((m, i) => [actionKey(anyJson(m)), got.positionMoveLabels[i]]));
  const ev = await client.evaluatePosition({ gameType, position: got.position,
    rollouts: { rollouts: VALUE_ROLLOUTS, seed: VALUE_SEED, timeBudgetMs: VALUE_BUDGET_MS, threads: 2, screenTo: VALUE_SCREEN_TO } });
  // The move played from here: the next seat action of that seat in the log.
  const next = events.slice(seq).find((e) => e.command?.action && e.command.seat === seat);
  const played = next?.command?.action ? actionKey(anyJson(next.command.action)) : undefined;
  const rows = evaluatedMoves(anyJson(ev.evaluation)).map((m) => ({ key: actionKey(m.action), action: m.action, v: m.value ?? {} }))
    .sort((a, b) => (b.v.winProbability ?? 0) - (a.v.winProbability ?? 0) || (b.v.margin ?? 0) - (a.v.margin ?? 0));
  if (!rows.length) return h("p", { class: "caption" }, `${seatLabel(seat)} has no choice here.`);
  const samples = Math.min(...rows.map((r) => r.v.samples ?? 0));
  let selected: HTMLElement | undefined;
  const select = (tr: HTMLElement, action: any) => {
    selected?.classList.remove("selected");
    selected?.setAttribute("aria-selected", "false");
    selected = tr === selected ? undefined : tr;
    selected?.classList.add("selected");
    selected?.setAttribute("aria-selected", "true");
    choose(selected ? action : undefined, seat);
  };
  const folded = rows.length - rows.filter((r, i) => i < BEST_FEW || r.key === played).length;
  const table = h("table", { class: "values folded", "aria-label": "value of each move" },
    h("thead", {}, h("tr", {}, h("th", {}, "move"), h("th", {}, "win chance"), h("th", {}, "margin"))),
    h("tbody", {}, rows.map((r, i) => {
      const tr = h("tr", { class: `value-row${r.key === played ? " was-played" : ""}${i < BEST_FEW || r.key === played ? "" : " more"}`,
        tabindex: 0, "aria-selected": "false",
        onmouseenter: () => show(r.action, seat), onmouseleave: () => show(undefined, seat),
        onfocus: () => show(r.action, seat), onblur: () => show(undefined, seat),
        onclick: () => select(tr, r.action),
        onkeydown: (e: KeyboardEvent) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(tr, r.action); } } },
        h("td", { class: "label" }, labels.get(r.key) ?? "a move", r.key === played ? h("span", { class: "played-mark" }, " (played)") : null),
        h("td", { class: "num" }, `${pct(r.v.winProbability ?? 0)} `, h("small", {}, `± ${pct(r.v.winStderr ?? 0)}`)),
        h("td", { class: "num" }, `${(r.v.margin ?? 0).toFixed(1)} `, h("small", {}, `± ${(r.v.marginStderr ?? 0).toFixed(1)}`)));
      return tr;
    })));
  const more = folded ? h("button", { type: "button", class: "values-more", id: "values-more",
    onclick: () => { table.classList.remove("folded"); more!.remove(); } }, `the other ${folded} moves`) : null;
  return h("div", {},
    h("p", { class: "caption" }, `${seatLabel(seat)} to act: each move's chance of winning and final margin over ${samples} simulated endings (± standard error), best first. Point at a move, or select it, to see it on the table.`),
    table, more);
}

export async function replayPage(gameId: string): Promise<HTMLElement> {
  // A finished match is read as its auditor (every hand); a running one as this browser's seat
  // (what it saw so far), else as a spectator.
  const token = callerToken(gameId);
  const now = (await client.getView({ gameId }, asSeat(token))).state!;
  const running = !now.over;
  const reader = running ? asSeat(token) : asAuditorRole;
  const viewer = running && now.role === Role.SEAT ? now.seat : undefined;
  const last = running ? now : (await client.getView({ gameId }, asAuditorRole)).state!;
  setSeats(last.seats);
  const ui = gameUI(last.gameType);
  const events = (await client.listEvents({ gameId }, reader)).events;
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
  const verdict = running
    ? h("p", { class: "verify running", id: "verification" }, `The match is still running: ${viewer === undefined ? "shown as a spectator sees it" : `shown as ${seatLabel(viewer)} (you) saw it`}; it is verified once it ends and its seed is revealed.`)
    : h("p", { class: `verify ${problems.length ? "bad" : "ok"}`, id: "verification" },
      problems.length ? `Not verified: ${problems.join("; ")}` : `Verified: seed matches its commitment, ${events.length} events, chain head matches`);
  const max = Number(last.seq);
  const slider = h("input", { type: "range", min: 1, max, value: max, id: "seq-slider", "aria-label": "step" }) as HTMLInputElement;
  const label = h("span", { class: "seq" });
  const board = h("div", { class: "board" });
  const eventLine = h("div", { class: "event", "aria-live": "polite" });
  const loading = h("span", { class: "loading", hidden: true }, "loading…");
  let shown = 0;
  // The view drawn (at `shown`) and what the event shown touched, to draw it again with a
  // move of the value table shown on it.
  let drawn: { view: any; touched: string[] } | undefined;
  const drawBoard = (action?: any, seat?: number) => {
    if (!drawn) return;
    board.replaceChildren(ui.draw(drawn.view, viewer));
    const keys = action !== undefined && seat !== undefined ? ui.keys(action, seat) : [];
    if (keys.length) ui.preview?.(board, keys);
    board.querySelectorAll<HTMLElement>("[data-key]").forEach((e) => {
      e.classList.toggle("last-move", !keys.length && drawn!.touched.includes(e.dataset.key!));
      e.classList.toggle("shown-move", keys.includes(e.dataset.key!));
    });
  };
  let selectedMove: { action: any; seat: number } | undefined;
  const showMove = (action: any | undefined, seat: number, sticky = false) => {
    if (sticky) selectedMove = action === undefined ? undefined : { action, seat };
    const m = action ?? selectedMove?.action;
    drawBoard(m, action !== undefined ? seat : selectedMove?.seat);
  };
  // Move values: for a finished match (the auditor role is allowed on it alone), and on a
  // running fork for this browser's seat, its own positions (a fork is an analysis board).
  const valuesBox = h("div", { class: "move-values", id: "move-values", "aria-live": "polite" });
  let valuesFor = 0;
  const analysis = running && !!last.fork && viewer !== undefined;
  const valuesBtn = (last.over || analysis) && (await types()).find((t) => t.id === last.gameType)?.positionType
    ? h("button", { type: "button", id: "move-values-btn", onclick: async () => {
      const seq = shown;
      valuesFor = seq;
      valuesBtn!.setAttribute("disabled", "");
      valuesBox.setAttribute("aria-busy", "true");
      valuesBox.replaceChildren(h("p", { class: "loading", id: "values-loading" }, "Computing the value of each move… (a few seconds)"));
      try {
        const table = await moveValues(gameId, last.gameType, seq, events, reader, analysis ? viewer : undefined,
          (a, seat) => showMove(a, seat, false), (a, seat) => showMove(a, seat, true));
        if (valuesFor === seq) valuesBox.replaceChildren(table);
      } catch (err) {
        if (valuesFor === seq) valuesBox.replaceChildren(h("p", { class: "refusal" }, `No values: ${refusal(err).message}`));
      } finally {
        if (valuesFor === seq) { valuesBox.removeAttribute("aria-busy"); valuesBtn!.removeAttribute("disabled"); }
      }
    } }, "Value of the moves here") : null;
  // Play on from the step shown (fork.ts): a finished match from the full state, the seat to
  // act this browser's; a running one from this browser's seat's own knowledge (a spectator of
  // a running match has none to fork).
  const forkBtn = last.over || viewer !== undefined ? h("button", { type: "button", id: "play-on-btn", onclick: async () => {
    const seq = shown;
    try {
      if (running) await playOn(gameId, last.gameType, last.seatCount, seq, { auditor: false, seat: viewer! }, token);
      else {
        const at = (await client.getView({ gameId, atSeq: BigInt(seq) }, asAuditorRole)).state!;
        await playOn(gameId, last.gameType, last.seatCount, seq, { auditor: true, seat: at.toAct[0] ?? 0 }, credential());
      }
    } catch (err) {
      valuesBox.replaceChildren(h("p", { class: "refusal", id: "play-on-refused" }, forkRefused(err)));
    }
  } }, "Play on from here") : null;
  const moveLog = new MoveLog(ui, undefined, { "aria-label": "every step", id: "replay-log", "data-follow": "" }, (seq) => { stop(); go(seq); });
  for (const e of events) {
    const payload = e.payload ? anyJsonOrUndefined(e.payload) : undefined;
    moveLog.add({ ...e, payload, description: e.description || e.type.replace(/_/g, " ") });
  }
  const show = async () => {
    const seq = Number(slider.value);
    loading.hidden = false;
    try {
      const st = (await client.getView({ gameId, atSeq: BigInt(seq) }, reader)).state!;
      if (Number(slider.value) !== seq) return;
      if (shown !== seq) { valuesFor = 0; valuesBox.replaceChildren(); valuesBox.removeAttribute("aria-busy"); valuesBtn?.removeAttribute("disabled"); selectedMove = undefined; }
      shown = seq;
      label.textContent = `step ${seq} of ${max}${running ? " so far" : ""}`;
      // Values only where a seat decides (on a running fork, this browser's seat).
      if (valuesBtn) valuesBtn.hidden = analysis ? !st.toAct.includes(viewer!) : !st.toAct.length;
      if (forkBtn) forkBtn.hidden = !st.toAct.length;
      const ev = events[seq - 1];
      // What the event shown touched, marked on the table as on the match page.
      const payload = ev?.payload ? anyJsonOrUndefined(ev.payload) : undefined;
      // The auditor's view (every hand is in it, and the drawing shows each one), or the seat's.
      drawn = { view: anyJson(st.view), touched: payload && ui.eventKeys ? ui.eventKeys(payload) : [] };
      drawBoard(selectedMove?.action, selectedMove?.seat);
      eventLine.textContent = ev?.description ?? "";
      // The step shown, marked in the log.
      moveLog.mark(seq);
    } finally {
      if (Number(slider.value) === seq) loading.hidden = true;
    }
  };
  const go = (seq: number) => { slider.value = String(Math.max(1, Math.min(max, seq))); return show(); };
  let playing: ReturnType<typeof setInterval> | undefined;
  const playBtn = h("button", { type: "button", id: "replay-play", "aria-label": "play" }, "▶ play") as HTMLButtonElement;
  const stop = () => { clearInterval(playing); playing = undefined; playBtn.textContent = "▶ play"; playBtn.setAttribute("aria-label", "play"); };
  playBtn.onclick = () => {
    if (playing) return stop();
    if (Number(slider.value) >= max) slider.value = "1";
    playBtn.textContent = "❚❚ pause";
    playBtn.setAttribute("aria-label", "pause");
    playing = setInterval(() => { if (shown >= max) stop(); else if (shown === Number(slider.value)) go(shown + 1); }, 700);
    show();
  };
  current.stop = stop;
  slider.addEventListener("input", () => { stop(); show(); });
  await show();
  const step = (label: string, id: string, to: () => number) =>
    h("button", { type: "button", id, "aria-label": label, onclick: () => { stop(); go(to()); } }, label);
  return h("section", { class: "replay" }, h("h1", {}, `Replay · ${(await types()).find((t) => t.id === last.gameType)?.name ?? last.gameType}${running ? " (so far)" : ""}`),
    // Who played: each seat's player in its colour, else its number.
    h("div", { class: "seats", id: "replay-seats" }, last.seats.map((_, s) => seatBadge(s, seatLabel(s), "seat"))),
    last.outcome ? h("p", { class: "replay-outcome" }, last.outcome.aborted ? "The match was stopped." : last.outcome.winners.length ? `${last.outcome.winners.map(seatLabel).join(" and ")} won.` : "Nobody won.") : null,
    verdict,
    h("div", { class: "replay-controls" },
      step("« start", "replay-first", () => 1), step("◀ back", "replay-back", () => shown - 1), playBtn,
      step("next ▶", "replay-next", () => shown + 1), step("end »", "replay-last", () => max), loading),
    h("div", { class: "slider" }, slider, label), eventLine, board,
    valuesBtn || forkBtn ? h("div", { class: "values-row" }, valuesBtn, forkBtn) : null, valuesBox,
    h("h2", {}, "Every step"), moveLog.el,
    h("a", { href: `#/game/${gameId}` }, "back to the match"));
}

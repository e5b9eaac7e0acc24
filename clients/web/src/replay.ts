// The replay (#/replay/<id>): a finished match seq by seq as its auditor sees it, checked
// in the browser, with the value of each move at a step where a seat decides.

import { h } from "./dom";
import { anyJson, asAuditorRole, refusal } from "./api";
import { evaluatedMoves, eventSeat, gameUI } from "./games/index";
import { anyJsonOrUndefined, client, current, sameBytes, types } from "./session";
import type { Any } from "@bufbuild/protobuf/wkt";

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { all.set(p, at); at += p.length; }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", all));
}

// Rollouts per move for the replay's move values, from a fixed seed (the same values every
// time), within a time budget so that a position with many moves still answers.
const VALUE_ROLLOUTS = 200;
const VALUE_SEED = 1n;
const VALUE_BUDGET_MS = 15_000;

/** A game message as JSON without its type, to compare actions from different messages. */
const actionKey = (json: any) => { const { ["@type"]: _t, ...rest } = json ?? {}; return JSON.stringify(rest); };
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The value of each legal move of the seat to act at `seq` of a finished match, for its
 *  auditor: GetView(at_seq, with_position) as the auditor, then EvaluatePosition with rollouts.
 *  Best first; the move the seat actually played is marked. */
async function moveValues(gameId: string, gameType: string, seq: number, events: { seq: bigint; command?: { seat?: number; action?: Any } }[]): Promise<HTMLElement> {
  const at = (await client.getView({ gameId, atSeq: BigInt(seq) }, asAuditorRole)).state!;
  const seat = at.toAct[0];
  if (seat === undefined) return h("p", { class: "caption" }, "No seat decides anything here.");
  const got = await client.getView({ gameId, atSeq: BigInt(seq), withPosition: true, positionSeat: seat }, asAuditorRole);
  const labels = new Map(got.positionMoves.map((m, i) => [actionKey(anyJson(m)), got.positionMoveLabels[i]]));
  const ev = await client.evaluatePosition({ gameType, position: got.position,
    rollouts: { rollouts: VALUE_ROLLOUTS, seed: VALUE_SEED, timeBudgetMs: VALUE_BUDGET_MS, threads: 1 } });
  // The move played from here: the next seat action of that seat in the log.
  const next = events.slice(seq).find((e) => e.command?.action && e.command.seat === seat);
  const played = next?.command?.action ? actionKey(anyJson(next.command.action)) : undefined;
  const rows = evaluatedMoves(anyJson(ev.evaluation)).map((m) => ({ key: actionKey(m.action), v: m.value ?? {} }))
    .sort((a, b) => (b.v.winProbability ?? 0) - (a.v.winProbability ?? 0) || (b.v.margin ?? 0) - (a.v.margin ?? 0));
  if (!rows.length) return h("p", { class: "caption" }, `Seat ${seat} has no choice here.`);
  const samples = Math.min(...rows.map((r) => r.v.samples ?? 0));
  return h("div", {},
    h("p", { class: "caption" }, `Seat ${seat} to act: each move's chance of winning and final margin over ${samples} simulated endings (± standard error), best first.`),
    h("table", { class: "values" },
      h("thead", {}, h("tr", {}, h("th", {}, "move"), h("th", {}, "win chance"), h("th", {}, "margin"), h("th", {}, ""))),
      h("tbody", {}, rows.map((r) => h("tr", { class: `value-row${r.key === played ? " was-played" : ""}` },
        h("td", {}, labels.get(r.key) ?? "a move"),
        h("td", { class: "num" }, `${pct(r.v.winProbability ?? 0)} ± ${pct(r.v.winStderr ?? 0)}`),
        h("td", { class: "num" }, `${(r.v.margin ?? 0).toFixed(1)} ± ${(r.v.marginStderr ?? 0).toFixed(1)}`),
        h("td", {}, r.key === played ? "played" : ""))))));
}

export async function replayPage(gameId: string): Promise<HTMLElement> {
  const last = (await client.getView({ gameId }, asAuditorRole)).state!;
  const ui = gameUI(last.gameType);
  const events = (await client.listEvents({ gameId }, asAuditorRole)).events;
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
  const verdict = h("p", { class: `verify ${problems.length ? "bad" : "ok"}`, id: "verification" },
    problems.length ? `Not verified: ${problems.join("; ")}` : `Verified: seed matches its commitment, ${events.length} events, chain head matches`);
  const max = Number(last.seq);
  const slider = h("input", { type: "range", min: 1, max, value: max, id: "seq-slider", "aria-label": "move number" }) as HTMLInputElement;
  const label = h("span", { class: "seq" });
  const board = h("div", { class: "board" });
  const eventLine = h("div", { class: "event", "aria-live": "polite" });
  const loading = h("span", { class: "loading", hidden: true }, "loading…");
  let shown = 0;
  // Move values: only for a finished match (the auditor role is allowed on it alone).
  const valuesBox = h("div", { class: "move-values", id: "move-values", "aria-live": "polite" });
  let valuesFor = 0;
  const valuesBtn = last.over && (await types()).find((t) => t.id === last.gameType)?.positionType
    ? h("button", { type: "button", id: "move-values-btn", onclick: async () => {
      const seq = shown;
      valuesFor = seq;
      valuesBtn!.setAttribute("disabled", "");
      valuesBox.setAttribute("aria-busy", "true");
      valuesBox.replaceChildren(h("p", { class: "loading", id: "values-loading" }, "Computing the value of each move… (a few seconds)"));
      try {
        const table = await moveValues(gameId, last.gameType, seq, events);
        if (valuesFor === seq) valuesBox.replaceChildren(table);
      } catch (err) {
        if (valuesFor === seq) valuesBox.replaceChildren(h("p", { class: "refusal" }, `No values: ${refusal(err).message}`));
      } finally {
        if (valuesFor === seq) { valuesBox.removeAttribute("aria-busy"); valuesBtn!.removeAttribute("disabled"); }
      }
    } }, "Value of the moves here") : null;
  const eventList = h("ol", { class: "log replay-log", "aria-label": "every event" },
    events.map((e) => {
      const seat = eventSeat(e.seat, e.payload ? anyJsonOrUndefined(e.payload) : undefined, ui);
      return h("li", { "data-seq": String(e.seq), "data-seat": seat }, h("span", { class: "who" }, seat === undefined ? "table" : `seat ${seat}`), " ",
        h("a", { href: "#", onclick: (ev: Event) => { ev.preventDefault(); stop(); go(Number(e.seq)); } }, e.description || e.type.replace(/_/g, " ")));
    }));
  const show = async () => {
    const seq = Number(slider.value);
    loading.hidden = false;
    try {
      const st = (await client.getView({ gameId, atSeq: BigInt(seq) }, asAuditorRole)).state!;
      if (Number(slider.value) !== seq) return;
      if (shown !== seq) { valuesFor = 0; valuesBox.replaceChildren(); valuesBox.removeAttribute("aria-busy"); valuesBtn?.removeAttribute("disabled"); }
      shown = seq;
      label.textContent = `seq ${seq} / ${max}`;
      // The auditor's view: every hand is in it, and the drawing shows each one.
      board.replaceChildren(ui.draw(anyJson(st.view), undefined));
      const ev = events[seq - 1];
      // What the event shown touched, marked on the table as on the match page.
      const payload = ev?.payload ? anyJsonOrUndefined(ev.payload) : undefined;
      const touched = payload && ui.eventKeys ? ui.eventKeys(payload) : [];
      board.querySelectorAll<HTMLElement>("[data-key]").forEach((e) => e.classList.toggle("last-move", touched.includes(e.dataset.key!)));
      eventLine.textContent = ev?.description ?? "";
      // The event shown, marked in the list of every event.
      eventList.querySelector("li.last")?.classList.remove("last");
      const at = eventList.querySelector<HTMLElement>(`li[data-seq="${seq}"]`);
      at?.classList.add("last");
      if (at) eventList.scrollTop = at.offsetTop - eventList.offsetTop - eventList.clientHeight / 2;
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
  return h("section", { class: "replay" }, h("h1", {}, `Replay · ${(await types()).find((t) => t.id === last.gameType)?.name ?? last.gameType}`), verdict,
    h("div", { class: "replay-controls" },
      step("« start", "replay-first", () => 1), step("◀ back", "replay-back", () => shown - 1), playBtn,
      step("next ▶", "replay-next", () => shown + 1), step("end »", "replay-last", () => max), loading),
    h("div", { class: "slider" }, slider, label), eventLine, board,
    valuesBtn ? h("div", { class: "values-row" }, valuesBtn) : null, valuesBox,
    h("h2", {}, "Every event"), eventList,
    h("a", { href: `#/game/${gameId}` }, "back to the match"));
}

// The lobby (#/): the matches (this browser's, the server's: open seats, running, finished)
// and a form per game to start one.

import { h } from "./dom";
import { asSeat, refusal, SeatKind, SeatStatus, type GameState, type GameSummary } from "./api";
import { client, heldMatches, keep, types, type Held } from "./session";
import { leaderboardPage, rankedPanel } from "./ranked";

const when = (g: GameSummary) => g.createdAt ? new Date(Number(g.createdAt.seconds) * 1000).toLocaleString() : "";
// Matches per ListGames page ("more" asks for the next one).
const LOBBY_PAGE = 20;
// Own matches shown before "all N".
const OWN_SHORT = 8;

/** The server's matches (ListGames, a page at a time, optionally of one game): open seats to
 *  take, running matches to watch, finished ones to replay; and the ones this browser plays
 *  in (local storage), to resume. */
function matchList(names: Map<string, string>): HTMLElement {
  const filter = h("select", { id: "game-filter", "aria-label": "show matches of" },
    h("option", { value: "" }, "every game"), [...names].map(([id, name]) => h("option", { value: id }, name))) as HTMLSelectElement;
  const lists = h("div", { class: "match-lists" });
  const more = h("button", { type: "button", id: "more-matches", hidden: true }, "more matches") as HTMLButtonElement;
  const note = h("p", { class: "refusal", role: "alert" });
  const box = h("section", { class: "lobby-matches" },
    h("div", { class: "filter" }, h("h1", {}, "Matches"), h("label", {}, "of ", filter)), lists, h("div", { class: "more-row" }, more), note);
  const mine = new Map(heldMatches().map((x) => [x.gameId, x.record]));
  const seen = new Map<string, GameSummary>();
  let token = "";
  let showAllOwn = false;
  let generation = 0;
  // Each match's state (whose turn, or the result), read once per match shown.
  const states = new Map<string, GameState | null>();
  const asked = new Set<string>();
  const ask = (ids: string[]) => {
    const todo = ids.filter((id) => !asked.has(id));
    todo.forEach((id) => asked.add(id));
    if (!todo.length) return;
    Promise.all(todo.map(async (id) => {
      const r = mine.get(id);
      const token = r && r.mine.length ? r.tokens[r.mine[0]] : undefined;
      try { states.set(id, (await client.getView({ gameId: id }, asSeat(token))).state ?? null); } catch { states.set(id, null); }
    })).then(drawLists);
  };
  // Who plays (from the summary or the state) and where the match stands, in words.
  const who = (s: number, mySeats: number[]) => (mySeats.includes(s) ? "you" : `seat ${s}`);
  const players = (seats: { status: SeatStatus; bot: string }[], mySeats: number[]) => seats.map((x, s) =>
    mySeats.includes(s) ? "you" : x.status === SeatStatus.BOT ? `bot (${x.bot.replace(/_/g, " ")})` :
      x.status === SeatStatus.OPEN ? "open seat" : x.status === SeatStatus.INVITED ? "invited" : "player").join(", ");
  const standing = (st: GameState | null | undefined, mySeats: number[]) => {
    if (!st) return "";
    if (st.over) {
      const w = st.outcome?.winners ?? [];
      if (st.outcome?.aborted) return "stopped";
      return w.length ? `${w.map((s) => who(s, mySeats)).join(" and ")} won` : "nobody won";
    }
    if (mySeats.some((s) => st.toAct.includes(s))) return "your turn";
    return st.toAct.length > 1 ? "everyone chooses" : st.toAct.length ? `${who(st.toAct[0], mySeats)}'s turn` : "";
  };
  const line = (id: string, type: string, seats: { status: SeatStatus; bot: string }[] | undefined, mySeats: number[], at: string, action: HTMLElement) => {
    const st = states.get(id);
    const stand = standing(st, mySeats);
    const who = seats ?? st?.seats;
    return h("li", { "data-game-id": id, "data-game-type": type },
      h("span", { class: "what" }, names.get(type) ?? (type || "a match")),
      stand ? h("span", { class: `standing${stand === "your turn" ? " mine" : ""}` }, stand) : null,
      who ? h("span", { class: "players" }, players(who, mySeats)) : null,
      h("span", { class: "when" }, at), action);
  };
  // A list with nothing in it stays folded.
  const list = (title: string, id: string, items: HTMLElement[], empty: string, extra?: HTMLElement | null) =>
    h("details", { class: "list", id, open: items.length > 0 }, h("summary", {}, h("h2", {}, `${title} (${items.length})`)),
      items.length ? h("ul", {}, items) : h("p", { class: "caption" }, empty), extra);
  const drawLists = () => {
    const games = [...seen.values()];
    const type = filter.value;
    // (A seat kept before the game type was recorded: the type from a page, if listed there.)
    const typeOf = (id: string, r: Held) => r.gameType ?? seen.get(id)?.gameType ?? "";
    const own = [...mine].filter(([id, r]) => !type || typeOf(id, r) === type);
    const ownShown = showAllOwn ? own : own.slice(0, OWN_SHORT);
    const ownItems = ownShown.map(([id, r]) => {
      const g = seen.get(id);
      return line(id, typeOf(id, r), g?.seats, r.mine, r.at ? new Date(r.at).toLocaleString() : "",
        h("a", { href: `#/game/${id}`, class: "resume" }, g?.over || states.get(id)?.over ? "See the end" : "Resume"));
    });
    const others = games.filter((g) => !mine.has(g.gameId));
    ask([...ownShown.map(([id]) => id), ...others.map((g) => g.gameId)]);
    const seats = (g: GameSummary) => g.seats;
    lists.replaceChildren(
      list("Your matches", "my-matches", ownItems, "None yet: start one below.",
        !showAllOwn && own.length > OWN_SHORT ? h("button", { type: "button", class: "all-own", onclick: () => { showAllOwn = true; drawLists(); } }, `all ${own.length}`) : null),
      list("Open seats", "open-seats", others.filter((g) => !g.over && g.openSeats > 0).map((g) => line(g.gameId, g.gameType, seats(g), [], when(g),
        h("a", { href: `#/open/${g.gameId}`, class: "join" }, `Join (${g.openSeats} open seat${g.openSeats > 1 ? "s" : ""})`))), "No match is waiting for players."),
      list("Running matches", "running", others.filter((g) => !g.over && g.openSeats === 0).map((g) => line(g.gameId, g.gameType, seats(g), [], when(g),
        h("a", { href: `#/game/${g.gameId}`, class: "watch" }, "Watch"))), "No match is running."),
      list("Finished matches", "finished", others.filter((g) => g.over).map((g) => line(g.gameId, g.gameType, seats(g), [], when(g),
        h("a", { href: `#/replay/${g.gameId}`, class: "replay" }, "Replay"))), "None finished yet."));
  };
  const page = async () => {
    const at = generation;
    more.disabled = true;
    box.setAttribute("aria-busy", "true");
    try {
      const got = await client.listGames({ pageSize: LOBBY_PAGE, pageToken: token, gameType: filter.value });
      if (at !== generation) return;
      for (const g of got.games) seen.set(g.gameId, g);
      token = got.nextPageToken;
      note.textContent = "";
    } catch (err) {
      if (at === generation) note.textContent = `The list of matches is not available: ${refusal(err).message}`;
    } finally {
      if (at === generation) {
        more.hidden = !token;
        more.disabled = false;
        box.removeAttribute("aria-busy");
        drawLists();
      }
    }
  };
  more.onclick = page;
  filter.onchange = () => { generation++; seen.clear(); token = ""; page(); };
  drawLists();
  page();
  return box;
}

export async function lobby(): Promise<HTMLElement> {
  const board = /^#\/leaderboard\/?([^/]*)/.exec(location.hash);  // #/leaderboard/<game> (ranked.ts)
  if (board) return leaderboardPage(decodeURIComponent(board[1]));
  const list = await types();
  const names = new Map(list.map((t) => [t.id, t.name]));
  // One form in sight: the game chosen (the last one chosen, kept in local storage).
  const chosen = list.some((t) => t.id === localStorage.getItem("tablier:new-game")) ? localStorage.getItem("tablier:new-game")! : list[0]?.id;
  const chooser = h("select", { id: "new-game", "aria-label": "game" }, list.map((t) => h("option", { value: t.id, selected: t.id === chosen }, t.name))) as HTMLSelectElement;
  const forms = list.map((t) => {
      const seatsSel = h("select", { name: "seats", "aria-label": `${t.name} seats` },
        Array.from({ length: t.maxPlayers - t.minPlayers + 1 }, (_, i) => t.minPlayers + i).map((n) => h("option", { value: n }, `${n} players`))) as HTMLSelectElement;
      const seatRoles = h("div", { class: "seat-roles" });
      const drawRoles = () => {
        seatRoles.replaceChildren(...Array.from({ length: Number(seatsSel.value) }, (_, s) =>
          h("label", {}, `seat ${s} `, h("select", { "data-seat": s, "aria-label": `seat ${s}` },
            h("option", { value: "me", selected: s === 0 }, "you"),
            // "bot": the strongest (the last listed); or a chosen one.
            // Bots only where the game has them: "bot" is the strongest (the last listed).
            t.bots.length ? h("option", { value: "bot", selected: s !== 0 }, "server bot (strongest)") : null,
            t.bots.map((b) => h("option", { value: `bot:${b}` }, `server bot: ${b.replace(/_/g, " ")}`)),
            h("option", { value: "invite", selected: s !== 0 && !t.bots.length }, "invite a friend"),
            h("option", { value: "open" }, "open to anyone")))));
      };
      seatsSel.addEventListener("change", drawRoles);
      drawRoles();
      const options = t.options.map((o) => h("label", { class: "option" },
        // The option's name for people (GameOption.label), its description under it.
        h("span", { class: "option-words" }, h("strong", {}, o.label || o.name.replace(/_/g, " ")), o.description ? h("small", {}, o.description) : null), " ",
        o.allowedValues.length
          ? h("select", { name: o.name, "aria-label": o.label || o.description || o.name }, h("option", { value: "" }, `default: ${(o.defaultValue || "none").replace(/_/g, " ")}`),
            o.allowedValues.map((v) => h("option", { value: v }, v.replace(/_/g, " "))))
          : h("input", { name: o.name, placeholder: `default: ${o.defaultValue || "none"}`, size: 10, "aria-label": o.label || o.description || o.name })));
      const formError = h("p", { class: "refusal form-error", role: "alert" });
      const form = h("form", { class: "game-type", "data-game": t.id },
        h("h2", {}, t.name),
        t.summary ? h("p", { class: "summary" }, t.summary) : null,
        h("div", {}, `${t.minPlayers === t.maxPlayers ? t.minPlayers : `${t.minPlayers} to ${t.maxPlayers}`} players`),
        seatsSel, seatRoles,
        options.length ? h("details", {}, h("summary", {}, "options"), options) : null,
        formError,
        h("button", { type: "submit" }, `Create ${t.name} match`)) as HTMLFormElement;
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        formError.textContent = "";
        const opts: Record<string, string> = {};
        for (const o of t.options) {
          const input = form.querySelector(`[name="${o.name}"]`) as HTMLInputElement | null;
          if (input && input.value) opts[o.name] = input.value;
        }
        try {
          const roles = [...seatRoles.querySelectorAll("select")].map((sel) => (sel as HTMLSelectElement).value);
          const kinds: Record<string, SeatKind> = {
            me: SeatKind.CREATOR, bot: SeatKind.BOT, invite: SeatKind.INVITE, open: SeatKind.OPEN,
          };
          const created = await client.createGame({
            gameType: t.id, options: opts,
            seatAssignments: roles.map((r) => ({ kind: kinds[r.split(":")[0]], bot: r.startsWith("bot:") ? r.slice(4) : "" })),
          });
          const record: Held = { tokens: {}, mine: [], invites: {}, gameType: t.id, at: Date.now() };
          roles.forEach((role, s) => {
            if (role === "me") { record.tokens[s] = created.seatTokens[s]; record.mine.push(s); }
            if (role === "invite") record.invites[s] = created.inviteCodes[s];
          });
          keep(created.gameId, record);
          location.hash = `#/game/${created.gameId}`;
        } catch (err) {
          // Next to the form it is about.
          formError.textContent = `Not created: ${refusal(err).message}`;
          formError.dataset.reason = refusal(err).reason;
        }
      });
      form.hidden = t.id !== chosen;
      return form;
    });
  chooser.onchange = () => {
    localStorage.setItem("tablier:new-game", chooser.value);
    forms.forEach((f) => { f.hidden = f.dataset.game !== chooser.value; });
  };
  // The form first (on a phone, what one comes to do), then the matches.
  return h("section", { class: "lobby" },
    h("section", { class: "new-match" }, rankedPanel(list), h("div", { class: "filter" }, h("h1", {}, "New match"), h("label", {}, "of ", chooser)), forms),
    matchList(names));
}

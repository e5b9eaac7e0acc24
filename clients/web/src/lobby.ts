// The lobby (#/): signing in (a guest player, a name), the matches (the player's from the
// server, or this browser's seats when nobody is signed in; the server's: open seats, running,
// finished) and a form per game to start one.

import { h } from "./dom";
import { asSeat, refusal, SeatKind, SeatStatus, type GameState, type GameSummary, type Player, type SeatInfo } from "./api";
import { colourOf } from "./games/shared";
import { client, credential, heldMatches, invitesMade, keep, rename, signedIn, signInAsGuest, signInWithCredential, signOut, types, type Held } from "./session";
import { leaderboardPage, rankedPanel } from "./ranked";

const when = (g: GameSummary) => g.createdAt ? new Date(Number(g.createdAt.seconds) * 1000).toLocaleString() : "";
// Matches per ListGames page ("more" asks for the next one).
const LOBBY_PAGE = 20;
// Own matches shown before "all N".
const OWN_SHORT = 8;

/** The server's matches (ListGames, a page at a time, optionally of one game): open seats to
 *  take, running matches to watch, finished ones to replay; and the ones this browser plays
 *  in (local storage), to resume. */
function matchList(names: Map<string, string>, me: Player | undefined): HTMLElement {
  const filter = h("select", { id: "game-filter", "aria-label": "show matches of" },
    h("option", { value: "" }, "every game"), [...names].map(([id, name]) => h("option", { value: id }, name))) as HTMLSelectElement;
  const lists = h("div", { class: "match-lists" });
  const more = h("button", { type: "button", id: "more-matches", hidden: true }, "more matches") as HTMLButtonElement;
  const note = h("p", { class: "refusal", role: "alert" });
  const box = h("section", { class: "lobby-matches" },
    h("div", { class: "filter" }, h("h1", {}, "Matches"), h("label", {}, "of ", filter)), lists, h("div", { class: "more-row" }, more), note);
  // Signed in: the player's matches from the server (ListGames mine), the same on every
  // device; else the seats this browser holds.
  const mine = new Map(me ? [] : heldMatches().map((x) => [x.gameId, x.record]));
  let own: GameSummary[] | undefined;
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
  const who = (s: number, mySeats: number[], seats?: SeatInfo[]) => (mySeats.includes(s) ? "you" : seats?.[s]?.player?.displayName ?? `Seat ${s + 1}`);
  const players = (seats: SeatInfo[], mySeats: number[]) => seats.map((x, s) =>
    mySeats.includes(s) ? "you" : x.player ? x.player.displayName : x.status === SeatStatus.BOT ? `bot (${x.bot.replace(/_/g, " ")})` :
      x.status === SeatStatus.OPEN ? "open seat" : x.status === SeatStatus.INVITED ? "invited" : "player").join(", ");
  const standing = (st: GameState | GameSummary | null | undefined, mySeats: number[]) => {
    if (!st) return "";
    if (st.over) {
      const w = st.outcome?.winners ?? [];
      if (st.outcome?.aborted) return "stopped";
      return w.length ? `${w.map((s) => who(s, mySeats, st.seats)).join(" and ")} won` : "nobody won";
    }
    if (st.seats.some((x) => x.status === SeatStatus.OPEN || x.status === SeatStatus.INVITED)) return "waiting for players";
    if (mySeats.some((s) => st.toAct.includes(s))) return "your turn";
    return st.toAct.length > 1 ? "everyone chooses" : st.toAct.length ? `${who(st.toAct[0], mySeats, st.seats)}'s turn` : "";
  };
  const line = (id: string, type: string, seats: SeatInfo[] | undefined, mySeats: number[], at: string, action: HTMLElement, summary?: GameSummary) => {
    const st = summary ?? states.get(id);
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
    const ownIds = new Set(own?.map((g) => g.gameId) ?? []);
    const ownAll: HTMLElement[] = own
      ? own.filter((g) => !type || g.gameType === type).map((g) => line(g.gameId, g.gameType, g.seats, g.yourSeats, when(g),
        h("a", { href: `#/game/${g.gameId}`, class: "resume" }, g.over ? "See the end" : "Resume"), g))
      : [];
    const local = [...mine].filter(([id, r]) => !type || typeOf(id, r) === type);
    const localShown = showAllOwn ? local : local.slice(0, OWN_SHORT);
    const ownItems = own ? (showAllOwn ? ownAll : ownAll.slice(0, OWN_SHORT)) : localShown.map(([id, r]) => {
      const g = seen.get(id);
      return line(id, typeOf(id, r), g?.seats, r.mine, r.at ? new Date(r.at).toLocaleString() : "",
        h("a", { href: `#/game/${id}`, class: "resume" }, g?.over || states.get(id)?.over ? "See the end" : "Resume"));
    });
    const ownCount = own ? ownAll.length : local.length;
    const others = games.filter((g) => !mine.has(g.gameId) && !ownIds.has(g.gameId));
    ask([...localShown.map(([id]) => id), ...others.map((g) => g.gameId)]);
    const seats = (g: GameSummary) => g.seats;
    lists.replaceChildren(
      list("Your matches", "my-matches", ownItems, "None yet: start one below.",
        !showAllOwn && ownCount > OWN_SHORT ? h("button", { type: "button", class: "all-own", onclick: () => { showAllOwn = true; drawLists(); } }, `all ${ownCount}`) : null),
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
  // The player's own matches: running, waiting for them, finished, newest first.
  const ownPage = async () => {
    try {
      own = (await client.listGames({ mine: true, pageSize: 100 }, asSeat(credential()))).games;
    } catch (err) {
      note.textContent = `Your matches are not available: ${refusal(err).message}`;
    }
    drawLists();
  };
  if (me) own = [];
  drawLists();
  if (me) ownPage();
  page();
  return box;
}

/** Signing in: a guest player under a name, or a key (credential) from another device;
 *  signed in: the name in its colour, renaming, the key to take along, signing out. */
function account(me: Player | undefined): HTMLElement {
  const note = h("p", { class: "refusal", role: "alert", id: "account-error" });
  const fail = (what: string) => (err: unknown) => { note.textContent = `${what}: ${refusal(err).message}`; note.dataset.reason = refusal(err).reason; };
  const again = () => window.dispatchEvent(new HashChangeEvent("hashchange"));
  if (!me) {
    const name = h("input", { id: "guest-name", name: "display_name", maxlength: 32, required: true, placeholder: "your name", "aria-label": "your name", autocomplete: "nickname" }) as HTMLInputElement;
    const key = h("input", { id: "player-key", "aria-label": "your key", placeholder: "tp1.…", size: 24 }) as HTMLInputElement;
    return h("section", { class: "account", id: "account" },
      h("form", { class: "sign-in", onsubmit: (ev: Event) => { ev.preventDefault(); signInAsGuest(name.value).then(again, fail("Not signed in")); } },
        h("label", {}, "Play under a name ", name), h("button", { type: "submit", id: "sign-in" }, "Sign in as a guest")),
      h("details", { class: "key-in" }, h("summary", {}, "Signed in on another device? Use its key"),
        h("form", { onsubmit: (ev: Event) => { ev.preventDefault(); signInWithCredential(key.value).then(again, fail("That key does not sign in")); } },
          key, h("button", { type: "submit", id: "use-key" }, "Use this key"))),
      h("p", { class: "caption" }, "Signed in, your matches follow you to any device; without signing in, this browser keeps your seats."),
      note);
  }
  const newName = h("input", { id: "new-name", maxlength: 32, required: true, value: me.displayName, "aria-label": "new name" }) as HTMLInputElement;
  const c = credential() ?? "";
  return h("section", { class: "account signed-in", id: "account" },
    h("div", { class: "me" }, "Signed in as ",
      h("strong", { class: "player-name", id: "player-name", style: { background: colourOf(me.colour) } }, me.displayName),
      h("button", { type: "button", id: "sign-out", onclick: () => signOut().then(again) }, "Sign out")),
    h("details", { class: "rename" }, h("summary", {}, "Rename"),
      h("form", { onsubmit: (ev: Event) => { ev.preventDefault(); rename(newName.value).then(again, fail("Not renamed")); } },
        newName, h("button", { type: "submit", id: "rename" }, "Rename"))),
    h("details", { class: "key-out" }, h("summary", {}, "Play on another device"),
      h("p", { class: "caption" }, "Paste this key there (keep it secret: it acts as you):"),
      h("input", { readonly: true, id: "my-key", value: c, size: 24, "aria-label": "your key", onclick: (e: Event) => (e.target as HTMLInputElement).select() })),
    note);
}

export async function lobby(): Promise<HTMLElement> {
  const board = /^#\/leaderboard\/?([^/]*)/.exec(location.hash);  // #/leaderboard/<game> (ranked.ts)
  if (board) return leaderboardPage(decodeURIComponent(board[1]));
  const [list, me] = await Promise.all([types(), signedIn()]);
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
          h("label", {}, `Seat ${s + 1} `, h("select", { "data-seat": s, "aria-label": `Seat ${s + 1}` },
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
          }, asSeat(credential()));
          if (credential()) {
            // Bound to the player (its credential acts for the seat): nothing kept here.
            invitesMade.set(created.gameId, Object.fromEntries(roles.flatMap((role, s) => role === "invite" ? [[s, created.inviteCodes[s]]] : [])));
            location.hash = `#/game/${created.gameId}`;
            return;
          }
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
    account(me),
    h("section", { class: "new-match" }, rankedPanel(list, me), h("div", { class: "filter" }, h("h1", {}, "New match"), h("label", {}, "of ", chooser)), forms),
    matchList(names, me));
}

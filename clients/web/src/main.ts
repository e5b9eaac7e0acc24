// The web app: lobby, match page (live through WatchGame), invite links, replay viewer.
// Routes live in the URL hash, so the server only serves static files:
//   #/                          lobby
//   #/game/<id>                 a match (as the seats this browser holds)
//   #/join/<invite code>        an invite link: JoinGame with the code, then the match
//   #/open/<id>                 a link to a match's open seats: JoinGame, then the match
//   #/replay/<id>               a finished match, seq by seq

import "./style.css";
import { h } from "./dom";
import { refusal } from "./api";
import { current, join, say } from "./session";
import { lobby } from "./lobby";
import { matchPage } from "./table";
import { replayPage } from "./replay";

const app = document.getElementById("app")!;

async function route() {
  current.stop?.();
  current.stop = undefined;
  say("");
  app.setAttribute("aria-busy", "true");
  app.replaceChildren(h("p", { class: "loading", id: "loading" }, "Loading…"));
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  try {
    let page: HTMLElement;
    if (parts[0] === "game" && parts[1]) page = await matchPage(parts[1]);
    else if (parts[0] === "replay" && parts[1]) page = await replayPage(parts[1]);
    else if (parts[0] === "join" && parts[1]) return await join({ inviteCode: decodeURIComponent(parts[1]) });
    else if (parts[0] === "open" && parts[1]) return await join({ gameId: parts[1] });
    else page = await lobby();
    app.replaceChildren(page);
    // A list built before the page was shown had no height to scroll: it starts at its end now.
    page.querySelectorAll<HTMLElement>("[data-follow]").forEach((e) => { e.scrollTop = e.scrollHeight; });
    app.removeAttribute("aria-busy");
  } catch (err) {
    const r = refusal(err);
    app.replaceChildren(h("p", { class: "refusal" }, `${r.message}`), h("a", { href: "#/" }, "back to the lobby"));
  }
}

window.addEventListener("hashchange", route);
route();
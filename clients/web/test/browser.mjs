// Browser scenarios of the web app, in Debian's Chromium driven by playwright-core (no browser
// download). Run by tests/e2e/test_browser.py against a real `tablier serve --web-listen`:
//   node test/browser.mjs <base url> <scenario> <screenshot dir>
// Scenarios: lobby, lobby_pages, play:<game>, qwirkle_build, lobby_join, clock, invite (and an
// open seat), refusal, replay (with move values). Matches are
// against the server's bots (seats created as SEAT_KIND_BOT). Exit 0 when the scenario passed;
// every wait has a deadline, so a scenario always ends by itself.

import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [base, scenario, shots] = process.argv.slice(2);
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
const WAIT = 20_000;
const MATCH_DEADLINE = Number(process.env.TABLIER_BROWSER_MATCH_SECONDS ?? 240) * 1000;
// Options that keep a match short (entered through the lobby's option fields).
const SHORT = {
  carre: { rounds_per_match: "1" },
  rat_a_tat_cat: { match_mode: "fixed_rounds", rounds: "1" },
  democratie: { target: "1" },
  grid_knock: { target_score: "1" },
  qwirkle: {},
};

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

async function launch() {
  const profile = mkdtempSync(join(tmpdir(), "tablier-chromium-"));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    viewport: PHONE,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const close = browser.close.bind(browser);
  browser.close = async () => {
    await close();
    rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  };
  return browser;
}

const pages = [];
async function newPage(ctx) {
  const page = await ctx.newPage();
  pages.push(page);
  page.setDefaultTimeout(WAIT);
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // No console errors in normal play (a refused request shows there too).
  page.on("console", (m) => { if (m.type() === "error" && !page.allowConsoleErrors) errors.push(`console: ${m.text()} ${m.location()?.url ?? ""}`); });
  page.errors = errors;
  return page;
}

/** Creates a match in the lobby: `roles[s]` is "me", "bot" or "invite". */
async function create(page, game, roles, options = SHORT[game] ?? {}) {
  await page.goto(`${base}/#/`);
  const form = page.locator(`form[data-game="${game}"]`);
  await form.locator('select[name="seats"]').selectOption(String(roles.length));
  for (const [s, role] of roles.entries()) await form.locator(`select[data-seat="${s}"]`).selectOption(role);
  if (Object.keys(options).length) {
    await form.locator("details summary").click();
    for (const [name, value] of Object.entries(options)) {
      const field = form.locator(`[name="${name}"]`);
      if ((await field.evaluate((e) => e.tagName)) === "SELECT") await field.selectOption(value);
      else await field.fill(value);
    }
  }
  await form.locator('button[type="submit"]').click();
  await page.waitForSelector(".match .board");
  return page.url().split("/").pop();
}

/** Words for people: not empty, no enum names, no Debug braces or underscores. */
const plain = (text) => text.trim().length > 0 && !/[{}_]|UNSPECIFIED|\b[A-Z]{3,}\b/.test(text);
const seqOf = async (page) => (await page.locator(".match-head .seq").textContent()) ?? "";

/** Screenshots of the page at both sizes: <name>-phone.png and <name>-desktop.png. */
async function shoot(page, name) {
  await page.screenshot({ path: join(shots, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: join(shots, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
}

/** What a player reads holds no enum names (RANK_ACE, PHASE_DRAWN) and no card codes (QS, TH). */
async function readable(page) {
  const text = await page.locator("main").innerText();
  const enumName = text.match(/\b[A-Z][A-Z0-9]+_[A-Z0-9_]+\b/);
  const cardCode = text.match(/\b(CARD_\w+|[A2-9TJQK][SHDC])\b/);
  check(!enumName && !cardCode, `visible text in words, found ${enumName?.[0] ?? cardCode?.[0]}`);
}

/** Every seat's hand (or rack, row, block) is drawn with at least one face showing. */
async function everyHandShown(page, seats) {
  return page.evaluate((n) => Array.from({ length: n }, (_, s) => s).every((s) =>
    [...document.querySelectorAll(`.board [data-hand="${s}"]`)].some((hand) =>
      [...hand.querySelectorAll(".card, .tile")].some((c) => !c.classList.contains("down") && c.textContent.trim().length > 0))), seats);
}

/** The end screen's breakdown: every seat's points per round add up to its final score. */
async function breakdownSums(page) {
  return page.evaluate(() => {
    const finals = [...document.querySelectorAll(".result table.scores tr[data-seat]")].map((tr) => [Number(tr.dataset.seat), Number(tr.dataset.score)]);
    const rows = document.querySelectorAll("#breakdown tbody tr.round");
    const sums = finals.map(([s]) => [...document.querySelectorAll(`#breakdown tbody tr.round td[data-seat="${s}"]`)].reduce((n, td) => n + Number(td.dataset.points), 0));
    return { rows: rows.length, finals: finals.map(([, f]) => f), sums };
  });
}

/** Plays seat `me`'s moves by pointer until the final scores show. Prefers a highlighted
 *  element on the table (pick it, then its move), else the first legal move's button. After
 *  each move: the log grew, its last entry is marked, the text is in words. */
async function playToTheEnd(page, deadline, shotName) {
  let moves = 0;
  let shot = false;
  while (Date.now() < deadline) {
    await page.waitForSelector(".move, .result h2", { timeout: Math.max(1, deadline - Date.now()) });
    // The middle picture: the table once the seat has moved, before its next move (or the
    // end, should the match end first: a bot's early call in Rat-a-Tat Cat can end it after
    // the seat's first move).
    if (!shot && moves >= 1) { await shoot(page, `${shotName}-middle`); shot = true; }
    if (await page.locator(".result h2").count()) return moves;
    // Démocratie: every card offered is in the hand drawn with it (a list from before the
    // seat's own card went would still offer that card, refused as not in hand).
    const notInHand = await page.evaluate(() => {
      if (!document.querySelector('.match[data-game="democratie"]')) return [];
      const hand = new Set([...document.querySelectorAll(".board .hand [data-key]")].map((e) => e.dataset.key));
      return [...document.querySelectorAll(".moves .move")].flatMap((b) => (b.dataset.keys ?? "").split(" ").filter((k) => k && !hand.has(k)));
    });
    check(!notInHand.length, `the cards offered are in the hand: ${notInHand.join(", ")} not in it`);
    const before = await seqOf(page);
    const logBefore = await page.locator(".log li").count();
    // The table can change under the pointer (a bot's move, the end of the match): a click
    // that finds nothing to click is tried again from the top.
    const click = (locator) => locator.click({ timeout: 3000 }).then(() => true, () => false);
    const lit = page.locator(".board .legal");
    let clicked;
    if (moves % 2 === 0 && (await lit.count())) {
      clicked = await click(lit.first()); // the move list narrows to moves using it (or it plays the only one)
      if (clicked && (await seqOf(page)) === before && (await page.locator(".move").count())) clicked = await click(page.locator(".move").first());
    } else {
      clicked = await click(page.locator(".move").first());
    }
    if (!clicked) continue;
    moves++;
    await page.waitForFunction((b) => {
      const seq = document.querySelector(".match-head .seq")?.textContent ?? "";
      return seq !== b || document.querySelector("#refusal")?.textContent;
    }, before, { timeout: WAIT });
    // A move chosen just as a server bot moved may arrive late (the page says so and offers
    // the new moves); a legal move is never refused by the rules.
    const refused = await page.locator("#refusal").textContent();
    check(!refused || (await page.locator("#refusal").getAttribute("data-reason")) === "SEQ_MISMATCH",
      `a legal move was refused: ${refused}`);
    if (!refused) {
      const grew = await page.waitForFunction((n) => document.querySelectorAll(".log li").length > n, logBefore, { timeout: WAIT }).then(() => true, () => false);
      check(grew, `the move log grew with the move (from ${logBefore})`);
      check((await page.locator(".log li.last").count()) === 1, "the last move is marked in the log");
      const unmarked = await page.locator(".log li:not(:has(.who))").count();
      check(unmarked === 0, `every log entry says whose it is (${unmarked} do not)`);
      check((await page.locator(".log li.mine .who").first().textContent()) === "you", "the seat's own entries say you");
    }
    await readable(page);
  }
  throw new Error(`the match did not end within the deadline (${moves} moves)`);
}

const scenarios = {
  async lobby(ctx) {
    const page = await newPage(ctx);
    await page.goto(`${base}/#/`);
    await page.waitForSelector("form.game-type");
    const games = await page.locator("form.game-type").evaluateAll((fs) => fs.map((f) => f.dataset.game));
    check(games.length === 5, `five game types in the lobby, got ${games}`);
    for (const g of games) {
      const form = page.locator(`form[data-game="${g}"]`);
      check(await form.locator("h2").textContent(), `${g} has a name`);
      check(await form.locator('button[type="submit"]').isVisible(), `${g} can be created`);
      check((await form.locator(".option").count()) > 0, `${g} shows its options`);
    }
    // Nothing is wider than a phone.
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    check(wide <= PHONE.width, `the lobby fits ${PHONE.width} px (scrollWidth ${wide})`);
    await page.screenshot({ path: join(shots, "lobby.png"), fullPage: true });
    check(!page.errors.length, page.errors.join("; "));
  },

  async play(ctx, game) {
    const page = await newPage(ctx);
    // Démocratie with three seats: two bots sealing their cards while this seat seals its own
    // (a move sent then must not race them: no 409 in the console).
    const roles = game === "democratie" ? ["me", "bot", "bot"] : ["me", "bot"];
    const gameId = await create(page, game, roles);
    await page.waitForSelector("#turn-banner:not(:empty)");
    await readable(page);
    if (game === "rat_a_tat_cat") {
      // Default options (memory_aid=off): the deal's peek at cards 1 and 4 shows on the table.
      await page.waitForSelector(".card.peek");
      const peeked = await page.locator(`.card.peek`).evaluateAll((cs) => cs.map((c) => c.dataset.key));
      check(peeked.length === 2 && peeked.every((k) => /^slot:0:[14]$/.test(k)), `the peek shows cards 1 and 4: ${peeked}`);
      const faces = await page.locator(".card.peek").allTextContents();
    check(faces.every((f) => f.trim().length > 0), `the peeked cards show their faces: ${faces}`);
    }
    if (game === "grid_knock") {
      // The seat's first sealed choice is marked on its card (only it knows it) until the reveal.
      await page.waitForSelector(".move");
      const before = await seqOf(page);
      await page.locator(".move").first().click();
      await page.waitForFunction((b) => document.querySelector(".match-head .seq")?.textContent !== b, before);
      const chosen = await page.locator(".gcell .card.chosen").evaluateAll((cs) => cs.map((c) => c.closest("[data-key]").dataset.key));
      check(chosen.length === 1 && chosen[0].startsWith("slot:0:"), `the seat's own chosen card is marked: ${chosen}`);
      check(await page.locator("#peek-note").count() === 1, "and said in words");
    }
    await shoot(page, `${game}-start`);
    // Move values are for a finished match's replay only, never on a live match's page.
    check((await page.locator("#move-values-btn, #move-values table").count()) === 0, "no move values on a live match");
    const moves = await playToTheEnd(page, Date.now() + MATCH_DEADLINE, game);
    // The events are told in the game's own words (the server's), never in enum names.
    // A draw belongs to the drawer, whoever's move caused it.
    const draws = await page.locator(".log li").evaluateAll((ls) => ls.map((l) => {
      const mark = l.querySelector(".who")?.textContent ?? "";
      return [mark, (l.textContent.slice(mark.length).trim().match(/^(You|Seat \d+) drew\b/) ?? [])[1]];
    }).filter(([, who]) => who));
    check(draws.length > 0 || game === "democratie", "some draws in the log");
    check(draws.every(([mark, who]) => mark === (who === "You" ? "you" : who.toLowerCase())), `draws marked as the drawer's: ${JSON.stringify(draws)}`);
    const told = await page.locator(".log li").allTextContents();
    check(told.length > 0 && told.every(plain), `events in words: ${told.join(" | ")}`);
    const rows = await page.locator(".result table.scores tr").count();
    check(rows === roles.length, `final scores for every seat (${rows})`);
    check(moves > 0, "the seat played at least one move");
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    check(wide <= PHONE.width, `the match page fits ${PHONE.width} px (scrollWidth ${wide})`);
    const verdict = await page.locator(".result .verdict").textContent();
    check(/^You (won|lost|share the win)/.test(verdict) || verdict === "The match was stopped.", `the end says how you did: ${verdict}`);
    check(await page.locator(".rematch").isVisible(), "a rematch button");
    if (verdict !== "The match was stopped.") {
      // The breakdown per round adds up to the final scores.
      const b = await breakdownSums(page);
      check(b.rows > 0, "the end screen breaks the scores down per round");
      check(b.sums.every((x, s) => x === b.finals[s]), `the breakdown sums to the final scores: ${b.sums} vs ${b.finals}`);
    }
    await shoot(page, `${game}-end`);
    check(!page.errors.length, page.errors.join("; "));
    // The replay, as the auditor: every seat's hand is drawn in the middle of the match, and
    // every event says whose it is.
    await page.locator(".replay-link").click();
    await page.waitForSelector("#verification");
    const max = Number(await page.locator("#seq-slider").getAttribute("max"));
    // (A seq between deals has empty hands: the first of a few seqs from the middle back.)
    const mid = Math.floor(max / 2);
    let handsAt;
    for (let seq = mid; seq > Math.max(0, mid - 12) && handsAt === undefined; seq--) {
      await page.locator("#seq-slider").fill(String(seq));
      await page.waitForFunction((m) => document.querySelector(".replay .seq")?.textContent?.startsWith(`seq ${m} /`), seq);
      if (await everyHandShown(page, roles.length)) handsAt = seq;
    }
    check(handsAt !== undefined, `the replay shows every seat's hand at some seq from ${mid} back`);
    check((await page.locator(".replay-log li:not(:has(.who))").count()) === 0, "every replayed event says whose it is");
    await readable(page);
    await shoot(page, `${game}-replay`);
    check(!page.errors.length, page.errors.join("; "));
    console.log(`${game} ${gameId}: ${moves} moves by pointer`);
  },

  // A Qwirkle play of several tiles built on the board: tile, cell, tile, cell; previewed in
  // its cells; confirmed; then on the table.
  async qwirkle_build(ctx) {
    const page = await newPage(ctx);
    await create(page, "qwirkle", ["me", "bot"]);
    const deadline = Date.now() + MATCH_DEADLINE;
    while (Date.now() < deadline) {
      await page.waitForSelector(".move, .result h2");
      check(!(await page.locator(".result h2").count()), "the match ended before a multi-tile play came up");
      if (await page.locator(".more").count()) await page.locator(".more").click();
      const keys = await page.locator(".move").evaluateAll((bs) => bs.map((b) => b.dataset.keys.split(" ")));
      const multi = keys.find((k) => k.filter((x) => x.startsWith("at:")).length >= 2);
      if (!multi) {
        const before = await seqOf(page);
        await page.locator(".move").first().click();
        await page.waitForFunction((b) => document.querySelector(".match-head .seq")?.textContent !== b, before);
        continue;
      }
      const logBefore = await page.locator(".log li").count();
      const build = async () => {
        for (let i = 0; i < multi.length; i += 2) {
          await page.locator(`.hand [data-key="${multi[i]}"].legal`).first().click();
          check((await page.locator(`.hand [data-key="${multi[i]}"].picked`).count()) === 1, "one tile is picked, not its twin");
          await page.locator(`.board [data-key="${multi[i + 1]}"].legal`).click();
        }
      };
      await build();
      const placed = multi.length / 2;
      check((await page.locator(".qcell .tile.ghost").count()) === placed, `the play is previewed on the board (${placed} tiles)`);
      // Its score too, before it is confirmed; Cancel clears the play and its score.
      await page.waitForSelector("#preview-score");
      const preview = Number(await page.locator("#preview-score").getAttribute("data-points"));
      check(preview > 0 && (await page.locator("#preview-score").textContent()).includes(String(preview)), `the preview says the play's score: ${preview}`);
      await page.locator("#builder .cancel").click();
      check((await page.locator("#preview-score, #builder, .qcell .tile.ghost").count()) === 0, "Cancel clears the play and its score");
      await build();
      await page.waitForSelector("#preview-score");
      check(Number(await page.locator("#preview-score").getAttribute("data-points")) === preview, "the same play, the same score");
      const scoreBefore = Number(await page.locator('.board .player[data-seat="0"]').getAttribute("data-score"));
      await shoot(page, "qwirkle-build");
      const confirm = page.locator("#builder .confirm");
      check((await confirm.textContent()).startsWith("Confirm"), "a confirm button");
      // While the move is on its way (held here until checked), the banner says so, not
      // "Your turn".
      let release;
      const held = new Promise((r) => { release = r; });
      let sent;
      const arrived = new Promise((r) => { sent = r; });
      await page.route("**/tablier.v1.GameService/PlayMove", async (route) => { sent(); await held; await route.continue(); });
      await confirm.click();
      await arrived;
      await page.waitForFunction(() => document.querySelector("#turn-banner")?.textContent === "Sending your move…");
      await shoot(page, "qwirkle-sending");
      release();
      await page.waitForFunction((n) => document.querySelectorAll(".log li").length > n, logBefore);
      await page.unroute("**/tablier.v1.GameService/PlayMove");
      // The banner moves on once the move is played.
      await page.waitForFunction(() => document.querySelector("#turn-banner")?.textContent !== "Sending your move…");
      for (let i = 1; i < multi.length; i += 2) {
        check((await page.locator(`.board [data-key="${multi[i]}"] .tile`).count()) === 1, `a tile now at ${multi[i]}`);
      }
      const scoreAfter = Number(await page.locator('.board .player[data-seat="0"]').getAttribute("data-score"));
      check(scoreAfter - scoreBefore === preview, `the play scored what the preview said: ${scoreBefore} + ${preview} = ${scoreAfter}`);
      // The match opened again: its move log, longer than its box on a phone, shows its latest entry.
      await page.reload();
      await page.waitForSelector(".log li.last");
      const overflows = await page.evaluate(() => { const l = document.querySelector(".log"); return l.scrollHeight > l.clientHeight; });
      check(overflows, "the move log is longer than its box");
      await page.waitForFunction(() => {
        const log = document.querySelector(".log");
        const last = log.querySelector("li.last").getBoundingClientRect();
        const box = log.getBoundingClientRect();
        return last.bottom <= box.bottom + 1 && last.top >= box.top - 1;
      });
      await shoot(page, "qwirkle-reopened");
      check(!page.errors.length, page.errors.join("; "));
      console.log(`built and played ${placed} tiles: ${multi.join(" ")}`);
      return;
    }
    throw new Error("no multi-tile play within the deadline");
  },

  // The lobby pages through the server's matches ("more matches") and filters them by game.
  async lobby_pages(ctx) {
    const page = await newPage(ctx);
    await page.goto(`${base}/#/`);
    await page.waitForSelector("#game-filter");
    // 22 running Grid Knock matches and one Carré, created through the API (Connect, JSON):
    // this browser holds none of their seats.
    const made = await page.evaluate(async () => {
      const create = async (gameType) => {
        const r = await fetch("/tablier.v1.GameService/CreateGame", { method: "POST", headers: { "content-type": "application/json" },
          body: JSON.stringify({ gameType, seatAssignments: [{ kind: "SEAT_KIND_CREATOR" }, { kind: "SEAT_KIND_BOT" }] }) });
        if (!r.ok) throw new Error(`CreateGame: ${r.status} ${await r.text()}`);
        return (await r.json()).gameId;
      };
      const ids = [];
      for (let i = 0; i < 22; i++) ids.push(await create("grid_knock"));
      return { ids, other: await create("carre") };
    });
    const lines = () => page.locator("#open-seats li, #running li, #finished li");
    const ids = async () => lines().evaluateAll((ls) => ls.map((l) => l.dataset.gameId));
    await page.reload();
    await page.locator(`#running li[data-game-id="${made.other}"]`).waitFor();
    check((await page.locator(`li[data-game-type="grid_knock"]`).count()) > 0, "every game: Grid Knock listed");
    await page.locator("#game-filter").selectOption("grid_knock");
    await page.waitForFunction(() => !document.querySelector(".lobby-matches[aria-busy]") && !document.querySelector('li[data-game-type="carre"]'));
    const first = await ids();
    check(first.length === 20, `one page of 20 matches, got ${first.length}`);
    check((await lines().evaluateAll((ls) => ls.every((l) => l.dataset.gameType === "grid_knock"))), "only Grid Knock matches under the filter");
    await page.locator("#more-matches").click();
    await page.waitForFunction((n) => document.querySelectorAll("#open-seats li, #running li, #finished li").length > n, first.length);
    const all = await ids();
    check(new Set(all).size === all.length, "no match listed twice");
    check(made.ids.every((id) => all.includes(id)), "every match created is listed after more");
    check((await lines().evaluateAll((ls) => ls.every((l) => l.dataset.gameType === "grid_knock"))), "the next page keeps the filter");
    await shoot(page, "lobby-pages");
    // Back to every game: the Carré match is listed again.
    await page.locator("#game-filter").selectOption("");
    await page.locator(`#running li[data-game-id="${made.other}"]`).waitFor();
    check(!page.errors.length, page.errors.join("; "));
  },

  // The lobby lists a match's open seat; another browser takes it from there.
  async lobby_join(ctx) {
    const host = await newPage(ctx);
    const gameId = await create(host, "carre", ["me", "open"]);
    await host.waitForSelector("#turn-banner:not(:empty)");
    const other = await launch();
    try {
      const guest = await newPage(other);
      await guest.goto(`${base}/#/`);
      const line = guest.locator(`#open-seats li[data-game-id="${gameId}"]`);
      await line.waitFor();
      check(/1 open seat/.test(await line.textContent()), "the open seat is counted");
      await shoot(guest, "lobby");
      await line.locator(".join").click();
      await guest.waitForFunction((id) => location.hash === `#/game/${id}` && document.querySelector(".match-head")?.textContent?.includes("you are seat 1"), gameId);
      // The host sees the seat taken: no open link, no "waiting for seat 1 to join".
      await host.waitForFunction(() => !document.querySelector("input[data-open-link]") && !/to join/.test(document.querySelector("#turn-banner")?.textContent ?? ""));
      // And the guest's own matches list it back in the lobby, to resume.
      await guest.goto(`${base}/#/`);
      await guest.locator(`#my-matches li[data-game-id="${gameId}"] .resume`).waitFor();
      check(!guest.errors.length, guest.errors.join("; "));
    } finally {
      await other.close();
    }
    check(!host.errors.length, host.errors.join("; "));
  },

  // A clocked match shows the awaited seat's time running down.
  async clock(ctx) {
    const page = await newPage(ctx);
    await create(page, "carre", ["me", "bot"], { clock_move_seconds: "120" });
    const clock = page.locator(".clock.running").first();
    await clock.waitFor();
    const first = (await clock.textContent()).trim();
    check(/\d+:\d\d$/.test(first), `a countdown: ${first}`);
    await page.waitForFunction((t) => {
      const now = document.querySelector(".clock.running")?.textContent?.trim() ?? t;
      return now !== t;
    }, first, { timeout: 5000 });
    const secs = (t) => { const [m, s] = t.split(" ").pop().split(":").map(Number); return m * 60 + s; };
    const later = (await clock.textContent()).trim();
    check(secs(later) <= secs(first) && secs(first) <= 120, `it counts down: ${first} then ${later}`);
    await shoot(page, "clock");
    check(!page.errors.length, page.errors.join("; "));
  },

  async invite(ctx) {
    const host = await newPage(ctx);
    const gameId = await create(host, "carre", ["me", "invite"]);
    const link = await host.locator('input[data-invite-seat="1"]').inputValue();
    check(link.includes(`#/join/${gameId}.`), `an invite link (code) for seat 1: ${link}`);
    // The friend opens the link in another browser (its own storage).
    const other = await launch();
    let third;
    const launchOnce = async () => (third = await launch());
    try {
      const guest = await newPage(other);
      await guest.goto(link);
      await guest.waitForSelector(".match .board");
      check((await guest.locator(".match-head").textContent()).includes("you are seat 1"), "the guest holds seat 1");
      // Whoever is to act moves; the other browser sees it live (WatchGame), a few times over.
      for (let i = 0; i < 4; i++) {
        const mover = (await host.locator(".move").count()) ? host : guest;
        const watcher = mover === host ? guest : host;
        await mover.waitForSelector(".move");
        const before = await seqOf(watcher);
        await mover.locator(".move").first().click();
        await watcher.waitForFunction((b) => (document.querySelector(".match-head .seq")?.textContent ?? "") !== b, before);
        await Promise.race([host.waitForSelector(".move"), guest.waitForSelector(".move")]);
      }
      await guest.screenshot({ path: join(shots, "invite-guest.png"), fullPage: true });
      // The invite was good for one join: opening it again is refused, in words.
      const again = await newPage(await launchOnce());
      await again.goto(link);
      await again.waitForSelector(".refusal");
      check((await again.locator(".refusal").textContent()).length > 5, "a used invite is refused");
      // An open seat: anyone with the match's open link takes it.
      const openId = await create(host, "carre", ["me", "open"]);
      const openLink = await host.locator("input[data-open-link]").inputValue();
      check(openLink.endsWith(`#/open/${openId}`), `an open-seat link: ${openLink}`);
      await guest.goto(openLink);
      await guest.waitForFunction((id) => location.hash === `#/game/${id}` && document.querySelector(".match-head")?.textContent?.includes("you are seat 1"), openId);
      check(!guest.errors.length, guest.errors.join("; "));
    } finally {
      await other.close();
      await third?.close();
    }
    check(!host.errors.length, host.errors.join("; "));
  },

  async refusal(ctx) {
    const page = await newPage(ctx);
    await create(page, "carre", ["me", "bot"]);
    await page.waitForSelector(".move");
    // Pick a card in hand, then a cell no legal move puts it on: the server refuses, in words.
    // By keyboard: a legal card is a tab stop with a label; Enter picks it.
    const handCard = page.locator('.hand [data-key^="card:"].legal').first();
    check((await handCard.getAttribute("tabindex")) === "0", "a legal card is reachable by Tab");
    check(/^card /.test((await handCard.getAttribute("aria-label")) ?? ""), "a card has a label for screen readers");
    await handCard.focus();
    await page.keyboard.press("Enter");
    await page.locator('.hand [data-key^="card:"].picked').waitFor();
    const cell = page.locator('.board [data-key^="cell:"]:not(.legal)').first();
    await cell.click();
    await page.waitForFunction(() => document.querySelector("#refusal")?.textContent);
    const text = await page.locator("#refusal").textContent();
    const reason = await page.locator("#refusal").getAttribute("data-reason");
    check(text.startsWith("Refused: ") && text.length > 15, `a refusal in words: ${text}`);
    check(/^[A-Z_]+$/.test(reason ?? ""), `the server's reason: ${reason}`);
    check(!/\b[A2-9TJQK][SHDC]\b/.test(text), `the refusal names cards in words: ${text}`);
    await page.screenshot({ path: join(shots, "refusal.png"), fullPage: true });
    // The match goes on: the legal moves are offered again.
    await page.waitForSelector(".move");
    console.log(`refused: ${text} (${reason})`);
  },

  async replay(ctx) {
    const page = await newPage(ctx);
    await create(page, "carre", ["me", "bot"]);
    await playToTheEnd(page, Date.now() + MATCH_DEADLINE, "replay");
    await page.locator(".replay-link").click();
    await page.waitForSelector("#verification");
    const verdict = await page.locator("#verification").textContent();
    check(verdict.startsWith("Verified"), `the replay is verified: ${verdict}`);
    const slider = page.locator("#seq-slider");
    const max = Number(await slider.getAttribute("max"));
    check(max > 5, `a slider over ${max} seqs`);
    const boardAt = async () => page.locator(".replay .board").innerHTML();
    const last = await boardAt();
    await slider.fill("3");
    await page.waitForFunction(() => document.querySelector(".replay .seq")?.textContent?.startsWith("seq 3 /"));
    check((await boardAt()) !== last, "an earlier seq draws an earlier table");
    const said = (await page.locator(".replay .event").textContent()) ?? "";
    check(plain(said), `the replay tells the event in words: ${said}`);
    // The value of the moves at a seq where seat 0 or 1 decides: every legal move with its
    // win chance and margin, best first, the one played marked.
    // A step is done once the seq it went to is drawn (drawing a new seq clears the values).
    const stepWith = async (control) => {
      const before = await page.locator(".replay .seq").textContent();
      await page.locator(control).click();
      await page.waitForFunction((b) => document.querySelector(".replay .seq")?.textContent !== b, before);
    };
    for (const control of ["#replay-first", "#replay-next", "#replay-next"]) await stepWith(control);
    let found = false;
    for (let tries = 0; tries < 12 && !found; tries++) {
      const at = (await page.locator(".replay .seq").textContent()).split(" ")[1];
      // A loading sign from the click until the values arrive.
      const loading = await page.evaluate(() => { document.querySelector("#move-values-btn").click(); return !!document.querySelector("#values-loading"); });
      check(loading, "a loading sign while the values are computed");
      await page.waitForSelector("#move-values:not([aria-busy])", { timeout: 120_000 });
      if (await page.locator("#move-values table").count()) {
        found = true;
        const rows = await page.locator("#move-values tr.value-row").count();
        check(rows >= 1, `move values listed (${rows})`);
        check((await page.locator("#move-values tr.value-row.was-played").count()) === 1, `the move played at seq ${at} is marked`);
        const wins = await page.locator("#move-values tr.value-row td:nth-child(2)").allTextContents();
        const w = wins.map((t) => parseFloat(t));
        check(w.every((x, i) => i === 0 || x <= w[i - 1]), `best first: ${wins}`);
        check(wins.every((t) => /^\d+\.\d% ± \d+\.\d%$/.test(t)), `win chance with its standard error: ${wins}`);
        const labels = await page.locator("#move-values tr.value-row td:first-child").allTextContents();
        check(labels.every((l) => plain(l) && l !== "a move"), `moves in words: ${labels}`);
      } else await stepWith("#replay-next");
    }
    check(found, "a seq with move values");
    await page.screenshot({ path: join(shots, "replay.png"), fullPage: true });
    check(!page.errors.length, page.errors.join("; "));
  },
};

const ctx = await launch();
try {
  const [name, arg] = scenario.split(":");
  if (!scenarios[name]) throw new Error(`no scenario ${scenario}`);
  await scenarios[name](ctx, arg);
  console.log(`scenario ${scenario}: passed`);
} catch (err) {
  console.error(`scenario ${scenario}: FAILED: ${err.stack ?? err}`);
  for (const [i, page] of pages.entries()) {
    await page.screenshot({ path: join(shots, `FAILED-${scenario.replace(":", "-")}-${i}.png`), fullPage: true }).catch(() => {});
  }
  process.exitCode = 1;
} finally {
  await ctx.close();
}

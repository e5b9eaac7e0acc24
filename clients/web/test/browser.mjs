// Browser scenarios of the web app, in Debian's Chromium driven by playwright-core (no browser
// download). Run by tests/e2e/test_browser.py against a real `tablier serve --web-listen`:
//   node test/browser.mjs <base url> <scenario> <screenshot dir>
// Scenarios: lobby, lobby_pages, play:<game>, qwirkle_build, lobby_join, clock, invite (and an
// open seat), refusal, replay (with move values), play_on (a finished match's replay),
// play_on_running (the table and the replay so far of a running match, a running fork's move
// values), players, latency, option_words. Matches are
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
  await page.locator("#new-game").selectOption(game);
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

/** Carré's cells: a stack's size never covers a card, and a face-down card is not outlined as
 *  a target is. */
async function carreCells(page) {
  const bad = await page.evaluate(() => {
    const over = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    const out = [];
    for (const cell of document.querySelectorAll(".carre .cell")) {
      const badge = cell.querySelector(".stack")?.getBoundingClientRect();
      const c = cell.querySelector(".card")?.getBoundingClientRect();
      if (badge && c && over(badge, c)) out.push(`badge over the card in ${cell.dataset.key}`);
    }
    for (const c of document.querySelectorAll(".carre .card.facedown:not(.legal)")) {
      if (getComputedStyle(c).outlineStyle !== "none") out.push(`a face-down card outlined in ${c.closest("[data-key]")?.dataset.key}`);
    }
    return out;
  });
  check(!bad.length, bad.join("; "));
}

/** Plays the first move of the folded list (opened if need be), or the first in sight. */
async function playFromList(page) {
  const click = (locator) => locator.click({ timeout: 3000 }).then(() => true, () => false);
  const inSight = page.locator(".moves .in-sight .move");
  if (await inSight.count()) return click(inSight.first());
  const list = page.locator("#move-list");
  if (!(await list.count())) return false;
  if (!(await list.evaluate((d) => d.open))) await click(list.locator("summary"));
  return click(list.locator(".move").first());
}

/** The log is grouped: fewer turns than lines, and a heading per round where the game has rounds. */
async function logGrouped(page, rounds) {
  const g = await page.evaluate(() => ({
    lines: document.querySelectorAll(".log .line").length, turns: document.querySelectorAll(".log li.turn").length,
    rounds: document.querySelectorAll(".log .round h3").length, folded: document.querySelectorAll(".log details.auto").length,
  }));
  check(g.turns < g.lines, `the log groups its lines by turn: ${g.turns} turns, ${g.lines} lines`);
  if (rounds) check(g.rounds >= 1, `the log has a heading per round (${g.rounds})`);
  return g;
}

/** Every tile of the Qwirkle board is inside its box (the board is fitted to its tiles). */
async function boardFits(page, where) {
  const measure = () => {
    const box = document.querySelector(".zoom-box")?.getBoundingClientRect();
    if (!box) return { tiles: -1, outside: 0 };
    const tiles = [...document.querySelectorAll(".zoom-box .qcell .tile")].map((t) => t.getBoundingClientRect());
    const outside = tiles.filter((r) => r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1);
    return { tiles: tiles.length, outside: outside.length };
  };
  // (A new size is fitted at the next frame.)
  await page.waitForFunction(() => {
    const box = document.querySelector(".zoom-box")?.getBoundingClientRect();
    return box && [...document.querySelectorAll(".zoom-box .qcell .tile")].every((t) => { const r = t.getBoundingClientRect();
      return r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1; });
  }, undefined, { timeout: 3000 }).catch(() => {});
  const out = await page.evaluate(measure);
  check(out.tiles > 0 && out.outside === 0, `the board shows all its tiles ${where}: ${out.outside} of ${out.tiles} outside`);
}

/** Plays seat `me`'s moves by pointer until the final scores show. Prefers a highlighted
 *  element on the table (pick it, then its move), else the first legal move's button. After
 *  each move: the log grew, its last entry is marked, the text is in words. */
async function playToTheEnd(page, deadline, shotName) {
  let moves = 0;
  let shot = false;
  while (Date.now() < deadline) {
    await page.waitForSelector(".move, .result h2", { state: "attached", timeout: Math.max(1, deadline - Date.now()) });
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
    // The move list repeats nothing: one button per label.
    const labels = await page.locator(".moves .move").allTextContents();
    check(new Set(labels).size === labels.length, `no move label twice: ${labels.join(" | ")}`);
    const before = await seqOf(page);
    const logBefore = await page.locator(".log .line").count();
    // The table can change under the pointer (a bot's move, the end of the match): a click
    // that finds nothing to click is tried again from the top.
    const click = (locator) => locator.click({ timeout: 3000 }).then(() => true, () => false);
    let clicked;
    if (moves % 2 === 0 && (await page.locator(".board .legal").count())) {
      // By the board: lit elements until a move is played (a move built on the board is
      // confirmed; the few moves a pick leaves are in sight).
      for (let step = 0; step < 8 && (await seqOf(page)) === before && !(await page.locator("#refusal").textContent()); step++) {
        const confirm = page.locator("#builder .confirm");
        const narrowed = page.locator(".moves .in-sight .move");
        if (await confirm.count()) clicked = await click(confirm);
        else if (step > 0 && (await narrowed.count())) clicked = await click(narrowed.first());
        else if (await page.locator(".board .legal").count()) clicked = await click(page.locator(".board .legal").first());
        else break;
        if (!clicked) break;
      }
    } else {
      clicked = await playFromList(page);
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
      const grew = await page.waitForFunction((n) => document.querySelectorAll(".log .line").length > n, logBefore, { timeout: WAIT }).then(() => true, () => false);
      check(grew, `the move log grew with the move (from ${logBefore})`);
      check((await page.locator(".log .line.last").count()) === 1, "the last step is marked in the log");
      const unmarked = await page.locator(".log li.turn:not(:has(> .who))").count();
      check(unmarked === 0, `every turn in the log says whose it is (${unmarked} do not)`);
      check((await page.locator(".log li.turn.mine > .who").first().textContent()) === "you", "the seat's own turns say you");
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
    // On a phone the form to start a match comes first, then the lists of matches.
    const order = await page.evaluate(() => document.querySelector(".new-match").getBoundingClientRect().top < document.querySelector(".lobby-matches").getBoundingClientRect().top);
    check(order, "the new match form comes before the lists");
    await page.waitForFunction(() => !document.querySelector(".lobby-matches[aria-busy]"));
    const emptyOpen = await page.evaluate(() => [...document.querySelectorAll("details.list")].filter((d) => d.open && !d.querySelector("li")).map((d) => d.id));
    check(!emptyOpen.length, `empty lists are folded: ${emptyOpen}`);
    for (const g of games) {
      await page.locator("#new-game").selectOption(g);
      const form = page.locator(`form[data-game="${g}"]`);
      check(await form.isVisible(), `${g}'s form shows when chosen`);
      check((await page.locator("form.game-type:visible").count()) === 1, "one form in sight");
      check(await form.locator("h2").textContent(), `${g} has a name`);
      check(await form.locator('button[type="submit"]').isVisible(), `${g} can be created`);
      await form.locator("details summary").click();
      check((await form.locator(".option").count()) > 0, `${g} shows its options`);
      // Options in the game's words: no option's id in what a player reads.
      const ids = await form.locator("[name]").evaluateAll((es) => es.map((e) => e.getAttribute("name")).filter((n) => n.includes("_")));
      const text = await page.locator("main").innerText();
      const shown = ids.filter((id) => text.includes(id));
      check(!shown.length, `${g}: no option id in the visible text, found ${shown}`);
      // Bots offered only where the game has some.
      const botOffered = await form.locator('select[data-seat="1"] option[value="bot"]').count();
      check(botOffered <= 1, "one strongest bot option");
    }
    // Nothing is wider than a phone.
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    check(wide <= PHONE.width, `the lobby fits ${PHONE.width} px (scrollWidth ${wide})`);
    await shoot(page, "lobby");
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
      // Default options (memory_aid=off): the deal's peek at cards 1 and 4 shows on the table,
      // read on this seat's first turn. The bot may have played first: a Swap that took one of
      // those cards rightly ends its peek (the log then says "swapped").
      await page.waitForSelector(".card.peek");
      await page.locator('.board [data-key="pile"].legal').waitFor();
      const peeked = await page.locator(`.card.peek`).evaluateAll((cs) => cs.map((c) => c.dataset.key));
      const swapped = (await page.locator(".log").textContent()).includes("swapped");
      check((peeked.length === 2 || (swapped && peeked.length < 2)) && peeked.every((k) => /^slot:0:[14]$/.test(k)),
        `the peek shows cards 1 and 4: ${peeked}${swapped ? " (a swap came first)" : ""}`);
      const faces = await page.locator(".card.peek").allTextContents();
      check(faces.every((f) => f.trim().length > 0), `the peeked cards show their faces: ${faces}`);
      // They stay in sight through the seat's turn (a draw), until the turn ends.
      await page.locator('.board [data-key="pile"].legal').waitFor();
      const before = await seqOf(page);
      await page.locator('.board [data-key="pile"].legal').click();
      await page.waitForFunction((b) => document.querySelector(".match-head .seq")?.textContent !== b, before);
      await page.waitForSelector('.board [data-key="pending"]');
      check((await page.locator(".card.peek").count()) === peeked.length, "the peeked cards stay in sight after the draw");
      await page.waitForFunction(() => document.querySelector("#turn-banner")?.textContent !== "Sending your move…");
    }
    if (game === "grid_knock") {
      // The seat's first sealed choice is marked on its card (only it knows it) until the reveal.
      await page.waitForSelector(".move", { state: "attached" });
      const before = await seqOf(page);
      check(await playFromList(page), "a move played from the list");
      await page.waitForFunction((b) => document.querySelector(".match-head .seq")?.textContent !== b, before);
      const chosen = await page.locator(".gcell .card.chosen").evaluateAll((cs) => cs.map((c) => c.closest("[data-key]").dataset.key));
      check(chosen.length === 1 && chosen[0].startsWith("slot:0:"), `the seat's own chosen card is marked: ${chosen}`);
      check(await page.locator("#peek-note").count() === 1, "and said in words");
    }
    if (game === "carre") await carreCells(page);
    await shoot(page, `${game}-start`);
    // Move values are for a finished match's replay only, never on a live match's page.
    check((await page.locator("#move-values-btn, #move-values table").count()) === 0, "no move values on a live match");
    const moves = await playToTheEnd(page, Date.now() + MATCH_DEADLINE, game);
    // The events are told in the game's own words (the server's), never in enum names.
    // A draw belongs to the drawer, whoever's move caused it.
    const draws = await page.locator(".log .line").evaluateAll((ls) => ls.map((l) =>
      [l.dataset.seat ?? "", (l.textContent.trim().match(/^(You|Seat \d+) drew\b/) ?? [])[1]]).filter(([, who]) => who));
    check(draws.length > 0 || game === "democratie", "some draws in the log");
    // (The server's sentences number seats from 1, data-seat from 0 as on the wire.)
    check(draws.every(([seat, who]) => seat === (who === "You" ? "0" : String(Number(who.slice(5)) - 1))), `draws marked as the drawer's: ${JSON.stringify(draws)}`);
    const told = await page.locator(".log .line").allTextContents();
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
    if (game === "carre") await carreCells(page);
    // The log is grouped by turn (and round, where the game has rounds).
    const grouped = await logGrouped(page, game !== "qwirkle");
    // Qwirkle's board is fitted to its tiles, on a phone and on a desktop.
    if (game === "qwirkle") {
      await boardFits(page, "at the end on a phone");
      await page.setViewportSize(DESKTOP);
      await boardFits(page, "at the end on a desktop");
      await page.setViewportSize(PHONE);
    }
    await shoot(page, `${game}-end`);
    check(!page.errors.length, page.errors.join("; "));
    console.log(`${game} log: ${JSON.stringify(grouped)}`);
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
      await page.waitForFunction((m) => document.querySelector(".replay .seq")?.textContent?.startsWith(`step ${m} of`), seq);
      if (await everyHandShown(page, roles.length)) handsAt = seq;
    }
    check(handsAt !== undefined, `the replay shows every seat's hand at some seq from ${mid} back`);
    check((await page.locator("#replay-log li.turn:not(:has(> .who))").count()) === 0, "every replayed turn says whose it is");
    await readable(page);
    if (game === "qwirkle") {
      await boardFits(page, "in the replay on a phone");
      await page.setViewportSize(DESKTOP);
      await boardFits(page, "in the replay on a desktop");
      await page.setViewportSize(PHONE);
      // Zoom: in by a button, fitted again by the keyboard.
      const size = async () => page.locator(".zoom-box .qcell").first().evaluate((c) => c.getBoundingClientRect().width);
      const fitted = await size();
      await page.locator(".zoom-in").click();
      check((await size()) > fitted * 1.1, "the board zooms in");
      // Zoomed in past its box, a mouse drag pans it.
      await page.locator(".zoom-in").click();
      const zb = page.locator(".zoom-box");
      const r = await zb.boundingBox();
      const at = () => zb.evaluate((b) => [b.scrollLeft, b.scrollTop, b.scrollWidth > b.clientWidth || b.scrollHeight > b.clientHeight]);
      const from = await at();
      await page.mouse.move(r.x + r.width / 2, r.y + r.height / 2);
      await page.mouse.down();
      await page.mouse.move(r.x + r.width / 2 - 60, r.y + r.height / 2 - 40, { steps: 6 });
      await page.mouse.up();
      const to = await at();
      check(!from[2] || to[0] !== from[0] || to[1] !== from[1], `a drag pans the zoomed board: ${from} to ${to}`);
      await page.locator(".zoom-box").focus();
      await page.keyboard.press("0");
      check(Math.abs((await size()) - fitted) < 1, "0 fits it again");
    }
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
      await page.waitForSelector(".move, .result h2", { state: "attached" });
      check(!(await page.locator(".result h2").count()), "the match ended before a multi-tile play came up");
      const keys = await page.locator(".move").evaluateAll((bs) => bs.map((b) => b.dataset.keys.split(" ")));
      const multi = keys.find((k) => k.filter((x) => x.startsWith("at:")).length >= 2);
      // The play is built once the move log is longer than its box, so that opening the match
      // again below shows whether the log scrolls to its latest entry (a first move's log fits).
      const logOverflows = await page.evaluate(() => { const l = document.querySelector(".log"); return !!l && l.scrollHeight > l.clientHeight; });
      if (!multi || !logOverflows) {
        const before = await seqOf(page);
        await playFromList(page);
        await page.waitForFunction((b) => document.querySelector(".match-head .seq")?.textContent !== b, before);
        continue;
      }
      const logBefore = await page.locator(".log .line").count();
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
      await page.waitForFunction((n) => document.querySelectorAll(".log .line").length > n, logBefore);
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
      await page.waitForSelector(".log .line.last");
      const overflows = await page.evaluate(() => { const l = document.querySelector(".log"); return l.scrollHeight > l.clientHeight; });
      check(overflows, "the move log is longer than its box");
      await page.waitForFunction(() => {
        const log = document.querySelector(".log");
        const last = log.querySelector(".line.last").getBoundingClientRect();
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
      await guest.waitForFunction((id) => location.hash === `#/game/${id}` && document.querySelector(".match-head")?.textContent?.includes("you are Seat 2"), gameId);
      // The host sees the seat taken: no open link, no "Waiting for Seat 2 to join".
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
    // Every seat's clock drawn the same way: its time for a move (and its bank, if any).
    const all = await page.locator(".clock").evaluateAll((cs) => cs.map((c) => [c.querySelector(".per-move")?.textContent ?? "", !!c.querySelector(".bank")]));
    check(all.length === 2 && all.every(([m, bank]) => /^move \d+:\d\d$/.test(m) && !bank), `each seat's move time: ${JSON.stringify(all)}`);
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
      check((await guest.locator(".match-head").textContent()).includes("you are Seat 2"), "the guest holds the second seat (Seat 2)");
      // Whoever is to act moves; the other browser sees it live (WatchGame), a few times over.
      for (let i = 0; i < 4; i++) {
        const mover = (await host.locator(".move").count()) ? host : guest;
        const watcher = mover === host ? guest : host;
        await mover.waitForSelector(".move", { state: "attached" });
        const before = await seqOf(watcher);
        await playFromList(mover);
        await watcher.waitForFunction((b) => (document.querySelector(".match-head .seq")?.textContent ?? "") !== b, before);
        await Promise.race([host.waitForSelector(".move", { state: "attached" }), guest.waitForSelector(".move", { state: "attached" })]);
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
      await guest.waitForFunction((id) => location.hash === `#/game/${id}` && document.querySelector(".match-head")?.textContent?.includes("you are Seat 2"), openId);
      check(!guest.errors.length, guest.errors.join("; "));
    } finally {
      await other.close();
      await third?.close();
    }
    check(!host.errors.length, host.errors.join("; "));
  },

  // A Connect call from the page answers without a stall: 40 calls one after another on the
  // page's own connection (ListGameTypes, the smallest read; 10 more before them to warm up),
  // their median under 30 ms (a stall of the delayed-ACK kind costs 40 ms or more a call). A static file of the same server in
  // the same run is the baseline printed beside it.
  async latency(ctx) {
    const page = await newPage(ctx);
    await page.goto(`${base}/#/`);
    await page.waitForSelector("form.game-type");
    const got = await page.evaluate(async () => {
      const time = async (f) => { const out = []; for (let i = 0; i < 50; i++) { const t0 = performance.now(); await f(); if (i >= 10) out.push(performance.now() - t0); } return out.sort((a, b) => a - b); };
      const call = await time(async () => { const r = await fetch("/tablier.v1.GameService/ListGameTypes", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }); await r.text(); });
      const file = await time(async () => { const r = await fetch(`favicon.svg?${Math.random()}`, { cache: "no-store" }); await r.text(); });
      const q = (xs, p) => xs[Math.floor(p * (xs.length - 1))];
      return { call: [q(call, 0.25), q(call, 0.5), q(call, 0.75)], file: [q(file, 0.25), q(file, 0.5), q(file, 0.75)] };
    });
    console.log(`Connect call ms (q1, median, q3): ${got.call.map((x) => x.toFixed(1))}; static file: ${got.file.map((x) => x.toFixed(1))}`);
    check(got.call[1] < 30, `a Connect call's median under 30 ms: ${got.call[1].toFixed(1)} ms (static file ${got.file[1].toFixed(1)} ms)`);
    check(!page.errors.length, page.errors.join("; "));
  },

  // A refusal of the options, in the game's words: no option id in it.
  async option_words(ctx) {
    const page = await newPage(ctx);
    page.allowConsoleErrors = true;
    await page.goto(`${base}/#/`);
    await page.locator("#new-game").selectOption("carre");
    const form = page.locator('form[data-game="carre"]');
    await form.locator("details summary").click();
    await form.locator('[name="clock_increment_seconds"]').fill("5");
    const ids = await form.locator("[name]").evaluateAll((es) => es.map((e) => e.getAttribute("name")).filter((n) => n.includes("_")));
    await form.locator('button[type="submit"]').click();
    await page.waitForFunction(() => document.querySelector("form[data-game=carre] .form-error")?.textContent);
    const text = await form.locator(".form-error").textContent();
    await page.screenshot({ path: join(shots, "option-refusal.png"), fullPage: true });
    const shown = ids.filter((id) => text.includes(id));
    check(!shown.length, `the refusal names no option id: "${text}" (${shown})`);
  },

  async refusal(ctx) {
    const page = await newPage(ctx);
    await create(page, "carre", ["me", "bot"]);
    await page.waitForSelector(".board .legal");
    // Pick a card in hand, then a cell no legal move puts it on: the server refuses, in words.
    // By keyboard: a legal card is a tab stop with a label; Enter picks it.
    const handCard = page.locator('.hand [data-key^="card:"].legal').first();
    check((await handCard.getAttribute("tabindex")) === "0", "a legal card is reachable by Tab");
    check(/^card /.test((await handCard.getAttribute("aria-label")) ?? ""), "a card has a label for screen readers");
    const cardKey = await handCard.getAttribute("data-key");
    await handCard.focus();
    await page.keyboard.press("Enter");
    await page.locator('.hand [data-key^="card:"].picked').waitFor();
    // The table was drawn again: the keyboard focus is still on the card picked.
    const focused = await page.evaluate(() => document.activeElement?.dataset?.key);
    check(focused === cardKey, `the focus stays on the picked card: ${focused} (picked ${cardKey})`);
    const cell = page.locator('.board [data-key^="cell:"]:not(.legal)').first();
    await cell.click();
    await page.waitForFunction(() => document.querySelector("#refusal")?.textContent);
    const text = await page.locator("#refusal").textContent();
    const reason = await page.locator("#refusal").getAttribute("data-reason");
    check(text.startsWith("Refused: ") && text.length > 15, `a refusal in words: ${text}`);
    check(/^[A-Z_]+$/.test(reason ?? ""), `the server's reason: ${reason}`);
    check(!/\b[A2-9TJQK][SHDC]\b/.test(text), `the refusal names cards in words: ${text}`);
    await page.screenshot({ path: join(shots, "refusal.png"), fullPage: true });
    // The match goes on: the legal moves are offered again, and the keyboard focus is on the table.
    await page.waitForSelector(".board .legal");
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
    await page.waitForFunction(() => document.querySelector(".replay .seq")?.textContent?.startsWith("step 3 of"));
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
      // Offered only where a seat decides.
      if (await page.locator("#move-values-btn").isHidden()) {
        await stepWith("#replay-next");
        continue;
      }
      // A loading sign from the click until the values arrive.
      const loading = await page.evaluate(() => { document.querySelector("#move-values-btn").click(); return !!document.querySelector("#values-loading"); });
      check(loading, "a loading sign while the values are computed");
      await page.waitForSelector("#move-values:not([aria-busy])", { timeout: 120_000 });
      check(!/No seat decides/.test(await page.locator("#move-values").textContent()), `values offered at seq ${at}, where nobody decides`);
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
        // The few best in sight, the rest folded (the move played always in sight).
        const inSight = await page.locator("#move-values tr.value-row:visible").count();
        check(rows <= 6 || inSight <= 6, `the best few in sight: ${inSight} of ${rows}`);
        if (await page.locator("#values-more").count()) {
          await page.locator("#values-more").click();
          check((await page.locator("#move-values tr.value-row:visible").count()) === rows, "the rest unfolds");
        }
        // Linked to the board: pointing at a move shows it on the table.
        let linked = false;
        for (let i = 0; i < Math.min(rows, 8) && !linked; i++) {
          await page.locator("#move-values tr.value-row").nth(i).hover();
          linked = (await page.locator(".replay .board .shown-move").count()) > 0;
        }
        check(linked, "a move of the table shows on the board when pointed at");
      } else await stepWith("#replay-next");
    }
    check(found, "a seq with move values");
    await page.screenshot({ path: join(shots, "replay.png"), fullPage: true });
    check(!page.errors.length, page.errors.join("; "));
  },
  // Player accounts: a guest signs in under a name; the matches it creates are bound to it and
  // listed by the server (a second browser with the same key sees the same ones and holds the
  // same seat); names and colours on the table, the log, the end screen and the replay, never
  // "seat 0"; resign (asked twice), leave a waiting match, rename, sign out.
  async players(ctx) {
    const name = "Rosa Ødegård";
    const noSeatZero = async (page, where) => {
      const text = await page.locator("main").innerText();
      check(!/\bseat 0\b/i.test(text), `no "seat 0" in what people read (${where})`);
    };
    const a = await newPage(ctx);
    await a.goto(`${base}/#/`);
    await a.locator("#guest-name").fill(name);
    await a.locator("#sign-in").click();
    await a.waitForFunction((n) => document.querySelector("#player-name")?.textContent === n, name);
    const running = await create(a, "carre", ["me", "bot"]);
    await a.waitForFunction((n) => document.querySelector('.match-head .seats .seat[data-seat="0"]')?.textContent === `${n} (you)`, name);
    check((await a.locator(".match-head .you-are").textContent()) === `you are ${name}`, "the table names the player's own seat");
    const bot = await a.locator('.match-head .seats .seat[data-seat="1"]').textContent();
    check(/^Seat 2: bot/.test(bot), `a bot's seat is "Seat 2" (1-based): ${bot}`);
    const waiting = await create(a, "carre", ["me", "open"]);
    check((await a.locator("#quit-leave").textContent()) === "Leave this match", "a waiting match offers to leave it");
    // The browser keeps the credential and nothing about the matches.
    const kept = await a.evaluate(() => Object.keys(localStorage));
    check(kept.includes("tablier:player-credential") && !kept.some((k) => k.startsWith("tablier:match:")), `only the credential kept: ${kept}`);
    const listed = async (page) => {
      await page.goto(`${base}/#/`);
      await page.waitForSelector("#my-matches li[data-game-id]");
      return (await page.locator("#my-matches li[data-game-id]").evaluateAll((ls) => ls.map((l) => l.dataset.gameId))).sort();
    };
    const mineA = await listed(a);
    check(mineA.includes(running) && mineA.includes(waiting), `the lobby lists the player's matches: ${mineA}`);
    const waitingLine = await a.locator(`#my-matches li[data-game-id="${waiting}"]`).innerText();
    check(/waiting for players/.test(waitingLine) && waitingLine.includes("open seat"), `a waiting match says so: ${waitingLine}`);
    await noSeatZero(a, "lobby");
    // A second browser (its own profile) signed in with the same key: the same matches.
    const key = await a.locator("#my-key").inputValue();
    check(/^tp1\./.test(key), "the key to take to another device is shown");
    const ctx2 = await launch();
    try {
      const b = await newPage(ctx2);
      await b.goto(`${base}/#/`);
      await b.locator("details.key-in summary").click();
      await b.locator("#player-key").fill(key);
      await b.locator("#use-key").click();
      await b.waitForFunction((n) => document.querySelector("#player-name")?.textContent === n, name);
      await b.waitForSelector("#my-matches li[data-game-id]");
      const mineB = (await b.locator("#my-matches li[data-game-id]").evaluateAll((ls) => ls.map((l) => l.dataset.gameId))).sort();
      check(JSON.stringify(mineB) === JSON.stringify(mineA), `the second browser lists the same matches: ${mineB} vs ${mineA}`);
      // It holds the seat through the credential alone (no seat token there).
      await b.goto(`${base}/#/game/${running}`);
      await b.waitForFunction((n) => document.querySelector(".match-head .you-are")?.textContent === `you are ${n}`, name);
      check(!(await b.evaluate(() => Object.keys(localStorage).some((k) => k.startsWith("tablier:match:")))), "no seat token in the second browser");

      // The table and the log name the player; the bot's turns are "Seat 2".
      await a.goto(`${base}/#/game/${running}`);
      await a.waitForSelector("#turn-banner.mine", { timeout: 60_000 });
      const seq = await seqOf(a);
      check(await playFromList(a), "a move played");
      await a.waitForFunction((s) => document.querySelector(".match-head .seq")?.textContent !== s, seq);
      await a.waitForSelector("#turn-banner.mine", { timeout: 60_000 });
      const botTurn = await a.locator('.log li.turn[data-seat="1"] > .who').first().textContent();
      check(botTurn === "Seat 2", `the bot's turns in the log are "Seat 2": ${botTurn}`);
      check((await a.locator(".log li.turn.mine > .who.named").count()) > 0, "the player's own turns carry its colour");
      await noSeatZero(a, "table");
      if (await a.locator("#move-list[open]").count()) await a.locator("#move-list > summary").click();
      await shoot(a, "players-table");
      // Resign, asked twice: "No" keeps playing, "Yes" ends the match.
      await a.locator("#quit-resign").click();
      check(/Resign\?/.test(await a.locator("#quit").innerText()), "resigning asks first");
      await a.locator("#quit-no").click();
      check(await a.locator("#quit-resign").isVisible(), "No: nothing happened");
      check(!(await a.locator(".result h2").count()), "No: the match goes on");
      await a.locator("#quit-resign").click();
      await a.locator("#quit-yes").click();
      await a.waitForSelector(".result h2.verdict");
      check((await a.locator(".result h2.verdict").textContent()) === "You lost.", "a resigned match is lost");
      const row = await a.locator('.result table.scores tr[data-seat="0"]').innerText();
      check(row.includes(`${name} (you)`), `the end screen names the player: ${row}`);
      const ended = await a.locator(".result .how-ended").textContent();
      // (In the server's words, to the player: "You resigned", or by its name.)
      check(ended === `${name} resigned and forfeits the match.` || ended === "You resigned and forfeit the match.", `the end screen says the match ended by a resignation: ${ended}`);
      const resigned = a.locator(".log li.turn", { hasText: "resigned" }).last();
      check((await resigned.locator("> .who").textContent()) === "you", "the log tells the resignation, as the player's own");
      check(!(await a.locator("#quit button").count()), "nothing to resign once the match is over");
      await noSeatZero(a, "end screen");
      await shoot(a, "players-end");
      // The other browser sees the end too (live).
      await b.waitForSelector(".result h2.verdict");
      // The replay names the players.
      await a.locator(".replay-link").click();
      await a.waitForSelector("#replay-seats");
      const seats = await a.locator("#replay-seats").innerText();
      check(seats.includes(name) && seats.includes("Seat 2"), `the replay names the seats: ${seats}`);
      check(/Seat 2 won/.test(await a.locator(".replay-outcome").textContent()), "the replay says who won");
      // The replay's log (no seat of its own) marks the player's turns with its name.
      const badges = await a.locator("#replay-log li.turn > .who").allTextContents();
      check(badges.includes(name) && badges.includes("Seat 2"), `the replay's log names whose turn: ${[...new Set(badges)]}`);
      check((await a.locator("#replay-log").innerText()).includes(`${name} resigned`), "the replay's log names the player in its sentences");
      await noSeatZero(a, "replay");
      await shoot(a, "players-replay");
      // The lobby: the finished match with its result, the waiting one, both the player's.
      await listed(a);
      await a.waitForFunction((id) => document.querySelector(`#my-matches li[data-game-id="${id}"] .standing`)?.textContent === "Seat 2 won", running);
      check((await a.locator(`#my-matches li[data-game-id="${running}"] .resume`).textContent()) === "See the end", "a finished match of the player's: see the end");
      await noSeatZero(a, "lobby");
      await shoot(a, "players-lobby");
      // Leave the waiting match from the second browser: the seat opens, the list drops it.
      await b.goto(`${base}/#/game/${waiting}`);
      await b.locator("#quit-leave").click();
      await b.locator("#quit-yes").click();
      await b.waitForFunction(() => location.hash === "#/" || location.hash === "");
      await b.waitForSelector("#my-matches li[data-game-id]");
      check(!(await b.locator(`#my-matches li[data-game-id="${waiting}"]`).count()), "a match left is no longer the player's");
      check((await b.locator(`#open-seats li[data-game-id="${waiting}"]`).count()) === 1, "its seats are open to anyone");
      // Rename: every seat shows the new name.
      await a.goto(`${base}/#/`);
      await a.locator("details.rename summary").click();
      await a.locator("#new-name").fill("Rosa B");
      await a.locator("#rename").click();
      await a.waitForFunction(() => document.querySelector("#player-name")?.textContent === "Rosa B");
      await a.goto(`${base}/#/game/${running}`);
      await a.waitForFunction(() => document.querySelector('.match-head .seats .seat[data-seat="0"]')?.textContent === "Rosa B (you)");
      // Sign out: the credential is revoked, here and in the other browser.
      await a.goto(`${base}/#/`);
      // A call of the match page still in flight when the credential is revoked is refused
      // (401), as it must be: errors before this point still fail the scenario.
      a.allowConsoleErrors = true;
      await a.locator("#sign-out").click();
      await a.waitForSelector("#guest-name");
      check(!(await a.evaluate(() => localStorage.getItem("tablier:player-credential"))), "signing out forgets the credential");
      b.allowConsoleErrors = true; // the revoked credential is refused once (401)
      await b.goto(`${base}/#/`);
      await b.reload();
      await b.waitForSelector("#guest-name");
      check(!(await b.evaluate(() => localStorage.getItem("tablier:player-credential"))), "a revoked credential is forgotten on the other device");
      check(!b.errors.length, b.errors.join("; "));
    } finally {
      await ctx2.close();
    }
    check(!a.errors.length, a.errors.join("; "));
  },

  // "Play on from here" in a finished match's replay: a fork at the step shown, this browser's
  // seat the one to act there, a bot at the other; its page says it is a fork, never rated.
  async play_on(ctx) {
    const page = await newPage(ctx);
    await create(page, "carre", ["me", "bot"]);
    await playToTheEnd(page, Date.now() + MATCH_DEADLINE, "play_on");
    await page.locator(".replay-link").click();
    await page.waitForSelector("#verification");
    await page.locator("#replay-first").click();
    await page.waitForFunction(() => document.querySelector(".replay .seq")?.textContent?.startsWith("step 1 of"));
    for (let tries = 0; tries < 12 && await page.locator("#play-on-btn").isHidden(); tries++) {
      const before = await page.locator(".replay .seq").textContent();
      await page.locator("#replay-next").click();
      await page.waitForFunction((b) => document.querySelector(".replay .seq")?.textContent !== b, before);
    }
    const step = (await page.locator(".replay .seq").textContent()).split(" ")[1];
    await page.locator("#play-on-btn").click();
    await page.waitForSelector("#fork-of", { timeout: 30_000 });
    const said = await page.locator("#fork-of").textContent();
    check(said.includes(`from step ${step}`) && said.includes("never rated"), `the fork says what it is: ${said}`);
    check(!(await page.locator("#play-on-refused").count()), "the fork was made");
    await page.waitForSelector(".board .legal", { timeout: 30_000 });
    await page.screenshot({ path: join(shots, "play-on.png"), fullPage: true });
    check(!page.errors.length, page.errors.join("; "));
  },

  // "Play on from here" while the match runs: from the table and from the replay so far, each a
  // fork from this browser's seat's own knowledge; on the running fork, its replay values this
  // seat's own moves (a fork is an analysis board).
  async play_on_running(ctx) {
    const page = await newPage(ctx);
    const parent = await create(page, "carre", ["me", "bot"]);
    await page.waitForSelector(".board .legal", { timeout: 30_000 });
    const step = (await seqOf(page)).split(" ")[1];
    await page.locator("#play-on-table").click();
    await page.waitForSelector("#fork-of", { timeout: 30_000 });
    let said = await page.locator("#fork-of").textContent();
    check(said.includes(`from step ${step}`) && said.includes("never rated"), `the table's fork says what it is: ${said}`);
    const forkId = page.url().split("/").pop();
    check(forkId !== parent, "the fork is a new match");
    check((await page.locator(".you-are").textContent()).includes("Seat 1"), "this browser holds the fork's seat it forked from");
    // The running fork's replay, as this seat: the value of its own moves where it decides.
    await page.waitForSelector("#replay-so-far");
    await page.locator("#replay-so-far").click();
    await page.waitForSelector("#verification");
    check((await page.locator("#verification").textContent()).includes("still running"), "a running match's replay says it runs");
    for (let tries = 0; tries < 12 && await page.locator("#move-values-btn").isHidden(); tries++) {
      const before = await page.locator(".replay .seq").textContent();
      await page.locator("#replay-back").click();
      await page.waitForFunction((b) => document.querySelector(".replay .seq")?.textContent !== b, before);
    }
    await page.locator("#move-values-btn").click();
    await page.waitForSelector("#move-values table.values tbody tr", { timeout: 30_000 });
    const rows = await page.locator("#move-values tbody tr").count();
    check(rows > 0, `the fork's values list the seat's moves (${rows})`);
    await shoot(page, "play-on-running-fork-values");
    // The parent's replay so far (still running), as this seat: play on from an earlier step.
    await page.goto(`${base}/#/replay/${parent}`);
    await page.waitForSelector("#verification");
    check((await page.locator("#verification").textContent()).includes("still running"), "the parent's replay says it runs");
    check(!(await page.locator("#move-values-btn").count()), "no move values on a running match that is not a fork");
    await page.locator("#replay-first").click();
    await page.waitForFunction(() => document.querySelector(".replay .seq")?.textContent?.startsWith("step 1 of"));
    for (let tries = 0; tries < 12 && await page.locator("#play-on-btn").isHidden(); tries++) {
      const before = await page.locator(".replay .seq").textContent();
      await page.locator("#replay-next").click();
      await page.waitForFunction((b) => document.querySelector(".replay .seq")?.textContent !== b, before);
    }
    const at = (await page.locator(".replay .seq").textContent()).split(" ")[1];
    await page.locator("#play-on-btn").click();
    await page.waitForSelector("#fork-of", { timeout: 30_000 });
    said = await page.locator("#fork-of").textContent();
    check(said.includes(`from step ${at}`), `the replay's fork says where it starts: ${said}`);
    check(!(await page.locator("#play-on-refused").count()), "the fork was made");
    await shoot(page, "play-on-running");
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

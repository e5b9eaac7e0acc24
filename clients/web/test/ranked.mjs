// Ranked play in the web app, in Debian's Chromium driven by playwright-core: "Play ranked" in
// the lobby (a guest name, the queue's status in words, Cancel), a bot of near rating taking
// the empty seat (the server runs with a short --queue-bot-after), the match page as the
// player, played to its end by its first legal move, the end screen's rating changes once the
// server rated the match (printed as a line `rated <json>` for the test to compare with the
// rating stream), and the leaderboard page; screenshots at phone and desktop sizes.
//   node test/ranked.mjs <base url> <screenshot dir>
// Exit 0 when every check passed; every wait has a deadline.

import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [base, shots] = process.argv.slice(2);
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
const WAIT = 30_000;

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

async function both(page, name) {
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: join(shots, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: join(shots, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
}

const profile = mkdtempSync(join(tmpdir(), "tablier-chromium-"));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  viewport: PHONE,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
let code = 0;
const errors = [];
try {
  const page = await ctx.newPage();
  page.setDefaultTimeout(WAIT);
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${base}/#/`);
  await page.waitForSelector("#ranked");
  await page.selectOption("#ranked-game", "carre");
  await page.fill("#ranked-name", "Nina");

  // Queue, then cancel: the status says where the search stands, then that it ended.
  await page.click("#play-ranked");
  await page.waitForFunction(() => /Looking for|No player near/.test(document.querySelector("#queue-status")?.textContent ?? ""));
  check(await page.isVisible("#cancel-ranked"), "Cancel is offered while queued");
  await both(page, "ranked-queue");
  await page.click("#cancel-ranked");
  await page.waitForFunction(() => (document.querySelector("#queue-status")?.textContent ?? "").includes("Left the queue"));
  check((await page.textContent("#ranked-who")).includes("Nina"), "signed in as the name given");

  // Queue again: after the server's bot wait, a bot of near rating takes the seat.
  await page.click("#play-ranked");
  await page.waitForURL(/#\/game\//, { timeout: WAIT });
  await page.waitForSelector(".seat, #table, .table", { timeout: WAIT }).catch(() => {});
  await both(page, "ranked-match");
  const gameId = page.url().split("/").pop();

  // Played to its end (the first legal move each turn; the bot plays its own), then the end
  // screen: "Rating the match…" until the rating event exists, then each seat's change.
  const deadline = Date.now() + 180_000;
  while (!(await page.locator(".result h2").count())) {
    check(Date.now() < deadline, "the ranked match ended");
    await page.waitForSelector(".moves .move, .result h2", { state: "attached", timeout: WAIT });
    if (await page.locator(".result h2").count()) break;
    const before = await page.textContent(".match-head .seq");
    const inSight = page.locator(".moves .in-sight .move");
    let clicked;
    if (await inSight.count()) clicked = await inSight.first().click({ timeout: 3000 }).then(() => true, () => false);
    else {
      const list = page.locator("#move-list");
      if (await list.count() && !(await list.evaluate((d) => d.open))) await list.locator("summary").click({ timeout: 3000 }).catch(() => {});
      clicked = await list.locator(".move").first().click({ timeout: 3000 }).then(() => true, () => false);
    }
    if (clicked) await page.waitForFunction((b) => document.querySelector(".match-head .seq")?.textContent !== b
      || document.querySelector("#refusal")?.textContent || document.querySelector(".result h2"), before, { timeout: WAIT });
  }
  await page.waitForSelector("#rating-line", { timeout: WAIT });
  const line = await page.textContent("#rating-line");
  check(/^Your rating [+-]\d+ → [\d,]+ \(rank \d+\)/.test(line), `the player's change in words: ${line}`);
  const changes = await page.$$eval(".scores td.rating-change", (cells) => cells.map((c) => [Number(c.dataset.seat), c.textContent]));
  check(changes.length === 2 && changes.every(([, t]) => /^[+-]\d+ → [\d,]+$/.test(t)), `every seat's change: ${JSON.stringify(changes)}`);
  // The player's row says "(you)"; the bot's names the bot under its seat, as the seat list does.
  const who = await page.$$eval(".scores tr[data-seat] td:first-child", (cells) => cells.map((c) => [c.querySelector(".seat")?.textContent, c.querySelector(".bot-name")?.textContent ?? ""]));
  check(who.some(([seat, bot]) => / \(you\)$/.test(seat) && !bot) && who.some(([seat, bot]) => /^Seat \d$/.test(seat) && /^bot \(.+\)$/.test(bot)),
    `the rows name the seats: ${JSON.stringify(who)}`);
  console.log(`rated ${JSON.stringify({ gameId, line, changes })}`);
  await both(page, "ranked-end");

  // The leaderboard: every rated subject, ranks from 1.
  await page.goto(`${base}/#/leaderboard/carre`);
  await page.waitForSelector(".leaderboard tbody tr");
  const ranks = await page.$$eval(".leaderboard td.rank", (cells) => cells.map((c) => Number(c.textContent)));
  check(ranks.length > 0 && ranks[0] === 1, `ranks from 1: ${ranks}`);
  await both(page, "leaderboard");
  check(errors.length === 0, `no page errors: ${errors.join("; ")}`);
} catch (err) {
  console.error(String(err?.stack ?? err));
  code = 1;
} finally {
  await ctx.close();
  rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}
process.exit(code);

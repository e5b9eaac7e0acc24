// Ranked play in the web app, in Debian's Chromium driven by playwright-core: "Play ranked" in
// the lobby (a guest name, the queue's status in words, Cancel), a bot of near rating taking
// the empty seat (the server runs with a short --queue-bot-after), the match page as the
// player, and the leaderboard page; screenshots at phone and desktop sizes.
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

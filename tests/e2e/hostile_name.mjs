// The web app shows a player's name as text, never as markup: opens a match whose seat is held by
// a player with a hostile display name and checks that the move log says it literally, that no
// element the name spells exists, and that no script ran. Screenshots of the table at both sizes.
//
//   node hostile_name.mjs WEB_URL GAME_ID NAME SHOTS_DIR
// Run by tests/e2e/test_players.py with clients/web's playwright-core (WEB_DIR).
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const { chromium } = createRequire(join(process.env.WEB_DIR, "package.json"))("playwright-core");
const [url, gameId, name, shots] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), "tablier-chromium-"));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  viewport: { width: 390, height: 844 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
try {
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  const dialogs = [];
  page.on("dialog", async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  await page.addInitScript(() => { window.__injected = 0; });
  await page.goto(`${url}/#/game/${gameId}`);
  const LOG = "[aria-label='move log']";
  await page.waitForFunction(([sel, n]) => document.querySelector(sel)?.textContent.includes(n), [LOG, name]);
  const text = await page.$eval(LOG, (e) => e.textContent);
  const found = text.split(name).length - 1;
  if (found === 0) throw new Error(`the name is not in the move log: ${text}`);
  const injected = await page.evaluate(
    (sel) => document.querySelectorAll(`img[src='x'], ${sel} img, ${sel} script`).length, LOG);
  if (injected !== 0) throw new Error(`the name became ${injected} element(s)`);
  if (dialogs.length) throw new Error(`a script ran: ${dialogs.join(", ")}`);
  await page.screenshot({ path: join(shots, "hostile-name-table-phone.png"), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: join(shots, "hostile-name-table-desktop.png"), fullPage: true });
  console.log(`hostile name shown as text: ${found} time(s) in the move log`);
} finally {
  await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}

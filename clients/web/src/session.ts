// What every page shares: the clients of the server that served the page, its game types,
// the player signed in (only its credential is kept, in local storage), the seats this browser
// holds when nobody is signed in (local storage), the status line and the current page's stop.

import { anyJson, asSeat, gameClient, playerClient, refusal, type GameType, type Player } from "./api";
import type { Any } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";

export const client = gameClient();
export const players = playerClient();
const status = document.getElementById("status")!;

let gameTypes: GameType[] = [];
export async function types(): Promise<GameType[]> {
  if (!gameTypes.length) gameTypes = (await client.listGameTypes({})).gameTypes;
  return gameTypes;
}

// ------------------------------------------------------------------ the player signed in

// The only thing this browser keeps about a signed-in player: its credential. Its matches come
// from the server (ListGames mine), its seats are acted for by the credential on any device.
const CREDENTIAL = "tablier:player-credential";
let profile: Player | undefined;

export function credential(): string | undefined {
  return localStorage.getItem(CREDENTIAL) ?? undefined;
}
const bearer = (c: string) => ({ headers: { authorization: `Bearer ${c}` } });

/** The player signed in (GetPlayer with the kept credential), or undefined; a credential the
 *  server refuses (revoked elsewhere) is forgotten. */
export async function signedIn(): Promise<Player | undefined> {
  const c = credential();
  if (!c) { profile = undefined; return undefined; }
  if (profile) return profile;
  try {
    profile = (await players.getPlayer({}, bearer(c))).player;
  } catch (err) {
    if (refusal(err).code === String(Code.Unauthenticated)) localStorage.removeItem(CREDENTIAL);
    profile = undefined;
  }
  return profile;
}

/** A new guest player with this name; its credential is kept. */
export async function signInAsGuest(displayName: string): Promise<Player> {
  const got = await players.createGuestPlayer({ displayName });
  localStorage.setItem(CREDENTIAL, got.credential);
  profile = got.player;
  return got.player!;
}

/** Signs in with a credential from another device (checked with GetPlayer first). */
export async function signInWithCredential(c: string): Promise<Player> {
  const got = await players.getPlayer({}, bearer(c.trim()));
  localStorage.setItem(CREDENTIAL, c.trim());
  profile = got.player;
  return got.player!;
}

export async function rename(displayName: string): Promise<Player> {
  profile = (await players.renamePlayer({ displayName }, bearer(credential() ?? ""))).player;
  return profile!;
}

/** Revokes the credential (refused at once everywhere) and forgets it here. */
export async function signOut() {
  const c = credential();
  localStorage.removeItem(CREDENTIAL);
  profile = undefined;
  if (c) await players.revokeCredential({}, bearer(c)).catch(() => undefined);
}

/** Invite codes of matches created in this page's life (shown on the match page; a signed-in
 *  player's browser keeps nothing about its matches). */
export const invitesMade = new Map<string, Record<number, string>>();

/** How to call as `gameId`'s seat: this browser's seat token for it (anonymous play), else the
 *  player credential (the server acts for the seat its player holds there), else nothing. */
export function callerToken(gameId: string): string | undefined {
  const record = held(gameId);
  if (record.mine.length) return record.tokens[record.mine[0]];
  return credential();
}

// ------------------------------------------------------------------ seats this browser holds

// The seat tokens this browser holds, per match (the tokens are shown once by the server),
// with the match's game type and when this browser took its seat, for the lobby.
export type Held = { tokens: Record<number, string>; mine: number[]; invites: Record<number, string>; gameType?: string; at?: number };

export function held(gameId: string): Held {
  const raw = localStorage.getItem(`tablier:match:${gameId}`);
  return raw ? JSON.parse(raw) : { tokens: {}, mine: [], invites: {} };
}
export function keep(gameId: string, record: Held) {
  localStorage.setItem(`tablier:match:${gameId}`, JSON.stringify(record));
}

function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** JoinGame (safe to repeat: one join key for every try), then the match page. */
export async function join(request: { gameId?: string; inviteCode?: string }) {
  const joinKey = randomKey();
  let joined;
  for (let attempt = 0; ; attempt++) {
    try {
      joined = await client.joinGame({ ...request, joinKey }, asSeat(credential()));
      break;
    } catch (err) {
      if (attempt >= 2 || refusal(err).code !== String(Code.Unavailable)) throw err;
    }
  }
  const gameId = joined.state!.gameId;
  // A signed-in player's seat is bound to the player: its credential acts for it.
  if (credential()) { location.replace(`#/game/${gameId}`); return; }
  const record = held(gameId);
  record.gameType = joined.state!.gameType;
  record.at ??= Date.now();
  record.tokens[joined.seat] = joined.seatToken;
  record.mine = [joined.seat, ...record.mine.filter((s) => s !== joined.seat)];
  keep(gameId, record);
  location.replace(`#/game/${gameId}`);
}

export function say(text: string, kind: "info" | "error" = "info") {
  status.textContent = text;
  status.className = kind;
}

/** The matches this browser holds seats in (their tokens are in local storage), newest first. */
export function heldMatches(): { gameId: string; record: Held }[] {
  const out: { gameId: string; record: Held }[] = [];
  for (let i = 0; i < localStorage.length; i++) {
    const k = localStorage.key(i) ?? "";
    if (k.startsWith("tablier:match:")) out.push({ gameId: k.slice("tablier:match:".length), record: held(k.slice("tablier:match:".length)) });
  }
  return out.sort((a, b) => (b.record.at ?? 0) - (a.record.at ?? 0));
}

/** What the page shown now stops when another replaces it (a watch, a timer). */
export const current: { stop?: () => void } = {};

export const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

export function anyJsonOrUndefined(a: Any): any {
  try { return anyJson(a); } catch { return undefined; }
}

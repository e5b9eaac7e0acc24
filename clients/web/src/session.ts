// What every page shares: the client of the server that served the page, its game types,
// the seats this browser holds (local storage), the status line and the current page's stop.

import { anyJson, gameClient, refusal, type GameType } from "./api";
import type { Any } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";

export const client = gameClient();
const status = document.getElementById("status")!;

let gameTypes: GameType[] = [];
export async function types(): Promise<GameType[]> {
  if (!gameTypes.length) gameTypes = (await client.listGameTypes({})).gameTypes;
  return gameTypes;
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
      joined = await client.joinGame({ ...request, joinKey });
      break;
    } catch (err) {
      if (attempt >= 2 || refusal(err).code !== String(Code.Unavailable)) throw err;
    }
  }
  const gameId = joined.state!.gameId;
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

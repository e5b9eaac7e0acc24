// "Play on from here" (ForkGame): a new match from a match's state at one of its steps, this
// browser at one seat, the server's bots at the others. Who may fork what is the server's
// rule (docs/api.md "Forks"); the pages offer only what it grants:
//   - a finished match: from the full state (the auditor's), the seat to act there this browser's;
//   - a running match: from this browser's own seat's knowledge (what that seat knew at the
//     step; every card it could not see is dealt afresh), never the full state, ranked or not.

import { asSeat, refusal, SeatKind } from "./api";
import { client, credential, held, keep } from "./session";

/** Whose knowledge a fork starts from: the full state (a finished match), or a seat's own. */
export type ForkFrom = { auditor: true; seat: number } | { auditor: false; seat: number };

/** Forks `gameId` at `seq` and opens the fork's page; `token` proves the seat of a running
 *  parent (its seat token, or the player credential bound to it). The fork's seat `from.seat`
 *  is this browser's. Throws the server's refusal. */
export async function playOn(gameId: string, gameType: string, seats: number, seq: number, from: ForkFrom, token: string | undefined): Promise<void> {
  const forked = await client.forkGame({
    parentGameId: gameId, atSeq: BigInt(seq),
    forkedAs: from.auditor ? { kind: { case: "auditor", value: {} } } : { kind: { case: "seat", value: from.seat } },
    seatAssignments: Array.from({ length: seats }, (_, s) => ({ kind: s === from.seat ? SeatKind.CREATOR : SeatKind.BOT })),
  }, asSeat(token));
  // A signed-in player's fork is bound to it (its credential acts for the seat): nothing kept.
  if (!(credential() && token === credential())) {
    const record = held(forked.gameId);
    record.gameType = gameType;
    record.at = Date.now();
    record.tokens[from.seat] = forked.seatTokens[from.seat];
    record.mine = [from.seat];
    keep(forked.gameId, record);
  }
  location.hash = `#/game/${forked.gameId}`;
}

/** The refusal of a fork, in the server's words. */
export const forkRefused = (err: unknown) => `Cannot play on from here: ${refusal(err).message}`;

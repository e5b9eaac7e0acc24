// A match of Carré between two seats the script holds, each playing what the server's bot
// suggests, then the scores.   node example.mjs [http://127.0.0.1:8080]
import { anyJson, asSeat, gameClient } from "tablier-client";

const client = gameClient(process.argv[2] ?? "http://127.0.0.1:8080"); // `tablier serve --web-listen`
const { gameTypes } = await client.listGameTypes({});
console.log("games:", gameTypes.map((t) => t.id).join(", "));

const created = await client.createGame({ gameType: "carre", seats: 2 });
let state = created.state;
while (state && !state.over) {
  const seat = asSeat(created.seatTokens[state.toAct[0]]);
  const { action, seq } = await client.suggestMove({ gameId: created.gameId }, seat);
  const played = await client.playMove(
    { gameId: created.gameId, commandId: crypto.randomUUID(), action, expectedSeq: seq }, seat);
  state = played.state;
}
console.log(`match ${created.gameId} over at seq ${state?.seq}: scores ${state?.outcome?.scores.join(" ")}`);
console.log("last view:", JSON.stringify(anyJson(state?.view)).slice(0, 60), "...");

// The TypeScript client of tablier.v1.GameService: the generated messages and service
// descriptor (src/gen, from proto/ by protoc-gen-es) over the Connect protocol
// (@connectrpc/connect-web), plus what every page needs: credentials as headers, the
// ErrorInfo reason of a refusal, and the game messages inside google.protobuf.Any.

import { createClient, ConnectError, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { createRegistry, fromJson, toJson, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { anyPack, AnySchema, type Any } from "@bufbuild/protobuf/wkt";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { GameService } from "./gen/tablier/v1/service_pb.js";
import { PlayerService } from "./gen/tablier/v1/players_pb.js";
import { file_tablier_v1_common } from "./gen/tablier/v1/common_pb.js";
import { gameFiles } from "./gen/games.js";

export * from "./gen/tablier/v1/service_pb.js";
export * from "./gen/tablier/v1/common_pb.js";
export * from "./gen/tablier/v1/players_pb.js";

export type GameClient = Client<typeof GameService>;
export type PlayerClient = Client<typeof PlayerService>;

/** A client of the server at `baseUrl` (its `--web-listen` address); in a browser, by
 * default, of the server that served the page. */
export function gameClient(baseUrl?: string): GameClient {
  if (baseUrl === undefined) {
    if (typeof location === "undefined") throw new Error("gameClient(baseUrl): no page to take the server from");
    baseUrl = location.origin;
  }
  return createClient(
    GameService,
    createConnectTransport({ baseUrl, useBinaryFormat: true, interceptors: [gameHeader] }),
  );
}

/** The header naming the match a call is about, for a proxy in front of several servers to
 * hash (docs/api.md, "Several servers behind one address"). */
export const GAME_HEADER = "x-tablier-game";

/** Sets `x-tablier-game: <gameId>` on every call whose request names a match (unary calls and
 * WatchGame alike), so a proxy sends the calls about one match to the server that holds it in
 * memory. Any server answers correctly without it. `gameClient` installs it; add it to a
 * transport of your own with `interceptors: [gameHeader]`. */
export const gameHeader: Interceptor = (next) => async (req) => {
  if (!req.stream) {
    setGame(req.header, req.message);
    return next(req);
  }
  // A server stream's request is one message (browsers send no client streams): read it,
  // then hand the same message on.
  const messages: unknown[] = [];
  for await (const message of req.message) messages.push(message);
  setGame(req.header, messages[0]);
  const replay = (async function* () {
    yield* messages;
  })() as typeof req.message;
  return next({ ...req, message: replay });
};

function setGame(header: Headers, message: unknown): void {
  const gameId = (message as { gameId?: unknown } | undefined)?.gameId;
  if (typeof gameId === "string" && gameId !== "" && !header.has(GAME_HEADER)) header.set(GAME_HEADER, gameId);
}

/** A client of tablier.v1.PlayerService (player accounts) at `baseUrl`, as gameClient. */
export function playerClient(baseUrl?: string): PlayerClient {
  if (baseUrl === undefined) {
    if (typeof location === "undefined") throw new Error("playerClient(baseUrl): no page to take the server from");
    baseUrl = location.origin;
  }
  return createClient(PlayerService, createConnectTransport({ baseUrl, useBinaryFormat: true }));
}

/** Every game's messages, to read and write the Any payloads (src/gen/games.ts lists every
 * game's generated file, written by gen-games.mjs from the proto directory), and the events
 * every game shares (a seat resigned or left: tablier.v1.SeatResigned, SeatLeft). */
export const registry = createRegistry(...gameFiles, file_tablier_v1_common);

/** Call options acting as a seat (its token, or a player credential: the seat its player
 *  holds), as the auditor role, or as a spectator. */
export function asSeat(token: string | undefined): { headers: Record<string, string> } {
  return { headers: token ? { authorization: `Bearer ${token}` } : {} };
}
export const asAuditorRole = { headers: { "x-tablier-role": "auditor" } };

/** A game message (view, action, event) as protobuf JSON, every field present. */
export function anyJson(any: Any | undefined): any {
  if (!any) return undefined;
  return toJson(AnySchema, any, { registry, alwaysEmitImplicit: true });
}

/** An action of `typeName` (GameType.action_type) from its protobuf JSON. */
export function packAction(typeName: string, json: JsonValue): Any {
  const desc = registry.getMessage(typeName) as DescMessage | undefined;
  if (!desc) throw new Error(`unknown action type ${typeName}`);
  return anyPack(desc, fromJson(desc, json, { registry }));
}

/** What went wrong, in words, and the server's machine reason (google.rpc.ErrorInfo). */
export function refusal(err: unknown): { code: string; reason: string; message: string } {
  const e = ConnectError.from(err);
  let reason = "";
  for (const d of e.details) {
    if ("type" in d && d.type === "google.rpc.ErrorInfo") {
      const r = new BinaryReader(d.value);
      while (r.pos < r.len) {
        const [no, wt] = r.tag();
        if (no === 1) reason = r.string();
        else r.skip(wt);
      }
    }
  }
  return { code: String(e.code), reason, message: e.rawMessage };
}

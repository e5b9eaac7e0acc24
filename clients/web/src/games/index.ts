// The games' drawings, one file per game named by its id (GameType.id): games/<id>.ts
// exports its GameUI as default. Found by Vite at build time, so a new game needs its
// drawing file and nothing else in the client.

import { h } from "../dom";
import type { GameUI } from "./shared";

export { evaluatedMoves, eventSeat, type GameUI, type Memory, type SeenEvent } from "./shared";

const modules = import.meta.glob<{ default: GameUI }>(["./*.ts", "!./index.ts", "!./shared.ts"], { eager: true });
export const GAMES: Record<string, GameUI> = Object.fromEntries(
  Object.entries(modules).map(([path, m]) => [path.replace(/^\.\/(.*)\.ts$/, "$1"), m.default]));

/** The UI of a game type, or a plain one (every move in the list) for a game without a drawing. */
export function gameUI(id: string): GameUI {
  return GAMES[id] ?? {
    draw: (v) => h("pre", { class: "raw" }, JSON.stringify(v, null, 1)),
    keys: () => [],
  };
}

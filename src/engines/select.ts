import { debuglog } from "node:util";
import type { Engine, EngineConfig } from "./engine.js";

/** The `engine` option: which engine serves the app (see `CogOptions.engine`). */
export type EngineName = "node" | "native" | "auto";
const ENGINES: readonly EngineName[] = ["node", "native", "auto"];
/** `NODE_DEBUG=cog` prints which engine an app runs on (and, for "auto", why). */
const debug = debuglog("cog");

/**
 * The engine option checked against the others, when the app is made: the engine to start
 * ("auto" becomes "node" when only the node engine can serve what was asked, HTTP/2).
 */
export function chooseEngine(engine: EngineName | undefined, http2: boolean): EngineName {
  const name = engine ?? "node";
  if ((name as string) === "uws") {
    throw new RangeError('engine "uws" was retired: use engine: "native", Cog\'s own engine, which serves what a bare uWebSockets.js server serves without its install problems (see docs/engines.md)');
  }
  if (!ENGINES.includes(name)) throw new RangeError(`engine must be one of ${ENGINES.map((e) => `"${e}"`).join(", ")}; got ${String(name)}`);
  if (!http2) return name;
  if (name === "native") {
    throw new RangeError('The native engine serves HTTP/1.1 only (cleartext or TLS): http2 needs engine: "node" (or "auto", which picks it), or an HTTP/2-terminating proxy in front of the native engine (see docs/guide/deployment.md)');
  }
  // "auto" picks the engine that can serve what was asked.
  return "node";
}

/** The engine named, loaded on demand (an app on one engine never loads the other); "auto": native where its addon loads. */
export async function startEngine(engine: EngineName, config: EngineConfig, listening: boolean): Promise<Engine> {
  let name: "node" | "native";
  if (engine === "auto") {
    const unavailable = (await import("./native/load.js")).nativeUnavailable();
    name = unavailable === null ? "native" : "node";
    debug('engine "auto" chose %s%s', name, unavailable === null ? ": the native engine loads here" : `, because ${unavailable}`);
    // Serving slower than asked is worth one line, once per listen: an install without the
    // native engine is otherwise found out by its speed. Where "auto" gets native, it says nothing.
    if (listening && unavailable !== null) console.warn(`cog: engine "auto" serves on "node", because ${unavailable}`);
  } else {
    name = engine;
    debug('engine "%s"', name);
  }
  return name === "native" ? new (await import("./native/engine.js")).NativeEngine(config) : new (await import("./node/engine.js")).NodeEngine(config);
}

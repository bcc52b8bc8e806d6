import { debuglog } from "node:util";
import { createRequire } from "node:module";
import type { Engine, EngineConfig } from "./contract/engine.js";

/** The `engine` option: which engine serves the app (see `CogOptions.engine`). */
export type EngineName = "node" | "native" | "auto";
const ENGINES: readonly EngineName[] = ["node", "native", "auto"];
/** `NODE_DEBUG=cog` prints which engine an app runs on (and, for "auto", why). */
const debug = debuglog("cog");

/**
 * The engine option checked, when the app is made: the engine to start (every engine serves
 * HTTP/1.1 and HTTP/2; "auto" picks native where its addon loads, when it starts).
 */
export function chooseEngine(engine: EngineName | undefined): EngineName {
  const name = engine ?? "node";
  if ((name as string) === "uws") {
    throw new RangeError(
      'engine "uws" was retired: use engine: "native", Cog\'s own engine, which serves what a bare uWebSockets.js server serves without its install problems (see docs/engines.md)',
    );
  }
  if (!ENGINES.includes(name)) throw new RangeError(`engine must be one of ${ENGINES.map((e) => `"${e}"`).join(", ")}; got ${String(name)}`);
  return name;
}

/** The engine named, loaded on demand (an app on one engine never loads the other); "auto": native where its addon loads. */
export async function startEngine(engine: EngineName, config: EngineConfig, listening: boolean): Promise<Engine> {
  let name: "node" | "native";
  if (engine === "auto") {
    const unavailable = (await import("./kit/addon.js")).nativeUnavailable();
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

/**
 * The engine named, loaded and made at once, for a face whose `listen` returns its server
 * synchronously (Express's `app.listen`): the engine's module is required (Node's require of an
 * ES module, which every Node this package supports has), so it is still loaded only by an app
 * that serves on it.
 */
export function startEngineNow(engine: EngineName, config: EngineConfig): Engine {
  let name: "node" | "native" = engine === "auto" ? "node" : engine;
  if (engine === "auto") {
    const unavailable = (requireEngine("./kit/addon.js") as typeof import("./kit/addon.js")).nativeUnavailable();
    name = unavailable === null ? "native" : "node";
    debug('engine "auto" chose %s%s', name, unavailable === null ? ": the native engine loads here" : `, because ${unavailable}`);
    if (unavailable !== null) console.warn(`cog: engine "auto" serves on "node", because ${unavailable}`);
  }
  if (name === "native") {
    const { NativeEngine } = requireEngine("./native/engine.js") as typeof import("./native/engine.js");
    return new NativeEngine(config);
  }
  const { NodeEngine } = requireEngine("./node/engine.js") as typeof import("./node/engine.js");
  return new NodeEngine(config);
}
const requireEngine = createRequire(import.meta.url);

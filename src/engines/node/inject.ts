import { IncomingMessage, ServerResponse } from "node:http";
import type { InjectOptions as LightOptions } from "light-my-request";
import type { InjectOptions, InjectResponse } from "../contract/engine.js";
import { parseCookies } from "../contract/inject.js";

type Inject = typeof import("light-my-request").inject;
let loading: Promise<Inject> | null = null;

/**
 * Answers a request in memory, with light-my-request's fake request and response given this
 * app's request and response classes, and handed to the node engine's own listener (its head
 * rules, then the app). Loaded on first use, so apps that never inject never load it.
 * light-my-request stays at 6.6: 6.8 needs cookie 2, which needs Node 22, and Cog supports Node
 * 20 (docs/decisions/prebuilt-binaries.md: over loopback, as the native engine does, an inject
 * costs hundreds of times more).
 */
export async function injectInMemory(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  Request: abstract new (...args: never[]) => IncomingMessage,
  Response: abstract new (...args: never[]) => ServerResponse,
  options: InjectOptions | string,
): Promise<InjectResponse> {
  loading ??= import("light-my-request").then((module) => module.inject);
  const run = await loading;
  const response = await run(
    (req, res) => listener(adopt(req, Request, IncomingMessage), finishedOnEnd(adopt(res, Response, ServerResponse))),
    options as LightOptions,
  );
  // light-my-request keeps what a HEAD handler wrote; a client of either engine receives no body.
  if (response.raw.req.method === "HEAD") {
    response.rawPayload = Buffer.alloc(0);
    response.payload = response.body = "";
  }
  // Node says "Connection: keep-alive" where the native engine leaves HTTP/1.1's default unsaid:
  // an injected response names its connection only when the app or the engine chose to close it.
  if (response.headers.connection === "keep-alive" && !response.raw.res.hasHeader("connection")) delete response.headers.connection;
  // Cog's parse of Set-Cookie, as on the native engine (light-my-request's keeps "Lax" as sent,
  // where the native engine's read "lax"): one reading for the same bytes on every engine.
  return Object.defineProperty(response, "cookies", { value: parseCookies(response.headers["set-cookie"]), enumerable: true }) as unknown as InjectResponse;
}

/**
 * light-my-request's socket takes a response's bytes a tick after the response closes, so at
 * 'close' Node's `writableFinished` is still false and the access log would call every injected
 * response aborted. In memory, a response that has ended is complete.
 */
function finishedOnEnd(res: ServerResponse): ServerResponse {
  return Object.defineProperty(res, "writableFinished", { get: () => res.writableEnded });
}

/**
 * Gives light-my-request's objects Cog's classes' members. Changing an object's prototype is
 * slow in V8, which is acceptable here (tests only) and is why the engine itself constructs
 * Cog's classes instead.
 */
function adopt<T extends object>(target: object, Class: abstract new (...args: never[]) => T, Base: abstract new (...args: never[]) => object): T {
  const own = Object.getPrototypeOf(target) as object;
  let byClass = adopted.get(own);
  if (byClass === undefined) adopted.set(own, (byClass = new WeakMap()));
  let proto = byClass.get(Class);
  if (proto === undefined) {
    proto = Object.create(own) as object;
    // Cog's members and their defaults live on the prototypes between its class and Node's (the
    // helpers mixin, the engine's class, the app's): copy them base-most first, so a subclass's member wins.
    const chain: object[] = [];
    for (let p = Class.prototype as object; p !== Base.prototype; p = Object.getPrototypeOf(p) as object) chain.unshift(p);
    // light-my-request's own members (the write and end that capture the payload) stay its own.
    for (const p of chain) {
      const { constructor: _, ...members } = Object.getOwnPropertyDescriptors(p);
      for (const key of Reflect.ownKeys(members)) if (Object.hasOwn(own, key)) delete members[key as string];
      Object.defineProperties(proto, members);
    }
    byClass.set(Class, proto);
  }
  Object.setPrototypeOf(target, proto);
  return target as T;
}

const adopted = new WeakMap<object, WeakMap<object, object>>();

import { IncomingMessage, ServerResponse } from "node:http";
import type { InjectOptions, Response as InjectResponse } from "light-my-request";
import { CogRequest, type RequestSettings } from "./request.js";
import { CogResponse } from "./response.js";
import type { Dispatch } from "./engines/engine.js";

export type { InjectOptions, InjectResponse };

type Inject = typeof import("light-my-request").inject;
let loading: Promise<Inject> | null = null;

/**
 * Answers a request in memory (light-my-request's fake request/response),
 * running the same dispatch as a real server. Loaded on first use, so apps
 * that never inject never load it.
 */
export async function inject(dispatch: Dispatch, settings: RequestSettings, options: InjectOptions | string): Promise<InjectResponse> {
  loading ??= import("light-my-request").then((module) => module.inject);
  const run = await loading;
  return run((req: IncomingMessage, res: ServerResponse) => {
    const request = adopt(req, CogRequest, IncomingMessage);
    request.settings = settings;
    dispatch(request, adopt(res, CogResponse, ServerResponse));
  }, options);
}

/**
 * Gives light-my-request's objects Cog's helpers. Changing an object's
 * prototype is slow in V8, which is acceptable here (tests only) and is why
 * the real engine constructs Cog's classes instead.
 */
function adopt<T extends object>(target: object, Class: new (...args: never[]) => T, Base: abstract new (...args: never[]) => object): T {
  const own = Object.getPrototypeOf(target) as object;
  let proto = adopted.get(own);
  if (proto === undefined) {
    proto = Object.create(own) as object;
    // Cog's members and their defaults live on the prototypes between its class and Node's (the
    // helpers mixin, then the class): copy them base-most first, so a subclass's member wins.
    const chain: object[] = [];
    for (let p = Class.prototype as object; p !== Base.prototype; p = Object.getPrototypeOf(p) as object) chain.unshift(p);
    for (const p of chain) {
      const { constructor: _, ...members } = Object.getOwnPropertyDescriptors(p);
      Object.defineProperties(proto, members);
    }
    adopted.set(own, proto);
  }
  Object.setPrototypeOf(target, proto);
  return target as T;
}

const adopted = new WeakMap<object, object>();

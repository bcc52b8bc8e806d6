import { IncomingMessage, ServerResponse } from "node:http";
import type { InjectOptions, Response as InjectResponse } from "light-my-request";
import { CogRequest } from "./request.js";
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
export async function inject(dispatch: Dispatch, options: InjectOptions | string): Promise<InjectResponse> {
  loading ??= import("light-my-request").then((module) => module.inject);
  const run = await loading;
  return run((req: IncomingMessage, res: ServerResponse) => dispatch(adopt(req, CogRequest, IncomingMessage, requestFields), adopt(res, CogResponse, ServerResponse, responseFields)), options);
}

/**
 * Gives light-my-request's objects Cog's helpers. Changing an object's
 * prototype is slow in V8, which is acceptable here (tests only) and is why
 * the real engine constructs Cog's classes instead.
 */
function adopt<T extends object>(target: object, Class: new (...args: never[]) => T, Base: abstract new (...args: never[]) => object, fields: () => object): T {
  const own = Object.getPrototypeOf(target) as object;
  let proto = adopted.get(own);
  if (proto === undefined) {
    proto = Object.create(own) as object;
    // Cog's members live on the prototypes between its class and Node's (the helpers mixin, then the
    // class): copy them base-most first, so a subclass's member wins.
    const chain: object[] = [];
    for (let p = Class.prototype as object; p !== Base.prototype; p = Object.getPrototypeOf(p) as object) chain.unshift(p);
    for (const p of chain) {
      const { constructor: _, ...members } = Object.getOwnPropertyDescriptors(p);
      Object.defineProperties(proto, members);
    }
    adopted.set(own, proto);
  }
  Object.setPrototypeOf(target, proto);
  // The class fields, which only the constructor sets: copy fresh defaults.
  Object.assign(target, fields());
  return target as T;
}

const adopted = new WeakMap<object, object>();

/**
 * Cog's own fields and their defaults, read off an instance so the list lives
 * in one place (the class). Node's constructors accept a missing socket.
 */
function ownFields(instance: object, base: object): () => object {
  const names = Object.keys(instance).filter((name) => !Object.hasOwn(base, name));
  return () => Object.fromEntries(names.map((name) => [name, (instance as Record<string, unknown>)[name]]));
}

const fakeRequest = { method: "GET", httpVersionMajor: 1, httpVersionMinor: 1, headers: {} } as unknown as IncomingMessage;
let requestDefaults: (() => object) | null = null;
let responseDefaults: (() => object) | null = null;
const requestFields = () => (requestDefaults ??= ownFields(new CogRequest(undefined as never), new IncomingMessage(undefined as never)))();
const responseFields = () => (responseDefaults ??= ownFields(new CogResponse(fakeRequest as CogRequest), new ServerResponse(fakeRequest)))();

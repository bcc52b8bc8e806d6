import type { Request } from "../http/request.js";
import { refuseUnknownKeys } from "../base/known-keys.js";
import type { WebSocket } from "./socket.js";

export type { SendResult, WebSocketSettings } from "../engines/contract/engine.js";
import type { WebSocketSettings } from "../engines/contract/engine.js";

/** A message's payload: text arrives as a string, binary as a Buffer. */
export type MessageData = string | Buffer;

export type { OutgoingData } from "./payload.js";

/**
 * A WebSocket route's handlers. `upgrade` runs after the app's middleware on the upgrade
 * request: throw an `HttpError` to refuse with its status, or return (or resolve) the data the
 * socket carries as `ws.data`. The others are the socket's life: opened, a message, its unsent
 * bytes written (after `send` answered "queued"), closed (`code` 1005 when the peer gave none,
 * 1006 when the connection was cut).
 */
export interface WebSocketHandlers<Data = undefined> {
  upgrade?(req: Request): Data | Promise<Data>;
  open?(ws: WebSocket<Data>): unknown;
  message?(ws: WebSocket<Data>, data: MessageData, isBinary: boolean): unknown;
  drain?(ws: WebSocket<Data>): unknown;
  close?(ws: WebSocket<Data>, code: number, reason: string): unknown;
}

/** A WebSocket route's limits (see docs/guide/websockets.md). */
export interface WebSocketOptions {
  /** Largest message (and frame) accepted, in bytes; a larger one closes the socket with 1009. Default 1 MiB. */
  maxPayload?: number;
  /**
   * Most frames a message may come in; a message in more closes the socket with 1008, as `ws`
   * closes it. 0: no limit. Default 16384 (ws's).
   */
  maxFragments?: number;
  /**
   * Seconds without anything from the client before the socket is closed; half-way, it is sent a
   * ping, which a live client answers. 0 turns it off. Default 120.
   */
  idleTimeout?: number;
  /** Unsent bytes a socket may hold; past it a message is dropped (or the socket closed, see `onBackpressure`). Default 1 MiB. */
  maxBackpressure?: number;
  /** What a `send` that would pass `maxBackpressure` does: "drop" the message (the default) or "close" the socket (cut, code 1006). */
  onBackpressure?: "drop" | "close";
  /** Negotiate permessage-deflate compression (RFC 7692) when the client offers it; messages of 1 KiB or more go out compressed. Default false. */
  perMessageDeflate?: boolean;
}

// Written as records of every key of the types, so a key added to one and not here fails the type check.
const HANDLER_NAMES = Object.keys({ upgrade: true, open: true, message: true, drain: true, close: true } satisfies Record<keyof WebSocketHandlers, true>);
const OPTION_NAMES = Object.keys({
  maxPayload: true,
  maxFragments: true,
  idleTimeout: true,
  maxBackpressure: true,
  onBackpressure: true,
  perMessageDeflate: true,
} satisfies Record<keyof WebSocketOptions, true>);

const IS_AN_OPTION = "options are app.ws's third argument: app.ws(path, handlers, { maxPayload })";
const IS_A_HANDLER = "handlers are app.ws's second argument: app.ws(path, { open, message, close }, options)";

/** Refuses, at registration, handlers and options an `app.ws` route does not know (a typo would be ignored). */
export function checkWebSocketRoute(handlers: object, options: object, where: string): void {
  refuseUnknownKeys(
    handlers,
    HANDLER_NAMES,
    { ...Object.fromEntries(OPTION_NAMES.map((name) => [name, IS_AN_OPTION])), compression: IS_AN_OPTION, maxPayloadLength: IS_AN_OPTION },
    where,
    "handler",
  );
  refuseUnknownKeys(
    options,
    OPTION_NAMES,
    {
      ...Object.fromEntries(HANDLER_NAMES.map((name) => [name, IS_A_HANDLER])),
      compression: "Cog calls it perMessageDeflate: true",
      maxPayloadLength: "Cog calls it maxPayload",
    },
    where,
    "option",
  );
}

export function resolveWebSocketOptions(options: WebSocketOptions, where: string): WebSocketSettings {
  const settings: WebSocketSettings = {
    maxPayload: options.maxPayload ?? 1024 * 1024,
    maxFragments: options.maxFragments ?? 16 * 1024,
    idleTimeout: options.idleTimeout ?? 120,
    maxBackpressure: options.maxBackpressure ?? 1024 * 1024,
    onBackpressure: options.onBackpressure ?? "drop",
    perMessageDeflate: options.perMessageDeflate ?? false,
  };
  for (const name of ["maxPayload", "idleTimeout", "maxBackpressure"] as const) {
    const value = settings[name];
    if (!Number.isFinite(value) || value < 0 || (name !== "idleTimeout" && value < 1))
      throw new RangeError(`${where}: ${name} must be a positive number, got ${String(value)}`);
  }
  if (!Number.isInteger(settings.maxFragments) || settings.maxFragments < 0)
    throw new RangeError(`${where}: maxFragments must be a whole number >= 0, got ${String(settings.maxFragments)}`);
  if (settings.onBackpressure !== "drop" && settings.onBackpressure !== "close")
    throw new RangeError(`${where}: onBackpressure must be "drop" or "close", got ${String(settings.onBackpressure)}`);
  return settings;
}

import { HttpError } from "./errors.js";

/**
 * The limits and timeouts every request must fit in, with their defaults.
 * Node's own defaults suit a server behind a careful proxy; these suit one
 * that meets the internet (README, "Limits and defaults", compares them).
 */
export interface Limits {
  /** Largest request body, in bytes (413). */
  readonly bodyLimit: number;
  /** Largest request head (request line + headers), in bytes (431). */
  readonly maxHeaderSize: number;
  /** Most header lines in a request (431). */
  readonly maxHeaders: number;
  /** Longest request target (path + query), in characters (414). */
  readonly maxUrlLength: number;
  /** Longest value of one route param, in characters (414). */
  readonly maxParamLength: number;
  /** Most fields in a query string (414) or an urlencoded body (413). */
  readonly maxFields: number;
  /** Deepest nesting of arrays/objects in a JSON body (400). */
  readonly maxJsonDepth: number;
  /** Time a client has to send the whole request head, in ms (408, then closed). */
  readonly headersTimeout: number;
  /** Time a client has to send the whole request, body included, in ms (408, then closed). */
  readonly requestTimeout: number;
  /** How long an idle keep-alive connection stays open, in ms. */
  readonly keepAliveTimeout: number;
  /**
   * Time an answer may wait on a connection whose client reads none of it, in ms: once no byte
   * has moved for this long while output is pending, the connection is closed (the client has
   * stopped reading). A client that reads, however slowly, is never cut by it. 0 disables it.
   */
  readonly sendTimeout: number;
  /** How often the header, request and send timeouts are checked, in ms. */
  readonly timeoutCheckInterval: number;
  /**
   * Time a handler has to begin its answer (a status or a first byte), in ms; past it the
   * request gets a 503 and the route is logged. A response that has begun (a stream, SSE) is
   * never cut by it. 0 disables it.
   */
  readonly handlerTimeout: number;
}

export const DEFAULT_LIMITS: Limits = {
  bodyLimit: 1024 * 1024,
  maxHeaderSize: 16 * 1024,
  maxHeaders: 100,
  maxUrlLength: 8 * 1024,
  maxParamLength: 500,
  maxFields: 1000,
  maxJsonDepth: 64,
  headersTimeout: 15_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  sendTimeout: 60_000,
  timeoutCheckInterval: 2_000,
  handlerTimeout: 60_000,
};

/** The defaults with the user's overrides, each checked, so a typo fails at `new Cog()` rather than in production. */
export function resolveLimits(options: Partial<Record<keyof Limits, unknown>>): Limits {
  const limits: Record<string, number> = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
      throw new RangeError(`${key} must be a whole number >= 0, got ${String(value)}`);
    }
    limits[key] = value;
  }
  if (limits.headersTimeout! > limits.requestTimeout! && limits.requestTimeout !== 0) {
    throw new RangeError(`headersTimeout (${limits.headersTimeout}) must not exceed requestTimeout (${limits.requestTimeout})`);
  }
  return limits as unknown as Limits;
}

/**
 * The 408 of a request that arrived too slowly: its head within `headersTimeout`, or its body
 * within `requestTimeout`. Both engines send these words (the native engine writes them itself).
 */
export function tooSlow(limit: "headersTimeout" | "requestTimeout", ms: number): HttpError {
  const part = limit === "headersTimeout" ? "head" : "body";
  return new HttpError(408, `The request ${part} did not arrive within ${limit} (${ms} ms); raise the ${limit} option for slower clients`);
}

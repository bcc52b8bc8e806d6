import { ROUTE, type InternalRequest, type Request } from "./request.js";

/** Cog's entry for reporting an error it can't answer with (`app[REPORT](err, req)`), logged with where it happened. */
export const REPORT: unique symbol = Symbol("cog.report");
/** Cog's entry for a warning about how the app uses Cog (`app[WARN](message, req)`), logged with where it happened. */
export const WARN: unique symbol = Symbol("cog.warn");

/** Where a request was when something went wrong, for log lines: `GET /users/7 (route GET /users/:id)`. */
export function whereOf(req: Request): string {
  const route = (req as InternalRequest)[ROUTE];
  const target = `${req.method} ${req.originalUrl}`;
  return route === null ? target : `${target} (route ${route.where})`;
}

/** How to fix the errors a newcomer meets most, by code; logged after the error. */
const HINTS: Readonly<Record<string, string>> = {
  ERR_HTTP_HEADERS_SENT: "the response was already sent: set headers and status before res.send/res.json/res.end, answer once, and return after answering",
  ERR_STREAM_WRITE_AFTER_END: "the response had ended: write before res.end(), and answer once",
};

/** A hint for an error whose cause isn't plain from its message, or undefined. */
export function hintFor(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) {
    return `a ${err === null ? "null" : typeof err} was thrown, which has no stack trace: throw an Error (new Error("…"), or new HttpError(status, "…"))`;
  }
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? HINTS[code] : undefined;
}

import type { RequestLogger } from "../observe/access-log.js";
import { pathOf } from "../base/path.js";
import type { InternalRequest, Request } from "../http/request.js";
import { ROUTE } from "../base/symbols.js";

/**
 * The app's error reports: errors nothing can answer with any more (or that became a 5xx), and
 * warnings about how the app uses Cog, each with where it happened (method, path, route), to
 * stderr or, with a `logger`, to it; nothing with `logErrors` off.
 */
export class Reports {
  constructor(
    private readonly logErrors: boolean,
    private readonly logger: RequestLogger | null,
  ) {}

  /** Logs an error with where it happened, and how to fix it where Cog knows (`when`: what was going on). */
  report(err: unknown, req: Request, when?: string): void {
    if (!this.logErrors) return;
    const where = whereOf(req);
    if (this.logger !== null) return this.logger.error(err, req, `cog: ${where}${when === undefined ? "" : ` (${when})`}`);
    const hint = hintFor(err);
    if (hint === undefined) console.error(`cog: ${where}${when === undefined ? "" : ` (${when})`}:`, err);
    else console.error(`cog: ${where}${when === undefined ? "" : ` (${when})`}:`, err, `\n  (${hint})`);
  }

  /** Logs a warning about how the app uses Cog, with where. */
  warn(message: string, req: Request): void {
    if (this.logErrors) console.warn(`cog: warning: ${whereOf(req)}: ${message}`);
  }
}

/**
 * Where a request was when something went wrong, for log lines: `GET /users/7 (route GET
 * /users/:id)`. The path only, as in the access log: a query carries tokens and keys, and a log
 * line is read by more people than the request was meant for.
 */
export function whereOf(req: Request): string {
  const route = (req as InternalRequest)[ROUTE];
  const target = `${req.method} ${pathOf(req.originalUrl)}`;
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

import { ROUTE, type InternalRequest, type Request } from "./request.js";

/** Cog's entry for reporting an error it can't answer with (`app[REPORT](err, req)`), logged with where it happened. */
export const REPORT: unique symbol = Symbol("cog.report");

/** Where a request was when something went wrong, for log lines: `GET /users/7 (route GET /users/:id)`. */
export function whereOf(req: Request): string {
  const route = (req as InternalRequest)[ROUTE];
  const target = `${req.method} ${req.originalUrl}`;
  return route === null ? target : `${target} (route ${route})`;
}

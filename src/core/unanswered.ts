import type { Request } from "../request.js";
import type { Response } from "../response.js";

/** How long a response may stay unanswered after its handler returned before Cog warns. */
const GRACE_MS = 1000;

interface Returned {
  readonly req: Request;
  /** Who returned: `the handler "show"`, `the error handler`. */
  readonly who: string;
  readonly nextCalled: () => boolean;
  /** What the handler returned or its promise fulfilled with (undefined for most). */
  readonly value: unknown;
  since: number;
}

/**
 * The warning for a handler that returns without answering or calling `next()` (outside
 * production): the request then hangs until handlerTimeout, and the newcomer sees nothing.
 *
 * A handler may answer after it returns: a callback-style one (a database's callback), one that
 * answers after a timer, one that hands `res` to a stream. So the warning waits: only a response
 * still unanswered a second after its handler returned (an async one: after its promise
 * settled), whose handler has not called `next` since, and that nothing is feeding (no stream
 * piped into it, its request body not being read) is reported. A handler that answers before it
 * returns never gets here (`runChain` checks two properties), so the hot path pays nothing.
 */
export class UnansweredWatch {
  private readonly returned = new Map<Response, Returned>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly warn: (message: string, req: Request) => void) {}

  watch(req: Request, res: Response, who: string, nextCalled: () => boolean, value: unknown): void {
    if (this.returned.has(res)) return;
    // A handler that returns `res` (`return res.status(404)`) returned no answer of its own.
    this.returned.set(res, { req, who, nextCalled, value: value === res ? undefined : value, since: Date.now() });
    if (this.timer === null) {
      this.timer = setTimeout(this.check, GRACE_MS);
      this.timer.unref();
    }
  }

  private readonly check = (): void => {
    this.timer = null;
    const due = Date.now() - GRACE_MS;
    for (const [res, entry] of this.returned) {
      if (entry.since > due) continue;
      const { req } = entry;
      if (res.writableEnded || res.headersSent || res.destroyed || entry.nextCalled()) {
        this.returned.delete(res);
      } else if (res.listenerCount("unpipe") > 0 || (req.listenerCount("data") > 0 && !req.readableEnded)) {
        entry.since = Date.now(); // a stream is feeding it: look again later
      } else {
        this.returned.delete(res);
        this.warn(message(entry), req);
      }
    }
    if (this.returned.size > 0) {
      this.timer = setTimeout(this.check, GRACE_MS / 4);
      this.timer.unref();
    }
  };
}

function message({ who, value }: Returned): string {
  const returnedValue =
    value !== undefined && value !== null
      ? ` It returned a value, which Cog does not send: answer with res.json(value) or res.send(value).`
      : "";
  return (
    `${who} returned without answering or calling next(), and nothing answered in the ${GRACE_MS / 1000} s that followed: ` +
    `the client waits until handlerTimeout (if set) answers 503.${returnedValue} Answer with res.send(), res.json() or res.end(), or call next(); ` +
    `in an async handler, await what it waits for before returning. ` +
    `(If it answers later on purpose, e.g. long polling, ignore this: it is not logged when NODE_ENV is "production".)`
  );
}

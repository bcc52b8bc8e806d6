import type { Request } from "../http/request.js";
import type { Response } from "../http/response.js";
import { setImmediate, setTimeout } from "../base/loop.js";

/** How long a response may stay unanswered after its handler returned before Cog warns. */
const GRACE_MS = 1000;

interface Returned {
  readonly req: Request;
  readonly res: Response;
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
 *
 * Most handlers that get here answer on a later tick (a middleware that defers `next`, a body
 * parser): they are looked at once the loop has turned (`settle`) and dropped, so the watch holds
 * them no longer than that. Held for the whole second, each of them, with everything it
 * references, would outlive the young generation's collections and fill the old one: under load,
 * hundreds of megabytes and a full collection every few hundred milliseconds, in every app whose
 * middleware defers. Only the ones still waiting after that turn are kept for the second.
 */
export class UnansweredWatch {
  /** Handlers that returned during this turn of the loop. */
  private fresh: Returned[] = [];
  private settling: NodeJS.Immediate | null = null;
  /** Still unanswered a turn after their handler returned: looked at again after GRACE_MS. */
  private waiting: Returned[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly warn: (message: string, req: Request) => void) {}

  watch(req: Request, res: Response, who: string, nextCalled: () => boolean, value: unknown): void {
    // A handler that returns `res` (`return res.status(404)`) returned no answer of its own.
    this.fresh.push({ req, res, who, nextCalled, value: value === res ? undefined : value, since: Date.now() });
    this.settling ??= setImmediate(this.settle);
  }

  /** A turn later: what was answered meanwhile (most) is dropped; the rest waits for the second. */
  private readonly settle = (): void => {
    const fresh = this.fresh;
    this.fresh = [];
    this.settling = null;
    for (const entry of fresh) if (!settled(entry)) this.waiting.push(entry);
    if (this.waiting.length > 0 && this.timer === null) {
      this.timer = setTimeout(this.check, GRACE_MS);
      this.timer.unref();
    }
  };

  private readonly check = (): void => {
    this.timer = null;
    const due = Date.now() - GRACE_MS;
    const waiting: Returned[] = [];
    // A response two handlers left unanswered (one called next() after all) is reported once.
    const warned = new Set<Response>();
    for (const entry of this.waiting) {
      const { req, res } = entry;
      if (settled(entry) || warned.has(res)) continue;
      if (entry.since > due) {
        waiting.push(entry);
      } else if (res.listenerCount("unpipe") > 0 || (req.listenerCount("data") > 0 && !req.readableEnded)) {
        entry.since = Date.now(); // a stream is feeding it: look again later
        waiting.push(entry);
      } else {
        warned.add(res);
        this.warn(message(entry), req);
      }
    }
    this.waiting = waiting;
    if (waiting.length > 0) {
      this.timer = setTimeout(this.check, GRACE_MS / 4);
      this.timer.unref();
    }
  };
}

/** Answered, begun, cut, or its handler called `next()` after all: nothing to warn of. */
function settled({ res, nextCalled }: Returned): boolean {
  return res.writableEnded || res.headersSent || res.destroyed || nextCalled();
}

function message({ who, value }: Returned): string {
  const returnedValue =
    value !== undefined && value !== null ? ` It returned a value, which Cog does not send: answer with res.json(value) or res.send(value).` : "";
  return (
    `${who} returned without answering or calling next(), and nothing answered in the ${GRACE_MS / 1000} s that followed: ` +
    `the client waits until handlerTimeout (if set) answers 503.${returnedValue} Answer with res.send(), res.json() or res.end(), or call next(); ` +
    `in an async handler, await what it waits for before returning. ` +
    `(If it answers later on purpose, e.g. long polling, ignore this: it is not logged when NODE_ENV is "production".)`
  );
}

import { STATUS_CODES } from "node:http";

/**
 * An error that carries the HTTP status to answer with. Throw it (or pass it to
 * `next`) from any handler or middleware: the message is sent to the client
 * for 4xx statuses, while 5xx statuses send only the status text so that
 * internals never leak.
 */
export class HttpError extends Error {
  readonly status: number;
  /** Extra response headers, e.g. `Allow` on a 405. */
  readonly headers: Record<string, string> | undefined;
  /** Extra fields for the JSON error body (4xx only), e.g. `validation` on a schema failure. */
  readonly data: Record<string, unknown> | undefined;

  constructor(status: number, message?: string, options?: { cause?: unknown; headers?: Record<string, string>; data?: Record<string, unknown> }) {
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new RangeError(`HttpError status must be an integer from 400 to 599, got ${status}`);
    }
    super(message ?? STATUS_CODES[status] ?? "Error", options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "HttpError";
    this.status = status;
    this.headers = options?.headers;
    this.data = options?.data;
  }

  /** Whether the message is safe to show to the client. */
  get expose(): boolean {
    return this.status < 500;
  }
}

// HttpError's prototype carries a mark under a name every copy of cog-http shares (Symbol.for):
// a process that loads both of its builds (an app that imports it, a module that requires it:
// docs/decisions/module-systems.md) has two HttpError classes, and an app answers the other
// copy's HttpError with its status, headers and data all the same (`isHttpError`).
const HTTP_ERROR = Symbol.for("cog-http.HttpError");
Object.defineProperty(HttpError.prototype, HTTP_ERROR, { value: true });

/** Whether `err` is an HttpError, of this copy of cog-http or of another (its other build). */
export function isHttpError(err: unknown): err is HttpError {
  return err instanceof HttpError || (typeof err === "object" && err !== null && (err as { [HTTP_ERROR]?: unknown })[HTTP_ERROR] === true);
}

/**
 * A request refused for a rule of HTTP it breaks: the client's fault whatever the status (a 505
 * too), so its reason is sent and it is not logged as the server's error (any client could fill
 * the log with it).
 */
export class Refusal extends HttpError {
  override get expose(): boolean {
    return true;
  }
}

/**
 * The status an error maps to: HttpError's own, or `status`/`statusCode` on
 * errors thrown by Express-style libraries (http-errors, body-parser), else 500.
 */
export function statusOf(err: unknown): number {
  if (isHttpError(err)) return err.status;
  if (err !== null && typeof err === "object") {
    const status = (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
    if (typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 599) return status;
  }
  return 500;
}

/** The JSON body of an error response, shaped like Fastify's. */
export function errorBody(status: number, err: unknown): Record<string, unknown> {
  const error = STATUS_CODES[status] ?? "Error";
  const exposed = (isHttpError(err) ? err.expose : status < 500) && err instanceof Error && err.message !== "" ? err.message : error;
  const body: Record<string, unknown> = { statusCode: status, error, message: exposed };
  if (status < 500 && isHttpError(err) && err.data !== undefined) Object.assign(body, err.data);
  return body;
}

// The HandlerContext a gRPC call's implementation gets (grpc-call.ts): what Connect's
// `createHandlerContext` gives, made lazily. Its signal, its header lists and its values are
// made on first read: a call whose implementation reads none of them makes no AbortController,
// no DOMException when it ends, and no web Headers, which are most of the CPU Connect's own
// context costs per call (docs/decisions/connect-adapter.md).
import { Code, ConnectError, createContextValues, type ContextValues, type HandlerContext } from "@connectrpc/connect";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { Request } from "../http/request.js";

const OK = { "grpc-status": "0" };

export class GrpcContext implements HandlerContext {
  readonly requestMethod = "POST";
  readonly protocolName = "grpc";
  readonly service: DescService;
  #controller: AbortController | undefined;
  #deadline: ReturnType<typeof setTimeout> | undefined;
  #deadlineAt: number | undefined;
  #requestHeader: Headers | undefined;
  #responseHeader: Headers | undefined;
  #responseTrailer: Headers | undefined;
  #values: ContextValues | undefined;

  constructor(
    readonly method: DescMethod,
    private readonly req: Request,
    timeoutMs: number | undefined,
    private readonly shutdownSignal: AbortSignal | undefined,
    values: ContextValues | undefined,
    /** The response's head before the implementation adds to it: its content-type and grpc-encoding. */
    readonly head: Record<string, string>,
  ) {
    this.service = method.parent;
    this.#values = values;
    if (timeoutMs !== undefined) {
      this.#deadlineAt = Date.now() + timeoutMs;
      // As Connect's deadline signal: the call's signal aborts when its time is up.
      this.#deadline = setTimeout(() => this.controller().abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)), timeoutMs);
    }
  }

  get url(): string {
    const { headers } = this.req;
    return `http://${headers[":authority"] ?? headers.host ?? "localhost"}${this.req.url}`;
  }

  get signal(): AbortSignal {
    return this.controller().signal;
  }

  timeoutMs = (): number | undefined => (this.#deadlineAt === undefined ? undefined : this.#deadlineAt - Date.now());

  get requestHeader(): Headers {
    return (this.#requestHeader ??= webHeaders(this.req.headers));
  }

  get responseHeader(): Headers {
    return (this.#responseHeader ??= new Headers(this.head));
  }

  get responseTrailer(): Headers {
    return (this.#responseTrailer ??= new Headers(OK));
  }

  get values(): ContextValues {
    return (this.#values ??= createContextValues());
  }

  /**
   * The context as a plain object, every member made: Connect's interceptors and streaming
   * calls copy a context with object spread, which sees no getters.
   */
  whole(): HandlerContext {
    const { method, service, requestMethod, protocolName, url, signal, timeoutMs, requestHeader, responseHeader, responseTrailer, values } = this;
    return { method, service, requestMethod, protocolName, url, signal, timeoutMs, requestHeader, responseHeader, responseTrailer, values };
  }

  /** The response's head as it stands. */
  headFields(): Record<string, string> {
    return this.#responseHeader === undefined ? this.head : Object.fromEntries(this.#responseHeader);
  }

  /** The trailers as they stand: the status, and the implementation's. */
  trailerFields(): Record<string, string> {
    return this.#responseTrailer === undefined ? { ...OK } : Object.fromEntries(this.#responseTrailer);
  }

  /**
   * The call is over: its deadline is let go, and its signal (if anyone holds it) aborts, as
   * Connect's does when a call ends, so that work tied to it stops.
   */
  end(reason?: unknown): void {
    clearTimeout(this.#deadline);
    this.#controller?.abort(reason);
  }

  /** The signal's controller, made on first use and tied to the client's going and the server's shutdown. */
  private controller(): AbortController {
    if (this.#controller !== undefined) return this.#controller;
    const controller = (this.#controller = new AbortController());
    for (const signal of [this.req.signal, this.shutdownSignal]) {
      if (signal === undefined) continue;
      if (signal.aborted) controller.abort(signal.reason);
      else signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true, signal: controller.signal });
    }
    return controller;
  }
}

/** Node's headers as web Headers, without HTTP/2's pseudo-headers. */
function webHeaders(headers: Request["headers"]): Headers {
  const out = new Headers();
  for (const name in headers) {
    if (name.charCodeAt(0) === 58 /* : */) continue;
    const value = headers[name];
    if (typeof value === "string") out.append(name, value);
    else if (value !== undefined) for (const v of value) out.append(name, v);
  }
  return out;
}

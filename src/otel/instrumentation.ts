import { createRequire } from "node:module";
import {
  SpanKind,
  SpanStatusCode,
  context,
  createContextKey,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
} from "@opentelemetry/api";
import { InstrumentationBase, type InstrumentationConfig } from "@opentelemetry/instrumentation";
import { statusOf } from "../base/errors.js";
import { packageFile } from "../base/package-files.js";
import type { InternalRequest } from "../http/request.js";
import { requestChannel, WITHIN, type RequestMessage } from "../observe/request-channel.js";

const { name: PACKAGE_NAME, version: PACKAGE_VERSION } = createRequire(import.meta.url)(packageFile(import.meta.url, 1, "package.json")) as {
  name: string;
  version: string;
};

/**
 * The key under which @opentelemetry/instrumentation-http keeps, in the context it runs a
 * request's listeners in, the SERVER span it made for that request (`{ type: "http", span }`,
 * @opentelemetry/core's RPC metadata). `createContextKey` makes the same key from the same
 * description, so this reads it without depending on @opentelemetry/core.
 */
const RPC_METADATA = createContextKey("OpenTelemetry SDK Context Key RPC_METADATA");
interface RpcMetadata {
  type: string;
  span: Span;
  route?: string;
}

/** Where a traced request's span is kept between the channel's events. */
const SPAN: unique symbol = Symbol("cog.otel.span");
/** Whether the span is this instrumentation's own (ended by it) or instrumentation-http's (updated only). */
const OWN: unique symbol = Symbol("cog.otel.own");
interface Traced extends RequestMessage {
  [SPAN]?: Span;
  [OWN]?: boolean;
}

/**
 * OpenTelemetry for Cog, on both engines: one SERVER span per request, named `METHOD /route`
 * (`GET /users/:id`), with the stable HTTP semantic-convention attributes, status ERROR on a 5xx
 * with the error recorded as an exception event, and the request's chain run with the span
 * active, so what a handler does (a `fetch`, a database query) is its child.
 *
 * It subscribes to Cog's `cog.request` tracing channel; it patches nothing. Beside
 * @opentelemetry/instrumentation-http on the node engine, that instrumentation's SERVER span is
 * the request's: this one names it by the route and adds the route, rather than making a second.
 * On the native engine, which instrumentation-http does not see, this one makes the span,
 * continuing the trace of an incoming `traceparent` (the global propagator's headers).
 */
export interface CogInstrumentationConfig extends InstrumentationConfig {
  /**
   * What a span's `url.query` says of the query: `"redact"` (the default) keeps each parameter's
   * name and replaces its value by `REDACTED`, since a query carries tokens and signatures under
   * any name; `"keep"` records it as sent; a function returns what to record (or undefined for
   * nothing).
   */
  urlQuery?: "redact" | "keep" | ((query: string) => string | undefined);
}

export class CogInstrumentation extends InstrumentationBase<CogInstrumentationConfig> {
  /** The channel handlers while enabled (declared, not initialised: the base's constructor enables). */
  declare private handlers: Parameters<typeof requestChannel.subscribe>[0] | undefined;

  constructor(config: CogInstrumentationConfig = {}) {
    super(PACKAGE_NAME, PACKAGE_VERSION, config);
  }

  /** Nothing to patch: Cog publishes what this needs on its tracing channel. */
  protected override init(): [] {
    return [];
  }

  override enable(): void {
    super.enable();
    if (this.handlers !== undefined) return;
    this.handlers = {
      start: (message) => this.started(message),
      end: () => {},
      asyncStart: () => {},
      asyncEnd: (message) => this.done(message),
      error: (message) => this.failed(message),
    };
    requestChannel.subscribe(this.handlers);
  }

  override disable(): void {
    super.disable();
    if (this.handlers === undefined) return;
    requestChannel.unsubscribe(this.handlers);
    this.handlers = undefined;
  }

  /** `start`: the request's span, made or found, and the chain to run with it active. */
  private started(message: Traced): void {
    const { req, route } = message;
    const method = req.method!;
    const name = route === undefined ? method : `${method} ${route}`;
    const active = context.active();
    const rpc = active.getValue(RPC_METADATA) as RpcMetadata | undefined;
    let span: Span;
    let ctx: Context;
    if (rpc !== undefined && rpc.type === "http" && rpc.span !== undefined && trace.getSpan(active) === rpc.span) {
      // instrumentation-http's span for this request: name it, and let it name itself by the route too.
      span = rpc.span;
      ctx = active;
      if (route !== undefined) rpc.route = route;
      span.updateName(name);
      span.setAttributes(requestAttributes(message, this.getConfig().urlQuery));
      message[OWN] = false;
    } else {
      const parent = propagation.extract(active, req as InternalRequest, HEADERS);
      span = this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: requestAttributes(message, this.getConfig().urlQuery) }, parent);
      ctx = trace.setSpan(parent, span);
      message[OWN] = true;
    }
    message[SPAN] = span;
    message[WITHIN] = (chain) => context.with(ctx, chain);
  }

  /** `error`: an error that becomes a 5xx is recorded on the span as it happens (instrumentation-http may end its span before `asyncEnd`). */
  private failed(message: Traced): void {
    const span = message[SPAN];
    const error = message.error;
    if (span === undefined || statusOf(error) < 500) return;
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  }

  /** `asyncEnd`: the response is done; this instrumentation's own span gets the status and ends. */
  private done(message: Traced): void {
    const span = message[SPAN];
    if (span === undefined || message[OWN] !== true) return;
    const { res } = message;
    // A response cut before its head has no status to report; an accepted WebSocket's 101 went
    // out on the connection, not through the response (which was retired).
    if (res.headersSent || res.statusCode === 101) {
      span.setAttribute("http.response.status_code", res.statusCode);
      if (res.statusCode >= 500) {
        // The conventions' error.type for an answered request is its status code, as text.
        span.setAttribute("error.type", String(res.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    } else {
      // No status to name the failure by, and no exception: the conventions' fallback.
      span.setAttribute("error.type", "_OTHER");
      span.setStatus({ code: SpanStatusCode.ERROR, message: "The connection closed before the response was sent" });
    }
    span.end();
    // An error after the answer (logged by Cog) finds no span to record on.
    message[SPAN] = undefined;
  }
}

/**
 * The request's headers for the propagator, read one at a time as it asks for them
 * (`traceparent`, `tracestate`, `baggage`): on the native engine `req.headers` fetches them all.
 */
const HEADERS: TextMapGetter<InternalRequest> = {
  get: (req, key) => req.headerValue(key.toLowerCase()),
  keys: (req) => Object.keys(req.headers),
};

/** The stable HTTP server attributes known when the request starts. */
function requestAttributes({ req, route }: RequestMessage, urlQuery: CogInstrumentationConfig["urlQuery"]): Attributes {
  const attributes: Attributes = {
    "http.request.method": req.method,
    "url.path": req.path,
    "url.scheme": req.protocol,
  };
  const url = req.originalUrl;
  const mark = url.indexOf("?");
  if (mark !== -1) {
    const query = url.slice(mark + 1);
    const recorded = urlQuery === "keep" ? query : typeof urlQuery === "function" ? urlQuery(query) : redacted(query);
    if (recorded !== undefined) attributes["url.query"] = recorded;
  }
  if (route !== undefined) attributes["http.route"] = route;
  const socket = req.socket;
  if (socket.localPort !== undefined) attributes["server.port"] = socket.localPort;
  const client = req.ip;
  if (client !== undefined) attributes["client.address"] = client;
  const agent = (req as InternalRequest).headerValue("user-agent");
  if (agent !== undefined) attributes["user_agent.original"] = agent;
  return attributes;
}

/** A query with each value replaced by `REDACTED`, its names and order kept: `a=REDACTED&b`. */
function redacted(query: string): string {
  return query
    .split("&")
    .map((pair) => {
      const equals = pair.indexOf("=");
      return equals === -1 ? pair : `${pair.slice(0, equals)}=REDACTED`;
    })
    .join("&");
}

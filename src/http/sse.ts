import type { ResponseSurface } from "../engines/contract/engine.js";
import { Linked, LinkedList } from "../base/linked-list.js";
import { clearInterval, queueMicrotask, setInterval } from "../base/loop.js";

/** What an event stream writes to: a response, with Cog's `set` (a type of its own, so that this file and response.ts don't import each other). */
interface EventSink extends ResponseSurface {
  set(headers: Record<string, string>): unknown;
}

/**
 * An app's open event streams, which its shutdown ends (`endAll`) as the drain begins: a stream
 * is open for as long as the client stays, so waiting for it would hold every drain until
 * `drainMs` and then cut it mid-body. One per app; a stream costs an add and a delete (a list's,
 * not a Set's, which kept closed streams alive: see base/linked-list.ts).
 */
export class OpenStreams {
  private readonly open = new LinkedList<OpenStream>();
  private ending = false;

  /** @internal Its entry, for `delete`; null when the server is shutting down (it is ended at once). */
  add(stream: EventStream): OpenStream | null {
    if (this.ending) {
      queueMicrotask(() => stream.shutDown());
      return null;
    }
    const entry = new OpenStream(stream);
    this.open.add(entry);
    return entry;
  }

  /** @internal */
  delete(entry: OpenStream): void {
    this.open.remove(entry);
    entry.stream = null;
  }

  /** Ends every open stream (see `EventStream.shutDown`), and each opened from now on as it opens. */
  endAll(): void {
    this.ending = true;
    for (const entry of this.open) entry.stream?.shutDown();
    this.open.clear();
  }

  /** Serving again after a close: streams stay open again. */
  reopen(): void {
    this.ending = false;
  }
}

/** @internal An open stream's entry in its app's OpenStreams (its stream null once it has left). */
export class OpenStream extends Linked<OpenStream> {
  constructor(public stream: EventStream | null) {
    super();
  }
}

/** One server-sent event. */
export interface ServerEvent {
  /** The event's type (`addEventListener(event, …)` in the browser); "message" when absent. */
  event?: string;
  /** Its id, which the browser sends back as Last-Event-ID when it reconnects. */
  id?: string | number;
  /** Its data: a string as it is (each line a `data:` line), anything else as JSON. */
  data?: unknown;
  /** How long the browser waits before reconnecting, in ms. */
  retry?: number;
}

export interface EventStreamOptions {
  /** A comment line sent this often (ms) while nothing else is, so proxies don't close an idle stream. Default 15000; 0: none. */
  heartbeat?: number;
  /**
   * The last event, sent when the server shuts down (`app.close()`, or a signal under `signals`
   * or `workers`) just before the stream ends: e.g. `{ event: "bye", retry: 1000 }`. Without it
   * the stream just ends (a browser's EventSource then reconnects, to another server).
   */
  finalEvent?: ServerEvent | string;
}

/**
 * A `text/event-stream` response (`res.sse()`): each `send` writes one event, at once (the
 * head goes out when the stream is opened). It ends with `close()`, or when the client goes
 * away (then `closed` is true and `send` returns false; `req.signal` fires). When the server
 * shuts down, the stream gets its `finalEvent` (if any), `req.signal` aborts and the stream ends
 * cleanly, as the drain begins.
 */
export class EventStream {
  private heartbeat: NodeJS.Timeout | null = null;
  private ended = false;
  /** Its place in the app's open streams (null if it was never there, or has left). */
  private link: OpenStream | null = null;
  /** The final event's text (checked when the stream opens, not when the server shuts down). */
  private readonly finalEvent: string | undefined;

  /** @internal Made by `res.sse()`. */
  constructor(
    private readonly res: EventSink,
    options: EventStreamOptions,
    /** Aborts the request's `req.signal`. */
    private readonly abort: (reason: DOMException) => void,
    private readonly streams: OpenStreams,
  ) {
    const every = options.heartbeat ?? 15_000;
    if (!Number.isInteger(every) || every < 0) throw new RangeError(`res.sse(): heartbeat must be a whole number of ms >= 0, got ${String(every)}`);
    this.finalEvent = options.finalEvent === undefined ? undefined : format(options.finalEvent);
    res.set({ "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" });
    res.flushHeaders();
    res.once("close", () => this.stop());
    this.link = streams.add(this);
    if (every > 0) {
      this.heartbeat = setInterval(() => this.comment(""), every);
      this.heartbeat.unref();
    }
  }

  /** Whether the stream has ended (closed by the app, or the client went away). */
  get closed(): boolean {
    return this.ended || this.res.writableEnded || this.res.destroyed;
  }

  /**
   * Writes one event. Returns false when the connection is full (wait for `res.on("drain")`
   * before sending many more) or the stream is closed. A field holding a line break (event,
   * id) or a bad retry throws a TypeError: it would end the event early.
   */
  send(message: ServerEvent | string): boolean {
    return this.write(format(message));
  }

  /** Writes a comment line (`: text`), which clients ignore: a heartbeat, or padding. */
  comment(text: string): boolean {
    return this.write(`:${text === "" ? "" : ` ${field("comment", text)}`}\n\n`);
  }

  /** Ends the stream (the response). */
  close(): void {
    if (this.closed) return;
    this.stop();
    this.res.end();
  }

  /**
   * The server is shutting down: sends the final event, aborts `req.signal` (so the handler's
   * loops and queries stop) and ends the stream.
   * @internal
   */
  shutDown(): void {
    if (this.closed) return;
    if (this.finalEvent !== undefined) this.write(this.finalEvent);
    this.abort(new DOMException("The server is shutting down", "AbortError"));
    this.close();
  }

  private write(text: string): boolean {
    if (this.closed) return false;
    return this.res.write(text);
  }

  private stop(): void {
    this.ended = true;
    if (this.link !== null) this.streams.delete(this.link);
    this.link = null;
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}

/** One event's text: its fields, each line of its data, and the blank line that ends it. */
function format(message: ServerEvent | string): string {
  const event: ServerEvent = typeof message === "string" ? { data: message } : message;
  let text = "";
  if (event.event !== undefined) text += `event: ${field("event", event.event)}\n`;
  if (event.id !== undefined) text += `id: ${field("id", String(event.id))}\n`;
  if (event.retry !== undefined) {
    if (!Number.isInteger(event.retry) || event.retry < 0)
      throw new TypeError(`EventStream.send: retry must be a whole number of ms >= 0, got ${String(event.retry)}`);
    text += `retry: ${event.retry}\n`;
  }
  if (event.data !== undefined) {
    const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
    for (const line of data.split(LINE_BREAK)) text += `data: ${line}\n`;
  }
  if (text === "") throw new TypeError("EventStream.send: an event needs data, event, id or retry");
  return `${text}\n`;
}

const LINE_BREAK = /\r\n|\r|\n/;

function field(name: string, value: string): string {
  if (/[\r\n]/.test(value) || value.includes("\0"))
    throw new TypeError(`EventStream: the ${name} ${JSON.stringify(value)} holds a line break or NUL, which would end the event early`);
  return value;
}

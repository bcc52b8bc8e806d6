import { request as httpRequest, type OutgoingHttpHeaders } from "node:http";
import { serialize } from "cookie";
import type { Engine, InjectOptions, InjectResponse } from "../contract/engine.js";
import { parseCookies } from "../contract/inject.js";

/**
 * Answers a request over a loopback connection to `engine`, started for this request and
 * stopped after it: what a client of the real server gets, byte for byte. The request and the
 * answer read as light-my-request's do on the node engine (the same default headers, the
 * response's headers as the app set them), so a test passes on either engine.
 */
export async function injectOverLoopback(engine: Engine, options: InjectOptions): Promise<InjectResponse> {
  const { port } = (await engine.listen({ port: 0, host: "127.0.0.1" }, false)) as { port: number };
  try {
    return await send(port, options);
  } finally {
    await engine.close(0);
  }
}

function send(port: number, o: InjectOptions): Promise<InjectResponse> {
  // The headers light-my-request sends, in its order: the test's (names in lower case; an
  // undefined user-agent or content-type means none), then its defaults.
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(o.headers ?? {})) {
    const key = name.toLowerCase();
    if (value === undefined && (key === "user-agent" || key === "content-type")) headers[key] = undefined;
    else headers[key] = String(value);
  }
  if (!("user-agent" in headers)) headers["user-agent"] = "lightMyRequest";
  headers.host ||= hostOf(o);
  if (o.cookies !== undefined) {
    const values = Object.entries(o.cookies).map(([name, value]) => serialize(name, value));
    if (headers.cookie) values.unshift(String(headers.cookie));
    headers.cookie = values.join("; ");
  }
  let payload = o.payload || o.body || undefined;
  if (payload !== undefined && typeof payload !== "string" && !Buffer.isBuffer(payload)) {
    if (typeof (payload as { pipe?: unknown }).pipe === "function") throw new TypeError("app.inject on the native engine takes a string, Buffer or JSON payload, not a stream");
    payload = JSON.stringify(payload);
    if (!("content-type" in headers)) headers["content-type"] = "application/json";
  }
  const body = payload === undefined ? undefined : Buffer.from(payload as string);
  if (body !== undefined && !Object.hasOwn(headers, "content-length")) headers["content-length"] = String(body.length);
  for (const name of Object.keys(headers)) if (headers[name] === undefined) delete headers[name];
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method: o.method ?? "GET", path: targetOf(o), headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const rawPayload = Buffer.concat(chunks);
        const text = rawPayload.toString("utf8");
        const received = headersOf(res.rawHeaders);
        resolve({
          statusCode: res.statusCode!,
          statusMessage: res.statusMessage!,
          headers: received,
          rawPayload,
          payload: text,
          body: text,
          json: () => JSON.parse(text),
          cookies: parseCookies(received["set-cookie"]),
        });
      });
    });
    // light-my-request sends no Connection header: without one the server answers as it does to
    // any HTTP/1.1 client (keep-alive), and this client still closes its connection after.
    req.removeHeader("connection");
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * A response's headers as the app set them, as light-my-request reports them: names in lower
 * case, a header on one line a string, one on several lines (an array the app set) an array.
 * Node's client would join repeated lines with ", ".
 */
function headersOf(raw: string[]): OutgoingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const previous = headers[name];
    headers[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return headers;
}

/** The Host light-my-request sends: the URL's, else localhost:80. */
function hostOf(o: InjectOptions): string {
  const url = o.url ?? o.path ?? "/";
  const parsed = typeof url === "string" ? new URL(url.startsWith("//") ? `http://localhost${url}` : url, "http://localhost") : Object.assign(new URL("http://localhost"), url);
  return parsed.port === "" ? `${parsed.hostname}:${parsed.protocol === "https:" ? 443 : 80}` : parsed.host;
}

/** The request target from light-my-request's `url`/`path` and `query`. */
function targetOf(o: InjectOptions): string {
  const url = o.url ?? o.path ?? "/";
  let target = typeof url === "string" ? url : url.pathname + (url.query === undefined ? "" : `?${typeof url.query === "string" ? url.query : new URLSearchParams(url.query as Record<string, string>).toString()}`);
  if (/^https?:\/\//i.test(target)) {
    const parsed = new URL(target);
    target = parsed.pathname + parsed.search;
  }
  if (o.query !== undefined) {
    const query = typeof o.query === "string" ? o.query : new URLSearchParams(Object.entries(o.query).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x] as [string, string]) : [[k, v] as [string, string]]))).toString();
    if (query !== "") target += (target.includes("?") ? "&" : "?") + query;
  }
  return target;
}

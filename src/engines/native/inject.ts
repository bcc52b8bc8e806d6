import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http";
import { parseSetCookie } from "cookie";
import type { Engine, InjectOptions, InjectResponse } from "../engine.js";

/**
 * Answers a request over a loopback connection to `engine`, started for this request and
 * stopped after it: what a client of the real server gets, byte for byte.
 */
export async function injectOverLoopback(engine: Engine, options: InjectOptions | string): Promise<InjectResponse> {
  const o: InjectOptions = typeof options === "string" ? { url: options } : options;
  const { port } = await engine.listen(0, "127.0.0.1", false);
  try {
    return await send(port, o);
  } finally {
    await engine.close(0);
  }
}

function send(port: number, o: InjectOptions): Promise<InjectResponse> {
  const headers: OutgoingHttpHeaders = { ...(o.headers as OutgoingHttpHeaders | undefined) };
  let payload = o.payload ?? o.body;
  if (payload !== undefined && typeof payload !== "string" && !Buffer.isBuffer(payload) && !(payload instanceof Uint8Array)) {
    if (typeof (payload as { pipe?: unknown }).pipe === "function") throw new TypeError("app.inject on the native engine takes a string, Buffer or JSON payload, not a stream");
    payload = JSON.stringify(payload);
    headers["content-type"] ??= "application/json";
  }
  if (o.cookies !== undefined) {
    headers.cookie = Object.entries(o.cookies).map(([name, value]) => `${name}=${value}`).join("; ");
  }
  const body = payload === undefined ? undefined : Buffer.from(payload as string | Uint8Array);
  if (body !== undefined) headers["content-length"] = body.length;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method: o.method ?? "GET", path: targetOf(o), headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const rawPayload = Buffer.concat(chunks);
        const text = rawPayload.toString("utf8");
        resolve({
          statusCode: res.statusCode!,
          statusMessage: res.statusMessage!,
          headers: res.headers as IncomingHttpHeaders as OutgoingHttpHeaders,
          rawPayload,
          payload: text,
          body: text,
          json: () => JSON.parse(text),
          cookies: (res.headers["set-cookie"] ?? []).map((line) => parseSetCookie(line) as unknown as InjectResponse["cookies"][number]),
        });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
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

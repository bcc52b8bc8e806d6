// Sentry (@sentry/node), set up as its docs say, against a fake ingest server on 127.0.0.1: the
// errors a Cog app throws, synchronously or after awaits, and a promise a handler left behind,
// are captured with the request's data (method, URL, headers) and the user its request set,
// under 50 concurrent requests, on both engines. Sentry patches globals: it runs only in the
// app's child process.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import { gunzipSync } from "node:zlib";
import { startChild, waitForOutput } from "../children.js";
import { engine } from "../helpers.js";

interface SentryEvent {
  exception: { values: Array<{ type: string; value: string; mechanism: { type: string; handled: boolean } }> };
  user?: { id?: string };
  request?: { method?: string; url?: string; headers?: Record<string, string> };
}

/** A Sentry ingest on 127.0.0.1 that decodes each envelope and keeps its error events. */
async function fakeIngest(t: { after(fn: () => unknown): void }): Promise<{ dsn: string; events: SentryEvent[] }> {
  const events: SentryEvent[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      // An envelope: a header line, then for each item its header line and its payload line.
      const lines = (req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body).toString("utf8").split("\n");
      for (let i = 1; i + 1 < lines.length; i += 2) {
        const item = JSON.parse(lines[i]!) as { type: string };
        if (item.type === "event") events.push(JSON.parse(lines[i + 1]!) as SentryEvent);
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  return { dsn: `http://public@127.0.0.1:${(server.address() as { port: number }).port}/1`, events };
}

test(`Sentry captures thrown errors and a promise left behind with the request's data and its own user, 50 at once (${engine})`, async (t) => {
  const { dsn, events } = await fakeIngest(t);
  const app = startChild(t, process.execPath, ["--import", "tsx", "--import", "./test/fixtures/sentry/instrument.ts", "test/fixtures/sentry/app.ts"], {
    env: { ...process.env, COG_ENGINE: engine, SENTRY_DSN: dsn },
  });
  await waitForOutput(app, (out) => out.includes("\n"), "the app to print its port");
  const base = `http://127.0.0.1:${Number(app.stdout().split("\n")[0])}`;

  const requests = Array.from({ length: 50 }, (_, i) => {
    const user = `user-${i}`;
    const headers = { "x-user": user, "x-request-kind": ["sync", "async", "left-behind"][i % 3]! };
    if (i % 3 === 0) return { user, path: `/sync/${i}`, method: "GET", headers, message: `sync ${i}` };
    if (i % 3 === 1)
      return {
        user,
        path: `/async/${i}`,
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ order: `o${i}` }),
        message: `async ${i} for o${i}`,
      };
    return { user, path: `/left-behind/${i}`, method: "GET", headers, message: `left behind ${i}` };
  });
  const statuses = await Promise.all(requests.map(async ({ path, method, headers, body }) => (await fetch(base + path, { method, headers, body })).status));
  assert.deepEqual(
    statuses,
    requests.map(({ path }) => (path.startsWith("/left-behind") ? 202 : 500)),
  );
  // A 4xx is the client's: not an event.
  assert.equal((await fetch(`${base}/missing/1`, { headers: { "x-user": "nobody" } })).status, 404);

  for (let i = 0; i < 300 && events.length < requests.length; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(
    events.length,
    requests.length,
    `one event per failed request: ${events
      .map((e) => e.exception.values.at(-1)!.value)
      .sort()
      .join(", ")}`,
  );
  const byMessage = new Map(events.map((event) => [event.exception.values.at(-1)!.value, event]));
  for (const { user, path, method, headers, message } of requests) {
    const event = byMessage.get(message);
    assert.ok(event !== undefined, `an event for "${message}"`);
    assert.equal(event.user?.id, user, `"${message}" carries its own request's user`);
    assert.equal(event.request?.method, method);
    assert.equal(event.request?.url, base + path);
    assert.equal(event.request?.headers?.["x-user"], user);
    assert.equal(event.request?.headers?.["x-request-kind"], headers["x-request-kind"]);
    const { mechanism } = event.exception.values.at(-1)!;
    if (path.startsWith("/left-behind")) assert.deepEqual([mechanism.type, mechanism.handled], ["auto.node.onunhandledrejection", false]);
  }
  assert.equal(app.child.exitCode, null, "the app goes on");
});

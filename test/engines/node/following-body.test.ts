// The node engine's FOLLOWING_BODY (src/engines/node/request.ts): a body that came in the same
// read as its head is handed over whole, without the request's stream, and the stream is left as
// a reader leaves it; a body that did not is given back to the stream untouched. It relies on
// node:http's order (the body that came with the head is pushed after the app's turn with the
// head and before the next tick, the message's end after that tick) and on IncomingMessage's
// `_consuming`: when a Node release changes them, a test here says so. Node engine only.
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { once } from "node:events";
import type { Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { test } from "node:test";
import { FOLLOWING_BODY, type BodyHolding } from "../../../src/engines/contract/engine.js";
import express from "../../../src/express/index.js";

type Any = any;

const store = new AsyncLocalStorage<string>();

interface Seen {
  taken: Buffer | undefined;
  asked: boolean;
  streamed: string;
  events: string[];
}

/** A node-engine app whose POST / asks FOLLOWING_BODY for the declared length and answers what it saw. */
async function serve(t: { after(fn: () => unknown): void }, seen: Seen[]): Promise<number> {
  const app = express();
  app.post("/", (req: Any, res: Any) =>
    store.run("the asker's", () => {
      const record: Seen = { taken: undefined, asked: false, streamed: "", events: [] };
      seen.push(record);
      req.once("end", () => record.events.push("end"));
      record.asked = (req as BodyHolding)[FOLLOWING_BODY]!(Number(req.headers["content-length"]), (body) => {
        record.events.push(body === undefined ? "given back" : "taken", `in ${store.getStore()} context`);
        if (body !== undefined) {
          record.taken = body;
          req._body = true;
          // The body parsers go on a tick later, as raw-body's answer comes: the stream has ended by then.
          return process.nextTick(() => res.json({ taken: body.toString(), ended: req.readableEnded, complete: req.complete }));
        }
        req.on("data", (chunk: Buffer) => (record.streamed += chunk.toString()));
        req.on("end", () => res.json({ streamed: record.streamed }));
      });
      if (!record.asked) res.json({ asked: false });
    }),
  );
  const server = app.listen(0, "127.0.0.1") as Server;
  await once(server, "listening");
  t.after(() => {
    server.closeAllConnections?.();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

/** Sends `parts` on one connection, `gapMs` apart, and reads the answer's body. */
function ask(port: number, parts: string[], gapMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
      const head = text.indexOf("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(text);
      if (head !== -1 && length !== null && text.length >= head + 4 + Number(length[1])) {
        socket.destroy();
        resolve(text.slice(head + 4));
      }
    });
    socket.on("error", reject);
    socket.on("connect", async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, gapMs));
        socket.write(part);
      }
    });
  });
}

const HEAD = "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n";

test("a body in the same read as its head is taken whole, and the stream ends as after a reader", async (t) => {
  const seen: Seen[] = [];
  const port = await serve(t, seen);
  const answer = JSON.parse(await ask(port, [HEAD + '{"a":1}'], 0));
  assert.deepEqual(
    answer,
    { taken: '{"a":1}', ended: true, complete: true },
    "node:http no longer pushes the body that came with the head before the next tick, then its end (src/engines/node/request.ts)",
  );
  // 'end' came before the tick the taker goes on in, as a reader of the stream sees it before its callback.
  assert.deepEqual(seen[0]!.events, ["taken", "in the asker's context", "end"]);
});

test("a body that follows its head in a later read is given back to the stream, whole and in order", async (t) => {
  const seen: Seen[] = [];
  const port = await serve(t, seen);
  assert.deepEqual(JSON.parse(await ask(port, [HEAD, '{"a"', ":1}"], 50)), { streamed: '{"a":1}' });
  assert.deepEqual(JSON.parse(await ask(port, [HEAD + '{"a"', ":1}"], 50)), { streamed: '{"a":1}' });
  assert.deepEqual(
    seen.map((s) => s.events),
    [
      ["given back", "in the asker's context", "end"],
      ["given back", "in the asker's context", "end"],
    ],
  );
});

test("a stream already read is not asked for", async (t) => {
  const app = express();
  app.post("/", (req: Any, res: Any) => {
    req.on("data", () => {});
    res.json({ asked: (req as BodyHolding)[FOLLOWING_BODY]!(7, () => assert.fail("a read stream's body was handed over")) });
  });
  const server = app.listen(0, "127.0.0.1") as Server;
  await once(server, "listening");
  t.after(() => {
    server.closeAllConnections?.();
    server.close();
  });
  assert.deepEqual(JSON.parse(await ask((server.address() as AddressInfo).port, [HEAD + '{"a":1}'], 0)), { asked: false });
});

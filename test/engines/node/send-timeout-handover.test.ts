// The node engine's sendTimeout hands a socket over to a WebSocket (stopLimitingSendTime) with
// Node's own write methods and the socket's properties still fast: deleting the limit's methods
// turned them into a dictionary, ~3 KB a socket, most of what the old generation took in under
// WebSocket churn (docs/decisions/deferred-answers.md), and a slow lookup for every write after.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { Socket } from "node:net";
import { test } from "node:test";
import v8 from "node:v8";
import { limitSendTime, stopLimitingSendTime } from "../../../src/engines/node/send-timeout.js";

v8.setFlagsFromString("--allow-natives-syntax");
const hasFastProperties = new Function("object", "return %HasFastProperties(object)") as (object: object) => boolean;

test("a socket handed over to a WebSocket writes with Node's own methods, its properties still fast", () => {
  const server = createServer();
  limitSendTime(server, 1000, 100, false);
  const socket = new Socket();
  server.emit("connection", socket);
  const own = Socket.prototype as unknown as { _write: unknown; _writev: unknown };
  const limited = socket as unknown as { _write: unknown; _writev: unknown };
  assert.notEqual(limited._write, own._write, "the limit wraps its writes");
  assert.ok(hasFastProperties(socket), "fast before");
  stopLimitingSendTime(socket);
  assert.equal(limited._write, own._write);
  assert.equal(limited._writev, own._writev);
  assert.ok(hasFastProperties(socket), "its properties became a dictionary");
  socket.destroy();
});

// Each bad input gets its own clear 4xx/5xx, and the same server keeps serving afterwards.
import assert from "node:assert/strict";
import { test } from "node:test";
import { raw, serve, statuses } from "../helpers.js";

test("bad input never takes the server down", async (t) => {
  const { fetch, port } = await serve(
    t,
    (app) => {
      app.get("/cookies", (req, res) => res.json(req.cookies));
      app.get("/users/:id", (req, res) => res.send(req.params.id));
      app.post("/json", (req, res) => res.json(req.body));
      app.get("/throw", () => {
        throw new TypeError("undefined is not a function");
      });
      app.get("/reject", async () => {
        throw new Error("nope");
      });
      app.get("/header", (req, res) => res.set("x-echo", String(req.query.v)).send("x"));
      app.get("/health", (_req, res) => res.send("ok"));
    },
    { bodyLimit: 64 },
  );
  const json = { "content-type": "application/json" };
  const cases: Array<[string, () => Promise<number>, number]> = [
    ["malformed cookie", async () => (await fetch("/cookies", { headers: { cookie: "a=%zz; =; ;;b" } })).status, 200],
    ["bad JSON", async () => (await fetch("/json", { method: "POST", headers: json, body: "{oops" })).status, 400],
    ["poisoned JSON", async () => (await fetch("/json", { method: "POST", headers: json, body: '{"__proto__":{"x":1}}' })).status, 400],
    ["oversized body", async () => (await fetch("/json", { method: "POST", headers: json, body: JSON.stringify({ pad: "x".repeat(100) }) })).status, 413],
    ["throwing handler", async () => (await fetch("/throw")).status, 500],
    ["rejecting handler", async () => (await fetch("/reject")).status, 500],
    ["header value with CR/LF", async () => (await fetch("/header?v=a%0D%0Ab")).status, 500],
    ["unknown route", async () => (await fetch("/nowhere")).status, 404],
    ["wrong method", async () => (await fetch("/health", { method: "PUT" })).status, 405],
    ["malformed URL escape in a param", async () => statuses(await raw(port, "GET /users/%E0%A4%A HTTP/1.1\r\nHost: x\r\n\r\n"))[0]!, 400],
    ["malformed request line", async () => statuses(await raw(port, "GARBAGE\r\n\r\n"))[0], 400],
  ];
  for (const [name, run, expected] of cases) {
    assert.equal(await run(), expected, name);
    assert.equal(await (await fetch("/health")).text(), "ok", `still serving after: ${name}`);
  }
});

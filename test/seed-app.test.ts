// The seed's Cog app (examples/seed-app.ts), run unmodified as a user would:
// its own process, importing "cog-http", on its hard-coded 127.0.0.1:3000.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import autocannon from "autocannon";
import { startChild, stop, waitForOutput, type Started } from "./children.js";

const base = "http://127.0.0.1:3000";
const cookie = "sessionId=abc123; otherCookie=value";

let app: Started | undefined;
before(async () => {
  app = startChild(null, process.execPath, ["--import", "tsx", "examples/seed-app.ts"]);
  await waitForOutput(app, (out) => out.includes("\n"), "the seed app to listen");
  assert.match(app.stdout(), /Listening on 127\.0\.0\.1:3000/);
});
after(() => app && stop(app.child));

test("the seed app answers its six routes as its code says", async () => {
  const get = (path: string, headers: Record<string, string> = { cookie }) => fetch(base + path, { headers });

  let res = await get("/");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("x-powered-by"), "Cog");
  assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
  assert.equal(await res.text(), "Hello from Cog!");

  res = await get("/very/deeply/nested/route/hello/there/admin/dashboard/ping");
  assert.equal(await res.text(), "Pong!");

  res = await get("/hello?name=John");
  assert.equal(await res.text(), "Hello, John!");
  res = await get("/hello");
  assert.equal(await res.text(), "Hello, user!");

  res = await get("/admin");
  assert.equal(res.status, 403);
  assert.equal(await res.text(), "Unauthenticated");

  res = await get("/admin/set-token");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("set-cookie"), "token=my_token_12345; Path=/");
  assert.equal(await res.text(), "Token set!");

  res = await get("/admin", { cookie: "token=my_token_12345" });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("set-cookie") ?? "", /^token=; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT/);
  assert.deepEqual(await res.json(), { message: "Secret info" });

  res = await fetch(base + "/parse-body", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "Hello!" }) });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
  assert.deepEqual(await res.json(), { message: "Hello!" });
});

// The seeds' heaviest shape is 2500 connections x 4 pipelined; CI runs 256 x 4 for 5 s,
// COG_LOAD=full runs the seeds' own figures. Every request must be answered, and with a 2xx.
const full = process.env.COG_LOAD === "full";
test(`under ${full ? "2500" : "256"} connections x 4 pipelined on all six routes: no error, timeout, reset or non-2xx`, { timeout: 120_000 }, async () => {
  const result = await autocannon({
    url: base,
    connections: full ? 2500 : 256,
    pipelining: 4,
    duration: full ? 20 : 5,
    // Each connection cycles through the six routes; /admin with the token, so it answers 200.
    requests: [
      { method: "GET", path: "/", headers: { cookie } },
      { method: "GET", path: "/very/deeply/nested/route/hello/there/admin/dashboard/ping", headers: { cookie } },
      { method: "GET", path: "/hello?name=John", headers: { cookie } },
      { method: "GET", path: "/admin", headers: { cookie: "token=my_token_12345" } },
      { method: "GET", path: "/admin/set-token", headers: { cookie } },
      { method: "POST", path: "/parse-body", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "Hello!" }) },
    ],
  });
  const answered = result.requests.total;
  console.log(`# load: ${answered} requests, ${result.errors} errors, ${result.timeouts} timeouts, ${result.resets} resets, ${result.non2xx} non-2xx`);
  assert.ok(answered > 1000, `only ${answered} requests answered`);
  assert.equal(result.errors, 0);
  assert.equal(result.timeouts, 0);
  assert.equal(result.resets, 0);
  assert.equal(result.non2xx, 0);
  // And the server is still there, answering.
  assert.equal(await (await fetch(base + "/")).text(), "Hello from Cog!");
});

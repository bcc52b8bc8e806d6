// The seed's Cog app (examples/seed-app.ts), run unmodified as a user would:
// its own process, importing "cog-http", on its hard-coded 127.0.0.1:3000.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";

const base = "http://127.0.0.1:3000";
const cookie = "sessionId=abc123; otherCookie=value";

test("the seed app answers its six routes as its code says", async (t) => {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/seed-app.ts"], { stdio: ["ignore", "pipe", "inherit"] });
  t.after(() => child.kill());
  const [line] = await once(child.stdout, "data");
  assert.match(String(line), /Listening on 127\.0\.0\.1:3000/);

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

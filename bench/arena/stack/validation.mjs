// HttpArena's validation of production-stack (scripts/validate.sh, _validate_production_stack),
// re-expressed check by check against a running stack's edge: the same requests, the same
// expectations (no stricter, no looser), over HTTP/2 with TLS as curl --http2 -k sends them.
// Each of its 15 checks that fails adds a problem; the bench runs these before it times a stack,
// and test/contract/production-stack.test.ts runs them with its own, stricter checks.
import { randomInt } from "node:crypto";
import { connect } from "node:http2";

/** An HTTP/2 session to the edge (TLS, ALPN h2; the certificate not verified, as curl -k). */
export async function openSession(port) {
  const session = connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false, ALPNProtocols: ["h2", "http/1.1"] });
  await new Promise((resolve, reject) => {
    session.once("connect", resolve);
    session.once("error", reject);
  });
  session.on("error", () => {});
  return session;
}

/** One request on `session`: resolves { status, headers, body (a string) }. */
export function send(session, { method = "GET", path, headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": method, ":path": path, ...headers }, { endStream: body === undefined });
    const parts = [];
    let head = {};
    stream.on("response", (h) => (head = h));
    stream.on("data", (d) => parts.push(d));
    stream.on("end", () => resolve({ status: head[":status"], headers: head, body: Buffer.concat(parts).toString() }));
    stream.on("error", reject);
    stream.setTimeout(10_000, () => stream.close());
    if (body !== undefined) stream.end(body);
  });
}

const json = (body) => {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
};

/**
 * validate.sh's production-stack checks against the edge on `port`, with `token` (HttpArena's
 * data/jwt-token.txt, or one signed the same way). Item 7 must not have been read within the
 * cache's TTL (check 12 expects a MISS first), as on a fresh stack.
 */
export async function checkProductionStack({ port, token }) {
  const problems = [];
  const session = await openSession(port);
  const get = (path, headers) => send(session, { path, headers });
  const auth = { authorization: `Bearer ${token}` };
  const post = (path, headers, body) => send(session, { method: "POST", path, headers: { "content-type": "application/json", ...headers }, body });
  const expect = (what, ok, got) => {
    if (!ok) problems.push(`production-stack ${what}: got ${got}`);
  };
  try {
    // 1-3. HTTP/2, and static files from the edge.
    expect("HTTP/2 negotiation", session.alpnProtocol === "h2", session.alpnProtocol);
    const css = await get("/static/reset.css");
    expect("/static/reset.css Content-Type text/css", /^text\/css(;|$)/.test(String(css.headers["content-type"])), css.headers["content-type"]);
    const js = await get("/static/app.js");
    expect("/static/app.js is not empty", js.status === 200 && js.body.length > 0, `${js.status}, ${js.body.length} bytes`);
    // 4-6. The public routes: no authentication, no cache.
    const fixed = await get("/public/baseline?a=13&b=42");
    expect("/public/baseline?a=13&b=42 answers 55", fixed.body.trim() === "55", JSON.stringify(fixed.body.slice(0, 40)));
    const [a, b] = [randomInt(100, 1000), randomInt(100, 1000)];
    const sum = await get(`/public/baseline?a=${a}&b=${b}`);
    expect(`/public/baseline?a=${a}&b=${b} answers ${a + b}`, sum.body.trim() === String(a + b), JSON.stringify(sum.body.slice(0, 40)));
    const list = json((await get("/public/json/25")).body);
    const items = Array.isArray(list?.items) ? list.items : [];
    const totals = items.length > 0 && items.every((i) => "total" in i && Math.abs(i.total - Math.round(i.price * i.quantity * 100) / 100) <= 0.02);
    expect(
      "/public/json/25: 25 items with total = price × quantity",
      list?.count === 25 && totals,
      `count ${list?.count}, totals ${totals ? "right" : "wrong"}`,
    );
    // 7-10. The auth wall, for reads and writes.
    const refused = { name: "unauth", price: 1, quantity: 1 };
    for (const [what, headers] of [
      ["without a token", {}],
      ["with a bogus token", { authorization: "Bearer invalid.token.here" }],
    ]) {
      const read = await get("/api/items/1", headers);
      expect(`GET /api/items/1 ${what} answers 401`, read.status === 401, read.status);
      const write = await post("/api/items/1", headers, JSON.stringify(refused));
      expect(`POST /api/items/1 ${what} answers 401`, write.status === 401, write.status);
    }
    // 11. An authenticated read.
    const one = json((await get("/api/items/1", auth)).body);
    expect("GET /api/items/1 with the token returns id 1", one?.id === 1, one?.id);
    // 12. Cache-aside: a MISS, then a HIT.
    const first = (await get("/api/items/7", auth)).headers["x-cache"];
    const second = (await get("/api/items/7", auth)).headers["x-cache"];
    expect("cache-aside: MISS then HIT on /api/items/7", first === "MISS" && second === "HIT", `${first} then ${second}`);
    // 13. A write answers 204.
    const written = await post("/api/items/2", auth, JSON.stringify({ name: "validate-updated", price: 777, quantity: 99 }));
    expect("POST /api/items/2 answers 204", written.status === 204, written.status);
    // 14. A write drops the cached copy: warm, write, read again.
    await get("/api/items/3", auth);
    await post("/api/items/3", auth, JSON.stringify({ name: "validate-invalidated", price: 111, quantity: 22 }));
    const after = (await get("/api/items/3", auth)).headers["x-cache"];
    expect("GET after POST /api/items/3 is a MISS", after === "MISS", after);
    // 15. The token's subject, through the edge, reaches the app as the user.
    const me = json((await get("/api/me", auth)).body);
    expect("GET /api/me returns user 42", me?.id === 42, me?.id);
  } catch (err) {
    problems.push(`production-stack: ${err.message}`);
  } finally {
    session.destroy();
  }
  return problems;
}

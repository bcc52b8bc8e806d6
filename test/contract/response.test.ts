import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { describe, test } from "node:test";
import { raw, serve } from "../helpers.js";

describe("response helpers", () => {
  test("send picks the type by value and Content-Length is always right", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/text", (_req, res) => res.send("héllo ✓"));
      app.get("/object", (_req, res) => res.send({ a: "é" }));
      app.get("/array", (_req, res) => res.send([1, 2]));
      app.get("/number", (_req, res) => res.send(42));
      app.get("/buffer", (_req, res) => res.send(Buffer.from([1, 2, 3])));
      app.get("/bytes", (_req, res) => res.send(new Uint8Array([9, 8])));
      app.get("/empty", (_req, res) => res.send());
      app.get("/typed", (_req, res) => res.set("Content-Type", "text/csv").send("a,b"));
    });
    const check = async (path: string, type: string, body: string | number[]) => {
      const res = await fetch(path);
      assert.equal(res.headers.get("content-type"), type, path);
      const bytes = Buffer.from(await res.arrayBuffer());
      assert.equal(res.headers.get("content-length"), String(bytes.length), path);
      if (typeof body === "string") assert.equal(bytes.toString("utf8"), body, path);
      else assert.deepEqual([...bytes], body, path);
    };
    await check("/text", "text/plain; charset=utf-8", "héllo ✓");
    await check("/object", "application/json; charset=utf-8", '{"a":"é"}');
    await check("/array", "application/json; charset=utf-8", "[1,2]");
    await check("/number", "application/json; charset=utf-8", "42");
    await check("/buffer", "application/octet-stream", [1, 2, 3]);
    await check("/bytes", "application/octet-stream", [9, 8]);
    await check("/empty", "text/plain; charset=utf-8", "");
    await check("/typed", "text/csv", "a,b");
  });

  test("every response carries its own header values, however many distinct ones there have been, in the order set", async (t) => {
    // Engines may cache header lines they send again and again (the native engine does, up to a
    // bound): 1,500 distinct values must each reach their own response, with the repeated ones.
    const { fetch } = await serve(t, (app) => {
      app.get("/:n", (req, res) => {
        res.set("X-First", "same").set("X-Value", `v${req.params.n}`);
        if (Number(req.params.n) % 2 === 0) res.set("X-Even", "yes");
        res.send(req.params.n);
      });
    });
    for (let n = 0; n < 1500; n++) {
      const res = await fetch(`/${n}`);
      assert.equal(res.headers.get("x-first"), "same");
      assert.equal(res.headers.get("x-value"), `v${n}`);
      assert.equal(res.headers.get("x-even"), n % 2 === 0 ? "yes" : null);
      assert.equal(await res.text(), String(n));
    }
  });

  test("a repeated header set with a non-ASCII value goes out as the same bytes every time, as node:http writes them", async (t) => {
    // node:http writes a header string with a whole body when it can: in the body's encoding for
    // a string (UTF-8, so "é" is C3 A9), as latin1 before a Buffer or a streamed body (E9).
    // The native engine writes the same bytes; it keeps a header block it has sent and sends it
    // by number after that, so the bytes must not change from one response to the next.
    const { port } = await serve(t, (app) => {
      app.get("/text", (_req, res) => res.set("X-Name", "caf\u00e9").send("ok"));
      app.get("/bytes", (_req, res) => res.set("X-Name", "caf\u00e9").send(Buffer.from("ok")));
      app.get("/streamed", (_req, res) => {
        res.set("X-Name", "caf\u00e9");
        res.write("o");
        res.end("k");
      });
    });
    const utf8 = Buffer.from("caf\u00e9", "utf8").toString("latin1");
    const text = await raw(port, "GET /text HTTP/1.1\r\nHost: a\r\n\r\n".repeat(3));
    assert.equal(text.split(`x-name: ${utf8}\r\n`).length - 1, 3, text);
    const bytes = await raw(port, "GET /bytes HTTP/1.1\r\nHost: a\r\n\r\n".repeat(3));
    assert.equal(bytes.split("x-name: caf\u00e9\r\n").length - 1, 3, bytes);
    const streamed = await raw(port, "GET /streamed HTTP/1.1\r\nHost: a\r\n\r\n".repeat(2));
    assert.equal(streamed.split("x-name: caf\u00e9\r\n").length - 1, 2, streamed);
  });

  test("a Date the app sets replaces the server's, every time the same header set repeats; after Connection: close nothing more is answered", async (t) => {
    const date = "Tue, 01 Jan 2030 00:00:00 GMT";
    const { port } = await serve(t, (app) => {
      app.get("/dated", (_req, res) => res.set("Date", date).send("ok"));
      app.get("/closing", (_req, res) => res.set("Connection", "close").send("bye"));
    });
    const answer = await raw(port, "GET /dated HTTP/1.1\r\nHost: a\r\n\r\n".repeat(3));
    assert.equal(answer.split(/\r\ndate: /i).length - 1, 3, answer);
    assert.equal(answer.split(`\r\ndate: ${date}\r\n`).length - 1, 3, answer);
    const closing = await raw(port, "GET /closing HTTP/1.1\r\nHost: a\r\n\r\n".repeat(2) + "GET /dated HTTP/1.1\r\nHost: a\r\n\r\n");
    assert.equal(closing.split("HTTP/1.1 200").length - 1, 1, "the connection closed after the first response");
  });

  test("text bodies are UTF-8 byte for byte as Node writes them: astral characters, lone surrogates, long strings", async (t) => {
    const texts = ["emoji 😀 𝄞 日本語", "a\ud800b\udc00c\ud83d", "x".repeat(70_000) + "é", "é".repeat(3000)];
    const { fetch } = await serve(t, (app) => {
      app.get("/:n", (req, res) => res.send(texts[Number(req.params.n)]));
    });
    for (const [n, text] of texts.entries()) {
      const bytes = Buffer.from(await (await fetch(`/${n}`)).arrayBuffer());
      assert.ok(bytes.equals(Buffer.from(text, "utf8")), `text ${n}`);
    }
  });

  test("status, json, html, and the status argument of send", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/created", (_req, res) => res.status(201).json({ id: 1 }));
      app.get("/json-status", (_req, res) => res.json({ ok: false }, 422));
      app.get("/json-undefined", (_req, res) => res.json(undefined));
      app.get("/html", (_req, res) => res.html("<p>hi</p>", 202));
      app.get("/send-status", (_req, res) => res.send("nope", 403));
      app.get("/no-content", (_req, res) => res.set("content-type", "text/plain").send("dropped", 204));
    });
    let res = await fetch("/created");
    assert.equal(res.status, 201);
    assert.deepEqual(await res.json(), { id: 1 });
    res = await fetch("/json-status");
    assert.equal(res.status, 422);
    assert.equal(await (await fetch("/json-undefined")).text(), "null");
    res = await fetch("/html");
    assert.equal(res.status, 202);
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal((await fetch("/send-status")).status, 403);
    res = await fetch("/no-content");
    assert.equal(res.status, 204);
    assert.equal(res.headers.get("content-length"), null);
    assert.equal(res.headers.get("content-type"), null);
    assert.equal(await res.text(), "");
  });

  test("set/get/append headers, from res.set or from Node's setHeader", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/h", (_req, res) => {
        res.setHeader("X-Node", "n");
        res.set({ "X-Many": "m", "X-Num": 5 });
        res.append("Vary", "Origin").append("Vary", "Accept");
        res.send(`${res.get("x-node")} ${res.get("X-MANY")} ${res.get("x-num")} ${res.get("x-none")}`);
      });
    });
    const res = await fetch("/h");
    assert.equal(await res.text(), "n m 5 undefined");
    assert.equal(res.headers.get("x-node"), "n");
    assert.equal(res.headers.get("x-num"), "5");
    assert.equal(res.headers.get("vary"), "Origin, Accept");
  });

  test("set refuses invalid names and missing values", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/name", (_req, res) => res.set("bad name", "x").send("x"));
      app.get("/value", (_req, res) => res.set("x-a", undefined as unknown as string).send("x"));
    });
    assert.equal((await fetch("/name")).status, 500);
    assert.equal((await fetch("/value")).status, 500);
  });

  test("redirect sets Location and the status", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/old", (_req, res) => res.redirect("/new"));
      app.get("/moved", (_req, res) => res.redirect("https://example.com/x", 301));
    });
    let res = await fetch("/old", { redirect: "manual" });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get("location"), "/new");
    res = await fetch("/moved", { redirect: "manual" });
    assert.equal(res.status, 301);
    assert.equal(res.headers.get("location"), "https://example.com/x");
  });

  test("setCookie writes every attribute; clearCookie expires it; several cookies stay separate", async (t) => {
    const expires = new Date("2030-01-02T03:04:05Z");
    const { fetch } = await serve(t, (app) => {
      app.get("/c", (_req, res) => {
        res.setCookie("plain", "a b");
        res.setCookie("full", "v", { httpOnly: true, secure: true, sameSite: "strict", maxAge: 60, expires, domain: "example.com", path: "/app" });
        res.clearCookie("old", { path: "/app" });
        res.send("ok");
      });
      app.get("/bad", (_req, res) => res.setCookie("bad;name", "v").send("x"));
    });
    const res = await fetch("/c");
    assert.deepEqual(res.headers.getSetCookie(), [
      "plain=a%20b; Path=/",
      "full=v; Max-Age=60; Domain=example.com; Path=/app; Expires=Wed, 02 Jan 2030 03:04:05 GMT; HttpOnly; Secure; SameSite=Strict",
      "old=; Path=/app; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
    ]);
    assert.equal((await fetch("/bad")).status, 500);
  });

  test("a Readable is piped", async (t) => {
    const { fetch } = await serve(t, (app) => {
      app.get("/stream", (_req, res) => res.set("content-type", "text/plain").send(Readable.from(["a", "b", "c"])));
      app.get("/bytes", (_req, res) => res.send(Readable.from([Buffer.from("xyz")])));
    });
    const res = await fetch("/stream");
    assert.equal(res.headers.get("content-type"), "text/plain");
    assert.equal(await res.text(), "abc");
    const bytes = await fetch("/bytes");
    assert.equal(bytes.headers.get("content-type"), "application/octet-stream");
    assert.equal(await bytes.text(), "xyz");
  });

  test("responses on the wire are exactly what was asked for", async (t) => {
    const { port } = await serve(t, (app) => app.get("/", (_req, res) => res.set("X-Powered-By", "Cog").send("Hello from Cog!")));
    const text = await raw(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(text, /\r\nx-powered-by: Cog\r\n/);
    assert.match(text, /\r\ncontent-length: 15\r\n/i);
    assert.doesNotMatch(text, /transfer-encoding/i);
    assert.ok(text.endsWith("\r\n\r\nHello from Cog!"));
  });

  test("a streamed body with a Content-Length the app set goes out framed by it, not chunked; HEAD reports it", async (t) => {
    const { port } = await serve(t, (app) =>
      app.get("/sized", (_req, res) => {
        res.setHeader("Content-Length", 11);
        res.write("hello ");
        res.end("world");
      }),
    );
    const text = await raw(
      port,
      "GET /sized HTTP/1.1\r\nHost: a\r\n\r\nHEAD /sized HTTP/1.1\r\nHost: a\r\n\r\nGET /sized HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    );
    const answers = text.split(/(?=HTTP\/1\.1 )/);
    assert.equal(answers.length, 3, text);
    for (const answer of answers) {
      assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
      assert.match(answer, /\r\ncontent-length: 11\r\n/i);
      assert.doesNotMatch(answer, /transfer-encoding/i);
    }
    assert.ok(answers[0]!.endsWith("\r\n\r\nhello world"), answers[0]);
    assert.ok(answers[1]!.endsWith("\r\n\r\n"), answers[1]);
    assert.ok(answers[2]!.endsWith("\r\n\r\nhello world"), answers[2]);
  });
});

// cog-http/express against Express 5 from npm: each case builds the same app with both, sends
// the same requests to each over a real socket (Express on node:http, as Express serves itself;
// Cog's on the engine under test), and compares status, headers and body (test/express-pair.ts).
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { same as compare } from "../express-pair.js";
import { engine, nativeSkip, nodeParsesQuery } from "../helpers.js";

type AnyExpress = any;

const files = mkdtempSync(join(tmpdir(), "cog-express-diff-"));
writeFileSync(join(files, "hello.txt"), "hello, world\n");
writeFileSync(join(files, "page.html"), "<p>page</p>");
// A fixed mtime: Last-Modified and the static ETag (size and mtime) are then the same for both.
utimesSync(join(files, "hello.txt"), 1_700_000_000, 1_700_000_000);
utimesSync(join(files, "page.html"), 1_700_000_000, 1_700_000_000);
after(() => rmSync(files, { recursive: true, force: true }));

/** Runs the requests against both apps `define` builds, and compares each answer. */
async function same(...args: Parameters<typeof compare>): Promise<void> {
  await compare(...args);
}

describe(`cog-http/express answers as Express 5 does (${engine} engine)`, { skip: engine === "native" && nativeSkip }, () => {
  test("send: strings, buffers, objects, numbers as bodies; status and sendStatus; HEAD", () =>
    same(
      (app) => {
        app.get("/", (_req: AnyExpress, res: AnyExpress) => res.send("Hello World"));
        app.get("/buffer", (_req: AnyExpress, res: AnyExpress) => res.send(Buffer.from("bytes")));
        app.get("/object", (_req: AnyExpress, res: AnyExpress) => res.status(201).send({ a: [1, 2], b: "é" }));
        app.get("/status", (_req: AnyExpress, res: AnyExpress) => res.sendStatus(418));
        app.get("/empty", (_req: AnyExpress, res: AnyExpress) => res.status(204).send("gone"));
        app.get("/long", (_req: AnyExpress, res: AnyExpress) => res.type("txt").send("x".repeat(5000)));
      },
      [{ path: "/" }, { path: "/buffer" }, { path: "/object" }, { path: "/status" }, { path: "/empty" }, { path: "/long" }, { method: "HEAD", path: "/" }],
    ));

  test("json and jsonp with the app's settings; a fresh request gets 304 (by ETag or by date), a stale one the body", () =>
    same(
      (app) => {
        app.set("json spaces", 2);
        app.set("json escape", true);
        app.get("/json", (_req: AnyExpress, res: AnyExpress) => res.json({ html: "<b>&</b>", list: [1] }));
        app.get("/jsonp", (_req: AnyExpress, res: AnyExpress) => res.jsonp({ ok: true }));
        app.get("/dated", (_req: AnyExpress, res: AnyExpress) => res.set("Last-Modified", new Date(1_700_000_000_000).toUTCString()).send("dated"));
      },
      [
        { path: "/json" },
        { path: "/jsonp?callback=cb" },
        { path: "/jsonp?callback=bad%20name!" },
        { path: "/json", headers: { "if-none-match": 'W/"2d-nmWGeHZZvJ0AA8bfsDqkOY2Ut1U"' } },
        { path: "/json", headers: { "if-none-match": '"another"' } },
        { path: "/dated" },
        { path: "/dated", headers: { "if-modified-since": new Date(1_800_000_000_000).toUTCString() } },
        { path: "/dated", headers: { "if-modified-since": new Date(1_600_000_000_000).toUTCString() } },
      ],
    ));

  test("routing: params, app.param, routes, Router with mergeParams, regular expressions, 404 and thrown errors", () =>
    same(
      (app, e) => {
        app.set("env", "production");
        app.param("id", (req: AnyExpress, _res: AnyExpress, next: AnyExpress, id: string) => {
          req.seen = `param ${id}`;
          next();
        });
        app.get("/users/:id", (req: AnyExpress, res: AnyExpress) => res.send(`${req.seen} ${req.params.id}`));
        app.get("/files/*rest", (req: AnyExpress, res: AnyExpress) => res.json(req.params));
        app.get("/optional{/:part}", (req: AnyExpress, res: AnyExpress) => res.json(req.params));
        app.get(/^\/re(\d+)$/, (req: AnyExpress, res: AnyExpress) => res.json(req.params));
        app
          .route("/book")
          .get((_req: AnyExpress, res: AnyExpress) => res.send("get book"))
          .post((_req: AnyExpress, res: AnyExpress) => res.send("post book"));
        const router = e.Router({ mergeParams: true });
        router.get("/items/:item", (req: AnyExpress, res: AnyExpress) =>
          res.json({ params: req.params, baseUrl: req.baseUrl, originalUrl: req.originalUrl, path: req.path }),
        );
        app.use("/shop/:shop", router);
        app.get("/throws", () => {
          throw Object.assign(new Error("nope"), { status: 409 });
        });
        app.get("/rejects", async () => {
          throw new Error("async failure");
        });
      },
      [
        { path: "/users/42" },
        { path: "/files/a/b/c.txt" },
        { path: "/optional" },
        { path: "/optional/x" },
        { path: "/re12" },
        { path: "/book" },
        { method: "POST", path: "/book" },
        { method: "DELETE", path: "/book" },
        { method: "OPTIONS", path: "/book" },
        { path: "/shop/s1/items/i2?x=1" },
        { path: "/nowhere" },
        { path: "/throws" },
        { path: "/rejects" },
      ],
    ));

  test("plain paths: case, trailing slashes, strict and case-sensitive routing, mounts, a route of another method passed over, HEAD and OPTIONS", () =>
    same(
      (app, e) => {
        app.get("/plain", (req: AnyExpress, res: AnyExpress) => res.send(`plain ${req.url} ${JSON.stringify(req.params)}`));
        app.post("/only-post", (_req: AnyExpress, res: AnyExpress) => res.send("posted"));
        const admin = e.Router();
        admin.get("/", (req: AnyExpress, res: AnyExpress) => res.send(`admin root ${req.baseUrl} ${req.url}`));
        admin.get("/Panel", (req: AnyExpress, res: AnyExpress) => res.send(`panel ${req.baseUrl} ${req.originalUrl}`));
        app.use("/admin", admin);
        const strict = e({ engine: undefined });
        strict.enable("strict routing");
        strict.enable("case sensitive routing");
        strict.get("/exact/", (_req: AnyExpress, res: AnyExpress) => res.send("exact with slash"));
        strict.get("/Exact", (_req: AnyExpress, res: AnyExpress) => res.send("Exact"));
        app.use("/strict", strict);
        // Whatever the routes above passed over reaches here with its URL as it came.
        app.use((req: AnyExpress, res: AnyExpress) => res.status(404).send(`fell through ${req.method} ${req.url} ${req.baseUrl}`));
      },
      [
        { path: "/plain" },
        { path: "/PLAIN/" },
        { path: "/plain//" },
        { path: "/plainer" },
        { path: "/plain/more" },
        { path: "/plain?x=1" },
        { method: "HEAD", path: "/plain" },
        { method: "POST", path: "/plain" },
        { path: "/only-post" },
        { method: "OPTIONS", path: "/plain" },
        { path: "/admin" },
        { path: "/ADMIN/" },
        { path: "/admin/panel" },
        { path: "/admin/Panel/" },
        { path: "/administrator" },
        { path: "/strict/exact/" },
        { path: "/strict/exact" },
        { path: "/strict/Exact" },
        { path: "/strict/exact" },
        { path: "/strict/EXACT/" },
      ],
    ));

  test("error middleware with four arguments, next('route'), sub-apps with their mountpath", () =>
    same(
      (app, e) => {
        const admin = e();
        admin.get("/", (req: AnyExpress, res: AnyExpress) =>
          res.json({ mountpath: admin.mountpath, baseUrl: req.baseUrl, path: admin.path(), app: req.app === admin }),
        );
        app.use("/admin", admin);
        app.get(
          "/skip",
          (_req: AnyExpress, _res: AnyExpress, next: AnyExpress) => next("route"),
          (_req: AnyExpress, res: AnyExpress) => res.send("not this"),
        );
        app.get("/skip", (_req: AnyExpress, res: AnyExpress) => res.send("next route"));
        app.get("/fail", (_req: AnyExpress, _res: AnyExpress, next: AnyExpress) => next(new Error("boom")));
        app.use((err: Error, _req: AnyExpress, res: AnyExpress, _next: AnyExpress) => res.status(500).json({ caught: err.message }));
      },
      [{ path: "/admin" }, { path: "/admin/" }, { path: "/skip" }, { path: "/fail" }],
    ));

  test("app.request and app.response members, and a sub-app passed through: each request of the app has the app's members, on every request", () =>
    same(
      (app, e) => {
        app.set("name", "outer");
        app.request.greeting = function (this: AnyExpress) {
          return `hello from ${this.app.get("name")} at ${this.path}`;
        };
        app.response.sendName = function (this: AnyExpress) {
          return this.json({ app: this.app.get("name"), greeting: this.req.greeting() });
        };
        const sub = e();
        sub.set("name", "inner");
        sub.use((req: AnyExpress, res: AnyExpress, next: AnyExpress) => {
          res.set("X-Inner", `${req.app.get("name")} ${typeof req.greeting}`);
          next();
        });
        app.use(sub);
        app.get("/", (_req: AnyExpress, res: AnyExpress) => res.sendName());
        app.get("/other", (_req: AnyExpress, res: AnyExpress) => res.sendName());
      },
      [{ path: "/" }, { path: "/other" }, { path: "/" }, { path: "/other?x=1" }],
    ));

  test("request: query (simple and extended), accepts, is, ip, hostname, protocol, xhr, subdomains, get", () =>
    same(
      (app, e) => {
        app.get("/q", (req: AnyExpress, res: AnyExpress) => res.json(req.query));
        const extended = e();
        extended.set("query parser", "extended");
        extended.get("/", (req: AnyExpress, res: AnyExpress) => res.json(req.query));
        app.use("/extended", extended);
        // The simple parser's answer as an object: its keys in order, repeated keys as arrays, no prototype.
        app.get("/q-shape", (req: AnyExpress, res: AnyExpress) =>
          res.json({ entries: Object.entries(req.query), nullPrototype: Object.getPrototypeOf(req.query) === null }),
        );
        const own = e();
        own.set("query parser", (text: unknown) => ({ text: text === undefined ? "undefined" : text }));
        own.get("/", (req: AnyExpress, res: AnyExpress) => res.json(req.query));
        app.use("/own", own);
        app.post("/about", (req: AnyExpress, res: AnyExpress) =>
          res.json({
            accepts: req.accepts(["json", "html"]),
            languages: req.acceptsLanguages(),
            is: req.is("json"),
            ip: req.ip,
            hostname: req.hostname,
            protocol: req.protocol,
            secure: req.secure,
            xhr: req.xhr,
            subdomains: req.subdomains,
            referrer: req.get("referrer"),
            range: req.range(100) ?? null,
          }),
        );
      },
      [
        { path: "/q?a=1&a=2&b=x%20y&c[d]=1" },
        { path: "/extended?a[b]=1&c[]=2&c[]=3" },
        { path: "/q-shape?name=John+Doe&a=1&a=2&a=3&=x&flag&&b=c=d&__proto__=p&constructor=c&2=two&1=one" },
        { path: "/q-shape" },
        { path: "/q-shape?" },
        { path: "/q-shape?a=%E2%82%AC&a=%zz&b+c=d+e%2B" },
        { path: "/own" },
        { path: "/own?" },
        { path: "/own?a=b+c" },
        {
          method: "POST",
          path: "/about",
          headers: {
            accept: "text/html,application/json;q=0.5",
            "accept-language": "fr, en;q=0.8",
            "content-type": "application/json",
            host: "a.b.example.com:8080",
            "x-requested-with": "XMLHttpRequest",
            referer: "/from",
            range: "bytes=0-9",
          },
          body: "{}",
        },
      ],
    ));

  test("body parsers: json, urlencoded, text, raw, and their refusals", () =>
    same(
      (app, e) => {
        app.set("env", "production");
        app.post("/json", e.json(), (req: AnyExpress, res: AnyExpress) => res.json({ body: req.body }));
        app.post("/form", e.urlencoded(), (req: AnyExpress, res: AnyExpress) => res.json({ body: req.body }));
        app.post("/text", e.text(), (req: AnyExpress, res: AnyExpress) => res.json({ body: req.body }));
        app.post("/raw", e.raw(), (req: AnyExpress, res: AnyExpress) => res.json({ length: req.body.length }));
        app.post("/small", e.json({ limit: 10 }), (req: AnyExpress, res: AnyExpress) => res.json(req.body));
        app.post("/none", (req: AnyExpress, res: AnyExpress) => res.json({ body: req.body === undefined }));
      },
      [
        { method: "POST", path: "/json", headers: { "content-type": "application/json" }, body: '{"a":[1,{"b":null}]}' },
        { method: "POST", path: "/json", headers: { "content-type": "application/json" }, body: "{bad" },
        { method: "POST", path: "/form", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "a=1&b=two+words&c[d]=e" },
        { method: "POST", path: "/text", headers: { "content-type": "text/plain" }, body: "some text" },
        { method: "POST", path: "/raw", headers: { "content-type": "application/octet-stream" }, body: "0123456789" },
        { method: "POST", path: "/small", headers: { "content-type": "application/json" }, body: '{"too":"long for ten bytes"}' },
        { method: "POST", path: "/none", headers: { "content-type": "application/json" }, body: "{}" },
      ],
    ));

  // Express serves itself on node:http, whose parser takes QUERY from Node 20.19.3 and 22.2 (and
  // Express has app.query where http.METHODS lists it).
  test(
    "QUERY: app.query, router.query, route().query and app.all; a body parser reads its body; a fresh answer is 304; OPTIONS and 405 list it",
    { skip: nodeParsesQuery() ? false : `node:http on Node ${process.version} does not take QUERY requests` },
    () =>
      same(
        (app, e) => {
          app.set("env", "production");
          app.get("/search", (_req: AnyExpress, res: AnyExpress) => res.send("get"));
          app.query("/search", e.json(), (req: AnyExpress, res: AnyExpress) => res.json({ method: req.method, body: req.body, query: req.query }));
          const router = e.Router();
          router.query("/:id", e.text(), (req: AnyExpress, res: AnyExpress) => res.send(`${req.params.id}: ${req.body}`));
          router.route("/route/:id").query((req: AnyExpress, res: AnyExpress) => res.send(`route ${req.params.id}`));
          app.use("/items", router);
          app.all("/any", (req: AnyExpress, res: AnyExpress) => res.send(`any ${req.method}`));
        },
        [
          { method: "QUERY", path: "/search?page=2", headers: { "content-type": "application/json" }, body: '{"name":"ada"}' },
          { method: "QUERY", path: "/search", headers: { "content-type": "application/json" }, body: "{bad" },
          // A Cache-Control of its own: fetch sends "no-cache" with a conditional request otherwise, and fresh() then answers false.
          {
            method: "QUERY",
            path: "/search",
            headers: { "content-type": "application/json", "if-none-match": 'W/"33-BOWaQjv12uOgYGL8ZoQWTLGqKPc"', "cache-control": "max-age=0" },
            body: '{"name":"ada"}',
          },
          { method: "QUERY", path: "/items/7", headers: { "content-type": "text/plain" }, body: "text" },
          { method: "QUERY", path: "/items/route/8" },
          { method: "QUERY", path: "/any" },
          { method: "QUERY", path: "/nothing" },
          { method: "OPTIONS", path: "/search" },
          { method: "DELETE", path: "/search" },
          { method: "HEAD", path: "/search" },
        ],
      ),
  );

  test("body parsers' steps on a body the engine holds whole: charsets, verify, limits, lengths, strictness, and the tick the next middleware runs in", () =>
    same(
      (app, e) => {
        // What ran before the parser went on: a parser that reads the body answers on a later tick.
        app.use((req: AnyExpress, _res: AnyExpress, next: AnyExpress) => {
          req.order = ["before"];
          next();
          req.order.push("after next()");
        });
        app.use("/lying", (req: AnyExpress, _res: AnyExpress, next: AnyExpress) => {
          req.headers["content-length"] = "20";
          next();
        });
        const verify = (_req: AnyExpress, _res: AnyExpress, body: Buffer) => {
          if (body[0] === 0x21) throw Object.assign(new Error("no bang"), { status: 422, type: "bang" });
        };
        app.post("/json", e.json(), (req: AnyExpress, res: AnyExpress) => res.json({ body: req.body, order: req.order }));
        // The request's stream as the parser left it, and whether it emitted 'end' before the handler.
        app.post(
          "/json-stream",
          (req: AnyExpress, _res: AnyExpress, next: AnyExpress) => {
            req.once("end", () => req.order.push("end"));
            next();
          },
          e.json(),
          (req: AnyExpress, res: AnyExpress) =>
            res.json({ body: req.body, order: req.order, complete: req.complete, readableEnded: req.readableEnded, readable: req.readable }),
        );
        app.post("/json-twice", e.json(), e.json(), (req: AnyExpress, res: AnyExpress) => res.json({ body: req.body }));
        app.post("/loose", e.json({ strict: false, reviver: (k: string, v: unknown) => (k === "n" ? Number(v) * 2 : v) }), (req: AnyExpress, res: AnyExpress) =>
          res.json({ body: req.body }),
        );
        app.post("/verified", e.json({ verify }), (req: AnyExpress, res: AnyExpress) => res.json({ body: req.body }));
        app.post("/form", e.urlencoded({ extended: true, parameterLimit: 3, depth: 1 }), (req: AnyExpress, res: AnyExpress) => res.json({ body: req.body }));
        app.post("/latin", e.urlencoded(), (req: AnyExpress, res: AnyExpress) => res.json({ body: req.body }));
        app.post("/text", e.text({ type: "text/*", limit: "16b", defaultCharset: "iso-8859-1" }), (req: AnyExpress, res: AnyExpress) =>
          res.json({ body: req.body }),
        );
        app.post("/raw", e.raw({ type: () => true }), (req: AnyExpress, res: AnyExpress) =>
          res.json({ hex: Buffer.isBuffer(req.body) ? req.body.toString("hex") : req.body }),
        );
        app.post("/lying", e.json(), (req: AnyExpress, res: AnyExpress) => res.json({ body: req.body }));
        app.use((err: AnyExpress, _req: AnyExpress, res: AnyExpress, _next: AnyExpress) => {
          const { status, type, message, expected, length, limit, received, charset, body } = err;
          res
            .status(status ?? 500)
            .json({ status, type, message, expected, length, limit, received, charset, body: Buffer.isBuffer(body) ? body.toString("hex") : body });
        });
      },
      [
        { method: "POST", path: "/json", headers: { "content-type": "application/json" }, body: '{"a":1}' },
        { method: "POST", path: "/json", headers: { "content-type": "application/json; charset=utf-8" }, body: "\ufeff[1,2]" },
        { method: "POST", path: "/json", headers: { "content-type": "application/json" }, body: "" },
        { method: "POST", path: "/json", headers: { "content-type": "application/json" }, body: "  true" },
        { method: "POST", path: "/json", headers: { "content-type": "application/json" }, body: '{"a":' },
        { method: "POST", path: "/json", headers: { "content-type": "application/json; charset=latin1" }, body: "{}" },
        { method: "POST", path: "/json", headers: { "content-type": "application/json; charset=utf-16" }, body: "{}" },
        { method: "POST", path: "/json", headers: { "content-type": "text/plain" }, body: "{}" },
        { method: "POST", path: "/json", headers: { "content-type": "application/json" }, body: `{"big":"${"x".repeat(110_000)}"}` },
        { method: "POST", path: "/json-stream", headers: { "content-type": "application/json" }, body: '{"a":1}' },
        { method: "POST", path: "/json-twice", headers: { "content-type": "application/json" }, body: '{"twice":true}' },
        { method: "POST", path: "/loose", headers: { "content-type": "application/json" }, body: '{"n":"21"}' },
        { method: "POST", path: "/loose", headers: { "content-type": "application/json" }, body: '"just a string"' },
        { method: "POST", path: "/verified", headers: { "content-type": "application/json" }, body: '{"fine":1}' },
        { method: "POST", path: "/verified", headers: { "content-type": "application/json" }, body: '!{"fine":1}' },
        { method: "POST", path: "/verified", headers: { "content-type": "application/json; charset=utf-42" }, body: "{}" },
        { method: "POST", path: "/form", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "a[b]=1&c=2" },
        { method: "POST", path: "/form", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "a=1&b=2&c=3&d=4" },
        { method: "POST", path: "/form", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "a[b][c][d]=1" },
        { method: "POST", path: "/latin", headers: { "content-type": "application/x-www-form-urlencoded; charset=iso-8859-1" }, body: "name=caf%E9" },
        { method: "POST", path: "/latin", headers: { "content-type": "application/x-www-form-urlencoded; charset=koi8-r" }, body: "a=1" },
        { method: "POST", path: "/text", headers: { "content-type": "text/csv" }, body: "a,b\n1,2" },
        { method: "POST", path: "/text", headers: { "content-type": "text/plain" }, body: "seventeen bytes!!" },
        { method: "POST", path: "/raw", headers: { "content-type": "image/png" }, body: "PNG" },
        { method: "POST", path: "/raw", body: "untyped" },
        { method: "POST", path: "/lying", headers: { "content-type": "application/json" }, body: '{"short":1}' },
      ],
    ));

  test("response: headers, cookies, redirects, format, links, vary, attachment, location", () =>
    same(
      (app) => {
        app.get("/headers", (_req: AnyExpress, res: AnyExpress) => {
          res.set({ "X-One": "1", "Content-Type": "text/plain" });
          res.append("X-List", ["a", "b"]);
          res.links({ next: "/page/2", last: "/page/9" });
          res.vary("Accept-Encoding");
          res.attachment("report.pdf");
          res.location("/here?q=a b");
          res.send("with headers");
        });
        app.get("/cookies", (_req: AnyExpress, res: AnyExpress) => {
          res.cookie("name", "tobi", { httpOnly: true, sameSite: "lax" });
          res.cookie("obj", { a: 1 });
          res.clearCookie("old");
          res.end();
        });
        app.get("/redirect", (_req: AnyExpress, res: AnyExpress) => res.redirect("/target?x=<y>"));
        app.get("/moved", (_req: AnyExpress, res: AnyExpress) => res.redirect(301, "https://example.com/"));
        app.set("env", "production");
        app.get("/format", (_req: AnyExpress, res: AnyExpress) =>
          res.format({
            text: () => res.send("text"),
            html: () => res.send("<p>html</p>"),
            json: () => res.json({ json: true }),
          }),
        );
      },
      [
        { path: "/headers" },
        { path: "/cookies" },
        { path: "/redirect" },
        { path: "/redirect", headers: { accept: "text/html" } },
        { method: "HEAD", path: "/moved" },
        { path: "/format", headers: { accept: "application/json" } },
        { path: "/format", headers: { accept: "text/html" } },
        { path: "/format", headers: { accept: "image/png" } },
      ],
    ));

  test("files: express.static, sendFile, download, ranges, conditional requests", () =>
    same(
      (app, e) => {
        app.use("/static", e.static(files));
        app.get("/send", (_req: AnyExpress, res: AnyExpress) => res.sendFile(join(files, "page.html")));
        app.get("/download", (_req: AnyExpress, res: AnyExpress) => res.download(join(files, "hello.txt"), "greeting.txt"));
        app.get("/missing", (_req: AnyExpress, res: AnyExpress) => res.sendFile("absent.txt", { root: files }));
      },
      [
        { path: "/static/hello.txt" },
        { path: "/static/hello.txt", headers: { range: "bytes=0-4" } },
        { path: "/static/hello.txt", headers: { "if-modified-since": new Date(1_800_000_000_000).toUTCString() } },
        { path: "/static/nope.txt" },
        { path: "/static/../package.json" },
        { path: "/send" },
        { path: "/download" },
        { path: "/missing" },
      ],
    ));

  test("views: app.engine, res.render with app, response and call locals", () =>
    same(
      (app) => {
        writeFileSync(join(files, "greet.tmpl"), "Hello {{who}} from {{site}}, {{extra}}");
        app.set("views", files);
        app.set("view engine", "tmpl");
        app.engine("tmpl", (path: string, options: Record<string, string>, callback: (err: Error | null, html?: string) => void) => {
          import("node:fs").then(
            ({ readFileSync }) =>
              callback(
                null,
                readFileSync(path, "utf8").replace(/\{\{(\w+)\}\}/g, (_m, key: string) => String(options[key])),
              ),
            callback,
          );
        });
        app.locals.site = "the app";
        app.get("/render", (_req: AnyExpress, res: AnyExpress) => {
          res.locals.who = "tobi";
          res.render("greet", { extra: "hi" });
        });
        app.get("/missing-view", (_req: AnyExpress, res: AnyExpress) => res.render("nothing"));
        app.set("env", "production");
      },
      [{ path: "/render" }, { path: "/missing-view" }],
    ));
});

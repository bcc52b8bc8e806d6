// express-session with connect-redis on a real Redis (the system's redis-server, started for the
// test on a free port), unchanged, on cog-http/express: the same sign-in, visits and sign-out on
// Express 5 from npm and on Cog's engine over real sockets, the same answers (the session ids and
// the cookies' expiry dates aside, which are each server's own), and each session kept in Redis
// under its id, with its cookie's lifetime, until it is destroyed.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { RedisStore } from "connect-redis";
import session from "express-session";
import { createClient } from "redis";
import { hasRedis, startRedis } from "../../../bench/arena/database.mjs";
import { ask, servePair, type Answer, type Sent } from "../../express-pair.js";
import { engine, nativeSkip } from "../../helpers.js";

type Any = any;

const skip = engine === "native" && nativeSkip ? nativeSkip : hasRedis() ? false : "redis-server is not installed (apt-get install redis-server)";
const SECRET = "keyboard cat";

/** The session id a Set-Cookie of express-session carries (`connect.sid=s:<id>.<signature>`). */
function sessionId(setCookie: string): string {
  const value = decodeURIComponent(setCookie.slice("connect.sid=".length, setCookie.indexOf(";")));
  return value.slice(2, value.lastIndexOf("."));
}

/** An answer with its session cookie's id and expiry date replaced by placeholders, to compare two servers' answers. */
function comparable(answer: Answer): Answer {
  const headers = answer.headers.map(([name, value]): [string, string] =>
    name === "set-cookie" ? [name, value.replace(/^connect\.sid=[^;]*/, "connect.sid=<id>").replace(/Expires=[^;]*/, "Expires=<date>")] : [name, value],
  );
  return { ...answer, headers };
}

/** Sends `steps` in order to `port` as one browser would: the session cookie set by one step (or given) goes with the next ones. */
async function browse(port: number, steps: readonly Sent[], given?: string): Promise<{ answers: Answer[]; ids: string[]; cookie: string | undefined }> {
  let cookie = given;
  const answers: Answer[] = [];
  const ids: string[] = [];
  for (const step of steps) {
    const answer = await ask(port, { ...step, headers: { ...step.headers, ...(cookie === undefined ? {} : { cookie }) } });
    for (const [name, value] of answer.headers) {
      if (name !== "set-cookie" || !value.startsWith("connect.sid=")) continue;
      cookie = value.slice(0, value.indexOf(";"));
      ids.push(sessionId(value));
    }
    answers.push(answer);
  }
  return { answers, ids, cookie };
}

describe(`express-session with connect-redis on cog-http/express (${engine} engine)`, () => {
  test("sessions answer as on Express 5, kept in Redis", { skip, timeout: 60_000 }, async (t) => {
    const redis = (await startRedis())!;
    const client = createClient({ url: redis.url });
    let pair: Awaited<ReturnType<typeof servePair>> | undefined;
    // In this order: the apps, then the client, then the server it talks to.
    t.after(async () => {
      await pair?.close();
      if (client.isOpen) client.destroy();
      await redis.stop();
    });
    await client.connect();

    const prefixes = ["theirs:", "ours:"];
    let built = 0;
    pair = await servePair((app, e) => {
      app.set("env", "production");
      app.use(
        session({
          store: new RedisStore({ client, prefix: prefixes[built++]! }),
          secret: SECRET,
          resave: false,
          saveUninitialized: false,
          cookie: { maxAge: 60_000, httpOnly: true, sameSite: "lax" },
        }),
      );
      app.post("/login", e.json(), (req: Any, res: Any, next: Any) =>
        req.session.regenerate((err: unknown) => {
          if (err) return next(err);
          req.session.user = req.body.user;
          req.session.save((failed: unknown) => (failed ? next(failed) : res.json({ user: req.session.user })));
        }),
      );
      app.get("/me", (req: Any, res: Any) => {
        if (!req.session.user) return res.status(401).json({ error: "not signed in" });
        req.session.views = (req.session.views ?? 0) + 1;
        res.json({ user: req.session.user, views: req.session.views });
      });
      app.post("/logout", (req: Any, res: Any, next: Any) =>
        req.session.destroy((err: unknown) => (err ? next(err) : res.clearCookie("connect.sid").json({ bye: true }))),
      );
    });

    const json = { "content-type": "application/json" };
    const signIn: Sent[] = [{ path: "/me" }, { method: "POST", path: "/login", headers: json, body: '{"user":"tobi"}' }, { path: "/me" }, { path: "/me" }];
    const signOut: Sent[] = [{ method: "POST", path: "/logout" }, { path: "/me" }];

    const theirs = await browse(pair.theirs, signIn);
    const ours = await browse(pair.ours, signIn);
    assert.deepEqual(ours.answers.map(comparable), theirs.answers.map(comparable));
    assert.deepEqual(
      ours.answers.map((answer) => [answer.status, JSON.parse(answer.body)]),
      [
        [401, { error: "not signed in" }],
        [200, { user: "tobi" }],
        [200, { user: "tobi", views: 1 }],
        [200, { user: "tobi", views: 2 }],
      ],
    );
    // One session, made at sign-in, kept in Redis under its id with the cookie's lifetime.
    assert.equal(new Set(ours.ids).size, 1);
    const key = `ours:${ours.ids[0]}`;
    assert.deepEqual(await client.keys("ours:*"), [key]);
    const stored = JSON.parse((await client.get(key))!);
    assert.deepEqual([stored.user, stored.views], ["tobi", 2]);
    const ttl = await client.ttl(key);
    assert.ok(ttl > 0 && ttl <= 60, `the session expires with its cookie (TTL ${ttl} s)`);

    // Signing out destroys the session in Redis; the same cookie then finds none.
    const out = await Promise.all([browse(pair.theirs, signOut, theirs.cookie), browse(pair.ours, signOut, ours.cookie)]);
    assert.deepEqual(out[1].answers.map(comparable), out[0].answers.map(comparable));
    assert.deepEqual(
      out[1].answers.map((answer) => answer.status),
      [200, 401],
    );
    assert.deepEqual(await client.keys("ours:*"), []);
  });
});

// tRPC's Express adapter (@trpc/server/adapters/express), unchanged, on cog-http/express: the same
// router on Express 5 from npm and on Cog's engine, the same calls over real sockets, the same
// answers (test/express-pair.ts). Queries with input (by GET), mutations (by POST, the body read
// by tRPC from the request stream, and parsed by express.json() first), batches, a context made
// from the Express request, input refused by a validator, and a procedure's own error.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { initTRPC, TRPCError } from "@trpc/server";
import { createExpressMiddleware, type CreateExpressContextOptions } from "@trpc/server/adapters/express";
import { same } from "../../express-pair.js";
import { engine, nativeSkip } from "../../helpers.js";

const createContext = ({ req }: CreateExpressContextOptions) => ({ host: req.hostname, ip: req.ip });
// No stack traces in the answers: they would name each server's own frames.
const t = initTRPC.context<typeof createContext>().create({ isDev: false });

/** A validator as tRPC takes one: returns the input, or throws (tRPC answers 400). */
function text(input: unknown): string {
  if (typeof input !== "string" || input.length === 0) throw new Error("a non-empty string is expected");
  return input;
}

function note(input: unknown): { text: string } {
  const given = input as { text?: unknown } | null;
  return { text: text(given?.text) };
}

function makeRouter() {
  const notes: string[] = [];
  return t.router({
    greet: t.procedure.input(text).query(({ input }) => `hello ${input}`),
    whoami: t.procedure.query(({ ctx }) => ({ host: ctx.host, ip: ctx.ip })),
    notes: t.procedure.query(() => notes),
    add: t.procedure.input(note).mutation(({ input }) => {
      notes.push(input.text);
      return notes.length;
    }),
    missing: t.procedure.query(() => {
      throw new TRPCError({ code: "NOT_FOUND", message: "no such note" });
    }),
  });
}

const input = (value: unknown) => encodeURIComponent(JSON.stringify(value));

describe(`tRPC's Express adapter on cog-http/express (${engine} engine)`, { skip: engine === "native" && nativeSkip }, () => {
  test("queries, mutations, batches, context and errors answer as on Express 5", async () => {
    const json = { "content-type": "application/json" };
    const answers = await same(
      (app, e) => {
        // Express's error page without a stack (whose frames name each server's own classes).
        app.set("env", "production");
        app.use("/trpc", createExpressMiddleware({ router: makeRouter(), createContext }));
        // The same, with the body parsed by express.json() first (tRPC then takes req.body).
        app.use("/parsed", e.json(), createExpressMiddleware({ router: makeRouter(), createContext }));
      },
      [
        { path: `/trpc/greet?input=${input("tobi")}` },
        { path: "/trpc/whoami" },
        { method: "POST", path: "/trpc/add", headers: json, body: JSON.stringify({ text: "first" }) },
        { method: "POST", path: "/parsed/add", headers: json, body: JSON.stringify({ text: "parsed" }) },
        { path: "/trpc/notes" },
        { path: `/trpc/greet,notes?batch=1&input=${input({ 0: "batch" })}` },
        { path: `/trpc/greet?input=${input("")}` },
        { path: "/trpc/missing" },
        { path: "/trpc/nosuch" },
        { method: "POST", path: "/trpc/greet", headers: json, body: JSON.stringify("wrong method") },
        { method: "POST", path: "/trpc/add", headers: json, body: "{broken" },
      ],
    );
    assert.deepEqual(JSON.parse(answers[0]!.body), { result: { data: "hello tobi" } });
    assert.deepEqual(JSON.parse(answers[1]!.body), { result: { data: { host: "127.0.0.1", ip: "127.0.0.1" } } });
    assert.deepEqual(JSON.parse(answers[2]!.body), { result: { data: 1 } });
    assert.deepEqual(JSON.parse(answers[3]!.body), { result: { data: 1 } });
    assert.deepEqual(JSON.parse(answers[4]!.body), { result: { data: ["first"] } });
    assert.deepEqual(JSON.parse(answers[5]!.body), [{ result: { data: "hello batch" } }, { result: { data: ["first"] } }]);
    assert.deepEqual(
      answers.slice(6).map((answer) => answer.status),
      [400, 404, 404, 405, 400],
    );
  });
});

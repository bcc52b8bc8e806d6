// A NestJS app, unchanged, on cog-http/express through `cog-http/nest`'s CogExpressAdapter, against
// the same app on Nest's own ExpressAdapter over Express 5 from npm: the same requests over real
// sockets, the same answers (status, headers, body; test/express-pair.ts). The app uses what Nest
// apps use of Express: controllers with params, queries, bodies and pipes, exceptions and their
// JSON answers, a class middleware and an Express one, a guard, an interceptor, a global prefix,
// @Header, @HttpCode, @Redirect, StreamableFile, @Res() passthrough, and the 404 of an unknown
// route. Decorators are applied as calls (the test runner compiles without
// `experimentalDecorators`); Nest reads the same metadata either way.
import "reflect-metadata";
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  Body,
  Controller,
  Delete,
  ForbiddenException,
  Get,
  Header,
  HttpCode,
  Inject,
  Injectable,
  Module,
  NotFoundException,
  Param,
  ParseIntPipe,
  Post,
  Query,
  Redirect,
  Req,
  Res,
  StreamableFile,
  UseGuards,
  UseInterceptors,
  type CallHandler,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  type MiddlewareConsumer,
  type NestInterceptor,
  type NestMiddleware,
} from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { ExpressAdapter } from "@nestjs/platform-express";
import { map, type Observable } from "rxjs";
import cogExpress from "../../../src/express/index.js";
import { CogExpressAdapter } from "../../../src/nest/index.js";
import { portOf, sameAnswers, type Listening } from "../../express-pair.js";
import { engine, nativeSkip } from "../../helpers.js";

type Any = any;

/** Applies method decorators to `target[name]`, as TypeScript's `@Decorator` above a method would. */
function decorate(target: object, name: string, ...decorators: MethodDecorator[]): void {
  const descriptor = Object.getOwnPropertyDescriptor(target, name)!;
  for (const decorator of decorators.reverse()) decorator(target, name, descriptor);
}

class CatsService {
  private readonly cats = new Map<number, { id: number; name: string }>([[1, { id: 1, name: "Tom" }]]);
  all() {
    return [...this.cats.values()];
  }
  one(id: number) {
    return this.cats.get(id);
  }
  add(name: string) {
    const cat = { id: this.cats.size + 1, name };
    this.cats.set(cat.id, cat);
    return cat;
  }
  remove(id: number) {
    return this.cats.delete(id);
  }
}

Injectable()(CatsService);

class KeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.switchToHttp().getRequest().get("x-key") === "secret") return true;
    throw new ForbiddenException("a key is needed");
  }
}

class Wrap implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(map((data) => ({ data })));
  }
}

class Seen implements NestMiddleware {
  use(req: Any, res: Any, next: () => void) {
    res.setHeader("X-Seen", `${req.method} ${req.originalUrl}`);
    next();
  }
}

class CatsController {
  constructor(private readonly cats: CatsService) {}
  list() {
    return this.cats.all();
  }
  search(name: string, limit: number) {
    return { name, limit };
  }
  secret() {
    return "the secret";
  }
  wrapped() {
    return [1, 2];
  }
  moved() {}
  file() {
    return new StreamableFile(Buffer.from("file bytes"), { type: "text/plain", disposition: 'attachment; filename="cats.txt"' });
  }
  raw(req: Any, res: Any) {
    res.status(202).json({ ip: req.ip, hostname: req.hostname, protocol: req.protocol, path: req.path, accepts: req.accepts(["json", "html"]) });
  }
  fails() {
    throw new Error("not for the client");
  }
  // After the fixed paths: Nest registers routes in the order of the class's methods.
  one(id: number) {
    const cat = this.cats.one(id);
    if (cat === undefined) throw new NotFoundException(`no cat ${id}`);
    return cat;
  }
  create(body: { name?: unknown }) {
    if (typeof body.name !== "string") throw new ForbiddenException("a name is needed");
    return this.cats.add(body.name);
  }
  remove(id: number) {
    this.cats.remove(id);
  }
}
const cats = CatsController.prototype;
Controller("cats")(CatsController);
Inject(CatsService)(CatsController, undefined, 0);
decorate(cats, "list", Get(), Header("Cache-Control", "no-store"));
decorate(cats, "search", Get("search"));
Query("name")(cats, "search", 0);
Query("limit", ParseIntPipe)(cats, "search", 1);
decorate(cats, "secret", Get("secret"), UseGuards(KeyGuard));
decorate(cats, "wrapped", Get("wrapped"), UseInterceptors(Wrap));
decorate(cats, "moved", Get("moved"), Redirect("/api/cats", 301));
decorate(cats, "file", Get("file"));
decorate(cats, "raw", Get("raw"));
Req()(cats, "raw", 0);
Res()(cats, "raw", 1);
decorate(cats, "fails", Get("fails"));
decorate(cats, "one", Get(":id"));
Param("id", ParseIntPipe)(cats, "one", 0);
decorate(cats, "create", Post());
Body()(cats, "create", 0);
decorate(cats, "remove", Delete(":id"), HttpCode(204));
Param("id", ParseIntPipe)(cats, "remove", 0);

class AppModule {
  configure(consumer: MiddlewareConsumer) {
    consumer.apply(Seen).forRoutes("cats");
  }
}
Module({ controllers: [CatsController], providers: [CatsService] })(AppModule);

async function start(adapter: ExpressAdapter): Promise<{ app: INestApplication; port: number }> {
  const app = await NestFactory.create(AppModule, adapter, { logger: false });
  app.setGlobalPrefix("api");
  // An Express middleware, as Nest apps add them.
  app.use((_req: Any, res: Any, next: () => void) => {
    res.set("X-Express", "yes");
    next();
  });
  await app.listen(0, "127.0.0.1");
  return { app, port: await portOf(app.getHttpServer() as Listening) };
}

describe(`NestJS on cog-http/express (${engine} engine)`, { skip: engine === "native" && nativeSkip }, () => {
  test("answers as on Nest's own ExpressAdapter over Express 5", async () => {
    const theirs = await start(new ExpressAdapter());
    const served = cogExpress({ engine });
    let seen: object | undefined;
    served.use((req: Any, _res: Any, next: () => void) => {
      seen ??= Object.getPrototypeOf(req) as object;
      next();
    });
    const ours = await start(new CogExpressAdapter(served));
    try {
      const json = { "content-type": "application/json" };
      const answers = await sameAnswers(theirs.port, ours.port, [
        { path: "/api/cats" },
        { path: "/api/cats/1" },
        { path: "/api/cats/9" },
        { path: "/api/cats/abc" },
        { path: "/api/cats/search?name=Tom&limit=3" },
        { path: "/api/cats/search?name=Tom&limit=x" },
        { method: "POST", path: "/api/cats", headers: json, body: '{"name":"Felix"}' },
        { method: "POST", path: "/api/cats", headers: json, body: '{"name":' },
        { method: "POST", path: "/api/cats", headers: json, body: "{}" },
        { path: "/api/cats/2" },
        { method: "DELETE", path: "/api/cats/2" },
        { path: "/api/cats/2" },
        { path: "/api/cats/secret" },
        { path: "/api/cats/secret", headers: { "x-key": "secret" } },
        { path: "/api/cats/wrapped" },
        { path: "/api/cats/moved" },
        { path: "/api/cats/file" },
        { path: "/api/cats/raw", headers: { accept: "text/html" } },
        { path: "/api/cats/fails" },
        { path: "/api/nowhere" },
        { method: "HEAD", path: "/api/cats" },
      ]);
      // Served by Cog's engine: a request keeps the engine's class, with the app's members laid over it (src/express/prototypes.ts).
      assert.ok(
        seen !== undefined && seen !== served.request && Object.prototype.isPrototypeOf.call(served.request, seen) === false,
        "a request of Cog's engine",
      );
      // What the answers say, beyond being Express's: Nest's routing, pipes, DI and filters ran.
      const [list, one, missing, bad] = answers;
      assert.equal(list!.status, 200);
      assert.deepEqual(JSON.parse(list!.body), [{ id: 1, name: "Tom" }]);
      assert.ok(list!.headers.some(([name, value]) => name === "x-seen" && value === "GET /api/cats"));
      assert.ok(list!.headers.some(([name, value]) => name === "x-express" && value === "yes"));
      assert.deepEqual(JSON.parse(one!.body), { id: 1, name: "Tom" });
      assert.deepEqual([missing!.status, JSON.parse(missing!.body).message], [404, "no cat 9"]);
      assert.equal(bad!.status, 400);
      assert.deepEqual([answers[6]!.status, JSON.parse(answers[6]!.body)], [201, { id: 2, name: "Felix" }]);
      assert.equal(answers[7]!.status, 400, "bad JSON is Nest's 400");
      assert.equal(answers[10]!.status, 204);
      assert.deepEqual([answers[12]!.status, answers[13]!.body], [403, "the secret"]);
      assert.deepEqual(JSON.parse(answers[14]!.body), { data: [1, 2] });
      assert.equal(answers[16]!.body, "file bytes");
      assert.equal(answers[17]!.status, 202);
      assert.deepEqual(JSON.parse(answers[18]!.body), { statusCode: 500, message: "Internal server error" });
      assert.equal(answers[19]!.status, 404);
    } finally {
      await Promise.all([theirs.app.close(), ours.app.close()]);
    }
  });

  test("Nest's app.close() stops the engine: the port refuses connections", async () => {
    const ours = await start(new CogExpressAdapter({ engine }));
    const answer = await fetch(`http://127.0.0.1:${ours.port}/api/cats/1`);
    assert.equal(answer.status, 200);
    await ours.app.close();
    await assert.rejects(fetch(`http://127.0.0.1:${ours.port}/api/cats/1`));
  });
});

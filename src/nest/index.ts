// `cog-http/nest`: NestJS on Cog's engines. Nest's own `ExpressAdapter` serves an Express app
// it is handed, and makes the server it listens on with `http.createServer(app)`: that one step
// is what this adapter changes, so that a Nest app runs on an app made by `cog-http/express`
// and listens on the engine that app was made for. Everything else (routing, body parsers,
// CORS, static assets, views, versioning, hooks) is Nest's own adapter, unchanged.
//
//   import express from "cog-http/express";
//   import { CogExpressAdapter } from "cog-http/nest";
//   const app = await NestFactory.create(AppModule, new CogExpressAdapter(express({ engine: "native" })));
//   await app.listen(3000);
import type { Server } from "node:http";
import type { NestApplicationOptions } from "@nestjs/common";
import { ExpressAdapter } from "@nestjs/platform-express";
import express from "../express/index.js";
import { createServer, SERVING, type CogServer, type ExpressOptions } from "../express/server.js";
import type { Application } from "../express/types.js";

/** Nest's ExpressAdapter over an app of `cog-http/express`, listening on that app's engine. */
export class CogExpressAdapter extends ExpressAdapter {
  /** Whether Nest's `forceCloseConnections` asked for open connections to be cut on close. */
  private forceClose = false;

  /**
   * `app`: an app made with `express(options)` of `cog-http/express` (its options say which
   * engine serves it); or the options to make one with (default: the node engine).
   */
  constructor(app: Application | ExpressOptions = {}) {
    super(typeof app === "function" ? app : express(app));
  }

  /**
   * The server Nest listens on and closes: the app's engine, with Nest's `httpsOptions` as its
   * `tls`. Nest's own adapter does the rest it does here (`return503OnClosing`); its server
   * for it, node:http's, is made and dropped, never listening.
   */
  override initHttpServer(options: NestApplicationOptions): void {
    const { httpsOptions, forceCloseConnections, ...rest } = options ?? {};
    super.initHttpServer(rest);
    const app = this.getInstance() as Application & { [SERVING]?: ExpressOptions };
    const serving = app[SERVING] ?? {};
    this.setHttpServer(createServer(app, httpsOptions ? { ...serving, tls: httpsOptions as ExpressOptions["tls"] } : serving) as Server);
    this.forceClose = forceCloseConnections === true;
  }

  /**
   * Stops listening; resolves once the requests in flight are answered (with Nest's
   * `forceCloseConnections`, on the node engine, cut at once).
   */
  override close(): Promise<unknown> | undefined {
    const closing = super.close();
    if (this.forceClose) (this.getHttpServer() as Server | CogServer as Server).closeAllConnections?.();
    return closing;
  }
}

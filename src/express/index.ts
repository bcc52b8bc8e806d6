// `cog-http/express`: Express 5's API on Cog's engines. An entry of its own, so that the
// packages Express is made of (router, body-parser, send, accepts…) load only for apps that use it.
//
//   import express from "cog-http/express";        // or: const express = require("cog-http/express")
//   const app = express({ engine: "native" });
//
// `require` gets the `express` function itself (its "module.exports" export), with `Router`,
// `json`, `static`… on it, as Express's own module.
import RouterModule from "router";
import serveStaticModule from "serve-static";
import * as app from "./application.js";
import * as bodyParsers from "./body-parsers.js";
import { markBases } from "./prototypes.js";
import * as req from "./request.js";
import * as res from "./response.js";
import { Router as CogRouter } from "./router.js";
import * as server from "./server.js";
import type { ExpressFactory, Router as RouterType } from "./types.js";

markBases(req.request, res.response);

/** Makes an Express 5 app; `express({ engine: "native" })` serves it on Cog's native engine. */
const express = Object.assign(app.createApplication, {
  application: app.application,
  request: req.request,
  response: res.response,
  Route: RouterModule.Route,
  Router: CogRouter,
  json: bodyParsers.json,
  raw: bodyParsers.raw,
  static: serveStaticModule,
  text: bodyParsers.text,
  urlencoded: bodyParsers.urlencoded,
  createServer: server.createServer,
}) as unknown as ExpressFactory;

export default express;
export { express as "module.exports" };

// The named exports, typed as the members of `express` are.
const { application, request, response, Route, Router, json, raw, text, urlencoded, createServer } = express;
const serveStatic = express.static;
export { application, request, response, Route, Router, json, raw, serveStatic as static, text, urlencoded, createServer };
export type * from "./types.js";
// Router is a type as well as a value, as in @types/express (`const router: Router = Router()`).
export type Router = RouterType;

// `cog-http/express`: Express 5's API on Cog's engines. An entry of its own, so that the
// packages Express is made of (router, body-parser, send, accepts…) load only for apps that use it.
//
//   import express from "cog-http/express";        // or: const express = require("cog-http/express")
//   const app = express({ engine: "native" });
//
// `require` gets the `express` function itself (its "module.exports" export), with `Router`,
// `json`, `static`… on it, as Express's own module.
import { json, raw, text, urlencoded } from "body-parser";
import Router from "router";
import serveStatic from "serve-static";
import { application, createApplication } from "./application.js";
import { markBases } from "./prototypes.js";
import { request } from "./request.js";
import { response } from "./response.js";
import { createServer } from "./server.js";
import type { Express, ExpressFactory } from "./types.js";

markBases(request, response);

const Route = Router.Route;

/** Makes an Express 5 app; `express({ engine: "native" })` serves it on Cog's native engine. */
const express = Object.assign(createApplication, {
  application,
  request,
  response,
  Route,
  Router,
  json,
  raw,
  static: serveStatic,
  text,
  urlencoded,
  createServer,
}) as unknown as ExpressFactory;

export default express;
export { express as "module.exports" };
export { application, request, response, Route, Router, json, raw, serveStatic as static, text, urlencoded, createServer };
export type { Express };
export type * from "./types.js";

// cog-http/express on Cog's node engine: the same Express app as express.mjs, only the import changed.
import express from "../../dist/express/index.js";
import { summarize } from "../lib/validation.mjs";
import { Order } from "../lib/validation-zod.mjs";
import { buildExpressApp } from "./express-app.mjs";

buildExpressApp(express, "express-cog", { validation: { Order, summarize } }).listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));

// cog-http/express on Cog's native engine: the same Express app as express.mjs, only the import
// changed and `express()` made with `{ engine: "native" }`.
import cogExpress from "../../dist/express/index.js";
import { summarize } from "../lib/validation.mjs";
import { Order } from "../lib/validation-zod.mjs";
import { buildExpressApp } from "./express-app.mjs";

const express = Object.assign((options) => cogExpress({ engine: "native", ...options }), cogExpress);
buildExpressApp(express, "express-cog-native", { validation: { Order, summarize } }).listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));

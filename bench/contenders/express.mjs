// Express 5, written as the seed's Express app (cookie-parser, express.json).
import express from "express";
import { summarize } from "../lib/validation.mjs";
import { Order } from "../lib/validation-zod.mjs";
import { buildExpressApp } from "./express-app.mjs";

buildExpressApp(express, "express", { validation: { Order, summarize } }).listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));

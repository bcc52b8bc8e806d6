// Express 5 running the arena (express-app.mjs).
import express from "express";
import { PORT } from "./common.mjs";
import { buildExpressArena } from "./express-app.mjs";

buildExpressArena(express).listen(PORT, "127.0.0.1", () => console.log("ready"));

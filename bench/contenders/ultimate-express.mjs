// ultimate-express: the Express API on uWebSockets.js, running the same app as express.mjs.
import { requireNativeUws } from "./uws-native.mjs";

requireNativeUws();
const { default: express } = await import("ultimate-express");
const { buildExpressApp } = await import("./express-app.mjs");
buildExpressApp(express, "ultimate-express").listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));

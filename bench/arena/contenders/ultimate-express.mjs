// ultimate-express (the Express API on uWebSockets.js) running the same arena app as Express.
import { requireNativeUws } from "../../contenders/uws-native.mjs";

requireNativeUws();
const { default: express } = await import("ultimate-express");
const { PORT } = await import("./common.mjs");
const { buildExpressArena } = await import("./express-app.mjs");
buildExpressArena(express).listen(PORT, "127.0.0.1", () => console.log("ready"));

// The app bench/otel-cost.mjs times: GET /users/:id answering {"id"} in JSON, on Cog (dist/),
// on the engine COG_ENGINE names.
import { Cog } from "../../dist/index.js";

const app = new Cog({ engine: process.env.COG_ENGINE ?? "node" });
app.get("/users/:id", (req, res) => res.json({ id: req.params.id }));
await app.listen(Number(process.env.PORT), "127.0.0.1");
process.once("SIGTERM", () => process.exit(0));
console.log("ready");

// Cog's WebSocket contender (engine from COG_ENGINE: "node" for cog, "native" for cog-native):
// /echo echoes every message; on /fanout every socket subscribes to "fanout" and what one sends
// is published to the others.
import { Cog, redisBroker } from "../../../dist/index.js";

// cog-redis: several processes, each on its own port, sharing a Redis (COG_REDIS_URL).
const broker = process.env.COG_REDIS_URL === undefined ? undefined : redisBroker(process.env.COG_REDIS_URL);
const app = new Cog({ engine: process.env.COG_ENGINE ?? "node", logErrors: false, broker });
app.ws("/echo", { message: (ws, data, isBinary) => void ws.send(data, isBinary) });
app.ws("/fanout", {
  open: (ws) => ws.subscribe("fanout"),
  message: (ws, data, isBinary) => ws.publish("fanout", data, isBinary),
});
await app.listen(Number(process.env.PORT), "127.0.0.1");
console.log("ready");

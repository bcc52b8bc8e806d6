// hyper-express (on uWebSockets.js): /echo and /fanout (see cog.mjs).
import HyperExpress from "hyper-express";

const app = new HyperExpress.Server();
app.ws("/echo", (ws) => ws.on("message", (message, isBinary) => ws.send(message, isBinary)));
app.ws("/fanout", (ws) => {
  ws.subscribe("fanout");
  ws.on("message", (message, isBinary) => ws.publish("fanout", message, isBinary));
});
await app.listen(Number(process.env.PORT), "127.0.0.1");
console.log("ready");

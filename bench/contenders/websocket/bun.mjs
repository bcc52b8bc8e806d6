// Bun.serve's WebSockets: /echo and /fanout (see cog.mjs).
Bun.serve({
  port: Number(process.env.PORT),
  hostname: "127.0.0.1",
  fetch(req, server) {
    const path = new URL(req.url).pathname;
    if (server.upgrade(req, { data: { path } })) return undefined;
    return new Response("Upgrade Required", { status: 426 });
  },
  websocket: {
    open(ws) {
      if (ws.data.path === "/fanout") ws.subscribe("fanout");
    },
    message(ws, message) {
      if (ws.data.path === "/echo") ws.send(message);
      else ws.publish("fanout", message);
    },
  },
});
console.log("ready");

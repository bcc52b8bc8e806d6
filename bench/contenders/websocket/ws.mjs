// Bare `ws` on node:http: /echo and /fanout (see cog.mjs); the topic is a Set of sockets.
import { createServer } from "node:http";
import { WebSocketServer } from "ws";

const echo = new WebSocketServer({ noServer: true, clientTracking: false });
const fanout = new WebSocketServer({ noServer: true, clientTracking: false });
const subscribers = new Set();
const server = createServer((_req, res) => res.writeHead(426).end());
server.on("upgrade", (req, socket, head) => {
  if (req.url === "/echo") return echo.handleUpgrade(req, socket, head, (ws) => ws.on("message", (data, isBinary) => ws.send(data, { binary: isBinary })));
  if (req.url === "/fanout") {
    return fanout.handleUpgrade(req, socket, head, (ws) => {
      subscribers.add(ws);
      ws.on("close", () => subscribers.delete(ws));
      ws.on("message", (data, isBinary) => {
        for (const other of subscribers) if (other !== ws) other.send(data, { binary: isBinary });
      });
    });
  }
  socket.destroy();
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));

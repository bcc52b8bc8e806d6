// A chat: open http://localhost:3000/?name=ada in two tabs. Run several processes on other ports
// with REDIS_URL set and the rooms span them all.
import { Cog, HttpError, redisBroker } from "../src/index.js";

const app = new Cog({ broker: process.env.REDIS_URL === undefined ? undefined : redisBroker(process.env.REDIS_URL), engine: "auto" });

const page = `<!doctype html><meta charset="utf-8"><title>Cog chat</title>
<ul id="log"></ul><form><input id="text" autofocus><button>Send</button></form>
<script>
  const name = new URLSearchParams(location.search).get("name") ?? "guest";
  const socket = new WebSocket(\`ws://\${location.host}/chat/lobby?name=\${encodeURIComponent(name)}\`);
  const say = (line) => document.getElementById("log").insertAdjacentHTML("beforeend", "<li></li>") || (document.getElementById("log").lastChild.textContent = line);
  socket.onmessage = (event) => say(event.data);
  document.querySelector("form").onsubmit = (event) => {
    event.preventDefault();
    const input = document.getElementById("text");
    socket.send(input.value);
    say("me: " + input.value);
    input.value = "";
  };
</script>`;

app.get("/", (_req, res) => res.type("html").send(page));

app.ws("/chat/:room", {
  upgrade: (req) => {
    const name = req.query.name;
    if (typeof name !== "string" || name === "") throw new HttpError(401, "say who you are: ?name=…");
    return { room: req.params.room!, name };
  },
  open: (ws) => {
    ws.subscribe(ws.data.room);
    ws.publish(ws.data.room, `${ws.data.name} joined`);
  },
  message: (ws, data) => ws.publish(ws.data.room, `${ws.data.name}: ${String(data)}`),
  close: (ws) => app.publish(ws.data.room, `${ws.data.name} left`),
});

const { port } = await app.listen(Number(process.env.PORT ?? 3000));
console.log(`chat on http://localhost:${port}/?name=ada (${app.engine} engine)`);

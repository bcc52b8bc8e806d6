// Bare uWebSockets.js: /echo and /fanout (see cog.mjs), as tight as its API allows.
import { requireNativeUws } from "../uws-native.mjs";

const uWS = requireNativeUws();
const app = uWS.App();
app.ws("/echo", { message: (ws, message, isBinary) => void ws.send(message, isBinary) });
app.ws("/fanout", {
  open: (ws) => ws.subscribe("fanout"),
  message: (ws, message, isBinary) => void ws.publish("fanout", message, isBinary),
});
app.listen("127.0.0.1", Number(process.env.PORT), (socket) => {
  if (!socket) {
    console.error(`uws could not listen on port ${process.env.PORT}`);
    process.exit(1);
  }
  console.log("ready");
});

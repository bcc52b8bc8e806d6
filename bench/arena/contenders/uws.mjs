// Bare uWebSockets.js, hand-written, for the upload scenario only: the ceiling on uWS.js for
// a body read as it arrives (onData) and its bytes counted, as bare node:http is on Node.
import { requireNativeUws } from "../../contenders/uws-native.mjs";

const uWS = requireNativeUws();
const PORT = Number(process.env.PORT);

uWS
  .App()
  .post("/upload", (res) => {
    let bytes = 0;
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    res.onData((chunk, last) => {
      bytes += chunk.byteLength;
      if (last && !aborted) res.cork(() => res.writeHeader("content-type", "text/plain; charset=utf-8").end(String(bytes)));
    });
  })
  .any("/*", (res) => {
    res.cork(() => res.writeStatus("404 Not Found").writeHeader("content-type", "text/plain; charset=utf-8").end("Not Found"));
  })
  .listen("127.0.0.1", PORT, (token) => {
    if (!token) {
      console.error(`uWS could not listen on ${PORT}`);
      process.exit(1);
    }
    console.log("ready");
  });

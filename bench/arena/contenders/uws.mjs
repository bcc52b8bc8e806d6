// Bare uWebSockets.js, hand-written: the ceiling on uWS.js for upload (a body read as it arrives,
// onData, and its bytes counted, as bare node:http is on Node), for the fixed-rate scenarios and
// idle (the baseline's GET and POST: the standing cost of a uWS.js server), and for held
// connections (/delay/:ms, bench/arena/held.mjs).
import { requireNativeUws } from "../../contenders/uws-native.mjs";

const uWS = requireNativeUws();
const PORT = Number(process.env.PORT);
const TEXT = "text/plain; charset=utf-8";

/** A body read whole as it arrives; `done` gets it unless the client went away first. */
function readBody(res, done) {
  const chunks = [];
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((chunk, last) => {
    // A copy: uWS.js detaches the chunk once this callback returns.
    chunks.push(Buffer.from(chunk.slice(0)));
    if (last && !aborted) done(Buffer.concat(chunks).toString("utf8"));
  });
}

const text = (res, body, status = "200 OK") => res.cork(() => res.writeStatus(status).writeHeader("content-type", TEXT).end(body));

uWS
  .App()
  .get("/baseline11", (res, req) => {
    text(res, String(Number(req.getQuery("a")) + Number(req.getQuery("b"))));
  })
  .post("/baseline11", (res, req) => {
    const sum = Number(req.getQuery("a")) + Number(req.getQuery("b"));
    readBody(res, (body) => text(res, String(sum + Number(body))));
  })
  .get("/delay/:ms", (res, req) => {
    const raw = req.getParameter(0);
    const ms = Number(raw);
    if (!/^\d+$/.test(raw) || ms > 10_000) return text(res, "Bad Request", "400 Bad Request");
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    setTimeout(() => {
      if (!aborted) text(res, String(ms));
    }, ms);
  })
  .post("/upload", (res) => {
    let bytes = 0;
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    res.onData((chunk, last) => {
      bytes += chunk.byteLength;
      if (last && !aborted) res.cork(() => res.writeHeader("content-type", TEXT).end(String(bytes)));
    });
  })
  .any("/*", (res) => {
    text(res, "Not Found", "404 Not Found");
  })
  .listen("127.0.0.1", PORT, (token) => {
    if (!token) {
      console.error(`uWS could not listen on ${PORT}`);
      process.exit(1);
    }
    console.log("ready");
  });

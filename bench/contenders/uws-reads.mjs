// The bare uWebSockets.js server, reading the URL, query and headers of every request as a
// framework must (see uws.mjs): the ceiling for any framework on uWS.js.
process.env.UWS_CONTENDER = "uws-reads";
await import("./uws.mjs");

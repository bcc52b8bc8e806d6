// Cog on uWebSockets.js: the same app as cog.mjs, handlers unchanged, engine "uws".
process.env.COG_CONTENDER = "cog-uws";
await import("./cog.mjs");

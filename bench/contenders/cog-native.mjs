// Cog on its native engine: the same app as cog.mjs, handlers unchanged, engine "native".
process.env.COG_CONTENDER = "cog-native";
await import("./cog.mjs");

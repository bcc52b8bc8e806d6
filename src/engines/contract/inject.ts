import { parseSetCookie } from "cookie";
import type { InjectOptions, InjectResponse } from "./engine.js";

// What `app.inject` reads the same way on every engine: its options and the cookies it answers.

/** `app.inject`'s options, a string being a GET of that URL. */
export function injectOptions(options: InjectOptions | string): InjectOptions {
  return typeof options === "string" ? { url: options } : options;
}

/** Each Set-Cookie of a response parsed, on every engine the same way (sameSite as `setCookie` takes it: "lax"). */
export function parseCookies(setCookie: string | string[] | number | undefined): InjectResponse["cookies"] {
  if (setCookie === undefined) return [];
  const lines = Array.isArray(setCookie) ? setCookie : [String(setCookie)];
  return lines.map((line) => parseSetCookie(line) as unknown as InjectResponse["cookies"][number]);
}

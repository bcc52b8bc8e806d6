import { sign, unsign } from "cookie-signature";

/**
 * Signed cookies in the format Express and cookie-parser use (`s:<value>.<HMAC-SHA256>`, via
 * the cookie-signature package, which compares in constant time), so a cookie signed by an
 * Express app with the same secret reads the same here, and the other way round.
 */

/** The app's `secret` option as a list: the first signs, every one is tried when checking (rotate by prepending). */
export function secretsOf(secret: string | readonly string[] | undefined): readonly string[] {
  if (secret === undefined) return [];
  const list = typeof secret === "string" ? [secret] : [...secret];
  for (const s of list) if (typeof s !== "string" || s === "") throw new TypeError("secret must be a non-empty string or a list of them");
  return list;
}

/** A cookie value signed with the first secret. */
export function signCookie(value: string, secrets: readonly string[]): string {
  const secret = secrets[0];
  if (secret === undefined) throw new TypeError('Signing a cookie needs a secret: new Cog({ secret: "…" })');
  return `s:${sign(value, secret)}`;
}

/** The signed cookies among `cookies`: the value where a secret's signature holds, false where none does. */
export function unsignCookies(cookies: Record<string, string | undefined>, secrets: readonly string[]): Record<string, string | false> {
  const signed: Record<string, string | false> = Object.create(null);
  if (secrets.length === 0) return signed;
  for (const name in cookies) {
    const value = cookies[name];
    if (value === undefined || !value.startsWith("s:")) continue;
    let verified: string | false = false;
    for (const secret of secrets) {
      verified = unsign(value.slice(2), secret);
      if (verified !== false) break;
    }
    signed[name] = verified;
  }
  return signed;
}

/**
 * Where the query of a request's URL starts, read as parseurl's own fast path (its `fastparse`)
 * reads it, without making its Url object: a URL that starts with `/` and has none of the
 * characters that send parseurl to Node's url.parse. parseurl keeps that object on the request
 * (`req._parsedUrl`) so that the next read of the same URL is a lookup; the router and `req.query`
 * read the URL this way instead, and what they cannot read so goes to parseurl.
 *
 * Answers the index of the first `?`, NO_QUERY when there is none, or NOT_PLAIN_URL when parseurl
 * would parse the URL with url.parse (or the URL is not a string).
 */
export const NO_QUERY = -1;
export const NOT_PLAIN_URL = -2;

export function plainQueryIndex(url: unknown): number {
  if (typeof url !== "string" || url.charCodeAt(0) !== 0x2f) return NOT_PLAIN_URL;
  let query = NO_QUERY;
  for (let i = 1; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 0x3f) {
      if (query === NO_QUERY) query = i;
    } else if (c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d || c === 0x20 || c === 0x23 || c === 0xa0 || c === 0xfeff) {
      return NOT_PLAIN_URL;
    }
  }
  return query;
}

/**
 * Options objects checked at registration: a key Cog does not know (another framework's name
 * for it, a typo, a thing in the wrong place) would otherwise be ignored without a word, and the
 * feature it meant silently off. Each unknown key is named with a hint: the one given for it,
 * else the known key it is closest to.
 */
export function refuseUnknownKeys(value: object, known: readonly string[], hints: Readonly<Record<string, string>>, where: string, what: string): void {
  // Keys with the same hint are named together, the hint once.
  const byHint = new Map<string, string[]>();
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const hint = (Object.hasOwn(hints, key) ? hints[key] : closest(key, known)) ?? "";
    byHint.set(hint, [...(byHint.get(hint) ?? []), key]);
  }
  if (byHint.size === 0) return;
  const problems = [...byHint].map(
    ([hint, keys]) => `unknown ${what}${keys.length > 1 ? "s" : ""} ${keys.map((key) => `"${key}"`).join(", ")}${hint === "" ? "" : `: ${hint}`}`,
  );
  throw new TypeError(`${where}: ${problems.join("; ")} (${what}s are ${known.join(", ")})`);
}

/** "did you mean x?" for a key within two edits of a known one (`respone` -> `response`). */
function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best === undefined ? undefined : `did you mean ${best}?`;
}

// Levenshtein distance, on the few short keys of an options object: at registration only.
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

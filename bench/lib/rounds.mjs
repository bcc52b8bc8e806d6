// The order contenders are timed in within a round: rotated by one each round, so that none is
// always first (after a pause) or last (after the others warmed the machine).

/** `list` rotated left by `by` places (a round's number). */
export function rotate(list, by) {
  if (list.length === 0) return list;
  const k = by % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

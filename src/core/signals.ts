/** The signals a process manager (systemd, Docker, Kubernetes, a terminal's Ctrl-C) stops a server with. */
export const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;

/**
 * On the first SIGTERM or SIGINT, runs `drain` (stop accepting, let in-flight requests finish),
 * then exits 0, or 1 if draining failed. A second signal during the drain is left to its default
 * action (the process ends at once), as a second Ctrl-C is expected to. Returns a function that
 * removes the handlers (when the app is closed another way).
 */
export function drainOnSignals(drain: (signal: string) => Promise<void>): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    remove();
    drain(signal).then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`cog: draining on ${signal} failed:`, err);
        process.exit(1);
      },
    );
  };
  const remove = (): void => {
    for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal);
  };
  for (const signal of STOP_SIGNALS) process.once(signal, onSignal);
  return remove;
}

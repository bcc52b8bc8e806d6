import type { CogRequest } from "../request.js";
import type { CogResponse } from "../response.js";

/** The app's entry point for one request, called by an engine. */
export type Dispatch = (req: CogRequest, res: CogResponse) => void;

/** Where a server listens, once it does. */
export interface Address {
  readonly host: string;
  readonly port: number;
}

/**
 * What the app needs from an engine (node:http today; uWebSockets.js or a
 * native one later): accept connections, turn bytes into requests the
 * dispatch understands, and stop gracefully. Handlers and the router never
 * see the engine.
 */
export interface Engine {
  listen(port: number, host: string | undefined): Promise<Address>;
  /** Stops accepting, lets in-flight requests finish, and force-closes what is left after `drainMs`. */
  close(drainMs: number): Promise<void>;
}

import type { Limits } from "../../limits.js";
import { withSettings, type CogRequest, type RequestSettings } from "../../request.js";
import type { CogResponse } from "../../response.js";
import type { Address, Dispatch, Engine } from "../engine.js";
import { EVENT_ABORT, loadNative, methodNames, type NativeAddon } from "./load.js";
import { NativeRequest } from "./request.js";
import { NativeResponse } from "./response.js";

/**
 * Cog's native engine: an HTTP/1.1 server written in Rust (native/), run as
 * a Node-API addon on Node's own event loop. It parses and frames requests
 * (as strictly as node:http), applies the head, body and timeout limits,
 * and writes responses in request order; this class hands its requests to
 * the app. Like the uws engine, its `req`/`res` carry every Cog helper but
 * are not Node streams.
 */
export class NativeEngine implements Engine {
  private addon: NativeAddon | null = null;
  private server = -1;
  /** Method names by the number the engine passes. */
  private methods: string[] = [];
  /** Responses the app has not finished, by request id: for abort and drain events, and `close`. */
  private readonly inFlight = new Map<number, NativeResponse>();
  private idle: (() => void) | null = null;
  private readonly Request: typeof NativeRequest;

  constructor(
    private readonly dispatch: Dispatch,
    private readonly limits: Limits,
    settings: RequestSettings,
    private readonly strict: boolean,
  ) {
    this.Request = withSettings(NativeRequest, settings);
  }

  listen(port: number, host: string | undefined): Promise<Address> {
    try {
      const addon = (this.addon = loadNative());
      this.methods = methodNames(addon);
      const limits = this.limits;
      const bind = host ?? "::";
      const [server, bound] = addon.listen(
        {
          host: bind,
          port,
          maxHeaderSize: limits.maxHeaderSize,
          maxHeaders: limits.maxHeaders,
          maxUrlLength: limits.maxUrlLength,
          strict: this.strict,
          bodyLimit: limits.bodyLimit,
          headersTimeout: limits.headersTimeout,
          requestTimeout: limits.requestTimeout,
          keepAliveTimeout: limits.keepAliveTimeout,
          timeoutCheckInterval: limits.timeoutCheckInterval,
        },
        this.onRequest,
        this.onEvent,
      );
      this.server = server;
      return Promise.resolve({ host: bind, port: bound });
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  private readonly onDone = (res: unknown) => {
    const inFlight = this.inFlight;
    if (inFlight.size !== 0 && inFlight.delete((res as NativeResponse).request.id) && inFlight.size === 0) this.idle?.();
  };

  private readonly onRequest = (id: number, method: number, url: string, body: Buffer | undefined, flags: number, problem: string | undefined): void => {
    const request = new this.Request(this.addon!, id, this.methods[method]!, url, flags, body, problem);
    const response = new NativeResponse(this.addon!, request, this.onDone);
    try {
      // Handlers are typed with the node engine's classes; these carry the same helpers.
      this.dispatch(request as unknown as CogRequest, response as unknown as CogResponse);
    } catch (err) {
      // dispatch answers its own errors; anything escaping it is a bug: don't leave the client hanging.
      console.error(err);
      response.destroy();
    }
    // Only unfinished responses are tracked: nothing else can run while this handler does.
    if (!request.gone) this.inFlight.set(id, response);
  };

  private readonly onEvent = (kind: number, id: number): void => {
    const response = this.inFlight.get(id);
    if (response === undefined) return;
    if (kind === EVENT_ABORT) response.aborted();
    else response.onDrain?.();
  };

  /**
   * Stops accepting (idle connections close at once, busy ones after their
   * response; requests arriving meanwhile get the app's 503), waits for
   * in-flight responses, and cuts what is still busy after `drainMs`.
   */
  async close(drainMs: number): Promise<void> {
    const addon = this.addon;
    if (addon === null || this.server === -1) return;
    const server = this.server;
    this.server = -1;
    addon.stopListening(server);
    if (this.inFlight.size > 0) {
      await new Promise<void>((resolve) => {
        const deadline = setTimeout(() => {
          for (const id of addon.destroyConnections(server)) this.inFlight.get(id)?.aborted();
          resolve();
        }, drainMs);
        this.idle = () => {
          clearTimeout(deadline);
          resolve();
        };
      });
      this.idle = null;
    }
    addon.destroyConnections(server);
    addon.dispose(server);
  }
}

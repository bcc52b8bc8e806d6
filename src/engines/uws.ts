import type { Limits } from "../limits.js";
import { withSettings, type CogRequest, type RequestSettings } from "../request.js";
import type { CogResponse } from "../response.js";
import type { Address, Dispatch, Engine } from "./engine.js";
import { loadUws, type UwsHttpRequest, type UwsHttpResponse } from "./uws-load.js";
import { UwsRequest } from "./uws-request.js";
import { UwsResponse } from "./uws-response.js";

/**
 * The uWebSockets.js engine: the same app and handlers, on uWS's C++ HTTP
 * server. Its request and response carry every Cog helper but are not Node
 * streams, so middleware that needs Node's own objects (express.json,
 * morgan…) is node-engine-only. uWS is loaded when `listen` is called, never
 * before, and only as a native build (see uws-load.ts).
 */
export class UwsEngine implements Engine {
  private listenSocket: unknown = null;
  private uwsClose: ((socket: unknown) => void) | null = null;
  /** Responses not yet finished, so `close` can wait for them and cut the stragglers. */
  private readonly inFlight = new Set<UwsResponse>();
  private idle: (() => void) | null = null;
  private readonly Request: typeof UwsRequest;

  constructor(
    private readonly dispatch: Dispatch,
    private readonly limits: Limits,
    settings: RequestSettings,
  ) {
    this.Request = withSettings(UwsRequest, settings);
  }

  listen(port: number, host: string | undefined): Promise<Address> {
    let uws;
    try {
      uws = loadUws(this.limits);
    } catch (err) {
      return Promise.reject(err);
    }
    const app = uws.App();
    const inFlight = this.inFlight;
    const onDone = (res: unknown) => {
      if (inFlight.size !== 0 && inFlight.delete(res as UwsResponse) && inFlight.size === 0) this.idle?.();
    };
    const serve = (method: string | undefined) => (raw: UwsHttpResponse, req: UwsHttpRequest) => {
      const request = new this.Request(req, raw, method);
      const response = new UwsResponse(raw, request, onDone);
      try {
        // Handlers are typed with the node engine's classes; these carry the same helpers (see above).
        this.dispatch(request as unknown as CogRequest, response as unknown as CogResponse);
      } catch (err) {
        // dispatch answers its own errors; anything escaping it must not reach uWS, which would abort.
        console.error(err);
        response.destroy();
      }
      // From here on uWS no longer corks for us, and an unfinished response needs an abort handler.
      // Only unfinished responses are tracked for close(): nothing else can run while this handler does.
      response.corked = false;
      if (!request.gone) {
        inFlight.add(response);
        response.watchAbort();
      }
    };
    // One handler per common method, so the method is known without asking uWS (each call into
    // uWS costs about as much as a small handler). uWS matches these case-sensitively; any
    // other method reaches `any`, which asks.
    app.get("/*", serve("GET")).post("/*", serve("POST")).put("/*", serve("PUT")).del("/*", serve("DELETE"));
    app.patch("/*", serve("PATCH")).head("/*", serve("HEAD")).options("/*", serve("OPTIONS")).any("/*", serve(undefined));
    const bind = host ?? "0.0.0.0";
    return new Promise((resolve, reject) => {
      app.listen(bind, port, (socket) => {
        if (!socket) return reject(new Error(`engine "uws" could not listen on ${bind}:${port}: the port is in use or not allowed`));
        this.listenSocket = socket;
        this.uwsClose = uws.us_listen_socket_close;
        resolve({ host: bind, port: uws.us_socket_local_port(socket) });
      });
    });
  }

  /**
   * Stops accepting, waits for in-flight responses (requests arriving on open
   * connections meanwhile get the app's 503 and `Connection: close`), and cuts
   * what is still busy after `drainMs`. uWS has no handle on idle keep-alive
   * connections: they close at its idle timeout (10 s) or on their next request.
   */
  close(drainMs: number): Promise<void> {
    if (this.listenSocket === null) return Promise.resolve();
    this.uwsClose!(this.listenSocket);
    this.listenSocket = null;
    if (this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const deadline = setTimeout(() => {
        for (const res of [...this.inFlight]) res.destroy();
      }, drainMs);
      this.idle = () => {
        clearTimeout(deadline);
        this.idle = null;
        resolve();
      };
    });
  }
}

import type { EngineHost, ResponseDone } from "../engines/contract/engine.js";
import { chooseEngine, type EngineName } from "../engines/select.js";
import { resolveLimits, type Limits } from "../base/limits.js";
import { RequestLogger } from "../observe/access-log.js";
import { forApp, withRequestHelpers, type InternalRequest, type Request, type RequestSettings } from "../http/request.js";
import { publishError } from "../observe/request-channel.js";
import { TRACED } from "../base/symbols.js";
import { withResponseHelpers, type Response } from "../http/response.js";
import { secretsOf } from "../base/signing.js";
import { OpenStreams } from "../http/sse.js";
import { Answers, HandlerTimeouts } from "./answer.js";
import { Dispatcher } from "./dispatch.js";
import type { Group } from "./group.js";
import { COG_OPTION_KEYS, OPTION_HINTS, checkProtocols, type CogOptions } from "./options.js";
import { refuseUnknownKeys } from "../base/known-keys.js";
import { Reports } from "./report.js";
import { Routes } from "./routes.js";
import { Serving } from "./serving.js";
import { UnansweredWatch } from "./unanswered.js";

/**
 * One app's core, by stage of a request: routes (registered and compiled), dispatch (route
 * lookup, body, chain), answers (errors, 404/405, the handler timeout), serving (listen, workers,
 * signals, close). A face (the API applications write against: `Cog`) makes one and attaches
 * itself: it is the outermost group of routes, and what handlers see as `req.app`. The core
 * knows no face's API, so another face over it needs no change here.
 */
export class AppCore {
  readonly limits: Limits;
  readonly settings: RequestSettings;
  readonly routes: Routes;
  readonly answers: Answers;
  readonly serving: Serving;
  /** What this app's engines talk to (see `EngineHost`). */
  readonly host: EngineHost;
  /** The face serving requests, as `req.app` shows it (set by `attach`). */
  private face: Group<string> | null = null;

  /** Checks every option (a typo fails here, when the app is made, rather than in production). */
  constructor(options: CogOptions) {
    if (typeof options !== "object" || options === null)
      throw new TypeError(`new Cog(options) takes an object of options; got ${options === null ? "null" : typeof options}`);
    refuseUnknownKeys(options, COG_OPTION_KEYS, OPTION_HINTS, "new Cog()", "option");
    const limits = (this.limits = resolveLimits(options));
    const engine: EngineName = chooseEngine(options.engine);
    checkProtocols(options);
    const logErrors = options.logErrors ?? true;
    if (options.broker !== undefined && (options.broker === null || typeof options.broker.publish !== "function"))
      throw new TypeError("broker must be a Broker, such as redisBroker(url)");
    const logger = options.logger === undefined || options.logger === false ? null : new RequestLogger(options.logger, options.trustRequestId ?? false);
    this.settings = {
      trustProxy: options.trustProxy ?? false,
      maxFields: limits.maxFields,
      maxJsonDepth: limits.maxJsonDepth,
      secrets: secretsOf(options.secret),
      logger,
      openStreams: new OpenStreams(),
    };
    const reports = new Reports(logErrors, logger);
    const unanswered = logErrors && process.env.NODE_ENV !== "production" ? new UnansweredWatch((message, req) => reports.warn(message, req)) : null;
    this.routes = new Routes(limits.bodyLimit, options.broker ?? null);
    const answers = (this.answers = new Answers(reports, unanswered, logger));
    const timeouts = new HandlerTimeouts(limits.handlerTimeout, answers, reports);
    const dispatcher = new Dispatcher(this.routes, answers, timeouts, limits, logger);
    const host = {
      dispatch: dispatcher.dispatch,
      fail: (err, req, res) => answers.fail(err, req as Request, res as Response),
      report: (err, req, when) => {
        // An error nothing can answer is published as one the error handling meets, for a reporter.
        const traced = (req as InternalRequest)[TRACED];
        if (traced !== undefined) publishError(traced, err);
        reports.report(err, req as Request, when);
      },
      responseDone: (logger?.finished ?? null) as ResponseDone | null,
      requestClass: (Base) => forApp(withRequestHelpers(Base), this.face!, this.settings, host),
      responseClass: (Base) => withResponseHelpers(Base),
    } as EngineHost;
    // servesWebSockets is defined after, not as a getter in the literal: V8 keeps an object literal with a getter in
    // dictionary mode, and an engine reads `host.dispatch` for every request (a dictionary lookup
    // and a generic load, ~100 instructions a request, where a fast object's is inlined).
    Object.defineProperty(host, "servesWebSockets", { get: () => this.routes.topics !== null, enumerable: true });
    this.host = host;
    this.serving = new Serving(engine, { host, limits, strict: options.strict ?? true, options }, dispatcher, timeouts, this.routes, this.settings.openStreams);
  }

  /** The face over this core: its outermost group of routes, and `req.app`. */
  attach(face: Group<string>): void {
    this.face = face;
    this.routes.root = face;
  }
}

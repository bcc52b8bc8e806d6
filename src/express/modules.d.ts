// The jshttp and pillarjs packages Express 5 is made of ship no types of their own (a few have
// @types packages this project does not need): declared here as loosely as the face uses them.
declare module "router" {
  const Router: any;
  export default Router;
}
declare module "finalhandler" {
  export default function finalhandler(req: any, res: any, options?: { env?: string; onerror?: (err: any) => void }): (err?: any) => void;
}
declare module "accepts" {
  export default function accepts(req: any): any;
}
declare module "type-is" {
  function typeis(req: any, types: string[]): string | false | null;
  namespace typeis {
    /** A Content-Type's match against `types` (what `typeis(req, types)` answers for a request with a body). */
    function is(mediaType: string, types: string[]): string | false;
  }
  export default typeis;
}
declare module "proxy-addr" {
  interface ProxyAddr {
    (req: any, trust: any): string;
    all(req: any, trust?: any): string[];
    compile(value: string | string[]): (addr: string, i: number) => boolean;
  }
  const proxyaddr: ProxyAddr;
  export default proxyaddr;
}
declare module "etag" {
  export default function etag(entity: Buffer | string, options?: { weak?: boolean }): string;
}
declare module "fresh" {
  export default function fresh(reqHeaders: object, resHeaders: object): boolean;
}
declare module "vary" {
  export default function vary(res: any, field: string | string[]): void;
}
declare module "statuses" {
  const statuses: { message: Record<number, string | undefined> };
  export default statuses;
}
declare module "on-finished" {
  interface OnFinished {
    (res: any, listener: (err: any) => void): void;
    isFinished(msg: any): boolean;
  }
  const onFinished: OnFinished;
  export default onFinished;
}
declare module "escape-html" {
  export default function escapeHtml(text: string): string;
}
declare module "parseurl" {
  export default function parseurl(req: any): { pathname: string; query: string | null } | undefined;
}
declare module "content-type" {
  export function parse(type: string): { type: string; parameters: Record<string, string> };
  export function format(type: { type: string; parameters?: Record<string, string> }): string;
}
declare module "bytes" {
  const bytes: { parse(value: string | number): number | null };
  export default bytes;
}
declare module "router/lib/layer.js" {
  const Layer: { prototype: { match(path: string): unknown; handleRequest(req: any, res: any, next: any): void } };
  export default Layer;
}
declare module "router/lib/param.js" {
  export default function callParam(fn: any, req: any, res: any, next: any, value: unknown, name: string): void;
}
declare module "router/lib/symbols.js" {
  export const matchedRoute: unique symbol;
}
declare module "router/lib/tracing.js" {
  export const requestChannel: any;
  export function shouldTrace(channel: any): boolean;
  export function recordError(req: any, err: unknown): boolean;
  export function traceParam(fn: any, context: object, next: any, value: unknown, name: string): void;
}
declare module "debug" {
  interface Debugger {
    (format: string, ...args: unknown[]): void;
    readonly enabled: boolean;
  }
  function createDebug(namespace: string): Debugger;
  namespace createDebug {
    /** The namespaces `enable` was last given (what each instance's `enabled` compares). */
    const namespaces: string;
  }
  export default createDebug;
}

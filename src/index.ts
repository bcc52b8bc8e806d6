export { Cog, type CogOptions, type ErrorHandler, type NotFoundHandler } from "./cog.js";
export { Scope as Group } from "./scope.js";
export { CogRequest, type Query, type Cookies, type Params } from "./request.js";
export { CogResponse, type CookieOptions, type HeaderValue } from "./response.js";
export { HttpError } from "./errors.js";
export type { Handler, Next } from "./chain.js";
export type { Address } from "./engines/engine.js";
export type { InjectOptions, InjectResponse } from "./testing.js";

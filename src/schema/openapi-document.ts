/**
 * The OpenAPI 3.1 document's types: what `app.openapi()` returns, written from the
 * specification (https://spec.openapis.org/oas/v3.1.0) so that an app can read the document and
 * add to it (servers, components, security) without casts, and without a dependency. Every
 * object also takes `x-` extensions, as the specification allows. A 3.2 document (asked for
 * with `openapi: "3.2.0"`) has the same shape here, plus its path items' `query` operation.
 */

/** Specification extensions: `x-` fields, on every object. */
export type OpenApiExtensions = { [extension: `x-${string}`]: unknown };

/** A JSON Schema (2020-12, OpenAPI 3.1's dialect): an object of keywords, or true/false. */
export type OpenApiSchema = boolean | { [keyword: string]: unknown };

/** `{ $ref: "#/components/schemas/User" }` in place of an object. */
export interface OpenApiReference {
  $ref: string;
  summary?: string;
  description?: string;
}

/** The API's metadata: what `app.openapi(info)` takes. */
export interface OpenApiInfo extends OpenApiExtensions {
  title: string;
  version: string;
  summary?: string;
  description?: string;
  termsOfService?: string;
  contact?: { name?: string; url?: string; email?: string } & OpenApiExtensions;
  license?: { name: string; identifier?: string; url?: string } & OpenApiExtensions;
}

export interface OpenApiServer extends OpenApiExtensions {
  url: string;
  description?: string;
  variables?: Record<string, { enum?: string[]; default: string; description?: string } & OpenApiExtensions>;
}

export interface OpenApiExternalDocs extends OpenApiExtensions {
  url: string;
  description?: string;
}

export interface OpenApiExample extends OpenApiExtensions {
  summary?: string;
  description?: string;
  value?: unknown;
  externalValue?: string;
}

export interface OpenApiMediaType extends OpenApiExtensions {
  schema?: OpenApiSchema;
  example?: unknown;
  examples?: Record<string, OpenApiExample | OpenApiReference>;
  encoding?: Record<
    string,
    {
      contentType?: string;
      headers?: Record<string, OpenApiHeader | OpenApiReference>;
      style?: string;
      explode?: boolean;
      allowReserved?: boolean;
    } & OpenApiExtensions
  >;
}

/** What a parameter and a header have in common. */
interface OpenApiParameterFields extends OpenApiExtensions {
  description?: string;
  required?: boolean;
  deprecated?: boolean;
  style?: string;
  explode?: boolean;
  schema?: OpenApiSchema;
  example?: unknown;
  examples?: Record<string, OpenApiExample | OpenApiReference>;
  content?: Record<string, OpenApiMediaType>;
}

export interface OpenApiParameter extends OpenApiParameterFields {
  name: string;
  in: "query" | "header" | "path" | "cookie";
  allowEmptyValue?: boolean;
  allowReserved?: boolean;
}

export type OpenApiHeader = OpenApiParameterFields;

export interface OpenApiRequestBody extends OpenApiExtensions {
  description?: string;
  content: Record<string, OpenApiMediaType>;
  required?: boolean;
}

export interface OpenApiResponse extends OpenApiExtensions {
  description: string;
  headers?: Record<string, OpenApiHeader | OpenApiReference>;
  content?: Record<string, OpenApiMediaType>;
  links?: Record<string, OpenApiLink | OpenApiReference>;
}

export interface OpenApiLink extends OpenApiExtensions {
  operationRef?: string;
  operationId?: string;
  parameters?: Record<string, unknown>;
  requestBody?: unknown;
  description?: string;
  server?: OpenApiServer;
}

/** Scopes a client needs, by the name of a security scheme: `{ bearer: [] }`. */
export type OpenApiSecurityRequirement = Record<string, string[]>;

export interface OpenApiOperation extends OpenApiExtensions {
  tags?: string[];
  summary?: string;
  description?: string;
  externalDocs?: OpenApiExternalDocs;
  operationId?: string;
  parameters?: Array<OpenApiParameter | OpenApiReference>;
  requestBody?: OpenApiRequestBody | OpenApiReference;
  /** By status ("200", "4XX") or "default". */
  responses?: Record<string, OpenApiResponse | OpenApiReference>;
  callbacks?: Record<string, Record<string, OpenApiPathItem> | OpenApiReference>;
  deprecated?: boolean;
  security?: OpenApiSecurityRequirement[];
  servers?: OpenApiServer[];
}

/**
 * A path item's operations by method. `query` (the QUERY method, RFC 10008) is OpenAPI 3.2's; a
 * 3.1 document has QUERY's operation under the `x-query` extension instead.
 */
export type OpenApiMethod = "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace" | "query";

/** The OpenAPI versions `app.openapi()` writes: 3.1 (the default) or 3.2. */
export type OpenApiVersion = `3.1.${number}` | `3.2.${number}`;

export type OpenApiPathItem = { [method in OpenApiMethod]?: OpenApiOperation } & OpenApiExtensions & {
    $ref?: string;
    summary?: string;
    description?: string;
    servers?: OpenApiServer[];
    parameters?: Array<OpenApiParameter | OpenApiReference>;
  };

type OAuthFlow = { refreshUrl?: string; scopes: Record<string, string> } & OpenApiExtensions;

export type OpenApiSecurityScheme = ({ description?: string } & OpenApiExtensions) &
  (
    | { type: "apiKey"; name: string; in: "query" | "header" | "cookie" }
    | { type: "http"; scheme: string; bearerFormat?: string }
    | { type: "mutualTLS" }
    | { type: "openIdConnect"; openIdConnectUrl: string }
    | {
        type: "oauth2";
        flows: {
          implicit?: OAuthFlow & { authorizationUrl: string };
          password?: OAuthFlow & { tokenUrl: string };
          clientCredentials?: OAuthFlow & { tokenUrl: string };
          authorizationCode?: OAuthFlow & { authorizationUrl: string; tokenUrl: string };
        };
      }
  );

export interface OpenApiComponents extends OpenApiExtensions {
  schemas?: Record<string, OpenApiSchema>;
  responses?: Record<string, OpenApiResponse | OpenApiReference>;
  parameters?: Record<string, OpenApiParameter | OpenApiReference>;
  examples?: Record<string, OpenApiExample | OpenApiReference>;
  requestBodies?: Record<string, OpenApiRequestBody | OpenApiReference>;
  headers?: Record<string, OpenApiHeader | OpenApiReference>;
  securitySchemes?: Record<string, OpenApiSecurityScheme | OpenApiReference>;
  links?: Record<string, OpenApiLink | OpenApiReference>;
  callbacks?: Record<string, Record<string, OpenApiPathItem> | OpenApiReference>;
  pathItems?: Record<string, OpenApiPathItem | OpenApiReference>;
}

export interface OpenApiTag extends OpenApiExtensions {
  name: string;
  description?: string;
  externalDocs?: OpenApiExternalDocs;
}

/** An OpenAPI 3.1 document, as `app.openapi()` returns it (`OpenApiDocument<\`3.2.${number}\`>`: a 3.2 one). */
export interface OpenApiDocument<Version extends OpenApiVersion = `3.1.${number}`> extends OpenApiExtensions {
  openapi: Version;
  info: OpenApiInfo;
  jsonSchemaDialect?: string;
  servers?: OpenApiServer[];
  /** By path, in OpenAPI's template syntax: `/users/{id}`. */
  paths?: Record<string, OpenApiPathItem>;
  webhooks?: Record<string, OpenApiPathItem | OpenApiReference>;
  components?: OpenApiComponents;
  security?: OpenApiSecurityRequirement[];
  tags?: OpenApiTag[];
  externalDocs?: OpenApiExternalDocs;
}

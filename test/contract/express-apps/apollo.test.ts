// Apollo Server's Express integration (@as-integrations/express5's expressMiddleware), unchanged,
// on cog-http/express: the same app on Express 5 from npm and on Cog's engine, the same GraphQL
// requests over real sockets, the same answers (test/express-pair.ts). Queries by POST and GET,
// variables, a resolver that reads the request through the context, errors, batched-less
// refusals (Apollo's CSRF guard on a GET without a preflight header), and bad JSON.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ApolloServer } from "@apollo/server";
import { expressMiddleware } from "@as-integrations/express5";
import { same } from "../../express-pair.js";
import { engine, nativeSkip } from "../../helpers.js";

type Any = any;

const typeDefs = `#graphql
  type Book { title: String!, author: String! }
  type Query { books(author: String): [Book!]!, whoami: String!, broken: String }
  type Mutation { addBook(title: String!, author: String!): Book! }
`;

interface Context {
  agent: string;
  ip: string;
}

function makeServer(): ApolloServer<Context> {
  const books = [
    { title: "The Awakening", author: "Kate Chopin" },
    { title: "City of Glass", author: "Paul Auster" },
  ];
  return new ApolloServer<Context>({
    typeDefs,
    resolvers: {
      Query: {
        books: (_: unknown, args: { author?: string }) => books.filter((b) => args.author === undefined || b.author === args.author),
        whoami: (_: unknown, _args: unknown, context: Context) => `${context.agent} from ${context.ip}`,
        broken: () => {
          throw new Error("resolver failed");
        },
      },
      Mutation: {
        addBook: (_: unknown, book: { title: string; author: string }) => {
          books.push(book);
          return book;
        },
      },
    },
    // The answers hold no stack traces (which would name each server's own frames).
    includeStacktraceInErrorResponses: false,
  });
}

describe(`Apollo Server's expressMiddleware on cog-http/express (${engine} engine)`, { skip: engine === "native" && nativeSkip }, () => {
  // One server for each app: the mutation changes each one's books alike.
  const servers = [makeServer(), makeServer()];
  before(() => Promise.all(servers.map((server) => server.start())));
  after(() => Promise.all(servers.map((server) => server.stop())));

  test("queries, mutations, context, errors and refusals answer as on Express 5", async () => {
    let built = 0;
    const post = (query: string, variables?: object) => ({
      method: "POST",
      path: "/graphql",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query, variables }),
    });
    const answers = await same(
      (app, e) => {
        const server = servers[built++]!;
        // Express's error page without a stack (whose frames name each server's own classes).
        app.set("env", "production");
        app.use(
          "/graphql",
          e.json(),
          expressMiddleware(server, { context: async ({ req }: Any) => ({ agent: req.get("user-agent") ?? "nobody", ip: req.ip }) }),
        );
      },
      [
        post("{ books { title author } }"),
        post("query ($a: String) { books(author: $a) { title } }", { a: "Paul Auster" }),
        post("{ whoami }"),
        post('mutation { addBook(title: "Kindred", author: "Octavia Butler") { title } }'),
        post("{ books { title } }"),
        post("{ broken }"),
        post("{ nosuchfield }"),
        { method: "POST", path: "/graphql", headers: { "content-type": "application/json" }, body: "{not json" },
        { path: "/graphql?query=%7B%20books%20%7B%20title%20%7D%20%7D", headers: { "apollo-require-preflight": "true" } },
        { path: "/graphql?query=%7B%20books%20%7B%20title%20%7D%20%7D" },
      ],
    );
    assert.deepEqual(JSON.parse(answers[0]!.body), {
      data: {
        books: [
          { title: "The Awakening", author: "Kate Chopin" },
          { title: "City of Glass", author: "Paul Auster" },
        ],
      },
    });
    assert.deepEqual(JSON.parse(answers[1]!.body), { data: { books: [{ title: "City of Glass" }] } });
    assert.deepEqual(JSON.parse(answers[2]!.body), { data: { whoami: "node from 127.0.0.1" } });
    assert.equal(JSON.parse(answers[4]!.body).data.books.length, 3);
    assert.equal(JSON.parse(answers[5]!.body).errors[0].message, "resolver failed");
    assert.equal(answers[6]!.status, 400);
    assert.equal(answers[7]!.status, 400);
    assert.equal(answers[8]!.status, 200);
    assert.equal(answers[9]!.status, 400, "Apollo's CSRF guard refuses a simple GET");
  });
});

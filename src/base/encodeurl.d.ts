// encodeurl (jshttp) ships no types: it exports one function.
declare module "encodeurl" {
  export default function encodeUrl(url: string): string;
}

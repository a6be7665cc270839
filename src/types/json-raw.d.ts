// Node 24 (V8 12+) has JSON.rawJSON and the reviver context; TypeScript's lib does not declare them yet.
interface JSONReviverContext {
  source?: string;
}
interface RawJSON {
  readonly rawJSON: string;
}
interface JSON {
  rawJSON(text: string): RawJSON;
  isRawJSON(value: unknown): value is RawJSON;
  parse(text: string, reviver: (this: unknown, key: string, value: unknown, context: JSONReviverContext) => unknown): unknown;
}

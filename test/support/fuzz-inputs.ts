// Bad inputs for a route, generated with fast-check from its OpenAPI operation: bodies that mostly fit
// the schema but carry hostile strings (NUL, lone surrogates, huge), wrong types, empty and
// unknown-only bodies, `$`-keys and `__proto__`, deep nesting, malformed JSON, wrong content types,
// malformed ids in path params and odd query strings. The fuzz test (test/fuzz-routes.test.ts) sends them.
import fc from 'fast-check';

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  $ref?: string;
}

export interface Parameter {
  in: 'path' | 'query' | 'header' | 'cookie';
  name: string;
  required?: boolean;
  schema?: JsonSchema;
}

export interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body?: JsonSchema;
  multipart: boolean;
}

/** What one generated request carries besides its role. */
export interface GeneratedRequest {
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

const OBJECT_ID = '^[0-9a-f]{24}$';
const HUGE = 'x'.repeat(300_000);

/** Strings PostgreSQL, the router or a parser may choke on. */
const hostileStrings = fc.oneof(
  fc.constantFrom(
    '', ' ', '\u0000', 'a\u0000b', '\ud800', 'x\udfff', 'a\ud83d', '\ud83d\ude00', '\u202e', '\uffff', '%00', '../../etc/passwd',
    "'; drop table users; --", '{{7*7}}', '<script>alert(1)</script>', 'null', '1e309', '-1', '$where', '__proto__',
    'constructor', 'aaaaaaaaaaaaaaaaaaaaaaaa', 'AAAAAAAAAAAAAAAAAAAAAAAA', 'x'.repeat(10_000), HUGE,
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)), minLength: 1, maxLength: 3 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code)), maxLength: 5 }),
);

const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1e308, 9007199254740993, '', [], {}, [null], { $gt: '' }),
  fc.jsonValue({ maxDepth: 2 }),
);

export function idArbitrary(realIds: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...realIds), weight: 2 },
    { arbitrary: fc.stringMatching(/^[0-9a-f]{24}$/), weight: 1 },
  );
}

/** Values that mostly fit the schema, with hostile strings mixed in. */
export function fitting(schema: JsonSchema | undefined, ctx: { ids: string[]; refs: Record<string, JsonSchema> }, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return wrongValue;
  if (schema.$ref) return fitting(ctx.refs[schema.$ref.split('/').pop() ?? ''], ctx, depth + 1);
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices) return fc.oneof(...choices.map((choice) => fitting(choice, ctx, depth + 1)));
  if (schema.allOf?.length) return fitting(Object.assign({}, ...schema.allOf), ctx, depth + 1);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.oneof({ arbitrary: fc.constantFrom(...schema.enum), weight: 4 }, { arbitrary: hostileStrings, weight: 1 });
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return fc.oneof({ arbitrary: plainString(schema, ctx.ids), weight: 3 }, { arbitrary: hostileStrings, weight: 2 });
    case 'integer':
    case 'number': {
      const min = Math.max(schema.minimum ?? schema.exclusiveMinimum ?? -1e9, -1e9);
      const max = Math.min(schema.maximum ?? 1e9, 1e9);
      const fits = type === 'integer' ? fc.integer({ min: Math.ceil(min), max: Math.floor(Math.max(min, max)) }) : fc.double({ min, max: Math.max(min, max), noNaN: true });
      return fc.oneof({ arbitrary: fits, weight: 4 }, { arbitrary: fc.constantFrom(-1, 0, 1e308, -1e308, 0.5), weight: 1 });
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(fitting(schema.items, ctx, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) });
    case 'object':
    default: {
      const properties = schema.properties ?? {};
      const model = Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, fitting(value, ctx, depth + 1)]));
      const record = fc.record(model, { requiredKeys: (schema.required ?? []).filter((key) => key in properties) });
      if (typeof schema.additionalProperties !== 'object') return record;
      const extra = fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), hostileStrings), fitting(schema.additionalProperties, ctx, depth + 1), { maxKeys: 3 });
      return fc.tuple(record, extra).map(([known, more]) => ({ ...more, ...known }));
    }
  }
}

function plainString(schema: JsonSchema, ids: string[]): fc.Arbitrary<string> {
  if (schema.pattern === OBJECT_ID) return idArbitrary(ids);
  if (schema.format === 'email') return fc.emailAddress();
  if (schema.format === 'uri' || schema.format === 'url') return fc.webUrl();
  if (schema.format === 'uuid') return fc.uuid();
  if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
  if (schema.pattern) {
    try {
      return fc.stringMatching(new RegExp(schema.pattern));
    } catch {
      // a pattern fast-check cannot invert: plain strings below
    }
  }
  const minLength = schema.minLength ?? 0;
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 30, 30)) });
}

/** A body that fits, then possibly one property made the wrong type. */
function mutated(schema: JsonSchema, ctx: { ids: string[]; refs: Record<string, JsonSchema> }): fc.Arbitrary<unknown> {
  return fc.tuple(fitting(schema, ctx), fc.nat(), wrongValue).map(([body, index, wrong]) => {
    if (!body || typeof body !== 'object' || Array.isArray(body)) return wrong;
    const keys = Object.keys(body);
    if (keys.length === 0) return { [`unknown${index % 3}`]: wrong };
    return { ...body, [keys[index % keys.length]]: wrong };
  });
}

const json = (value: unknown) => ({ payload: JSON.stringify(value), headers: { 'content-type': 'application/json' } });

type RawBody = { payload?: string | Buffer; headers: Record<string, string> };

/** Bodies a JSON route must refuse or shrug off, as raw payloads with their content type. */
const RAW_BODIES: RawBody[] = [
  { payload: '{"a":', headers: { 'content-type': 'application/json' } },
  { payload: '[1,2', headers: { 'content-type': 'application/json' } },
  { payload: '', headers: { 'content-type': 'application/json' } },
  { payload: '"\\ud800"', headers: { 'content-type': 'application/json' } },
  { payload: '{"name":"a\\u0000b","inputs":["\\u0000"]}', headers: { 'content-type': 'application/json' } },
  { payload: '{"__proto__":{"admin":true},"name":"x"}', headers: { 'content-type': 'application/json' } },
  { payload: '{"constructor":{"prototype":{"admin":true}}}', headers: { 'content-type': 'application/json' } },
  { payload: '{"ids":{"$gt":""},"email":{"$ne":null}}', headers: { 'content-type': 'application/json' } },
  { payload: `${'['.repeat(50)}${']'.repeat(50)}`, headers: { 'content-type': 'application/json' } },
  { payload: `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`, headers: { 'content-type': 'application/json' } },
  { payload: `${'['.repeat(400_000)}${']'.repeat(400_000)}`, headers: { 'content-type': 'application/json' } },
  { payload: JSON.stringify({ name: 'x'.repeat(2_000_000) }), headers: { 'content-type': 'application/json' } },
  { payload: 'hello', headers: { 'content-type': 'text/plain' } },
  { payload: 'a=b&__proto__[x]=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
  { payload: '<a/>', headers: { 'content-type': 'application/xml' } },
  { payload: '{"a":1}', headers: { 'content-type': 'application/json; charset=utf-16' } },
  { payload: '{"a":1}', headers: { 'content-type': 'multipart/form-data' } },
  { payload: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb', headers: { 'content-type': 'multipart/form-data; boundary=x' } },
  { payload: '{"a":1}', headers: {} },
  { payload: Buffer.from([0xff, 0xfe, 0x00, 0x7b]), headers: { 'content-type': 'application/json' } },
];
const rawBodies = fc.constantFrom(...RAW_BODIES);

/** Multipart bodies for the upload route: fitting ones with odd names and fields, and broken ones. */
function multipartBodies(ids: string[]): fc.Arbitrary<RawBody> {
  const part = (name: string, value: string, filename?: string) =>
    `--b0und\r\nContent-Disposition: form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}\r\n\r\n${value}\r\n`;
  const fitting = fc
    .record({
      filename: fc.oneof(fc.constantFrom('notes.txt', 'a.md', '../../x.txt', 'a\u0000.txt', '\ud800.txt', '.txt', 'x'.repeat(500) + '.txt'), hostileStrings),
      content: fc.oneof(fc.string({ maxLength: 50 }), hostileStrings),
      collectionId: fc.option(fc.oneof(idArbitrary(ids), hostileStrings)),
      confidential: fc.option(fc.oneof(fc.constantFrom('true', 'false'), hostileStrings)),
      shared: fc.option(fc.constantFrom('true', 'false', 'yes')),
      extraFile: fc.boolean(),
    })
    .map((parts) => {
      let text = '';
      if (parts.collectionId !== null) text += part('collectionId', parts.collectionId);
      if (parts.confidential !== null) text += part('confidential', parts.confidential);
      if (parts.shared !== null) text += part('shared', parts.shared);
      text += part('file', parts.content, parts.filename);
      if (parts.extraFile) text += part('other', 'more', 'b.txt');
      return { payload: Buffer.from(`${text}--b0und--\r\n`), headers: { 'content-type': 'multipart/form-data; boundary=b0und' } };
    });
  const broken = fc.constantFrom<RawBody>(
    { payload: `${part('file', 'hello', 'a.txt')}--b0und--\r\n`, headers: { 'content-type': 'multipart/form-data' } },
    { payload: `${part('file', 'hello', 'a.txt')}--b0und--\r\n`, headers: { 'content-type': 'multipart/form-data; boundary=other' } },
    { payload: '--b0und\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhel', headers: { 'content-type': 'multipart/form-data; boundary=b0und' } },
    { payload: '--b0und\r\nGarbage\r\n\r\n', headers: { 'content-type': 'multipart/form-data; boundary=b0und' } },
    { payload: '', headers: { 'content-type': 'multipart/form-data; boundary=b0und' } },
  );
  return fc.oneof({ arbitrary: fitting, weight: 3 }, { arbitrary: broken, weight: 2 }, { arbitrary: rawBodies, weight: 1 });
}

/** Path segment values: real and well-formed ids, and malformed ones (sent percent-encoded or raw). */
function pathValue(ids: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: idArbitrary(ids).map(encode), weight: 3 },
    { arbitrary: fc.constantFrom('x', '0', '%00', '%ZZ', '%', '..', '%2e%2e', '%ED%A0%80', '%FF', 'a'.repeat(5_000), 'AAAAAAAAAAAAAAAAAAAAAAAA', '%F0%9F%99%82', '%20'), weight: 2 },
    { arbitrary: hostileStrings.filter((s) => s.length < 2_000).map(encode), weight: 2 },
  );
}

/** Percent-encodes the UTF-8 bytes of a string (lone surrogates become U+FFFD, unlike encodeURIComponent's throw). */
function encode(value: string): string {
  return [...Buffer.from(value, 'utf8')].map((byte) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

function queryString(parameters: Parameter[], ctx: { ids: string[]; refs: Record<string, JsonSchema> }): fc.Arbitrary<string> {
  const declared = parameters.filter((p) => p.in === 'query');
  const value = (p: Parameter) =>
    fc.oneof(
      { arbitrary: fitting(p.schema, ctx).map((v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '')), weight: 3 },
      { arbitrary: fc.constantFrom('abc', '-1', '0', '1e309', '', '[]', 'true', '9999999999999999999'), weight: 1 },
      { arbitrary: hostileStrings.filter((s) => s.length < 20_000), weight: 1 },
    );
  const pairs = fc.tuple(
    ...declared.map((p) => fc.option(fc.array(value(p), { minLength: 1, maxLength: 2 }).map((values) => values.map((v) => `${encode(p.name)}=${encode(v)}`).join('&')))),
    fc.option(fc.constantFrom('unknown=%00', '__proto__[x]=1', 'a[$gt]=', 'page=1&page=2', '%ZZ=1', 'search=%ED%A0%80')),
  );
  return pairs.map((parts) => parts.filter((part): part is string => part !== null && part !== '').join('&'));
}

/** Every kind of bad request for one operation. */
export function requestsFor(operation: Operation, ctx: { ids: string[]; refs: Record<string, JsonSchema> }): fc.Arbitrary<GeneratedRequest> {
  const pathParams = operation.parameters.filter((p) => p.in === 'path');
  const path = fc.tuple(...pathParams.map(() => pathValue(ctx.ids))).map((values) =>
    pathParams.reduce((url, p, index) => url.replace(`{${p.name}}`, values[index]), operation.path),
  );
  const takesBody = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(operation.method);
  let body: fc.Arbitrary<RawBody>;
  if (operation.multipart) body = multipartBodies(ctx.ids);
  else if (!takesBody) body = fc.constant({ headers: {} });
  else {
    const schema = operation.body ?? { type: 'object' };
    body = fc.oneof(
      { arbitrary: fitting(schema, ctx).map(json), weight: 5 },
      { arbitrary: mutated(schema, ctx).map(json), weight: 2 },
      { arbitrary: fc.constantFrom({}, { unknownOnly: true }, [], null, 'text', 42).map(json), weight: 1 },
      { arbitrary: rawBodies, weight: 2 },
      { arbitrary: fc.constant({ headers: {} }), weight: 1 },
    );
  }
  return fc.tuple(path, queryString(operation.parameters, ctx), body).map(([url, query, { payload, headers }]) => ({
    url: query ? `${url}?${query}` : url,
    headers,
    payload,
  }));
}

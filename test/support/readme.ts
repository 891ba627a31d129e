// Reading the README as its examples test reads it: the fenced code blocks with their section and skip
// marker, each curl command with the answer the README shows under it (`# →` or `# data:` lines), and
// the routes the prose and the examples name. The convention is written in the README ("How the
// examples are written"); test/readme-examples.test.ts runs the blocks.

export interface ReadmeBlock {
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** The `## ` heading the block sits under. */
  section: string;
  /** The reason of a `<!-- readme-test: skip <reason> -->` line right above the fence, else null. */
  skip: string | null;
}

export interface CurlExample {
  /** 1-based README line where the command starts. */
  line: number;
  /** The command as written, continuation lines joined. */
  command: string;
  /** The status the README shows (`# → 201 …`), else null: any 2xx. */
  status: number | null;
  /** The answer shown after `# →` (status removed), or null. */
  shape: string | null;
  /** The frames shown as `# data: {…}` lines (an SSE answer). */
  frames: string[];
}

const SKIP_MARKER = /^<!--\s*readme-test:\s*skip\s+(.+?)\s*-->$/;

export function readmeBlocks(text: string): ReadmeBlock[] {
  const lines = text.split('\n');
  const blocks: ReadmeBlock[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const heading = /^## (.+)$/.exec(lines[i]);
    if (heading) section = heading[1].trim();
    const fence = /^(\s*)```(\w*)\s*$/.exec(lines[i]);
    if (!fence) continue;
    const indent = fence[1];
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i].trim() !== '```'; i++) body.push(lines[i].startsWith(indent) ? lines[i].slice(indent.length) : lines[i]);
    const above = lines[start - 1]?.trim() ?? '';
    const skip = SKIP_MARKER.exec(above)?.[1] ?? null;
    blocks.push({ line: start + 1, lang: fence[2], code: body.join('\n'), section, skip });
  }
  return blocks;
}

/** The curl commands of a block, each with the answer shown under it, if any. */
export function curlExamples(block: ReadmeBlock): CurlExample[] {
  const lines = block.code.split('\n');
  const examples: CurlExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/(^|[\s$(|;&])curl\s/.test(lines[i]) || lines[i].trimStart().startsWith('#')) continue;
    const first = i;
    let command = lines[i];
    while (command.endsWith('\\') && i + 1 < lines.length) command = `${command.slice(0, -1)} ${lines[++i].trim()}`;
    const example: CurlExample = { line: block.line + 1 + first, command, status: null, shape: null, frames: [] };
    while (i + 1 < lines.length && /^\s*#/.test(lines[i + 1])) {
      const comment = lines[++i].trim();
      const shown = /^#\s*→\s*(.*)$/.exec(comment);
      const frame = /^#\s*data:\s*(\{.*\})/.exec(comment);
      if (shown && example.shape === null) {
        const status = /^(\d{3})\b\s*(.*)$/.exec(shown[1]);
        example.status = status ? Number(status[1]) : null;
        example.shape = status ? status[2] : shown[1];
      } else if (shown) {
        example.shape += ` ${shown[1]}`; // an answer shown over several lines
      } else if (frame) {
        example.frames.push(frame[1]);
      }
    }
    examples.push(example);
  }
  return examples;
}

export type Literal = string | number | boolean | null;

/**
 * What a shown answer promises: the keys it names (`"key":`) and the literal values it gives them. A
 * string holding `…` promises its pieces, in order; numbers, booleans, null and plain strings promise
 * themselves. `…` alone, `{…}` and `[…]` promise nothing about a value.
 */
export function shownPromises(shape: string): { keys: string[]; literals: Array<{ key: string; value: Literal }> } {
  const keys = [...shape.matchAll(/"([A-Za-z_$][\w$]*)"\s*:/g)].map((match) => match[1]);
  const literals: Array<{ key: string; value: Literal }> = [];
  for (const match of shape.matchAll(/"([A-Za-z_$][\w$]*)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)/g)) {
    const raw = match[2];
    const value = JSON.parse(raw) as Literal;
    if (value === '…') continue;
    literals.push({ key: match[1], value });
  }
  return { keys, literals };
}

/** True when the value matches what the README shows for it (pieces around `…` in order). */
export function literalMatches(shown: Literal, actual: unknown): boolean {
  if (typeof shown !== 'string' || !shown.includes('…')) return shown === actual;
  if (typeof actual !== 'string') return false;
  let from = 0;
  for (const piece of shown.split('…').map((part) => part.trim()).filter(Boolean)) {
    const at = actual.indexOf(piece, from);
    if (at < 0) return false;
    from = at + piece.length;
  }
  return true;
}

/** Every value found under `key` anywhere in a parsed answer. */
export function valuesOf(value: unknown, key: string, found: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const item of value) valuesOf(item, key, found);
  else if (value && typeof value === 'object') {
    for (const [name, inner] of Object.entries(value)) {
      if (name === key) found.push(inner);
      valuesOf(inner, key, found);
    }
  }
  return found;
}

const METHODS = 'GET|POST|PUT|PATCH|DELETE';

/** `/api/x/{id}`, `/api/x/:id`, `/api/x/$ID`, `/api/x/<id>` → `/api/x/*`, no query. */
export function routeShape(path: string): string {
  return path
    .replace(/[?#].*$/, '')
    .replace(/\[.*$/, '')
    .replace(/\{[^}/]+\}|:[A-Za-z]\w*|\$\{?[A-Za-z_]\w*\}?|<[^>/]+>/g, '*')
    .replace(/[`'",).;]+$/, '')
    .replace(/\/+$/, '');
}

export interface NamedRoute {
  method: string;
  /** The path with every placeholder (`{id}`, `:id`, `$ID`, `<id>`) written `*`. */
  shape: string;
}

/**
 * The routes the README names: in prose (`GET /api/...`, `GET|PUT /api/...`, `PUT\|DELETE` inside
 * tables) and as curl commands (`-X`, else POST with `-d`/`-F`, else GET).
 */
export function namedRoutes(text: string): NamedRoute[] {
  const named: NamedRoute[] = [];
  for (const match of text.matchAll(new RegExp(`((?:${METHODS})(?:\\\\?\\|(?:${METHODS}))*)\\s+(/api/[^\\s\`]+|/metrics)`, 'g'))) {
    for (const method of match[1].split(/\\?\|/)) named.push({ method, shape: routeShape(match[2]) });
  }
  for (const block of readmeBlocks(text)) {
    for (const example of curlExamples(block)) {
      const url = /(?:https?:\/\/)?(?:localhost|127\.0\.0\.1):\d+(\/[^\s'"]*)/.exec(example.command)?.[1];
      if (!url) continue;
      const explicit = /(?:^|\s)-X\s*([A-Z]+)/.exec(example.command)?.[1];
      const method = explicit ?? (/\s(-d|-F|--data\S*)\s/.test(example.command) ? 'POST' : 'GET');
      named.push({ method, shape: routeShape(url) });
    }
  }
  return named;
}

/** Whether the README names this operation of the OpenAPI document (a placeholder on either side matches a segment). */
export function isNamed(named: NamedRoute[], method: string, openApiPath: string): boolean {
  const wanted = routeShape(openApiPath).split('/');
  return named.some((route) => {
    if (route.method !== method.toUpperCase()) return false;
    const have = route.shape.split('/');
    return have.length === wanted.length && have.every((segment, i) => segment === wanted[i] || segment === '*' || wanted[i] === '*');
  });
}

// A V8 CPU profile (`node --cpu-prof`, e.g. through bench:stream's BENCH_NODE_ARGS) summed by function over
// a window of it: self time and inclusive time, busy samples only. PGlite's WebAssembly functions appear in
// a profile only by index (its module keeps no names); those the module exports are named here from its
// export section (PostgreSQL's own functions: ExecutorRun, ExecInsertIndexTuples, XLogFlush, ...), so the
// embedded database thread's profile reads as PostgreSQL's work. Figures: docs/performance.md.
//   node scripts/profile-summary.mjs <file.cpuprofile>                   busy ms in each second of the profile
//   node scripts/profile-summary.mjs <file.cpuprofile> <from s> <to s> [rows] [--postgres]
// `--postgres`: only PostgreSQL's named functions, inclusive (a sample counts once for each).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const [file, from, to, rowsArg, flag] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/profile-summary.mjs <file.cpuprofile> [<from s> <to s> [rows] [--postgres]]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

/** Function index → export name, read from the export section of PGlite's WebAssembly module. */
function exportedNames() {
  const require = createRequire(import.meta.url);
  const wasm = readFileSync(path.join(path.dirname(require.resolve('@electric-sql/pglite')), 'pglite.wasm'));
  const names = new Map();
  let at = 8;
  const leb = () => {
    let value = 0;
    let shift = 0;
    let byte;
    do {
      byte = wasm[at++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  while (at < wasm.length) {
    const section = wasm[at++];
    const size = leb();
    const end = at + size;
    if (section === 7) {
      for (let count = leb(); count > 0; count--) {
        const length = leb();
        const name = wasm.toString('utf8', at, at + length);
        at += length;
        const kind = wasm[at++];
        const index = leb();
        if (kind === 0) names.set(index, name);
      }
    }
    at = end;
  }
  return names;
}

const wasmNames = exportedNames();
function nameOf(frame) {
  const wasm = /^wasm-function\[(\d+)\]$/.exec(frame.functionName);
  if (wasm) return { name: wasmNames.get(Number(wasm[1])) ?? `wasm-function[${wasm[1]}]`, postgres: wasmNames.has(Number(wasm[1])) };
  const where = frame.url ? ` ${frame.url.split('/').slice(-2).join('/').replace(/\?.*/, '')}:${frame.lineNumber + 1}` : '';
  return { name: `${frame.functionName || '(anonymous)'}${where}`, postgres: false };
}

// Each sample's time is the delta to the next one.
const seconds = new Map();
const self = new Map();
const inclusive = new Map();
let busy = 0;
let clock = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  clock += profile.timeDeltas[i];
  const spent = profile.timeDeltas[i + 1] ?? 0;
  const leaf = nodes.get(profile.samples[i]);
  if (leaf.callFrame.functionName === '(idle)') continue;
  const at = (clock - profile.startTime) / 1e6;
  seconds.set(Math.floor(at), (seconds.get(Math.floor(at)) ?? 0) + spent);
  if (from === undefined || at < Number(from) || at > Number(to)) continue;
  busy += spent;
  const leafName = nameOf(leaf.callFrame).name;
  self.set(leafName, (self.get(leafName) ?? 0) + spent);
  const seen = new Set();
  for (let id = leaf.id; id !== undefined; id = parents.get(id)) {
    const { name, postgres } = nameOf(nodes.get(id).callFrame);
    if (seen.has(name) || (flag === '--postgres' && !postgres)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + spent);
  }
}

if (from === undefined) {
  console.log([...seconds].map(([second, us]) => `${second}s ${(us / 1000).toFixed(0)}ms`).join(', '));
  process.exit(0);
}
const rows = Number(rowsArg ?? 40);
const line = ([name, us]) => `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${name}`;
console.log(`busy ${(busy / 1000).toFixed(0)} ms from ${from} s to ${to} s`);
if (flag !== '--postgres') {
  console.log('self:');
  [...self].sort((a, b) => b[1] - a[1]).slice(0, rows).forEach((row) => console.log(line(row)));
}
console.log(flag === '--postgres' ? "PostgreSQL's functions, inclusive:" : 'inclusive:');
[...inclusive].sort((a, b) => b[1] - a[1]).slice(0, rows).forEach((row) => console.log(line(row)));

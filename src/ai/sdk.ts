// The AI SDK's `ai` package, loaded at its first use rather than at start: a plain-text turn never
// needs it (model-stream.ts reads the provider directly), and loading it (with the telemetry API and
// the gateway provider it brings) took ~0.25 s of a start and ~5 MB at rest. Tool turns, subagents,
// embeddings through an endpoint and memory extraction load it; a failure it made is only told apart
// once it is loaded (`loadedAiSdk`).
type AiSdk = typeof import('ai');

let loaded: AiSdk | undefined;
let loading: Promise<AiSdk> | undefined;

export function loadAiSdk(): Promise<AiSdk> {
  loading ??= import('ai').then((sdk) => (loaded = sdk));
  return loading;
}

/** The package when something has loaded it already; undefined before. */
export function loadedAiSdk(): AiSdk | undefined {
  return loaded;
}

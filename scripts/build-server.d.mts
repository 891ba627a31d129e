// Types of build-server.mjs, for the TypeScript that imports it (the tests' global set-up).
export declare function needsServerBuild(): boolean;
export declare function buildServer(): Promise<{ entries: number; sources: number }>;
export declare function ensureServerBuilt(): Promise<boolean>;
/** The modules a process or thread starts from, as paths under src/ (each bundled to the same path under dist/, .js). */
export declare const ENTRIES: readonly string[];

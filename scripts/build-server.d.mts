// Types of build-server.mjs, for the TypeScript that imports it (the tests' global set-up).
export declare function needsServerBuild(): boolean;
export declare function buildServer(): Promise<number>;
export declare function ensureServerBuilt(): Promise<boolean>;

// oidc-provider ships no type declarations; the test peer uses a small, typed surface of it.
declare module 'oidc-provider';

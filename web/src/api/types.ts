// Names for the generated shapes the screens use (schema.d.ts is generated at build time).
import type { paths } from './schema';

type Json<P extends keyof paths, M extends keyof paths[P], S extends number = 200> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer T } } };
}
  ? T
  : never;

export type Profile = Json<'/api/user/refresh/profile', 'post'>['profile'];
export type SignInAnswer = Json<'/api/auth/signin', 'post'>;
export type MfaChallenge = Extract<SignInAnswer, { mfaRequired: true }>;
export type HistoryItem = Json<'/api/user/history', 'get'>['data'][number];
export type HistoryRecord = Json<'/api/user/history/{id}', 'get'>['data'];
export type Assistant = Json<'/api/user/assistants', 'get'>['data'][number];
export type Membership = Json<'/api/user/institutions', 'get'>['data'][number];
export type VaultFile = Json<'/api/user/files', 'get'>['data'][number];
export type Collection = Json<'/api/user/files/collections', 'get'>['data'][number];
export type MemoryRow = Json<'/api/user/memory', 'get'>['data'][number];
export type Settings = Json<'/api/user/setting', 'get'>['data'];

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

// The console's rows.
export type AdminUser = Json<'/api/admin/users', 'get'>['data'][number];
export type AdminTwin = Json<'/api/admin/institution/{id}', 'get'>['data'];
export type AdminQuestion = Json<'/api/admin/questions', 'get'>['data'][number];
export type McpServer = Json<'/api/admin/mcp-servers', 'get'>['data'][number];
export type AdminTool = Json<'/api/admin/tools', 'get'>['data'][number];
export type ImportAnswer = Json<'/api/admin/users/import', 'post'>;
export type AdminAssistant = Json<'/api/admin/assistants', 'get'>['data'][number];
export type AdminHistory = Json<'/api/admin/histories', 'get'>['data'][number];
export type AdminSession = Json<'/api/admin/sessions', 'get'>['data'][number];
export type AdminFeedback = Json<'/api/admin/feedback', 'get'>['data'][number];
export type AdminUpload = Json<'/api/admin/uploads', 'get'>['data'][number];
export type AdminModel = Json<'/api/admin/ai-models', 'get'>['data'][number];
export type SsoProvider = Json<'/api/admin/sso-providers', 'get'>['data'][number];
export type Entitlement = Json<'/api/admin/entitlements', 'get'>['data'][number];
export type Account = Json<'/api/admin/accounts', 'get'>['data'][number];
export type LedgerEntry = Json<'/api/admin/institution/{id}/credits/ledger', 'get'>['data'][number];

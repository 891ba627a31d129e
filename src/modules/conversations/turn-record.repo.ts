// A turn's record and money statements, in one home: the opening (the conversation touched or opened,
// the record written and the turn's hold taken from the balance that pays, or nothing at all), the
// extension of a hold once the context is known, and the settle (the record finished, the real cost
// charged, the hold given back, the ledger row written). Each is ONE statement, so the paying row's
// lock, shared by every turn of a person or of a pooling twin, is held only while the server runs it.
// The balance rule's SQL pieces (spendable, the hold update) come from credits.repo.ts.
import { and, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { sqlStateOf } from '../../platform/db/errors.js';
import { runShaped, type ShapedInputs } from '../../platform/db/prepared.js';
import { newId } from '../../platform/ids/ids.js';
import { balanceTable, holdUpdate, spendable } from '../credits/credits.repo.js';
import type { CreditAccount } from '../credits/credits.tables.js';
import { creditLedger } from '../credits/credits.tables.js';
import { balanceIdOf, payerOf, type Payer } from '../credits/payer.js';
import type { HistoryUpdate, NewConversation, NewHistory } from '../history/history.repo.js';
import { conversations, history, type HistoryRow } from '../history/history.tables.js';

const TITLE_CHARS = 80;

// The opening.

export interface StartRecordInput {
  twinId: string;
  userId: string;
  /** Continue this conversation; unknown, another person's or another twin's id starts a new one. */
  conversationId?: string | null;
  assistantId?: string | null;
  assistantName?: string;
  question: string;
  /** A voice session's exchange ('voice'); a typed turn by default. */
  mode?: 'chat' | 'voice';
  /** The title a new conversation takes (the question's first line by default). */
  title?: string;
  /** Models the turn is about to use; finishRecord may replace them with the ones actually used. */
  models?: string[];
  /** The moment of the turn (defaults to now). */
  at?: Date;
  /** Hold this much of the paying balance, or refuse (UnfundedOpeningError, nothing written): insertOpeningRecord. */
  hold?: TurnHold;
  /** The process streaming the answer (service_processes): if it dies, turn-holds.ts settles the record. */
  processId?: string;
}

/**
 * Opens the record of a turn (status 'streaming') in the caller's conversation, creating the
 * conversation when none is given or the given one is not the caller's in this twin. One statement,
 * committed without waiting for its WAL flush (see insertOpeningRecord): the record is written before
 * the answer starts, and waiting for the disk there adds to every answer's first chunk. The turn's
 * journal (turn-journal.ts) flushes it within 0.2 s on both databases (PGlite has no WAL writer that
 * would), so a crash can lose only a turn opened in the 0.2 s before it, which has charged nothing.
 */
export async function startRecord(db: Executor, input: StartRecordInput): Promise<OpenedRecord> {
  return insertOpeningRecord(db, {
    conversation: { twinId: input.twinId, userId: input.userId, assistantId: input.assistantId ?? null, title: input.title ?? titleOf(input.question) },
    continueId: input.conversationId ?? undefined,
    record: {
      assistantId: input.assistantId ?? null,
      assistantName: input.assistantName ?? '',
      question: input.question,
      ...(input.mode ? { mode: input.mode } : {}),
      models: input.models ?? [],
      status: 'streaming',
      ...(input.processId ? { processId: input.processId } : {}),
    },
    at: input.at ?? new Date(),
    hold: input.hold,
  });
}

function titleOf(question: string): string {
  const firstLine = question.trim().split('\n', 1)[0] ?? '';
  const chars = Array.from(firstLine);
  return chars.length > TITLE_CHARS ? `${chars.slice(0, TITLE_CHARS - 1).join('')}…` : firstLine;
}

export interface OpeningRecord {
  conversation: Pick<NewConversation, 'twinId' | 'userId' | 'assistantId' | 'title'>;
  /** Continue this conversation when it is the caller's own in this twin; else a new one opens. */
  continueId?: string;
  record: Omit<NewHistory, 'id' | 'conversationId' | 'twinId' | 'userId' | 'createdAt'>;
  at: Date;
  /**
   * Open only while this balance can hold `amount` (its credits less what other turns hold): the
   * person's ('user') or the twin's pool ('institution'). The statement adds the amount to the
   * balance's holds and writes it on the record; when the balance cannot hold it, the statement
   * refuses as a whole (nothing written; UnfundedOpeningError).
   */
  hold?: TurnHold;
}

/** What a priced turn holds from the balance that pays, from its opening until it settles. */
export interface TurnHold {
  account: 'user' | 'institution';
  amount: number;
}

/** SQLSTATE of a turn's opening refused because the balance that pays cannot hold its cost (migration 0009). */
const UNFUNDED_STATE = 'DT402';

/** The opening was refused: the balance that pays cannot hold the turn's most expensive cost. */
export class UnfundedOpeningError extends Error {
  constructor(readonly account: 'user' | 'institution') {
    super(`The ${account === 'user' ? "person's" : "twin's"} balance cannot cover this turn`);
  }
}

/**
 * A turn's opening in one statement: touches the caller's own conversation or opens a new one, and
 * inserts the record in it. The statement also turns off waiting for its WAL flush (a transaction-
 * local set_config, read in RETURNING so that it runs); in a caller's transaction that holds until
 * the transaction ends.
 */
export async function insertOpeningRecord(db: Executor, opening: OpeningRecord): Promise<OpenedRecord> {
  const { twinId, userId } = opening.conversation;
  const id = newId();
  const inputs: ShapedInputs = {
    record: opening.record,
    id,
    conversationId: newId(),
    twinId,
    userId,
    continueId: opening.continueId ?? null,
    assistantId: opening.conversation.assistantId ?? null,
    title: opening.conversation.title ?? '',
    at: opening.at.toISOString(),
    createdAt: opening.at,
    ...(opening.hold ? { hold: opening.hold.amount, balanceId: balanceIdOf(payerOf(opening.hold.account, twinId, userId)) } : {}),
  };
  const shape: OpeningShape = { continues: Boolean(opening.continueId), columns: Object.keys(opening.record).sort(), heldBy: opening.hold?.account ?? null };
  // Built once per shape outside a transaction: drizzle takes longer to build it than the database to run it.
  const name = `open_turn:${shape.continues}:${shape.heldBy}:${shape.columns.join(',')}`;
  try {
    const [row] = await runShaped<{ conversationId: string; version: string; commitMode: unknown; funded: unknown }>(db, name, (d, param) => openingQuery(d, shape, param), inputs, OPENING_RESULT);
    // The row is what the statement was given over the table's defaults: only what the database chose
    // comes back (the conversation, the version), not all 34 columns parsed, sent across and mapped.
    // Every opened record is one copy of OPENED_ROW filled in, so all share one layout: the settle's
    // functions that read them stay optimised for it.
    const opened: OpenedRecord = { ...OPENED_ROW };
    const filled = opened as unknown as Record<string, unknown>;
    for (const [column, value] of Object.entries(opening.record)) if (value !== undefined) filled[column] = value;
    if (opening.hold) {
      opened.heldCredits = opening.hold.amount;
      opened.heldAccount = opening.hold.account;
    }
    opened.id = id;
    opened.twinId = twinId;
    opened.userId = userId;
    opened.conversationId = row.conversationId;
    opened.createdAt = opening.at;
    opened.updatedAt = history.updatedAt.mapFromDriverValue(row.version) as Date;
    opened.version = row.version;
    return opened;
  } catch (error) {
    if (shape.heldBy && sqlStateOf(error) === UNFUNDED_STATE) throw new UnfundedOpeningError(shape.heldBy);
    throw error;
  }
}

/** The opening's result columns, in the order its RETURNING gives them (openingQuery). */
const OPENING_RESULT = ['conversationId', 'version', 'commitMode', 'funded'] as const;

/** A record as just opened, with its version: updated_at exactly as stored (a Date keeps milliseconds only). */
export type OpenedRecord = HistoryRow & { version: string };

/** A record's version as OpenedRecord carries it, and as a statement compares it: `${history.updatedAt} = version::timestamptz`. */
export const historyVersion = sql<string>`${history.updatedAt}::text`;

interface OpeningShape {
  continues: boolean;
  /** The record's columns given by the caller (the hold's two are the shape's own). */
  columns: string[];
  /** Whose balance holds the turn's cost: the person's, the twin's pool, or none (a free turn). */
  heldBy: 'user' | 'institution' | null;
}

/**
 * The hold: adds the turn's amount to the paying balance's holds while what is left covers it (under
 * that row's lock, so racing openings never hold more than the balance). No row when it does not.
 */
function holdStatement(db: Executor, heldBy: CreditAccount, param: (name: string) => unknown) {
  return db.$with('held', { ok: sql<number>`ok` }).as(holdUpdate(heldBy, param('balanceId'), param('hold')));
}

/**
 * 1 when the hold was taken (or none was asked); else the statement fails with UNFUNDED_STATE, which
 * undoes everything it wrote (read in RETURNING, so it runs; an empty result never gets that far).
 */
function holdCheck(heldBy: 'user' | 'institution' | null) {
  if (!heldBy) return sql<number>`1`;
  return sql<number>`case when exists (select 1 from held) then 1 else refuse_statement(${UNFUNDED_STATE}, 'the balance that pays cannot cover this turn') end`;
}

/**
 * A condition checked on the row its primary key found, never used to find it. Both statements run as
 * plans kept from their first runs, often planned while the tables were nearly empty, when an index led
 * by the twin looks as cheap as the key: such a plan then read every conversation of the twin (or the
 * person) on every turn, 2,400 index entries a turn at 1,000 clients. `(...) is true` is no index
 * condition, so the key is the only way in (the columns are not null: the meaning is the same).
 */
function checkedOnly(condition: SQL) {
  return sql`(${condition}) is true`;
}

function openingQuery(db: Executor, shape: OpeningShape, param: (name: string) => unknown) {
  const commitMode = db.$with('commit_mode', { mode: sql<string>`mode` }).as(sql`select set_config('synchronous_commit', 'off', true) as mode`);
  const own = db.$with('own', { id: sql<string>`id` }).as(
    shape.continues
      ? sql`update ${conversations} set ${sql.identifier(conversations.lastActivityAt.name)} = greatest(${conversations.lastActivityAt}, ${param('at')}::timestamptz)
          where ${conversations.id} = ${param('continueId')} and ${checkedOnly(sql`${conversations.twinId} = ${param('twinId')} and ${conversations.userId} = ${param('userId')}`)}
          returning ${conversations.id}`
      : sql`select null::char(24) as id where false`,
  );
  const opened = db.$with('opened', { id: sql<string>`id` }).as(
    sql`insert into ${conversations} (${sql.join(OPENED_COLUMNS.map((column) => sql.identifier(column.name)), sql`, `)})
        select ${param('conversationId')}, ${param('twinId')}, ${param('userId')}, ${param('assistantId')}, ${param('title')}, ${param('at')}::timestamptz, ${param('at')}::timestamptz
        where not exists (select 1 from own)
        returning ${conversations.id}`,
  );
  const record = Object.fromEntries(shape.columns.map((column) => [column, param(`record.${column}`)])) as Omit<NewHistory, 'twinId' | 'userId' | 'conversationId'>;
  const held = shape.heldBy ? { heldAccount: shape.heldBy, heldCredits: param('hold') as number } : {};
  const ctes = shape.heldBy ? [commitMode, own, opened, holdStatement(db, shape.heldBy, param)] : [commitMode, own, opened];
  return db
    .with(...ctes)
    .insert(history)
    .values({
      ...record,
      ...held,
      id: param('id') as string,
      twinId: param('twinId') as string,
      userId: param('userId') as string,
      conversationId: sql`coalesce((select id from own), (select id from opened))`,
      createdAt: param('createdAt') as Date,
    })
    .returning({ conversationId: history.conversationId, version: historyVersion, commitMode: sql<string>`(select mode from commit_mode)`, funded: holdCheck(shape.heldBy) });
}

/** A new record's columns as the table's defaults set them (history.tables.ts); the opening's test checks them against the stored row. */
const OPENED_DEFAULTS: Omit<HistoryRow, 'id' | 'twinId' | 'userId' | 'conversationId' | 'question' | 'createdAt' | 'updatedAt'> = {
  assistantId: null,
  assistantName: '',
  answer: '',
  status: 'streaming',
  mode: 'chat',
  error: null,
  models: [],
  inputTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  credits: 0,
  heldCredits: 0,
  heldAccount: null,
  processId: null,
  toolCalls: [],
  subagents: [],
  ragSearch: [],
  reasoning: null,
  memories: [],
  guidance: [],
  toolCallCount: 0,
  subagentCount: 0,
  ragSearchCount: 0,
  memoryCount: 0,
  ragSearchMode: null,
  detailsExpiredAt: null,
  completedAt: null,
  deletedAt: null,
};

/** Every column of an opened record, the defaults filled in: insertOpeningRecord copies it for each record. */
const OPENED_ROW: OpenedRecord = {
  id: '',
  twinId: '',
  userId: '',
  conversationId: '',
  question: '',
  ...OPENED_DEFAULTS,
  createdAt: new Date(0),
  updatedAt: new Date(0),
  version: '',
};

const OPENED_COLUMNS = [
  conversations.id,
  conversations.twinId,
  conversations.userId,
  conversations.assistantId,
  conversations.title,
  conversations.createdAt,
  conversations.lastActivityAt,
];

// The settle.

export interface OneStatementSettle {
  /**
   * The record as the turn opened it (OpenedRecord): finished only if still streaming and unchanged since
   * (no version: whatever it holds now, for the sweeper of turns whose process died).
   */
  record: { id: string; version?: string };
  /** What the record becomes (finishValues), its credits aside: the statement sets those. */
  values: HistoryUpdate;
  touchesConversation: boolean;
  at: Date;
  /** What the usage costs; 0 charges nothing (and, with nothing held, locks nothing). */
  cost: number;
  /** What the record holds of the balance (its heldCredits as opened); given back by the statement. */
  held: number;
  /** Whose balance is charged and given back its hold (payer.ts); the ledger names its person. */
  payer: Payer;
  ledgerMeta: Record<string, unknown>;
}

/**
 * Runs the settle; undefined when the record was no longer streaming or changed after it was opened (the
 * caller then settles in a transaction that locks it). The charge is least(cost, balance) read under
 * the balance's row lock inside the statement, so racing turns never overdraw it. Outside a
 * transaction the statement is prepared once per shape (who pays, whether it charges, which columns):
 * building it costs drizzle about a millisecond, more than the database takes to run it.
 */
export async function finishAndCharge(db: Executor, settle: OneStatementSettle): Promise<{ credits: number } | undefined> {
  const { account, twinId, userId } = settle.payer;
  const inputs: ShapedInputs = {
    values: settle.values,
    id: settle.record.id,
    version: settle.record.version,
    cost: settle.cost,
    held: settle.held,
    balanceId: balanceIdOf(settle.payer),
    ledgerId: newId(),
    twinId,
    userId,
    meta: JSON.stringify(settle.ledgerMeta),
    at: settle.at.toISOString(),
  };
  const shape: SettleShape = {
    account,
    charging: settle.cost > 0 || settle.held > 0,
    touches: settle.touchesConversation,
    versioned: settle.record.version !== undefined,
    columns: Object.keys(settle.values).sort(),
  };
  const key = `settle_turn:${shape.account}:${shape.charging}:${shape.touches}:${shape.versioned}:${shape.columns.join(',')}`;
  const [row] = await runShaped<{ credits: unknown }>(db, key, (d, param) => settleQuery(d, shape, param), inputs, SETTLE_RESULT);
  return row ? { credits: Number(row.credits) } : undefined;
}

/** The settle's result column (settleQuery). */
const SETTLE_RESULT = ['credits'] as const;

interface SettleShape {
  account: CreditAccount;
  /** The balance row is locked and changed: a cost to charge, or a hold to give back. */
  charging: boolean;
  touches: boolean;
  /** Finish only the version the turn opened (else any streaming version: the hold sweeper). */
  versioned: boolean;
  /** The record's columns set, besides credits and updated_at. */
  columns: string[];
}

/** The settle statement of a shape, its inputs given by `param` (placeholders to prepare, or the values). */
function settleQuery(db: Executor, shape: SettleShape, param: (name: string) => unknown) {
  const table = balanceTable(shape.account);
  const { credits, creditsUsed, creditsHeld } = table;
  // The paying row, locked (and read as its latest version) for the rest of the statement: what this
  // turn may be charged is its own hold plus what no turn holds.
  const locked = db.$with('locked', { balance: sql<number>`balance` }).as(
    sql`select ${spendable(table)} + ${param('held')}::numeric as balance from ${table} where ${table.id} = ${param('balanceId')} for update`,
  );
  const charge = shape.charging ? sql`coalesce((select least(${param('cost')}::numeric, greatest(balance, 0)) from locked), 0)` : sql`0`;
  const set = Object.fromEntries(shape.columns.map((column) => [column, param(`values.${column}`)]));
  const finished = db.$with('finished').as(
    db
      .update(history)
      .set({ ...set, credits: charge, updatedAt: sql`now()` })
      .where(
        and(
          eq(history.id, param('id') as string),
          eq(history.status, 'streaming'),
          // A record deleted meanwhile is settled in the caller's transaction (its accounting only): the
          // deletion need not change the version, which on PGlite has the clock's millisecond resolution.
          isNull(history.deletedAt),
          shape.versioned ? sql`${history.updatedAt} = ${param('version')}::timestamptz` : sql`${history.heldCredits} = ${param('held')}::numeric`,
        ),
      )
      .returning(),
  );
  const charged = db.$with('charged', { balance: sql<number>`balance`, amount: sql<number>`amount` }).as(
    sql`update ${table} set ${sql.identifier(credits.name)} = ${credits} - finished.credits, ${sql.identifier(creditsUsed.name)} = ${creditsUsed} + finished.credits,
          ${sql.identifier(creditsHeld.name)} = ${creditsHeld} - ${param('held')}::numeric
        from finished where ${table.id} = ${param('balanceId')}
        returning ${credits} as balance, finished.credits as amount`,
  );
  const ledger = db.$with('ledger', { id: sql<string>`id` }).as(
    sql`insert into ${creditLedger} (${sql.join(LEDGER_COLUMNS.map((column) => sql.identifier(column.name)), sql`, `)})
        select ${param('ledgerId')}, ${param('twinId')}, ${shape.account}, ${param('userId')}, -amount, balance, 'conversation.turn', ${param('meta')}::jsonb from charged
        where amount > 0
        returning ${creditLedger.id}`,
  );
  const touched = db.$with('touched', { id: sql<string>`id` }).as(
    shape.touches
      ? sql`update ${conversations} set ${sql.identifier(conversations.lastActivityAt.name)} = greatest(${conversations.lastActivityAt}, ${param('at')}::timestamptz)
          where ${conversations.id} = (select conversation_id from finished) and ${checkedOnly(sql`${conversations.twinId} = (select institution_id from finished)`)}
          returning ${conversations.id}`
      : sql`select null::char(24) as id where false`,
  );
  const ctes = shape.charging ? [locked, finished, charged, ledger, touched] : [finished, touched];
  // Only what the caller needs comes back: the finished record is known to it (parsing the whole row,
  // answer included, cost more than the rest of the statement's trip).
  return db
    .with(...ctes)
    .select({ credits: finished.credits })
    .from(finished);
}

const LEDGER_COLUMNS = [
  creditLedger.id,
  creditLedger.twinId,
  creditLedger.account,
  creditLedger.userId,
  creditLedger.delta,
  creditLedger.balanceAfter,
  creditLedger.reason,
  creditLedger.meta,
];

export interface HoldExtension {
  recordId: string;
  version: string;
  account: CreditAccount;
  balanceId: string;
  extra: number;
}

/**
 * Adds `extra` to a streaming record's hold and to its balance's holds, in one statement, while the
 * balance's spendable part covers it; undefined (nothing changed) when it does not or the record moved on.
 */
export async function extendRecordHold(db: Executor, extension: HoldExtension): Promise<{ version: string; heldCredits: number } | undefined> {
  const held = db.$with('held', { ok: sql<number>`ok` }).as(
    holdUpdate(
      extension.account,
      extension.balanceId,
      extension.extra,
      sql`exists (select 1 from ${history} where ${history.id} = ${extension.recordId} and ${history.status} = 'streaming' and ${history.updatedAt} = ${extension.version}::timestamptz)`,
    ),
  );
  const [row] = await db
    .with(held)
    .update(history)
    .set({ heldCredits: sql`${history.heldCredits} + ${extension.extra}::numeric`, updatedAt: sql`clock_timestamp()` })
    .where(and(eq(history.id, extension.recordId), sql`exists (select 1 from held)`))
    .returning({ version: historyVersion, heldCredits: history.heldCredits });
  return row;
}

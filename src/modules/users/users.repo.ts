// Data access for accounts. Every function takes the executor it runs on (database or transaction).
import { and, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { Database, Executor } from '../../platform/db/client.js';
import { preparedOn } from '../../platform/db/prepared.js';
import { twins, memberships, type TwinRow, type MembershipRow } from '../twins/twins.tables.js';
import { usableConnectionSql } from '../subscription/subscription.repo.js';
import { users, type UserRow } from './users.tables.js';

export type NewUser = typeof users.$inferInsert;

const userById = (db: Executor, id: unknown) => db.select().from(users).where(and(eq(users.id, id as string), isNull(users.deletedAt))).limit(1);

/** A live account by id: a prepared query outside transactions (many routes read it). */
export async function findUserById(db: Executor, id: string): Promise<UserRow | undefined> {
  const prepared = preparedOn(db, 'user_by_id', (d) => userById(d, sql.placeholder('id')).prepare('user_by_id'));
  const [row] = prepared ? await prepared.execute({ id }) : await userById(db, id);
  return row;
}

/** What the end of a conversation turn needs of its person: the Enable User Memory switch (long-term memory). */
export type TurnPerson = Pick<UserRow, 'userMemoryEnabled'>;

const turnPersonById = (db: Executor, id: unknown) =>
  db
    .select({ userMemoryEnabled: users.userMemoryEnabled })
    .from(users)
    .where(and(eq(users.id, id as string), isNull(users.deletedAt)))
    .limit(1);

/** Read after many turns (one column, not the whole wide row): a prepared query outside transactions. */
export async function findTurnPerson(db: Executor, id: string): Promise<TurnPerson | undefined> {
  const prepared = preparedOn(db, 'turn_person_by_id', (d) => turnPersonById(d, sql.placeholder('id')).prepare('turn_person_by_id'));
  const [row] = prepared ? await prepared.execute({ id }) : await turnPersonById(db, id);
  return row;
}

/** Live (not deleted) account by email, case-insensitive. */
export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  const [row] = await db
    .select()
    .from(users)
    .where(and(sql`lower(${users.email}) = ${email.toLowerCase()}`, isNull(users.deletedAt)))
    .limit(1);
  return row;
}

export async function insertUser(db: Executor, values: NewUser): Promise<UserRow> {
  const [row] = await db.insert(users).values({ ...values, email: values.email.toLowerCase() }).returning();
  return row;
}

export async function updateUser(db: Executor, id: string, values: Partial<NewUser>): Promise<UserRow | undefined> {
  const [row] = await db
    .update(users)
    .set({ ...values, version: sql`${users.version} + 1` })
    .where(eq(users.id, id))
    .returning();
  return row;
}

export async function countUsers(db: Executor): Promise<number> {
  const [row] = await db.select({ count: sql<number>`count(*)::int` }).from(users);
  return row.count;
}

/**
 * The account with a twin (its current one unless another is named) and its membership there,
 * in one round trip: the profile is read on every refresh. The common case (current twin) is a
 * prepared statement built once per database, since building this 80-column query dominates the cost.
 */
export async function findProfileRows(
  db: Database,
  userId: string,
  twinId?: string | null,
): Promise<ProfileRows | undefined> {
  if (twinId === undefined) {
    const [row] = await currentTwinQuery(db).execute({ userId });
    return row;
  }
  const [row] = await profileQuery(db, sql`${twinId}::char(24)`).limit(1).where(liveUser(userId));
  return row;
}

export interface ProfileRows {
  user: UserRow;
  twin: TwinRow | null;
  membership: MembershipRow | null;
  /** The twin has a usable chat subscription connected (modules/subscription). */
  subscriptionConnected: boolean;
}

const liveUser = (userId: unknown) => and(eq(users.id, userId as string), isNull(users.deletedAt));

function profileQuery(db: Database, twin: SQL | typeof users.currentTwinId) {
  return db
    .select({ user: users, twin: twins, membership: memberships, subscriptionConnected: usableConnectionSql(twins.id) })
    .from(users)
    .leftJoin(twins, and(eq(twins.id, twin), isNull(twins.deletedAt)))
    .leftJoin(memberships, and(eq(memberships.userId, users.id), eq(memberships.twinId, twin)))
    .$dynamic();
}

const prepared = new WeakMap<Database, ReturnType<typeof prepareCurrentTwin>>();
const prepareCurrentTwin = (db: Database) =>
  profileQuery(db, users.currentTwinId).where(liveUser(sql.placeholder('userId'))).limit(1).prepare('profile_rows_current');
function currentTwinQuery(db: Database) {
  let query = prepared.get(db);
  if (!query) prepared.set(db, (query = prepareCurrentTwin(db)));
  return query;
}

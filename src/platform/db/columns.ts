// Column helpers shared by every table: 24-hex ids, timestamps, money-like numbers.
import { sql } from 'drizzle-orm';
import { char, jsonb, numeric, timestamp } from 'drizzle-orm/pg-core';
import { newId } from '../ids/ids.js';

export const idColumn = () => char('id', { length: 24 }).primaryKey().$defaultFn(newId);
export const refColumn = (name: string) => char(name, { length: 24 });
export const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
export const updatedAt = () =>
  timestamp('updated_at', { withTimezone: true, mode: 'date' })
    .notNull()
    .defaultNow()
    .$onUpdateFn(() => new Date());
export const timestampColumn = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
/** Credits and other money-like quantities: exact decimals, read as numbers. */
export const amount = (name: string) => numeric(name, { precision: 18, scale: 6, mode: 'number' }).notNull().default(0);
export const stringList = (name: string) => jsonb(name).$type<string[]>().notNull().default(sql`'[]'::jsonb`);

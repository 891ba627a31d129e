// The people of a bench, made as an operator makes them: the first admin (ADMIN_EMAIL) signs in, creates
// each person in the Default Twin through POST /api/admin/user, funds them through PUT
// /api/admin/user/:id {credits} (the deployment endpoint may be priced; an operator funds people so),
// and each person signs in through POST /api/auth/signin (120 sign-ins a minute per address: keep
// BENCH_PEOPLE below ~100).
import { randomBytes } from 'node:crypto';
import { ADMIN } from './service-process.js';

export interface Person {
  email: string;
  userId: string;
  token: string;
}

const PASSWORD = 'bench-person-password';

async function call<T>(url: string, method: string, body: unknown, token?: string): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { 'x-access-token': token } : {}) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${new URL(url).pathname} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

export async function signIn(base: string, email: string, password: string): Promise<string> {
  return (await call<{ token: string }>(`${base}/api/auth/signin`, 'POST', { email, password })).token;
}

export async function createPeople(base: string, count: number, credits = 1_000_000_000): Promise<Person[]> {
  const admin = await signIn(base, ADMIN.email, ADMIN.password);
  const run = randomBytes(3).toString('hex');
  const people: Person[] = [];
  for (let i = 0; i < count; i++) {
    const email = `bench-${run}-${i}@example.test`;
    const created = await call<{ data: { _id: string } }>(`${base}/api/admin/user`, 'POST', { email, password: PASSWORD, fname: `Person ${i}`, role: 'user' }, admin);
    await call(`${base}/api/admin/user/${created.data._id}`, 'PUT', { credits }, admin);
    people.push({ email, userId: created.data._id, token: await signIn(base, email, PASSWORD) });
  }
  return people;
}

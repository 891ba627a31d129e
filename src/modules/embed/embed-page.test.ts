// The pages an embedding page loads: the chat page's policy lists exactly the twin's authorized origins
// ('none' for an empty list) and it carries no X-Frame-Options; an unknown or inactive twin shows the same
// message, framed nowhere, naming no twin; embed.js and the frame's files are served as scripts and style.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin } from '../../../test/support/factories.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { UNAVAILABLE_MESSAGE } from './embed-page.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const db = () => t.platform.database.db;
const page = (publicId: string) => t.app.inject({ method: 'GET', url: `/embed/${publicId}` });
const POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'";

function configOf(html: string) {
  const match = /data-config="([^"]*)"/.exec(html);
  return JSON.parse(match![1].replace(/&quot;/g, '"').replace(/&amp;/g, '&'));
}

describe('GET /embed/{publicId}', () => {
  it("lists exactly the twin's authorized origins in frame-ancestors, with no X-Frame-Options", async () => {
    const twin = await buildTwin(db(), {
      name: 'Physics <Twin>',
      publicAuthorizedUrls: ['https://school.example/courses/', 'http://127.0.0.1:8080', 'https://school.example/other', 'not a url', 'https://a.example; script-src *'],
      embedTranscriptEnabled: true,
    } as Partial<TwinRow>);
    const response = await page(twin.publicId);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toBe(`${POLICY}; frame-ancestors https://school.example http://127.0.0.1:8080`);
    expect(response.headers['x-frame-options']).toBeUndefined();
    expect(response.body).toContain('<header>Physics &lt;Twin&gt;</header>');
    expect(response.body).not.toContain('<Twin>');
    expect(configOf(response.body)).toEqual({ origins: ['https://school.example', 'http://127.0.0.1:8080'], liveTranscript: true });
    // Every other answer still forbids framing.
    const other = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(other.headers['x-frame-options']).toBe('SAMEORIGIN');
  });

  it("sends frame-ancestors 'none' for a twin with no authorized URLs", async () => {
    const twin = await buildTwin(db(), { publicAuthorizedUrls: [] });
    const response = await page(twin.publicId);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-security-policy']).toBe(`${POLICY}; frame-ancestors 'none'`);
  });

  it('shows one clear message for an unknown or inactive twin, framed nowhere and naming no twin', async () => {
    const inactive = await buildTwin(db(), { name: 'Closed Twin', status: 'inactive', publicAuthorizedUrls: ['https://school.example'] });
    for (const publicId of [inactive.publicId, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const response = await page(publicId);
      expect({ publicId, status: response.statusCode }).toEqual({ publicId, status: 404 });
      expect(response.headers['content-security-policy']).toBe(`${POLICY}; frame-ancestors 'none'`);
      expect(response.body).toContain(UNAVAILABLE_MESSAGE);
      expect(response.body).not.toContain('Closed Twin');
      expect(response.body).not.toContain('twin-form');
    }
  });
});

describe('GET /embed.js and the frame files', () => {
  it('serves the script a page includes, small, and the frame script and style', async () => {
    const script = await t.app.inject({ method: 'GET', url: '/embed.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.body).toContain('data-public-id');
    expect(script.body.length).toBeLessThan(10_000);
    expect((await t.app.inject({ method: 'GET', url: '/embed/assets/frame.js' })).headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await t.app.inject({ method: 'GET', url: '/embed/assets/frame.css' })).headers['content-type']).toBe('text/css; charset=utf-8');
  });
});

// Unit tests of the built-in local model, driven through the AI SDK's own streamText and
// generateText so the V3 contract (parts, usage, abort) is checked as the engine will use it.
import { generateText, streamText, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLocalModel } from './local-model.js';
import { estimateTokens, formatContextSections, parseContextSections } from './prompt.js';

const system = (sections: Parameters<typeof formatContextSections>[0]): string =>
  `You are the twin of Ada.\n\n${formatContextSections(sections)}`;

const passages = [
  'Ada keeps bees on the roof. The quokkaberry jam is made every August from the garden harvest.',
  'The office opens at nine. Parking is behind the library.',
];

describe('createLocalModel', () => {
  it('names itself as the V3 local model', () => {
    const model = createLocalModel();
    expect(model).toMatchObject({ specificationVersion: 'v3', provider: 'local', modelId: 'built-in-local' });
  });

  it('streams an extractive answer in several pieces that join to the final text', async () => {
    const result = streamText({
      model: createLocalModel(),
      system: system({ passages, memories: ['Ada prefers tea to coffee.'] }),
      prompt: 'When is the quokkaberry jam made?',
    });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    const text = await result.text;

    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(text);
    expect(text).toContain('built-in local model');
    expect(text).toContain('The quokkaberry jam is made every August from the garden harvest.');
    expect(text).not.toContain('Parking');
    expect(await result.finishReason).toBe('stop');

    const usage = await result.usage;
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBe(estimateTokens(text));
  });

  it('answers from memories too', async () => {
    const { text } = await generateText({
      model: createLocalModel(),
      system: system({ memories: ['Ada prefers tea to coffee.'] }),
      prompt: 'Does Ada like coffee?',
    });
    expect(text).toContain('Ada prefers tea to coffee.');
  });

  it('generates the same answer without streaming, and reports usage', async () => {
    const args = { system: system({ passages }), prompt: 'Where is the parking?' };
    const generated = await generateText({ model: createLocalModel(), ...args });
    const streamed = streamText({ model: createLocalModel(), ...args });

    expect(generated.text).toBe(await streamed.text);
    expect(generated.text).toContain('Parking is behind the library.');
    expect(generated.usage.inputTokens).toBeGreaterThan(0);
    expect(generated.usage.outputTokens).toBeGreaterThan(0);
  });

  it('says plainly when nothing given is about the question', async () => {
    for (const sections of [{}, { passages }]) {
      const { text } = await generateText({
        model: createLocalModel(),
        system: system(sections),
        prompt: 'What is the capital of Mongolia?',
      });
      expect(text).toContain('built-in local model');
      expect(text).toContain('no model provider is configured');
      expect(text).toContain('found nothing');
    }
  });

  it('never calls offered tools', async () => {
    let called = false;
    const result = await generateText({
      model: createLocalModel(),
      system: system({ passages }),
      prompt: 'When is the quokkaberry jam made?',
      tools: {
        lookup: tool({
          inputSchema: z.object({ query: z.string() }),
          execute: async () => {
            called = true;
            return 'x';
          },
        }),
      },
    });
    expect(called).toBe(false);
    expect(result.toolCalls).toEqual([]);
    expect(result.text).toContain('quokkaberry');
  });

  it('stops the stream promptly on abort', async () => {
    const controller = new AbortController();
    const long = Array.from({ length: 200 }, (_, i) => `Fact ${i} about quokkaberry harvest timing.`).join(' ');
    let aborted = false;
    const result = streamText({
      model: createLocalModel(),
      system: system({ passages: [long] }),
      prompt: 'quokkaberry harvest timing',
      abortSignal: controller.signal,
      onAbort: () => {
        aborted = true;
      },
    });
    const parts: string[] = [];
    for await (const part of result.fullStream) {
      parts.push(part.type);
      if (part.type === 'text-delta') controller.abort();
    }
    expect(aborted).toBe(true);
    expect(parts.filter((type) => type === 'text-delta')).toHaveLength(1);
    expect(parts.at(-1)).toBe('abort');
    expect(parts).not.toContain('finish');
  });

  it('refuses a call whose signal is already aborted', async () => {
    await expect(
      generateText({ model: createLocalModel(), prompt: 'hi', abortSignal: AbortSignal.abort(), maxRetries: 0 }),
    ).rejects.toThrow();
  });
});

describe('context sections', () => {
  it('round-trips passages and memories, including awkward content', () => {
    const sections = {
      passages: ['first\nwith two lines', 'has a </passage> inside', '   '],
      memories: ['likes tea'],
    };
    const text = formatContextSections(sections);
    expect(text).toContain('## Passages from the files');
    expect(text).toContain('<memory n="1">\nlikes tea\n</memory>');
    expect(parseContextSections(`intro\n${text}\noutro`)).toEqual({
      passages: ['first\nwith two lines', 'has a <\\/passage> inside'],
      memories: ['likes tea'],
    });
  });

  it('is empty when there is nothing to give', () => {
    expect(formatContextSections({})).toBe('');
  });

  it('estimates tokens as a quarter of the characters, rounded up', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcde')).toBe(2);
  });
});

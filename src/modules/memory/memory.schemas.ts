// Wire shapes of /api/user/memory: the spec's memory parameter, the create and edit bodies.
import { z } from 'zod';

export const memoryParameterSchema = z.object({
  _id: z.string(),
  key_name: z.string(),
  key_value: z.string(),
  key_description: z.string(),
  key_namespace: z.string(),
  shared: z.boolean(),
  editable: z.boolean().describe('whether the caller may edit (and delete) this row'),
  isAuthor: z.boolean().describe('whether the caller wrote this row'),
  created: z.string().describe('date-time'),
  institution: z.object({ _id: z.string(), name: z.string(), ainame: z.string(), picture: z.string() }),
});
export type MemoryParameterWire = z.infer<typeof memoryParameterSchema>;

export const createMemoryBody = z.object({
  key_name: z.string().trim().min(1).max(200),
  key_value: z.string().trim().min(1).max(4000),
  key_description: z.string().trim().max(1000).optional(),
  key_namespace: z.string().trim().min(1).max(100).optional(),
  shared: z.boolean().optional(),
});
export type CreateMemoryInput = z.infer<typeof createMemoryBody>;

/** Only these three are applied; any other key is dropped by the schema (the spec: "Only these three are applied"). */
export const editMemoryBody = z.object({
  key_value: z.string().trim().min(1).max(4000).optional(),
  key_description: z.string().trim().max(1000).optional(),
  shared: z.boolean().optional(),
});
export type EditMemoryInput = z.infer<typeof editMemoryBody>;

export const memoryResponse = z.object({ success: z.literal(true), data: memoryParameterSchema });
export const memoryListResponse = z.object({ success: z.literal(true), data: z.array(memoryParameterSchema) });

// Wire shapes of the subscription connection: the spec's status record and the device sign-in's start
// and poll answers (contract-additions, "Subscription connection of a twin").
import { z } from 'zod';

export const subscriptionStatusSchema = z
  .object({
    success: z.literal(true),
    connected: z.boolean().describe('the twin has a usable subscription connected'),
  })
  .describe('Subscription connection status');

export const subscriptionStartSchema = z
  .object({
    success: z.literal(true),
    userCode: z.string().describe('the code the administrator enters at verificationUri'),
    verificationUri: z.string().describe("the provider's page where the sign-in is approved"),
    verificationUriComplete: z.string().optional().describe('the same page with the code filled in, when the provider offers one'),
    expiresAt: z.string().describe('ISO 8601 UTC time after which the code is no longer accepted (poll answers 410 EXPIRED)'),
    interval: z.number().int().describe('seconds to wait between polls'),
  })
  .describe('Subscription sign-in started');

export const subscriptionPollSchema = z
  .object({
    success: z.literal(true),
    connected: z.boolean().describe('the twin has a usable subscription connected'),
    pending: z.boolean().describe('the sign-in is still waiting for the person at the provider'),
  })
  .describe('Subscription sign-in progress');

// /api/user/assistant(s) and /api/user/favoriteAssistants: the signed-in person's assistants.
import { z } from 'zod';
import { actorOf, callerOf } from '../../platform/http/auth-guard.js';
import { failures, idParams, messageSchema, type App } from '../../platform/http/schemas.js';
import {
  assistantCreateBody,
  assistantEnvelope,
  assistantListEnvelope,
  assistantScopeSchema,
  assistantUpdateBody,
  assistantUpdateResult,
  favoritesResult,
} from './assistants.schemas.js';
import type { AssistantService } from './assistants.service.js';
import type { FavoritesService } from './favorites.service.js';

const NOT_FOUND = 'Unknown, deleted or out-of-scope assistants answer 404 "Assistant not found!".';

export function assistantRoutes(app: App, service: AssistantService, favorites: FavoritesService): void {
  app.get(
    '/api/user/assistants',
    {
      config: { visitors: true },
      schema: {
        tags: ['assistants'],
        summary: 'List the assistants the caller can pick',
        description:
          'Exactly the set a conversation may run on (behaviour 1): active system assistants (the standard New Conversation ' +
          "first), the caller's personal assistants, the current twin's assistants the caller owns or that are shared with the " +
          "twin (admin_only ones only for people who manage the twin's assistants), and account-shared assistants of other " +
          "twins on the same account (never admin_only ones). Unpublished assistants appear only to their owner. Ids listed in the twin's " +
          "assistantsDisabled are left out. A visitor of an embedded twin sees what its turns run on: New Conversation.",
        response: { 200: assistantListEnvelope, ...failures(401) },
      },
    },
    async (request) => ({ success: true as const, data: await service.list(callerOf(request)) }),
  );

  app.post(
    '/api/user/assistant',
    {
      config: { validationMessage: 'Invalid Properties' },
      schema: {
        tags: ['assistants'],
        summary: 'Create an assistant',
        description:
          "institution omitted: the current twin (personal when the caller has none); '' makes it personal; an id names a twin " +
          'the caller is a member of (404 otherwise). A twin with assistant creation off (disableAssistantsForUser) answers 403 ' +
          "unless the caller manages its assistants. Sharing follows the update route's rules; refused sharing is reported " +
          'through scope and sharingDropped. user is ignored (the caller owns it); status deleted is refused.',
        body: assistantCreateBody,
        response: {
          201: assistantEnvelope.extend({ scope: assistantScopeSchema, sharingDropped: z.boolean() }),
          ...failures(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const created = await service.create(actorOf(request), request.body);
      return reply.status(201).send({ success: true as const, ...created });
    },
  );

  app.get(
    '/api/user/assistant/:id',
    {
      schema: {
        tags: ['assistants'],
        summary: 'Read an assistant',
        description:
          "Any assistant the caller can pick, owns, or whose twin they administer (assistants.list). instructions are empty for callers who may not edit it. " +
          NOT_FOUND,
        params: idParams,
        response: { 200: assistantEnvelope, ...failures(400, 401, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.get(actorOf(request), request.params.id) }),
  );

  app.put(
    '/api/user/assistant/:id',
    {
      config: { validationMessage: 'Invalid Properties' },
      schema: {
        tags: ['assistants'],
        summary: 'Update an assistant',
        description: [
          'Caller must own the assistant, or it is editable_others (and the caller can pick it), or the caller holds assistants.edit on its twin; otherwise 403.',
          'Unknown keys are ignored; update operators ($-keys) and values outside an enum or limit answer 400 "Invalid Properties". user, created and liked_count are read-only.',
          "Moving (institution), status and editable_others are for the owner and the twin's assistant editors only (403 ASSISTANT_OWNER_ONLY).",
          "institution '' makes it personal and switches sharing off. A different institution needs the caller to be a member (404 \"Institution not found\" otherwise);",
          'a twin with assistant creation off answers 403 unless the caller manages its assistants; the assistant arrives unshared unless the caller manages that twin\'s assistants.',
          "Sharing (institution_shared, account_shared) and admin_only are decided on the twin it will be in: only the twin's administrators and assistants.edit holders",
          'turn them on, or off on someone else\'s assistant; a refused change is not applied and sharingDropped is true. account_shared is reset when institution_shared',
          'is not true and cannot be on when the twin belongs to no account. scope: user (only the owner picks it), institution, account, or system.',
          'The standard assistant cannot be moved or have its status changed. ' + NOT_FOUND,
        ].join(' '),
        params: idParams,
        body: assistantUpdateBody.optional(),
        response: { 200: assistantUpdateResult, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => service.update(actorOf(request), request.params.id, request.body ?? {}),
  );

  app.delete(
    '/api/user/assistant/:id',
    {
      schema: {
        tags: ['assistants'],
        summary: 'Delete an assistant (status becomes deleted)',
        description:
          'The owner, or a holder of assistants.delete on its twin (super admins for system assistants), may delete; others get 403. ' +
          'The standard assistant cannot be deleted (403). Conversations naming a deleted assistant run on New Conversation. ' +
          NOT_FOUND,
        params: idParams,
        response: { 200: messageSchema, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await service.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'Assistant deleted successfully' };
    },
  );

  const favoriteSchema = (summary: string, description: string) => ({
    tags: ['assistants'],
    summary,
    description,
    params: idParams,
    response: { 200: favoritesResult, ...failures(400, 401, 404) },
  });

  app.post(
    '/api/user/favoriteAssistants/:id',
    {
      config: { validationMessage: 'Invalid assistant id' },
      schema: favoriteSchema(
        'Add a favorite assistant',
        'Appends the id to the caller\'s favorites. Idempotent: when present, the list is returned unchanged and nothing is saved. ' +
          'A malformed id answers 400 "Invalid assistant id"; an assistant the caller cannot pick answers 404 "Assistant not found!"; ' +
          'more than 200 favorites answers 400.',
      ),
    },
    async (request) => ({ success: true as const, favoriteAssistants: await favorites.add(actorOf(request), request.params.id) }),
  );

  app.delete(
    '/api/user/favoriteAssistants/:id',
    {
      config: { validationMessage: 'Invalid assistant id' },
      schema: favoriteSchema('Remove a favorite assistant', 'Removes the id; an id not in the list returns it unchanged.'),
    },
    async (request) => ({ success: true as const, favoriteAssistants: await favorites.remove(actorOf(request), request.params.id) }),
  );
}

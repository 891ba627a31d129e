// Suggested questions: administered by holders of questions.list (to see) and questions.edit (to
// change) in the question's twin; another twin's question answers 404. People read their current
// twin's (GET /api/user/questions), and the public branding lists them too.
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { BadRequestError, NotFoundError } from '../../platform/http/errors.js';
import { requireAccess } from '../access/access.js';
import { findAssistantById } from '../assistants/assistants.repo.js';
import { deleteQuestions, findQuestion, insertQuestion, listQuestions, questionsOfTwin, updateQuestion, type NewQuestion } from './questions.repo.js';
import type { QuestionInput, QuestionWire } from './questions.schemas.js';
import type { QuestionRow } from './questions.tables.js';

export function presentQuestion(row: QuestionRow): QuestionWire {
  return {
    _id: row.id,
    institution: row.twinId,
    text: row.text,
    assistantId: row.assistantId,
    order: row.position,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}

/** A 400 naming its field the way schema errors do (`error.field`, `error.issues`), so a form shows it at the field. */
const fieldError = (message: string, code: string, field: string) => new BadRequestError(message, code, { field, issues: [{ field, message }] });

const forPeople = (row: QuestionRow) => ({ _id: row.id, text: row.text, assistantId: row.assistantId, order: row.position });

export function createQuestionsService(db: Database) {
  /** A question may name one of its twin's live assistants, or a system assistant. */
  async function checkAssistant(twinId: string, assistantId: string | null | undefined): Promise<void> {
    if (!assistantId) return;
    const assistant = await findAssistantById(db, assistantId);
    const fits = assistant && assistant.status !== 'deleted' && (assistant.twinId === twinId || (!assistant.twinId && !assistant.userId));
    if (!fits) throw fieldError("The assistant is not one of this twin's", 'INVALID_ASSISTANT', 'body.assistantId');
  }

  function toColumns(input: QuestionInput): Partial<NewQuestion> {
    return { text: input.text, assistantId: input.assistantId, position: input.order };
  }

  async function loadFor(actor: Actor, id: string, action: 'question.read' | 'question.edit'): Promise<QuestionRow> {
    const row = await findQuestion(db, id);
    await requireAccess(db, actor, action, { question: row });
    return row!;
  }

  return {
    async list(actor: Actor, query: { page: number; limit: number; search?: string; institution?: string }) {
      const scope = await requireAccess(db, actor, 'twins.managed', { permission: 'questions.list' });
      const twins = query.institution ? (scope === 'all' || scope.includes(query.institution) ? [query.institution] : []) : scope;
      const { rows, total } = await listQuestions(db, { twins, search: query.search }, { offset: (query.page - 1) * query.limit, limit: query.limit });
      return { success: true as const, data: rows.map(presentQuestion), page: query.page, limit: query.limit, total };
    },

    async get(actor: Actor, id: string) {
      return presentQuestion(await loadFor(actor, id, 'question.read'));
    },

    async create(actor: Actor, input: QuestionInput & { text: string; institution?: string }) {
      const twinId = input.institution ?? actor.twinId;
      if (!twinId) throw fieldError('Name the twin (institution): you are in none', 'INSTITUTION_REQUIRED', 'body.institution');
      await requireAccess(db, actor, 'question.create', { twinId });
      await checkAssistant(twinId, input.assistantId);
      return presentQuestion(await insertQuestion(db, { ...toColumns(input), text: input.text, twinId, createdBy: actor.userId }));
    },

    async edit(actor: Actor, id: string, input: QuestionInput) {
      const current = await loadFor(actor, id, 'question.edit');
      await checkAssistant(current.twinId, input.assistantId);
      return presentQuestion((await updateQuestion(db, id, toColumns(input))) ?? current);
    },

    async remove(actor: Actor, id: string): Promise<void> {
      await loadFor(actor, id, 'question.edit');
      await deleteQuestions(db, [id], 'all');
    },

    /** Behaviour 13's shape: questions outside the twins where the caller holds questions.edit are left alone. */
    async bulkDelete(actor: Actor, ids: string[]): Promise<number> {
      const scope = await requireAccess(db, actor, 'twins.managed', { permission: 'questions.edit' });
      return deleteQuestions(db, [...new Set(ids)], scope);
    },

    /** The current twin's questions, for its people (none without a twin). */
    async ofCurrentTwin(actor: Actor) {
      return { success: true as const, data: actor.twinId ? (await questionsOfTwin(db, actor.twinId)).map(forPeople) : [] };
    },
  };
}

export type QuestionsService = ReturnType<typeof createQuestionsService>;

// Shapes history rows for the wire, field by field: list items carry counts only, the detail adds
// the working detail (already replaced by the expiry marker when it has expired).
import { DETAILS_EXPIRED_TEXT } from './history.detail.js';
import type { AdminFeedbackRow } from './feedback.repo.js';
import type { AdminHistoryRow, HistorySummaryRow } from './history.repo.js';
import type { AdminFeedbackWire, AdminHistoryWire, FeedbackWire, HistoryDetailWire, HistorySummaryWire } from './history.schemas.js';
import type { FeedbackRow, HistoryRow } from './history.tables.js';

type SummarySource = Omit<HistorySummaryRow, 'feedbackRating' | 'feedbackComment'> & {
  feedback: { rating: FeedbackRow['rating']; comment: string } | null;
};

function presentBase(row: SummarySource): HistorySummaryWire {
  return {
    _id: row.id,
    conversationId: row.conversationId,
    user: row.userId,
    institution: row.twinId,
    assistant: row.assistantId ? { _id: row.assistantId, name: row.assistantName } : null,
    question: row.question,
    answer: row.answer,
    status: row.status,
    mode: row.mode,
    models: row.models,
    usage: {
      inputTokens: row.inputTokens,
      outputTokens: row.outputTokens,
      reasoningTokens: row.reasoningTokens,
      totalTokens: row.inputTokens + row.outputTokens,
    },
    credits: row.credits,
    toolCallCount: row.toolCallCount,
    subagentCount: row.subagentCount,
    memoryCount: row.memoryCount,
    hasReasoning: row.hasReasoning,
    hasRagSearch: row.ragSearchCount > 0,
    ragSearchCount: row.ragSearchCount,
    ragSearchMode: row.ragSearchMode,
    detailsExpired: row.detailsExpiredAt !== null,
    detailsExpiredAt: row.detailsExpiredAt?.toISOString() ?? null,
    detailsNotice: row.detailsExpiredAt ? DETAILS_EXPIRED_TEXT : null,
    feedback: row.feedback,
    created: row.createdAt.toISOString(),
    completed: row.completedAt?.toISOString() ?? null,
  };
}

function feedbackOf(rating: FeedbackRow['rating'] | null, comment: string | null): SummarySource['feedback'] {
  return rating ? { rating, comment: comment ?? '' } : null;
}

export function presentHistorySummary(row: HistorySummaryRow): HistorySummaryWire {
  return presentBase({ ...row, feedback: feedbackOf(row.feedbackRating, row.feedbackComment) });
}

export function presentAdminHistory(row: AdminHistoryRow): AdminHistoryWire {
  return {
    ...presentHistorySummary(row),
    userEmail: row.userEmail,
    userName: [row.userFname, row.userLname].filter(Boolean).join(' '),
    institutionName: row.twinName,
  };
}

export function presentHistoryDetail(row: HistoryRow, feedback: FeedbackRow | undefined): HistoryDetailWire {
  const hasReasoning = row.reasoning !== null && row.reasoning !== '';
  return {
    ...presentBase({ ...row, hasReasoning, feedback: feedback ? { rating: feedback.rating, comment: feedback.comment } : null }),
    error: row.error,
    toolCalls: row.toolCalls,
    subagents: row.subagents,
    ragSearch: row.ragSearch,
    reasoning: row.reasoning,
    memories: row.memories,
    guidance: row.guidance,
  };
}

export function presentFeedback(row: FeedbackRow): FeedbackWire {
  return { rating: row.rating, comment: row.comment, created: row.createdAt.toISOString(), updated: row.updatedAt.toISOString() };
}

export function presentAdminFeedback(row: AdminFeedbackRow): AdminFeedbackWire {
  const { feedback } = row;
  return {
    _id: feedback.id,
    history: { _id: feedback.historyId, conversationId: row.conversationId, question: row.question, answer: row.answer, assistantName: row.assistantName },
    user: feedback.userId,
    userEmail: row.userEmail,
    userName: [row.userFname, row.userLname].filter(Boolean).join(' '),
    institution: feedback.twinId,
    institutionName: row.twinName,
    rating: feedback.rating,
    comment: feedback.comment,
    status: feedback.status,
    adminNote: feedback.adminNote,
    created: feedback.createdAt.toISOString(),
    updated: feedback.updatedAt.toISOString(),
  };
}

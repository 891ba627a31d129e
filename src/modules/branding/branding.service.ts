// The public branding of a twin, found by its publicId (no caller: the page that embeds a twin asks).
import type { Database } from '../../platform/db/client.js';
import { AppError } from '../../platform/http/errors.js';
import { questionsOfTwin } from '../questions/questions.repo.js';
import type { QuestionRow } from '../questions/questions.tables.js';
import { findTwinByPublicId } from '../twins/twins.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import type { BrandingWire } from './branding.schemas.js';

export interface BrandingDeps {
  db: Database;
  /** Whether third-party sign-in is configured for the deployment or this twin (only ever a boolean). */
  idpConfigured: (twinId: string) => Promise<boolean>;
}

export function presentBranding(row: TwinRow, idpEnabled: boolean, questions: QuestionRow[]): BrandingWire {
  return {
    picture: row.picture,
    picture_animated: row.pictureAnimated,
    picture_bg: row.pictureBg,
    picture_dark_bg: row.pictureDarkBg,
    voice_agent_id: row.voiceAgentId,
    about: row.about,
    ainame: row.ainame,
    status: row.status,
    idpEnabled,
    questions: questions.map((question) => ({ text: question.text, assistantId: question.assistantId })),
  };
}

export function createBrandingService({ db, idpConfigured }: BrandingDeps) {
  return {
    async byPublicId(publicId: string): Promise<BrandingWire> {
      const twin = await findTwinByPublicId(db, publicId);
      if (!twin) throw new AppError(404, 'Digital Twin not found', 'NOT_FOUND', undefined, 'No Digital Twin has this publicId');
      const [idpEnabled, questions] = await Promise.all([idpConfigured(twin.id), questionsOfTwin(db, twin.id)]);
      return presentBranding(twin, idpEnabled, questions);
    },
  };
}

export type BrandingService = ReturnType<typeof createBrandingService>;

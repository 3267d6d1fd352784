import type DataLoader from 'dataloader';
import type { SurveyAsset } from '../assets/survey-asset.entity.js';
import type { Survey } from './survey.entity.js';
import type { SurveyService } from './survey.service.js';
import type { SurveyEventService } from './survey-event.service.js';

/** What the survey resolvers and references use of a request's context (surveys.context.ts makes it). */
export interface SurveyContext {
  /** Bound to the surveyor; the shield keeps every resolver that uses it behind one. */
  surveys: SurveyService;
  /** Survey events as they commit, for this caller (`surveyEvents`). */
  surveyEvents: SurveyEventService;
  surveyById: DataLoader<string, Survey | null>;
  surveysByContact: DataLoader<string, Survey[]>;
  committedAssetsBySurvey: DataLoader<string, SurveyAsset[]>;
}

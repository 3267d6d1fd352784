import { MagicLink, UserSession } from './sign-in.entity.js';
import { SurveyAsset } from './survey-asset.entity.js';
import { SurveyEvent } from './survey-event.entity.js';
import { Survey } from './survey.entity.js';

/** Every MikroORM entity of the surveys schema. */
export const surveysEntities = [Survey, SurveyAsset, SurveyEvent, MagicLink, UserSession];

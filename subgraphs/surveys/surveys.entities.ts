import { MagicLink, UserSession } from './sign-in/sign-in.entity.js';
import { SurveyAsset } from './assets/survey-asset.entity.js';
import { SurveyEvent } from './survey/survey-event.entity.js';
import { Survey } from './survey/survey.entity.js';

/** Every MikroORM entity of the surveys schema. */
export const surveysEntities = [Survey, SurveyAsset, SurveyEvent, MagicLink, UserSession];

import { ConnectionType } from '#lib/data/pagination.js';
import { SurveyEvent } from './survey-event.entity.js';

export const SurveyEventConnection = ConnectionType(SurveyEvent, 'SurveyEvent');

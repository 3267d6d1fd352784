import { ConnectionType, PageType } from '#lib/data/pagination.js';
import { Survey } from './survey.entity.js';

export const SurveyConnection = ConnectionType(Survey, 'Survey');
export const SurveyPage = PageType(Survey, 'Survey');

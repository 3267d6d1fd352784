import { ConnectionType, PageType } from '#lib/data/pagination.js';
import { Pipeline, StageMove } from './pipeline.entity.js';

export const PipelineConnection = ConnectionType(Pipeline, 'Pipeline');
export const PipelinePage = PageType(Pipeline, 'Pipeline');
export const StageMoveConnection = ConnectionType(StageMove, 'StageMove');
export const StageMovePage = PageType(StageMove, 'StageMove');

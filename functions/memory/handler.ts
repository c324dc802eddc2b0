import { memoryContract } from '../../shared/contract/memory';
import { createHandler } from '../../shared/http/pipeline';
import { getMemory, writeMemory } from './operations';

export const handler = createHandler(memoryContract, { getMemory, writeMemory });

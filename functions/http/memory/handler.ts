import { memoryContract } from '#contract/memory';
import { createHandler } from '#http/pipeline';
import { getMemory, writeMemory } from './operations';

export const handler = createHandler(memoryContract, { getMemory, writeMemory });

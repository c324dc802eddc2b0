import type { SkillName } from '../../shared/contract/skills';
import type { SkillModule } from './skill-module';

/**
 * The skills that have a module, one line each. A catalogue skill missing here answers 501
 * through the pipeline's not-implemented path.
 */
const modules: SkillModule[] = [];

export const skillRegistry: ReadonlyMap<SkillName, SkillModule> = new Map(modules.map((m) => [m.name, m]));

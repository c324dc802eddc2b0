import { skillsContract } from '../../shared/contract/skills';
import { createHandler } from '../../shared/http/pipeline';

// Operations are filled in by the issue that builds this group; until then its routes answer 501.
export const handler = createHandler(skillsContract, {});

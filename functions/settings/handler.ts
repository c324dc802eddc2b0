import { settingsContract } from '../../shared/contract/settings';
import { createHandler } from '../../shared/http/pipeline';

// Operations are filled in by the issue that builds this group; until then its routes answer 501.
export const handler = createHandler(settingsContract, {});

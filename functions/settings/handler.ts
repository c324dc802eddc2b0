import { settingsContract } from '../../shared/contract/settings';
import { createHandler } from '../../shared/http/pipeline';
import { deleteAccount } from './delete-account';
import { changePassword } from './password';
import { getSettings, patchSettings, updateSettings } from './profile';

export const handler = createHandler(settingsContract, { getSettings, updateSettings, patchSettings, changePassword, deleteAccount });

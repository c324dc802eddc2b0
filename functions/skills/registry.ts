import type { SkillName } from '../../shared/contract/skills';
import type { SkillModule } from './skill-module';

/** A skill's module, imported on its first call. */
export type SkillLoader = () => Promise<SkillModule>;

/**
 * Every catalogue skill's module, keyed by its name: a Record over SkillName, so a catalogue skill
 * without a module (or a module under the wrong name) does not compile. Each module is imported on
 * the skill's first call: a call needs one skill's code (viem, S3, the AI SDK, the channels...), not
 * all 28 at every cold start.
 */
export const skillRegistry: Readonly<Record<SkillName, SkillLoader>> = {
  calendar: () => import('./skills/calendar').then((m) => m.skill),
  'dj-streaming': () => import('./skills/dj-streaming').then((m) => m.skill),
  'file-manager': () => import('./skills/file-manager').then((m) => m.skill),
  'groupie-manager': () => import('./skills/groupie-manager').then((m) => m.skill),
  'notes-workspace': () => import('./skills/notes-workspace').then((m) => m.skill),
  'royalty-tracker': () => import('./skills/royalty-tracker').then((m) => m.skill),
  treasury: () => import('./skills/treasury').then((m) => m.skill),
  'workspace-suite': () => import('./skills/workspace-suite').then((m) => m.skill),
  'demo-submitter': () => import('./skills/demo-submitter').then((m) => m.skill),
  'event-scheduler': () => import('./skills/event-scheduler').then((m) => m.skill),
  'event-ticketing': () => import('./skills/event-ticketing').then((m) => m.skill),
  'festival-finder': () => import('./skills/festival-finder').then((m) => m.skill),
  guestlist: () => import('./skills/guestlist').then((m) => m.skill),
  'setlist-oracle': () => import('./skills/setlist-oracle').then((m) => m.skill),
  'track-archaeologist': () => import('./skills/track-archaeologist').then((m) => m.skill),
  'venue-finder': () => import('./skills/venue-finder').then((m) => m.skill),
  'chat-bot': () => import('./skills/chat-bot').then((m) => m.skill),
  'community-bot': () => import('./skills/community-bot').then((m) => m.skill),
  'business-messaging': () => import('./skills/business-messaging').then((m) => m.skill),
  'business-messaging-api': () => import('./skills/business-messaging-api').then((m) => m.skill),
  'team-chat': () => import('./skills/team-chat').then((m) => m.skill),
  browser: () => import('./skills/browser').then((m) => m.skill),
  webhook: () => import('./skills/webhook').then((m) => m.skill),
  'visual-synthesizer': () => import('./skills/visual-synthesizer').then((m) => m.skill),
  'booking-settlement': () => import('./skills/booking-settlement').then((m) => m.skill),
  'usdc-payments': () => import('./skills/usdc-payments').then((m) => m.skill),
  'instant-split': () => import('./skills/instant-split').then((m) => m.skill),
  email: () => import('./skills/email').then((m) => m.skill),
};

import type { SkillName } from '#contract/skills';
import type { SkillModule } from '#domain/skills/skill-module';

/**
 * Every catalogue skill's module loader, keyed by its name: a Record over SkillName, so a catalogue
 * skill without a module does not compile. Each skill (and what only it uses: S3, the AI layer,
 * chains, email...) is a lazy chunk, parsed on that skill's first call rather than at every cold start.
 */
export const skillLoaders: Readonly<Record<SkillName, () => Promise<SkillModule>>> = {
  calendar: async () => (await import('./skills/calendar')).skill,
  'dj-streaming': async () => (await import('./skills/dj-streaming')).skill,
  'file-manager': async () => (await import('./skills/file-manager')).skill,
  'groupie-manager': async () => (await import('./skills/groupie-manager')).skill,
  'notes-workspace': async () => (await import('./skills/notes-workspace')).skill,
  'royalty-tracker': async () => (await import('./skills/royalty-tracker')).skill,
  treasury: async () => (await import('./skills/treasury')).skill,
  'workspace-suite': async () => (await import('./skills/workspace-suite')).skill,
  'demo-submitter': async () => (await import('./skills/demo-submitter')).skill,
  'event-scheduler': async () => (await import('./skills/event-scheduler')).skill,
  'event-ticketing': async () => (await import('./skills/event-ticketing')).skill,
  'festival-finder': async () => (await import('./skills/festival-finder')).skill,
  guestlist: async () => (await import('./skills/guestlist')).skill,
  'setlist-oracle': async () => (await import('./skills/setlist-oracle')).skill,
  'track-archaeologist': async () => (await import('./skills/track-archaeologist')).skill,
  'venue-finder': async () => (await import('./skills/venue-finder')).skill,
  'chat-bot': async () => (await import('./skills/chat-bot')).skill,
  'community-bot': async () => (await import('./skills/community-bot')).skill,
  'business-messaging': async () => (await import('./skills/business-messaging')).skill,
  'business-messaging-api': async () => (await import('./skills/business-messaging-api')).skill,
  'team-chat': async () => (await import('./skills/team-chat')).skill,
  browser: async () => (await import('./skills/browser')).skill,
  webhook: async () => (await import('./skills/webhook')).skill,
  'visual-synthesizer': async () => (await import('./skills/visual-synthesizer')).skill,
  'booking-settlement': async () => (await import('./skills/booking-settlement')).skill,
  'usdc-payments': async () => (await import('./skills/usdc-payments')).skill,
  'instant-split': async () => (await import('./skills/instant-split')).skill,
  email: async () => (await import('./skills/email')).skill,
};

/** The skill's module, loaded on its first call (node caches the import). */
export const loadSkill = (name: SkillName): Promise<SkillModule> => skillLoaders[name]();

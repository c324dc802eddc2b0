import type * as z from 'zod/mini';
import { calendarActions } from './calendar';
import { djStreamingActions } from './dj-streaming';
import { fileManagerActions } from './file-manager';
import { groupieManagerActions } from './groupie-manager';
import { notesWorkspaceActions } from './notes-workspace';
import { royaltyTrackerActions } from './royalty-tracker';
import { treasuryActions } from './treasury';
import { workspaceSuiteActions } from './workspace-suite';
import { eventSchedulerActions, eventTicketingActions, festivalFinderActions, guestlistActions, venueFinderActions } from './events';
import { browserActions, visualSynthesizerActions, webhookActions } from './development-creative';
import { bookingSettlementActions, emailActions, instantSplitActions, usdcPaymentsActions } from './payments';
import { demoSubmitterActions, setlistOracleActions, trackArchaeologistActions } from './music';
import { channelSkillActions } from './channels';
import type { Lazy } from '../route';

/** The actions of one skill: each body is a strict object whose `action` is a literal. */
export interface SkillActionBodies {
  /** Built on first use (contract/route.ts `lazySchema`); the example is plain data. */
  bodies: Lazy<Record<string, z.ZodMiniObject>>;
  /** A valid body of one action: documents the endpoint and seeds the generic security suites. */
  example: Record<string, unknown>;
}

/**
 * The request bodies of the skills that have a module: one file per skill beside this one, one
 * line here. The contract documents them (OpenAPI) and the skill's module validates with the very
 * same schemas, so the two cannot drift.
 */
export const SKILL_ACTION_BODIES: Record<string, SkillActionBodies> = {
  'groupie-manager': groupieManagerActions,
  'royalty-tracker': royaltyTrackerActions,
  'notes-workspace': notesWorkspaceActions,
  calendar: calendarActions,
  'workspace-suite': workspaceSuiteActions,
  'dj-streaming': djStreamingActions,
  treasury: treasuryActions,
  'file-manager': fileManagerActions,
  'track-archaeologist': { bodies: trackArchaeologistActions, example: { action: 'search', bpm: 124, genre: 'deep house', mood: 'uplifting' } },
  'setlist-oracle': { bodies: setlistOracleActions, example: { action: 'build', genre: 'techno', duration: 90 } },
  'event-ticketing': {
    bodies: eventTicketingActions,
    example: { action: 'purchase', eventId: 'evt_summer-24', email: 'fan@example.com', tier: 'general' },
  },
  guestlist: {
    bodies: guestlistActions,
    example: { action: 'add_guest', eventId: 'evt_summer-24', name: 'Ada Lovelace', email: 'ada@example.com', plusOnes: 1 },
  },
  'event-scheduler': {
    bodies: eventSchedulerActions,
    example: { action: 'schedule', title: 'Album launch party', date: '2025-09-12', time: '20:30', channels: ['chatBot', 'communityBot'] },
  },
  'venue-finder': { bodies: venueFinderActions, example: { action: 'search', city: 'Manchester', type: 'club', capacity: 500, maxPrice: 2000 } },
  'festival-finder': { bodies: festivalFinderActions, example: { action: 'search', genre: 'electronic', country: 'NL', maxPrice: 250 } },
  'usdc-payments': usdcPaymentsActions,
  'booking-settlement': bookingSettlementActions,
  'instant-split': instantSplitActions,
  email: emailActions,
  'demo-submitter': { bodies: demoSubmitterActions, example: { action: 'submit', title: 'Midnight Drive', artist: 'Nova Lane' } },
  ...channelSkillActions,
  browser: browserActions,
  webhook: webhookActions,
  'visual-synthesizer': visualSynthesizerActions,
};

import type { SkillName } from '../../shared/contract/skills';
import type { SkillModule } from './skill-module';
import { skill as calendar } from './skills/calendar';
import { skill as djStreaming } from './skills/dj-streaming';
import { skill as fileManager } from './skills/file-manager';
import { skill as groupieManager } from './skills/groupie-manager';
import { skill as notesWorkspace } from './skills/notes-workspace';
import { skill as royaltyTracker } from './skills/royalty-tracker';
import { skill as treasury } from './skills/treasury';
import { skill as workspaceSuite } from './skills/workspace-suite';
import { skill as demoSubmitter } from './skills/demo-submitter';
import { skill as eventScheduler } from './skills/event-scheduler';
import { skill as eventTicketing } from './skills/event-ticketing';
import { skill as festivalFinder } from './skills/festival-finder';
import { skill as guestlist } from './skills/guestlist';
import { skill as setlistOracle } from './skills/setlist-oracle';
import { skill as trackArchaeologist } from './skills/track-archaeologist';
import { skill as venueFinder } from './skills/venue-finder';
import { skill as chatBot } from './skills/chat-bot';
import { skill as communityBot } from './skills/community-bot';
import { skill as businessMessaging } from './skills/business-messaging';
import { skill as businessMessagingApi } from './skills/business-messaging-api';
import { skill as teamChat } from './skills/team-chat';
import { skill as browser } from './skills/browser';
import { skill as webhook } from './skills/webhook';
import { skill as visualSynthesizer } from './skills/visual-synthesizer';
import { skill as bookingSettlement } from './skills/booking-settlement';
import { skill as usdcPayments } from './skills/usdc-payments';
import { skill as instantSplit } from './skills/instant-split';
import { skill as email } from './skills/email';

/**
 * Every catalogue skill's module, keyed by its name: a Record over SkillName, so a catalogue skill
 * without a module (or a module under the wrong name) does not compile.
 */
export const skillRegistry: Readonly<Record<SkillName, SkillModule>> = {
  calendar: calendar,
  'dj-streaming': djStreaming,
  'file-manager': fileManager,
  'groupie-manager': groupieManager,
  'notes-workspace': notesWorkspace,
  'royalty-tracker': royaltyTracker,
  treasury: treasury,
  'workspace-suite': workspaceSuite,
  'demo-submitter': demoSubmitter,
  'event-scheduler': eventScheduler,
  'event-ticketing': eventTicketing,
  'festival-finder': festivalFinder,
  guestlist: guestlist,
  'setlist-oracle': setlistOracle,
  'track-archaeologist': trackArchaeologist,
  'venue-finder': venueFinder,
  'chat-bot': chatBot,
  'community-bot': communityBot,
  'business-messaging': businessMessaging,
  'business-messaging-api': businessMessagingApi,
  'team-chat': teamChat,
  browser: browser,
  webhook: webhook,
  'visual-synthesizer': visualSynthesizer,
  'booking-settlement': bookingSettlement,
  'usdc-payments': usdcPayments,
  'instant-split': instantSplit,
  email: email,
};

/**
 * Every `code` the API can answer, in words for the person using the console. The keys are the
 * codes the contract declares (test/unit/console-error-messages.test.ts walks the OpenAPI document
 * and fails on a code missing here). `next` names the step that fixes it, shown as a button beside
 * the message; `operator` marks a failure on the platform's side that the user cannot fix.
 */
export type NextStep = 'subscribe' | 'start' | 'sign-in' | 'confirm-email' | 'upgrade' | 'budget';

export interface HumanError {
  text: string;
  next?: NextStep;
  /** The platform is misconfigured or broken: only its operator can fix it. */
  operator?: true;
}

const operator = (what: string): HumanError => ({ text: `This platform has no ${what} configured; ask its operator.`, operator: true });
const broken = (what: string): HumanError => ({ text: `${what} Try again in a moment; if it keeps happening, tell the platform's operator.`, operator: true });

export const ERROR_MESSAGES: Record<string, HumanError> = {
  // The request pipeline (every route).
  INTERNAL: broken('Something went wrong on the platform.'),
  BACKEND_UNAVAILABLE: broken('The platform could not reach its storage.'),
  DEADLINE_EXCEEDED: { text: 'The platform took too long to answer. It may still finish: check before trying again.' },
  PAYLOAD_TOO_LARGE: { text: 'What you sent is too large for the platform to accept.' },
  INVALID_JSON: { text: 'The console sent something the platform could not read. Reload the page and try again.' },
  JSON_TOO_DEEP: { text: 'What you sent is nested too deeply to accept.' },
  UNSUPPORTED_CONTENT_TYPE: { text: 'The console sent something in a format the platform does not take. Reload the page and try again.' },
  UNSUPPORTED_MEDIA_TYPE: { text: 'The console sent something in a format the platform does not take. Reload the page and try again.' },
  CROSS_SITE_REQUEST: { text: 'The request came from another site and was refused. Use the console at its own address.' },
  VALIDATION_ERROR: { text: 'Some of what you entered is not valid: check the fields and try again.' },
  BAD_REQUEST: { text: 'The platform could not do this as asked: check what you entered.' },
  TOKEN_INVALID: { text: 'Your session is no longer valid: sign in again.', next: 'sign-in' },
  AUTH_ERROR: broken('The platform could not check who you are.'),
  AUTH_REQUIRED: { text: 'Your session has ended: sign in again.', next: 'sign-in' },
  SESSION_REQUIRED: { text: 'This needs you to be signed in.', next: 'sign-in' },
  NO_SESSION: { text: 'You are not signed in.', next: 'sign-in' },
  REAUTH_REQUIRED: { text: 'For your safety, sign in again before doing this.', next: 'sign-in' },
  ADMIN_REQUIRED: { text: 'Only the platform’s administrators can do this.' },
  CSRF_INVALID: { text: 'Your page was open too long to send this safely. Reload the page and try again.' },
  RATE_LIMITED: { text: 'Too many requests: wait a moment and try again.' },
  INVALID_IDEMPOTENCY_KEY: { text: 'The request carried a repeat-protection key the platform does not accept.' },
  IDEMPOTENCY_IN_PROGRESS: { text: 'The same request is still running: wait for it to finish.' },
  IDEMPOTENCY_KEY_REUSED: { text: 'A repeat-protection key was used for a different request.' },
  NOT_FOUND: { text: 'That is not there (or not yours).' },
  FORBIDDEN: { text: 'You may not do this.' },
  CONFLICT: { text: 'This clashes with the current state: reload the page and try again.' },
  GONE: { text: 'This feature has been retired.' },

  // Accounts and sign-in.
  INVALID_PASSWORD: { text: 'The current password is not right: nothing was changed.' },
  CURRENT_PASSWORD_REQUIRED: { text: 'Enter your current password to change this.' },
  EMAIL_IN_USE: { text: 'An account with this email address already exists. Sign in instead.', next: 'sign-in' },
  EMAIL_RESERVED: { text: 'This email address cannot be used for an account.' },
  INVALID_TOKEN: { text: 'This link is not valid any more. Ask for a new one.' },
  ALREADY_VERIFIED: { text: 'Your email address is already confirmed.' },
  INVALID_REFERRAL_CODE: { text: 'That referral code is not valid.' },
  BOT_CHECK_REQUIRED: { text: 'Complete the “I am not a robot” check, then try again.' },
  BOT_CHECK_UNAVAILABLE: broken('The robot check service is not answering.'),
  BOT_DETECTED: { text: 'The robot check did not pass. Try again.' },
  OAUTH_NOT_CONFIGURED: operator('sign-in with this provider'),
  OAUTH_PROVIDER_ERROR: broken('The sign-in provider failed to answer.'),
  OAUTH_STATE_INVALID: { text: 'The sign-in took too long or was started elsewhere. Start it again.' },
  USER_EXISTS: { text: 'An account with this email address already exists. Sign in instead.', next: 'sign-in' },
  NONCE_INVALID: { text: 'The wallet sign-in expired. Start it again.' },
  SIWE_INVALID: { text: 'The wallet signature could not be checked. Start the wallet sign-in again.' },
  SIGNATURE_INVALID: { text: 'The signature could not be checked.' },
  WALLET_ADDRESS_TAKEN: { text: 'This wallet is already linked to another account.' },
  TOKEN_GATING_FAILED: { text: 'Your wallet does not hold the token this needs.' },
  REFRESH_TOKEN_INVALID: { text: 'The connection to that provider has expired: connect it again.' },
  SOCIAL_NOT_CONFIGURED: operator('social sign-in'),
  SOCIAL_PROVIDER_UNAVAILABLE: broken('The social network is not answering.'),
  FID_TOKEN_INVALID: { text: 'The Farcaster sign-in could not be checked. Try again.' },
  FID_TOKEN_REQUIRED: { text: 'This needs a Farcaster sign-in.' },
  VERIFY_TOKEN_MISMATCH: { text: 'The verification token does not match.' },
  HEADER_MISMATCH: { text: 'The request’s headers do not match what was signed.' },

  // Passkeys and agent verification.
  NO_PASSKEY: { text: 'No passkey is registered for this agent yet.' },
  UNKNOWN_PASSKEY: { text: 'That passkey is not registered here.' },
  PASSKEY_EXISTS: { text: 'This passkey is already registered.' },
  WEBAUTHN_CHALLENGE_MISSING: { text: 'The passkey check expired. Start it again.' },
  VERIFICATION_FAILED: { text: 'The verification did not pass.' },
  ATTESTATION_NOT_FOUND: { text: 'No attestation was found for this agent.' },
  ATTESTATION_ATTESTER_MISMATCH: { text: 'The attestation was made by someone else than expected.' },
  ATTESTATION_RECIPIENT_MISMATCH: { text: 'The attestation is for another address.' },
  ATTESTATION_REVOKED: { text: 'The attestation has been revoked.' },
  ATTESTATION_EXPIRED: { text: 'The attestation has expired.' },
  ATTESTATION_SCHEMA_MISMATCH: { text: 'The attestation uses another schema than expected.' },
  EAS_NOT_CONFIGURED: operator('attestation service'),
  ENS_NOT_CONFIGURED: operator('ENS lookup'),
  ENS_NAME_MISMATCH: { text: 'The ENS name does not point at this address.' },
  COINBASE_NOT_VERIFIED: { text: 'This address has no Coinbase verification.' },

  // Plans, payments and billing.
  PAYMENT_REQUIRED: { text: 'This needs a payment first.', next: 'subscribe' },
  SUBSCRIPTION_REQUIRED: { text: 'This needs an active subscription. Choose a plan, then try again.', next: 'subscribe' },
  PLAN_REQUIRED: { text: 'This needs an active subscription. Choose a plan, then try again.', next: 'subscribe' },
  ALREADY_SUBSCRIBED: { text: 'You already have a plan in force: change it instead of subscribing again.' },
  SAME_PLAN: { text: 'You are already on this plan.' },
  PLAN_LIMIT_EXCEEDED: { text: 'Your plan does not allow more of this. Upgrade to go further.', next: 'upgrade' },
  AGENT_LIMIT_REACHED: { text: 'Your plan’s agents are all in use. Upgrade, or remove an agent.', next: 'upgrade' },
  SKILL_LIMIT_REACHED: { text: 'This agent has all the skills its plan allows. Upgrade, or uninstall one.', next: 'upgrade' },
  SCHEDULE_LIMIT_REACHED: { text: 'You have all the schedules your plan allows. Upgrade, or delete one.', next: 'upgrade' },
  CHECKPOINT_LIMIT_REACHED: { text: 'This agent has all the named checkpoints your plan allows. Delete one, or upgrade.', next: 'upgrade' },
  CHECKPOINT_TOO_LARGE: { text: 'This agent holds more than one checkpoint can keep on your plan. Remove some memory, or upgrade.', next: 'upgrade' },
  A2A_LIMIT_REACHED: { text: 'Today’s agent-to-agent messages of your plan are used up. They reset at midnight UTC.', next: 'upgrade' },
  KEY_LIMIT: { text: 'You have as many API keys as allowed: revoke one first.' },
  ENDPOINT_LIMIT: { text: 'You have as many webhook endpoints as allowed: remove one first.' },
  MODEL_RESTRICTED: { text: 'Your plan does not include this model. Choose another, or upgrade.', next: 'upgrade' },
  FALLBACK_MODEL_NOT_ALLOWED: { text: 'One of the fallback models is not on your plan. Choose models your plan includes, or upgrade.', next: 'upgrade' },
  AGENT_LOOP_PAUSED: { text: 'This agent was paused for repeating the same calls. Look at its events, then resume it from its page.' },
  IMAGE_NOT_ALLOWED: { text: 'Your plan does not include image generation.', next: 'upgrade' },
  INSUFFICIENT_CREDITS: { text: 'You are out of credits: buy credits on the Billing page.', next: 'upgrade' },
  BUDGET_EXCEEDED: { text: 'Your monthly spending cap is reached: raise it to go on.', next: 'budget' },
  UNKNOWN_PRICE: { text: 'That price is not on sale.' },
  NO_CARD_CUSTOMER: { text: 'There is nothing to manage yet: the billing portal opens after your first payment.', next: 'subscribe' },
  CARD_NOT_CONFIGURED: operator('card processor'),
  CARD_PROCESSOR_ERROR: broken('The card processor failed.'),
  INVALID_SIGNATURE: { text: 'The signature of this message could not be checked.' },
  UNKNOWN_RECEIPT: { text: 'That receipt is unknown, or its payment is not confirmed yet. Wait a moment and try again.' },

  // The gateway's on-chain payments.
  MPP_NOT_CONFIGURED: operator('on-chain payment'),
  MALFORMED_CREDENTIAL: { text: 'The payment credential could not be read.' },
  PULL_MODE_UNSUPPORTED: { text: 'Send the payment from your wallet yourself: the platform does not submit transactions.' },
  UNKNOWN_NONCE: { text: 'This payment request is unknown: ask for a new one.' },
  EXPIRED: { text: 'This has expired: start again.' },
  ALREADY_USED: { text: 'This has already been used.' },
  WRONG_PLUGIN: { text: 'This payment was for another gateway call.' },
  WRONG_REALM: { text: 'This payment was made for another platform.' },
  WRONG_METHOD: { text: 'This payment uses a method the platform does not take.' },
  WRONG_INTENT: { text: 'This payment has the wrong intent.' },
  TX_NOT_FOUND: { text: 'The payment transaction was not found on chain yet. Wait a moment and try again.' },
  TX_REVERTED: { text: 'The payment transaction failed on chain.' },
  WRONG_CHAIN: { text: 'The payment was sent on another chain.' },
  NOT_CONFIRMED: { text: 'The payment is not confirmed yet. Wait a moment and try again.' },
  WRONG_TOKEN: { text: 'The payment was made in another token.' },
  WRONG_RECIPIENT: { text: 'The payment went to another address.' },
  AMOUNT_TOO_LOW: { text: 'The payment is less than the price.' },
  PAYMENT_NOT_BOUND: { text: 'The payment does not carry this request’s memo, so it cannot pay for it.' },
  PAYMENT_BEFORE_CHALLENGE: { text: 'The payment was made before this request was issued.' },
  CHAIN_UNAVAILABLE: broken('The blockchain node is not answering.'),

  // Agents, chat and models.
  AGENT_NOT_RUNNING: { text: 'The agent is not running: start it, then try again.', next: 'start' },
  MODEL_NOT_CONFIGURED: operator('model provider'),
  AI_NOT_CONFIGURED: operator('model provider'),
  MODEL_PROVIDER_ERROR: broken('The model provider failed to answer.'),
  PROVIDER_ERROR: broken('An outside service failed to answer.'),
  PROVIDER_TIMEOUT: broken('An outside service took too long to answer.'),
  CONTEXT_WINDOW_EXCEEDED: { text: 'The conversation is too long for this model: start a new one or choose a larger model.' },
  INVALID_SCHEDULE: { text: 'That schedule is not valid: give a cron expression (five fields, UTC) or one future time.' },
  UNKNOWN_SKILL: { text: 'That skill is not in the marketplace.' },
  INVALID_EXPORT: { text: 'That file is not an agent export.' },
  EXPORT_VERSION_UNSUPPORTED: { text: 'That agent export comes from a version this platform cannot import.' },
  MEMORY_VALUE_TOO_LARGE: { text: 'A memory value is larger than the 100 KB allowed.' },
  MEMORY_TOO_MANY_KEYS: { text: 'That is more memory keys than one write takes.' },
  MEMORY_BULK_TOO_LARGE: { text: 'That bulk write is larger than allowed.' },
  MEMORY_EMPTY: { text: 'Give at least one key to write.' },

  // Wallets and webhooks.
  WALLET_EXISTS: { text: 'You already have a wallet.' },
  INVALID_PRIVATE_KEY: { text: 'That private key is not valid.' },
  HOSTED_WALLET_NOT_CONFIGURED: operator('hosted wallet service'),
  ENDPOINT_DISABLED: { text: 'This endpoint is disabled: enable it first.' },
  URL_NOT_ALLOWED: { text: 'The platform may not call that address: use a public https URL.' },

  // Codes the handlers answer beyond those the contract lists.
  AGENT_NOT_FOUND: { text: 'That agent is not there (or not yours).' },
  AGENT_REQUIRED: { text: 'Choose an agent first.' },
  NOT_OWNER: { text: 'This belongs to another account.' },
  INVALID_CREDENTIALS: { text: 'That email and password do not match an account.' },
  EMAIL_MISMATCH: { text: 'That email address does not match this account.' },
  METHOD_NOT_ALLOWED: { text: 'The platform does not take this kind of request here.' },
  SESSION_AGENT_MISMATCH: { text: 'That conversation belongs to another agent.' },
  LAST_MESSAGE_NOT_USER: { text: 'The conversation must end with your message.' },
  MESSAGE_ID_REUSED: { text: 'That message was already sent.' },
  TOOLS_NOT_SUPPORTED: { text: 'This model cannot use tools: choose another model.' },
  INVALID_TOOL_ARGUMENTS: { text: 'The model called a tool with arguments it does not take.' },
  UNKNOWN_TOOL_CALL: { text: 'The model called a tool that does not exist.' },
  PLUGIN_FAILED: broken('The gateway call failed.'),
  AUDIO_TOO_LARGE: { text: 'That audio is larger than allowed.' },
  FILE_TOO_LARGE: { text: 'That file is larger than allowed.' },
  STORAGE_QUOTA_EXCEEDED: { text: 'Your storage is full: delete files or buy more storage on the Billing page.', next: 'upgrade' },
  SIZE_MISMATCH: { text: 'The uploaded file is not the size announced.' },
  UPLOAD_NOT_RECEIVED: { text: 'The upload did not arrive: upload the file again.' },
  URL_EXPIRED: { text: 'That link has expired: ask for a new one.' },
  BAD_UPLOAD_URL: { text: 'That upload link is not valid.' },
  BAD_DOWNLOAD_URL: { text: 'That download link is not valid.' },
  EXPORT_FORBIDDEN: { text: 'This agent may not be exported.' },
  SCHEDULE_DONE: { text: 'That schedule has already run for good.' },
  TIME_IN_PAST: { text: 'That time has already passed: choose a time in the future.' },
  INVALID_DATE: { text: 'That date is not valid.' },
  INVALID_TIME_RANGE: { text: 'The end must come after the start.' },
  INVALID_EVENT: { text: 'That event is not valid.' },
  ALREADY_LIVE: { text: 'This is already live.' },
  NOT_LIVE: { text: 'This is not live.' },
  SUBSCRIPTION_UNCHANGEABLE: { text: 'Your subscription cannot be changed from here: use the billing portal.' },
  DAILY_LIMIT_EXCEEDED: { text: 'Today’s limit is used up. It resets at midnight UTC.' },
  EMAIL_DAILY_LIMIT: { text: 'Today’s emails are used up. They reset at midnight UTC.' },
  EMAIL_UNAVAILABLE: broken('The email service is not answering.'),
  CHANNEL_NOT_CONFIGURED: operator('messaging channel'),
  CHANNEL_NOT_CONNECTED: { text: 'Connect this messaging app first.' },
  CHANNEL_TOKEN_REQUIRED: { text: 'Give the messaging app’s token.' },
  CHANNEL_DAILY_LIMIT: { text: 'Today’s channel messages are used up. They reset at midnight UTC.', next: 'upgrade' },
  CHANNEL_BUSY: { text: 'The channel is busy: try again in a moment.' },
  CHANNEL_ERROR: broken('The messaging app failed to answer.'),
  CHANNEL_UNAVAILABLE: broken('The messaging app is not answering.'),
  COINBASE_NOT_CONFIGURED: operator('Coinbase verification'),
  EVENTS_QUEUE_NOT_CONFIGURED: operator('event queue'),
  KEY_CUSTODY_NOT_CONFIGURED: operator('key storage'),
  PAYMENTS_NOT_CONFIGURED: operator('payment service'),
  HOSTED_WALLET_FAILED: broken('The hosted wallet service failed.'),
  NO_WALLET: { text: 'Create a wallet first, on the Wallet page.' },
  WALLET_BUSY: { text: 'The wallet is busy with another payment: try again in a moment.' },
  INSUFFICIENT_BALANCE: { text: 'The wallet does not hold enough for this payment.' },
  INVALID_AMOUNT: { text: 'That amount is not valid.' },
  INVALID_RECIPIENT: { text: 'That recipient address is not valid.' },
  DUPLICATE_RECIPIENT: { text: 'A recipient is listed twice.' },
  SPLIT_NOT_100: { text: 'The shares must add up to 100 %.' },
  SPLIT_BUSY: { text: 'This split is being paid out: try again in a moment.' },
  BELOW_THRESHOLD: { text: 'The amount is below the minimum.' },
  NO_DESTINATION: { text: 'Give where the payment should go.' },
  INVALID_PAYMENT_METHOD: { text: 'That payment method is not taken here.' },
  CHAIN_MISMATCH: { text: 'That is on another chain than this platform uses.' },
  SIGNATURE_MISMATCH: { text: 'The signature does not match.' },
  DUPLICATE_STATEMENT: { text: 'That statement was already submitted.' },
};

export interface ExplainedError extends HumanError {
  code?: string;
}

interface ErrorBody {
  error?: unknown;
  code?: unknown;
  current?: unknown;
  limit?: unknown;
}

const BY_STATUS: Record<number, HumanError> = {
  401: ERROR_MESSAGES.AUTH_REQUIRED!,
  402: ERROR_MESSAGES.SUBSCRIPTION_REQUIRED!,
  403: ERROR_MESSAGES.FORBIDDEN!,
  404: ERROR_MESSAGES.NOT_FOUND!,
  409: ERROR_MESSAGES.CONFLICT!,
  429: ERROR_MESSAGES.RATE_LIMITED!,
};

/** The API's `{error, code}` answer as words, with the next step when there is one. */
export function explainError(status: number | undefined, body: unknown): ExplainedError {
  const e = (body && typeof body === 'object' ? body : {}) as ErrorBody;
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (typeof e.current === 'number' && typeof e.limit === 'number' && (status === 429 || code === 'AGENT_LIMIT_REACHED'))
    return {
      code,
      next: 'upgrade',
      text: `Your plan allows ${e.limit} agent${e.limit === 1 ? '' : 's'} and you have ${e.current} of ${e.limit}. Upgrade on the Billing page or remove one.`,
    };
  const known = code ? ERROR_MESSAGES[code] : undefined;
  if (known) return { ...known, code };
  const byStatus = status ? BY_STATUS[status] : undefined;
  if (byStatus) return { ...byStatus, code };
  if (status && status >= 500) return { ...broken('The platform could not do this.'), code };
  return { code, text: typeof e.error === 'string' && e.error ? `The platform refused this: ${e.error}.` : 'The platform did not answer.' };
}

export const describeError = (status: number | undefined, body: unknown): string => explainError(status, body).text;

// Generated from the OpenAPI document by `npm run client` (openapi-typescript). Do not edit by hand.

export interface paths {
    "/api/agent": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read the caller's agent state by `action`; without `action`, list what this route offers.
         * @description The user is always the authenticated caller: the query is strict, so a `userId` (or any unknown parameter) is refused with 400. An `agentId` or `sessionId` that is not the caller's answers 404 whatever the action.
         *     - (none) → `{endpoints}`.
         *     - `health` → `{status, agents, timestamp}` for the caller's agents.
         *     - `sessions` → `{sessions, nextCursor}`: chat sessions, newest first, `limit` per page, then `cursor` = the previous `nextCursor` (`agentId` filters).
         *     - `session` → `{session, messages}`: the newest `limit` messages, oldest first; needs `sessionId` (400 without, 404 when not the caller's).
         *     - `memory` → `{agentId, memory, count}`; needs `agentId` (400 without, 404 when not owned).
         *     - `skills` → `{skills}` installed on the caller's agents, with their settings (`agentId` filters; 404 when not owned).
         *     - `credentials` → `{credentials}`: per-agent names, masked previews and update times, never values (`agentId` filters; 404 when not owned).
         */
        get: operations["getAgentAction"];
        put?: never;
        /**
         * Act on the caller's agents by `action`: chat, create a chat session, toggle a skill, set a skill credential.
         * @description The user is always the authenticated caller: bodies are strict, so a `userId` (or any unknown field) is refused with 400.
         *     - `chat` → `{sessionId, message, usage}` (`message`: the reply of the caller's running instance, through the model layer; stored in the session and the agent's history). 402 without an active subscription, 404 for an agent or session not the caller's, 400 when `sessionId` and `agentId` name different agents, 409 when the agent is not running, 502 when it does not answer.
         *     - `create-session` → 201 `{session}`; 404 when the agent is not the caller's.
         *     - `update-skill` → `{success, skills}` (the changed installations): sets `enabled` and/or replaces `config` (400 with neither); 404 when the skill is not installed on the named agent(s). A running instance reloads at once.
         *     - `set-credential` → `{success, credential: {agentId, name, preview, updatedAt}}`; creates or replaces the named credential of the agent (404 when not the caller's). The value is stored under envelope encryption and only ever delivered, decrypted, to the account's instance (its gateway-token-authenticated state read); a running instance reloads at once.
         *
         *     Rate limit scope: `chat`.
         */
        post: operations["postAgentAction"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the caller's agents; without a session the list is empty (not 401).
         * @description A credential that is present but invalid is still refused with 401.
         *
         *     Rate limit scope: `agents`.
         */
        get: operations["listAgents"];
        put?: never;
        /**
         * Deprecated alias of `POST /api/agents/provision`: same body, same checks, same answers.
         * @deprecated
         * @description Maps onto `POST /api/agents/provision` (subscription, plan agent limit, queued launch; 201 with the provisioned agent). Answers carry `Deprecation: @1767225600` (RFC 9745), `Sunset: Thu, 01 Jul 2027 00:00:00 GMT` (RFC 8594) and `Link: </api/agents/provision>; rel="successor-version"` (path parameters filled in).
         *
         *     Rate limit scope: `agents`.
         */
        post: operations["createAgentDeprecated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{agentId}/skills": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The skills installed on an owned agent, with the plan's per-agent skill limit. */
        get: operations["listInstalledSkills"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{agentId}/skills/{skillId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Uninstall a skill from an owned agent; its unit of the skill limit is given back. */
        delete: operations["uninstallSkill"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get one owned agent in detail form.
         * @description Rate limit scope: `agents`.
         */
        get: operations["getAgent"];
        /**
         * Deprecated alias of `PUT /api/agents/{id}/config`: replaces the owned agent's configuration.
         * @deprecated
         * @description Maps onto `PUT /api/agents/{id}/config`: the body is an AgentConfig, stored and delivered to the running instance (502 when it cannot be reached). Answers carry `Deprecation: @1767225600` (RFC 9745), `Sunset: Thu, 01 Jul 2027 00:00:00 GMT` (RFC 8594) and `Link: </api/agents/{id}/config>; rel="successor-version"` (path parameters filled in).
         *
         *     Rate limit scope: `agents`.
         */
        put: operations["updateAgentDeprecated"];
        post?: never;
        /**
         * Deprecated: deletes an owned agent (its unit of the plan quota comes back); the lifecycle endpoints are the successor.
         * @deprecated
         * @description Maps onto the agent's removal from the account's instance: the agent, its message history and its memory are deleted, its plan quota unit released, and a running instance reloads its agents so it stops serving it. Stopping the whole instance is `POST /api/instance/{userId}/stop`. Answers carry `Deprecation: @1767225600` (RFC 9745), `Sunset: Thu, 01 Jul 2027 00:00:00 GMT` (RFC 8594) and `Link: </api/instance/{userId}/stop>; rel="successor-version"` (path parameters filled in).
         *
         *     Rate limit scope: `agents`.
         */
        delete: operations["deleteAgentDeprecated"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{id}/budget": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An owned agent's monthly spending cap and this month's spend.
         * @description Rate limit scope: `agents`.
         */
        get: operations["getAgentBudget"];
        /**
         * Set or remove an owned agent's monthly spending cap.
         * @description A monthly (UTC calendar month) spending cap over everything metered: model calls (AI routes, agent chat, the gateway charged to the account), image generation and metered skills, at catalogue price. At 80 % a `budget.warning` event (and webhook) and an email; at 100 % a `budget.exceeded` event and email, further metered calls answer 402 `BUDGET_EXCEEDED`, scheduled runs are skipped and recorded, and what the cap covers is paused: the account cap stops the instance with reason `budget`, an agent cap pauses the agent. Raising (or removing) the cap resumes it; a stop the user asked for is never undone. Each alert goes once per month per cap value. The admission check is one conditional write with the spend, so any number of concurrent calls overshoot the cap by less than one call's reservation (its prompt plus its output ceiling, at catalogue price).
         *
         *     Rate limit scope: `agents`.
         */
        put: operations["putAgentBudget"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{id}/config": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an owned agent's configuration.
         * @description Rate limit scope: `agents`.
         */
        get: operations["getAgentConfig"];
        /**
         * Replace an owned agent's configuration and push it to the running instance.
         * @description The body is validated against AgentConfig (unknown fields refused), stored, and delivered to the running instance (it reloads its agents). PUT replaces the whole configuration: omitted fields return to the platform default. An instance that is not running gets it when it next starts. 502 when the running instance cannot be reached: the configuration is then stored but not yet in effect; it is delivered at the next start, restart or configuration change.
         *
         *     Rate limit scope: `agents`.
         */
        put: operations["updateAgentConfig"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{id}/logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The owned agent's recent log, newest first: runtime log lines, lifecycle events and message exchanges.
         * @description Merged from the instance's runtime log lines (reported by the runtime or captured by the launcher from its output; lines that name no agent belong to every agent of the instance; kept 7 days), the lifecycle events of the agent and its instance, and its messages. `cursor` continues where the previous page ended (null on the last page). With `Accept: text/event-stream` the answer is server-sent events: `entry` per log entry, oldest first (the newest `limit` entries), then, for `follow` seconds, each new entry as it is stored, then `end` `{cursor}`. The local stack streams them as they come; API Gateway HTTP APIs buffer responses, so there the events arrive in one body when the stream ends.
         *
         *     Rate limit scope: `agents`.
         */
        get: operations["getAgentLogs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{id}/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Page through an owned agent's messages, newest first.
         * @description `limit` defaults to 50 (at most 200), `offset` to 0 and counts from the newest message; `total` is the number of messages overall.
         *
         *     Rate limit scope: `agents`.
         */
        get: operations["listAgentMessages"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{id}/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Runtime stats of an owned agent: live (`status: ok`) or, when the backend is unavailable, the labelled fallback (`status: mock`).
         * @description The fallback is built from the figures the platform stores for the agent (message counts, uptime samples), never from random numbers.
         *
         *     Rate limit scope: `agents`.
         */
        get: operations["getAgentStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{id}/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an owned agent's verification record.
         * @description Rate limit scope: `agents`.
         */
        get: operations["getAgentVerification"];
        put?: never;
        /**
         * Verify an owned agent with an EAS attestation or a wallet / passkey signature.
         * @description `attestationUid` and `walletAddress` are required for `eas`; `signature` for `coinbase`, `ens` and `webauthn` (400 when missing). Only a proof that was checked is stored: for `coinbase` and `ens` the `signature` must be an EIP-191 (personal_sign) signature of the message `Verify agent <agentId> on the agent platform` whose signer equals `walletAddress` (when given; else the recovered signer is recorded as `verifierAddress`), otherwise 400 `VERIFICATION_FAILED`; then for `coinbase` the signer must hold Coinbase's Verified Account attestation on Base (looked up in Coinbase's attestation indexer, then read from EAS and checked like `eas` below, plus the Coinbase attester: 422 `COINBASE_NOT_VERIFIED` when there is none, 422 `ATTESTATION_ATTESTER_MISMATCH`), and for `ens` `ensName` must resolve to the signer through the ENS Universal Resolver (422 `ENS_NAME_MISMATCH`; 503 `ENS_NOT_CONFIGURED` without an ENS RPC). For `eas` the attestation is read from the EAS contract on chain: it must exist (422 `ATTESTATION_NOT_FOUND`), not be revoked or expired (422 `ATTESTATION_REVOKED` / `ATTESTATION_EXPIRED`), carry the configured schema (422 `ATTESTATION_SCHEMA_MISMATCH`) and have `walletAddress` as recipient (422 `ATTESTATION_RECIPIENT_MISMATCH`); a chain that cannot be read answers 503 `CHAIN_UNAVAILABLE`, a platform without EAS settings 503 `EAS_NOT_CONFIGURED`. For `webauthn` the `signature` is the JSON of the passkey assertion (PublicKeyCredential.toJSON()) over the challenge of `POST /api/agents/{id}/webauthn/verify-options`: the challenge is single use (422 `WEBAUTHN_CHALLENGE_MISSING` when there is none), the passkey must be one the account registered (422 `UNKNOWN_PASSKEY`) and the signature must verify (400 `VERIFICATION_FAILED`); its counter is then moved forward. `metadata.checked` says which proof was checked. Re-verifying replaces the previous record.
         *
         *     Rate limit scope: `agents`.
         */
        post: operations["verifyAgent"];
        /**
         * Remove the verification of an owned agent (`verified` back to false).
         * @description Rate limit scope: `agents`.
         */
        delete: operations["removeAgentVerification"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{id}/webauthn/register": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Finish registering a passkey: send the JSON of the created credential (PublicKeyCredential.toJSON()).
         * @description The attestation is checked with the pending challenge, the origin and the relying party id; the challenge is consumed whatever the outcome. 400 `VERIFICATION_FAILED` when the response does not verify, 422 `WEBAUTHN_CHALLENGE_MISSING` without a pending challenge, 409 `PASSKEY_EXISTS` for a credential already registered.
         *
         *     Rate limit scope: `agents`.
         */
        post: operations["registerPasskey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{id}/webauthn/register-options": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start registering a passkey (WebAuthn) that can verify agents: answers the creation options for navigator.credentials.create().
         * @description The passkey belongs to the account (any of its agents can later be verified with it); the agent id only scopes the request to an owned agent. The options carry a single-use challenge valid for 5 minutes; asking again replaces it. The relying party is the platform web origin (`APP_URL`).
         *
         *     Rate limit scope: `agents`.
         */
        post: operations["passkeyRegistrationOptions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{id}/webauthn/verify-options": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start verifying an agent with a passkey: answers the request options for navigator.credentials.get().
         * @description Lists the account's passkeys as allowed credentials and carries a single-use challenge for this agent, valid for 5 minutes. Then `POST /api/agents/{id}/verify` with `verificationType: "webauthn"` and `signature` = the JSON of the assertion. 422 `NO_PASSKEY` before any passkey is registered.
         *
         *     Rate limit scope: `agents`.
         */
        post: operations["passkeyAssertionOptions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/provision": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the caller's agents in the provisioning view.
         * @description Rate limit scope: `agents`.
         */
        get: operations["listProvisionedAgents"];
        put?: never;
        /**
         * Provision a new agent: checks the subscription and the plan agent limit, creates it in `provisioning` and queues the launch.
         * @description Requires an active subscription (402 `SUBSCRIPTION_REQUIRED`; `PLAN_REQUIRED` for the retired `free` plan) unless the caller is an admin. The agent limit comes from the account plan (`starter` 1, `pro` 3, `enterprise` 100, anything else 1; admins get an elevated limit); it is enforced in the same database transaction that creates the agent, so concurrent requests cannot exceed it (429 `AGENT_LIMIT_REACHED` with `current` and `limit`). The body `tier` is accepted for compatibility but NEVER used for the limit. `model` defaults to `openai/gpt-4o-mini`; `custom` takes the model from `config.model`, which is then required (400). The launch is queued: the agent is `provisioning` until its instance answers its health check (then `running`), or `error` if the launch fails (its quota is then released). `websocketUrl` is final once the agent is `running`. 502 when the launch cannot be queued (nothing is kept).
         *
         *     Rate limit scope: `agents`.
         */
        post: operations["provisionAgent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/ai/chat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Chat completion through the model layer, limited to the models of the caller's plan.
         * @description Identity, plan and subscription come from the stored account of the authenticated caller. The `x-user-plan`, `x-user-email` and `x-card-subscription-id` headers of the spec are checked against that account and never grant anything: a plan or email that does not match, or a subscription id that is not the account's active one, is refused. No plan on the account answers 402 `PLAN_REQUIRED`, no active subscription 402 `SUBSCRIPTION_REQUIRED`; a model outside the plan answers 403 `MODEL_RESTRICTED` with `allowedModels`. Admin accounts (the configured admin list) get `network`-level model access whatever their plan.
         *
         *     A contradicting header answers 403 `HEADER_MISMATCH`. Without `model`, the model is auto-selected from `taskType` (see `POST /api/ai/models/select`). `temperature` and `top_p` are clamped to what the model accepts and `max_tokens` to its output limit; a prompt over the context window answers 400 `CONTEXT_WINDOW_EXCEEDED`. A provider failure answers 500 `PROVIDER_ERROR`, a provider that does not answer within MODEL_API_TIMEOUT_MS 500 `PROVIDER_TIMEOUT`.
         *
         *     Spending: each plan includes model spend per billing period (`includedCredits` of the catalogue); past it, each call is debited from the credit balance at catalogue price (1 credit = `creditUsd`, rounded up per call). BYOK calls and admin calls cost no credits. With both used up: 402 `INSUFFICIENT_CREDITS`; at a monthly spending cap (`PUT /api/budget`): 402 `BUDGET_EXCEEDED`.
         *
         *     Streaming: with `Accept: text/event-stream` the answer is server-sent events: `start` `{id, model, provider}`, then `delta` `{content}` per text piece, then `done` `{id, model, provider, finishReason, usage, timestamp}` (or `error` `{error, code}` when the provider fails mid-stream). The local stack streams them as they come; API Gateway HTTP APIs buffer responses, so in AWS the same events arrive in one body (see the README).
         */
        post: operations["aiChat"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/ai/estimate-cost": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Estimated cost of a call from the model's catalogue prices (USD per million tokens), in USD. */
        post: operations["estimateAiCost"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/ai/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Whether each configured provider is reachable: healthy when all are, degraded when some are; 503 when none. */
        get: operations["getAiHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/ai/models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every model of every provider, with the total count and one count per provider (keyed by provider name). */
        get: operations["listAiModels"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/ai/models/{provider}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One provider's models. */
        get: operations["listAiProviderModels"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/ai/models/select": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The model the platform would pick for a task type (default `general`).
         * @description Policy: the cheapest available model (input + output price) carrying the tag of the task type: `general`, `fast`, `code` (alias `coding`), `reasoning`, `long-context`; any other task type is taken as a tag. With a session, only models of the caller's plan count. 404 when none fits.
         */
        post: operations["selectAiModel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/callback/codehost": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Code-hosting OAuth callback: exchanges the code, signs the user in and 302s back to the app.
         * @description `state` must match the state cookie set by the start route and a stored, unexpired, unused state (400 `OAUTH_STATE_INVALID` otherwise; a state works once). The code is exchanged with the PKCE verifier. The provider's verified email links to an existing account with the same email on first sign-in instead of creating a duplicate (spec 4.1 rule 1); an existing account whose own address was never confirmed is never linked either (it may be someone who registered the victim's address first): the answer is a 302 to `/signin?error=EmailUnverified` without a session, and the address's owner confirms it (emailed link, or a password reset) before signing in with the provider again; an unverified email never links: without a verified email the new account gets the derived address `codehost-<provider user id>@oauth.local`. A new account emits `user.created`. On success the answer sets the session cookie (HttpOnly, Secure, SameSite=Lax) holding a 7-day JWT, which is also accepted as `Authorization: Bearer`. The redirect goes to the `callbackUrl` given at the start (default `/`). When the provider answers with `error` (the user declined) or no `code`, the answer is a 302 to `/signin?error=OAuthCallback` without a session. 502 `OAUTH_PROVIDER_ERROR` when the provider's token exchange or user info fails; 503 when the provider is not configured.
         */
        get: operations["codehostOAuthCallback"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/callback/credentials": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sign in with email and password; answers the public profile and sets the session cookie.
         * @description On success the answer sets the session cookie (HttpOnly, Secure, SameSite=Lax) holding a 7-day JWT, which is also accepted as `Authorization: Bearer`. A wrong password and an unknown email give the same 401 body (`{error: "Invalid email or password", code: "INVALID_CREDENTIALS"}`) after the same hashing work, so the answer never reveals whether an account exists. Accounts without a password (OAuth or wallet only) answer the same 401. Attempts are limited per client address whatever the account (scope `signIn`): 429 with `Retry-After`. Only failed attempts count against an account: per account and client address (scope `signInAddress`, default 5 per 15 minutes) the next attempt from that address answers 429 with `Retry-After` before any password is checked, and a successful sign-in clears that address's count. Per account across all addresses (scope `signInAccount`, default 20 per 15 minutes) the account is never locked: an address the owner signed in from successfully in the last 90 days goes on as usual, any other address must send a solved bot-check token in `x-bot-check-token` (403 `BOT_CHECK_REQUIRED` without one, 403 `BOT_DETECTED` for a refused one) when bot detection is on, or gets its answer after a delay (`SIGN_IN_CAPPED_DELAY_MS`) when it is off.
         *
         *     Rate limit scope: `signIn`.
         *
         *     Cross-site requests are refused with 403 `CROSS_SITE_REQUEST`: a browser `Origin` other than the application's, or `Sec-Fetch-Site` other than `same-origin`/`none` (login CSRF).
         */
        post: operations["signInWithCredentials"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/callback/wallet": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sign in with a signed SIWE message; sets the session cookie and redirects to the callback URL.
         * @description The message must be on chain id 0x2105 (8453), its domain must match the configured application URL, its nonce must be one issued by `GET /api/auth/nonce` that is unexpired and unused (consumed atomically), and the signature must verify (EOA, deployed smart wallet via ERC-1271, or undeployed smart wallet via ERC-6492). Missing or malformed `message`/`signature`, a message that does not parse, domain/URI/chain mismatch, an `Issued At` in the future, an expired (`Expiration Time`) or not yet valid (`Not Before`) message answer 401 `SIWE_INVALID`; an unknown, expired or used nonce 401 `NONCE_INVALID`; a signature that does not verify 401 `SIGNATURE_INVALID` (the spec names 401 for missing fields, so the handler validates the body itself). Smart-wallet signatures are checked through the chain RPC with a bounded timeout: when it is not configured, down or too slow the answer is 503 `CHAIN_UNAVAILABLE` (ask for a new nonce and retry). A wallet without an account gets one, with the wallet-derived email `<lower-case address>@wallet.local` (and emits `user.created`); if an account exists for the wallet-derived email the wallet is linked to it. On success the answer sets the session cookie (HttpOnly, Secure, SameSite=Lax) holding a 7-day JWT, which is also accepted as `Authorization: Bearer`. The answer is a 302 to `callbackUrl` (default `/`), or 200 `{user}` when the request sends `Accept: application/json`.
         *
         *     Rate limit scope: `signIn`.
         *
         *     Cross-site requests are refused with 403 `CROSS_SITE_REQUEST`: a browser `Origin` other than the application's, or `Sec-Fetch-Site` other than `same-origin`/`none` (login CSRF).
         */
        post: operations["signInWithWallet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/callback/webid": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Web-identity OAuth callback: exchanges the code, signs the user in and 302s back to the app.
         * @description `state` must match the state cookie set by the start route and a stored, unexpired, unused state (400 `OAUTH_STATE_INVALID` otherwise; a state works once). The code is exchanged with the PKCE verifier. The provider's verified email links to an existing account with the same email on first sign-in instead of creating a duplicate (spec 4.1 rule 1); an existing account whose own address was never confirmed is never linked either (it may be someone who registered the victim's address first): the answer is a 302 to `/signin?error=EmailUnverified` without a session, and the address's owner confirms it (emailed link, or a password reset) before signing in with the provider again; an unverified email never links: without a verified email the new account gets the derived address `webid-<provider user id>@oauth.local`. A new account emits `user.created`. On success the answer sets the session cookie (HttpOnly, Secure, SameSite=Lax) holding a 7-day JWT, which is also accepted as `Authorization: Bearer`. The redirect goes to the `callbackUrl` given at the start (default `/`). When the provider answers with `error` (the user declined) or no `code`, the answer is a 302 to `/signin?error=OAuthCallback` without a session. 502 `OAUTH_PROVIDER_ERROR` when the provider's token exchange or user info fails; 503 when the provider is not configured.
         */
        get: operations["webidOAuthCallback"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/csrf": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Issue the CSRF token for cookie-authenticated writes.
         * @description Sets the CSRF cookie and answers the same value; cookie-authenticated POST/PUT/PATCH/DELETE must echo it in the `x-csrf-token` header (403 when missing or wrong). Bearer and API-key requests need no CSRF token; an API-key caller has no session and gets 400 `NO_SESSION`.
         */
        get: operations["getCsrfToken"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/forgot-password": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Email a password-reset link; the answer is identical whether or not the account exists.
         * @description Bot detection runs first when it is enabled: the client sends the challenge token it got from the bot-check widget in the `x-bot-check-token` header; a missing or refused token answers 403 `BOT_DETECTED` (503 `BOT_CHECK_UNAVAILABLE` when the verification service cannot be reached). The local stack runs with bot detection off. The emailed link is `<APP_URL>/reset-password?token=<token>`; the token is 32 random bytes (base64url), stored only as its SHA-256, single use, valid for 30 minutes; a new request makes any earlier link void. The answer and its timing are the same whether or not the account exists, so failures of the email service are logged and not answered (passing them on would tell which emails have accounts). Limited per client address (scope `forgotPassword`).
         *
         *     Rate limit scope: `forgotPassword`.
         */
        post: operations["forgotPassword"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/nonce": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Issue a single-use nonce to put in a Sign-In with Ethereum (EIP-4361) message.
         * @description The nonce is stored server-side with a 10-minute expiry and is consumed by the first wallet sign-in that presents it, whether that sign-in succeeds or not.
         *
         *     Rate limit scope: `signIn`.
         */
        get: operations["getSiweNonce"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/oauth-codehost": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Start code-hosting OAuth sign-in: 302 to the provider's authorisation page.
         * @description Stores a random `state` with the PKCE (S256) verifier and the `callbackUrl` server-side for 10 minutes, sets the same state in a short-lived HttpOnly cookie (binding the flow to this browser), and redirects to the provider with `state` and `code_challenge`. The redirect URI registered with the provider is `<APP_URL>/api/auth/callback/codehost`. 503 `OAUTH_NOT_CONFIGURED` when the provider's client id or client secret is not configured.
         *
         *     Rate limit scope: `signIn`.
         */
        get: operations["startCodehostOAuth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/oauth-webid": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Start web-identity OAuth sign-in: 302 to the provider's authorisation page.
         * @description Stores a random `state` with the PKCE (S256) verifier and the `callbackUrl` server-side for 10 minutes, sets the same state in a short-lived HttpOnly cookie (binding the flow to this browser), and redirects to the provider with `state` and `code_challenge`. The redirect URI registered with the provider is `<APP_URL>/api/auth/callback/webid`. 503 `OAUTH_NOT_CONFIGURED` when the provider's client id or client secret is not configured.
         *
         *     Rate limit scope: `signIn`.
         */
        get: operations["startWebidOAuth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/reset-password": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Set a new password with the token from the emailed link.
         * @description 400 `INVALID_TOKEN` for an unknown, used, superseded or expired token; 404 when the account behind the token no longer exists. Consumes the token (of concurrent uses exactly one succeeds), signs out every session of the account, and keeps its email and profile. Limited per client address (scope `resetPassword`).
         *
         *     Rate limit scope: `resetPassword`.
         */
        post: operations["resetPassword"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/signout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Clear the session cookie; optionally sign out every session of the account.
         * @description Answers `{success: true}` with or without a session (a present but invalid credential is still 401) and clears the session and CSRF cookies. Session tokens are stateless JWTs, so a copy of this one kept elsewhere (a Bearer client) stays valid until it expires, unless `everywhere=true`: then every session of the account issued until now is revoked, the instance gateway token is rotated, API keys are revoked when the body says `revokeApiKeys: true`, and the account gets an email listing what was revoked. An absent body is read as `{}`. A cookie-authenticated call needs the CSRF token like any other write.
         */
        post: operations["signOut"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/social/refresh": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Describe how to call `POST /api/auth/social/refresh`. */
        get: operations["getSocialRefreshInfo"];
        put?: never;
        /**
         * Exchange a refresh token for a new session token (and a new refresh token).
         * @description `refreshToken` is the one from verify or from an earlier refresh. A missing or empty one answers 400; one that is unknown, used, expired, or whose account is gone or has had its sessions revoked (password change or reset) answers 401 `REFRESH_TOKEN_INVALID`. Refresh tokens rotate: each works once and the answer carries its successor.
         *
         *     Rate limit scope: `signIn`.
         */
        post: operations["refreshSocialSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/social/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Describe how to call `POST /api/auth/social/verify`. */
        get: operations["getSocialVerifyInfo"];
        put?: never;
        /**
         * Verify a decentralised-social identity token and, with `address`, check token gating; answers a session token and a refresh token.
         * @description `fidToken` is a JWT of the social identity provider, verified against its JWKS (signature with an asymmetric algorithm, issuer, audience = this application, expiry); its `sub` is the fid. A missing or empty `fidToken` answers 401 `FID_TOKEN_REQUIRED`, one that does not verify 401 `FID_TOKEN_INVALID`; any other bad field (for example a malformed `address`) answers 400 `VALIDATION_ERROR`, which is why the handler validates the body itself. With `address` the wallet must hold at least `minBalance` of the gating token on l2-main: otherwise 403 `TOKEN_GATING_FAILED` with `required` and `minBalance` (the address is not proven to belong to the fid: gating is a balance check, as in the spec). Without `address` (or with gating off) `tokenGated` is false and `accessLevel` `basic`. The fid signs in to its platform account: the first verification creates one with the derived email `fid-<fid>@social.local` (and emits `user.created`). `sessionToken` is the base64 of a platform session JWT (decode it and send it as `Authorization: Bearer`) valid for `expiresIn` = 86400 seconds; `refreshToken` (32 random bytes, base64; only its hash is stored, valid 30 days, single use) gets a new one from `POST /api/auth/social/refresh`. 503 `SOCIAL_NOT_CONFIGURED` when the provider JWKS or issuer is not configured, 503 `SOCIAL_PROVIDER_UNAVAILABLE` when its JWKS cannot be fetched; 500 `CHAIN_UNAVAILABLE` when the balance cannot be read.
         *
         *     Rate limit scope: `signIn`.
         */
        post: operations["verifySocialIdentity"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/token-gating/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Token-gating status of a wallet, with the gating token and chain details.
         * @description `rpcEndpoint` is the public RPC URL of the chain without any credentials (never a keyed provider URL). `contractAddress` is null while gating is off. 500 `CHAIN_UNAVAILABLE` when the chain cannot be read.
         *
         *     Rate limit scope: `chainRead`.
         */
        get: operations["getTokenGatingStatus"];
        put?: never;
        /**
         * Check whether a wallet holds enough of the gating token.
         * @description A public read of the on-chain balance on l2-main; `fid` is echoed back and does not prove ownership of `address`. `hasAccess` is true when gating is disabled or the balance is at least `minBalance`. 500 `CHAIN_UNAVAILABLE` when the chain cannot be read (RPC down or too slow).
         *
         *     Rate limit scope: `chainRead`.
         */
        post: operations["verifyTokenGating"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/verify-email": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Confirm an email address with the token from the emailed link.
         * @description Sign-up emails `<APP_URL>/verify-email?token=<token>` to the new address; an email change emails the same kind of link to the NEW address, which takes effect only here. The token is 32 random bytes (base64url), stored only as its SHA-256, single use, valid for 24 hours; a newer link of the account makes earlier ones void. 400 `INVALID_TOKEN` for an unknown, used, superseded or expired token; 409 `EMAIL_IN_USE` when the new address of a change was taken meanwhile. A confirmed sign-up address turns on what needs a proven address (admin and tester rights, OAuth account linking, referral credit, paid to both accounts now). A confirmed change moves the account to the new address and signs out every session (tokens carry the email): sign in again with the new address.
         *
         *     Rate limit scope: `verifyEmail`.
         */
        post: operations["verifyEmail"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/verify-email/resend": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Email the confirmation link again: to the pending new address of an email change, else to the unconfirmed account address.
         * @description Makes every earlier link of the account void. 400 `ALREADY_VERIFIED` when the address is confirmed and no change is pending. Limited per account (scope `verifyEmailResend`).
         *
         *     Rate limit scope: `verifyEmailResend`.
         */
        post: operations["resendVerificationEmail"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/billing": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's plan, subscription, credits, storage, BYOK state, plan limits and the credit packs on sale.
         * @description `plan` is the plan of the latest subscription and stays named after it ends; `active` (status `active` or `trialing`) says whether it is in force. Only verified card webhooks change the plan and status.
         */
        get: operations["getBilling"];
        put?: never;
        /**
         * Billing actions: start a plan checkout, enable or disable a BYOK provider key, read usage, buy credits.
         * @description - `create-checkout` `{plan}` → `{url, sessionId}` of a GBP subscription checkout; 402 `PLAN_REQUIRED` for the retired `free` plan; 409 `ALREADY_SUBSCRIBED` while a subscription is active (use `change-plan`; the plan changes only when the card webhook confirms payment).
         *     - `enable-byok` `{provider, apiKey}` → `{success, byok}`; the key is stored envelope-encrypted (bound to the account) and replaces any earlier key for that provider; it is never returned or logged.
         *     - `disable-byok` `{provider}` → `{success, byok}`; 404 when no key is stored for the provider.
         *     - `get-usage` → `{usage}` of the current billing period: credits from the ledger; model tokens, cost and A2A messages per model and per agent; the included allowance.
         *     - `buy-credits` `{price}` → `{url, sessionId, credits}` of a one-off checkout for one of the credit packs `GET /api/billing` lists (400 `UNKNOWN_PRICE` for any other id); credits are added when the card webhook confirms payment.
         *     - `change-plan` `{plan}` → `{success, plan, previousPlan, subscriptionId, status: "pending"}`: the active subscription moves to the plan's price at the processor, prorated as it prorates; the account's plan changes when the card webhook confirms. 402 `SUBSCRIPTION_REQUIRED` without an active card subscription; 409 `SAME_PLAN`; a downgrade below what the account holds is 409 `PLAN_LIMIT_EXCEEDED` with `current` and `limit` (`{agents, skills}` each) and what to remove first.
         *     - `billing-portal` → `{url}` of the processor's billing portal (update the card, invoices, cancel); 404 `NO_CARD_CUSTOMER` before a first checkout. `GET /api/card/portal` redirects there.
         *     502 `CARD_PROCESSOR_ERROR` when the processor fails; 503 `CARD_NOT_CONFIGURED` when card payments (or this price) are not configured.
         */
        post: operations["postBilling"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/budget": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The account's monthly spending cap and this month's spend.
         * @description A monthly (UTC calendar month) spending cap over everything metered: model calls (AI routes, agent chat, the gateway charged to the account), image generation and metered skills, at catalogue price. At 80 % a `budget.warning` event (and webhook) and an email; at 100 % a `budget.exceeded` event and email, further metered calls answer 402 `BUDGET_EXCEEDED`, scheduled runs are skipped and recorded, and what the cap covers is paused: the account cap stops the instance with reason `budget`, an agent cap pauses the agent. Raising (or removing) the cap resumes it; a stop the user asked for is never undone. Each alert goes once per month per cap value. The admission check is one conditional write with the spend, so any number of concurrent calls overshoot the cap by less than one call's reservation (its prompt plus its output ceiling, at catalogue price).
         *
         *     Rate limit scope: `agents`.
         */
        get: operations["getAccountBudget"];
        /**
         * Set or remove the account's monthly spending cap.
         * @description A monthly (UTC calendar month) spending cap over everything metered: model calls (AI routes, agent chat, the gateway charged to the account), image generation and metered skills, at catalogue price. At 80 % a `budget.warning` event (and webhook) and an email; at 100 % a `budget.exceeded` event and email, further metered calls answer 402 `BUDGET_EXCEEDED`, scheduled runs are skipped and recorded, and what the cap covers is paused: the account cap stops the instance with reason `budget`, an agent cap pauses the agent. Raising (or removing) the cap resumes it; a stop the user asked for is never undone. Each alert goes once per month per cap value. The admission check is one conditional write with the spend, so any number of concurrent calls overshoot the cap by less than one call's reservation (its prompt plus its output ceiling, at catalogue price).
         *
         *     Rate limit scope: `agents`.
         */
        put: operations["putAccountBudget"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/card/checkout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * 302 to the card processor's subscription checkout for a plan.
         * @description The checkout prices in GBP (spec 2.16) and carries the account id (`client_reference_id`) and the plan (`metadata.plan`). After payment the processor returns the user to `/settings/billing?checkout=success` (or `=cancelled`); the plan changes only when the card webhook confirms. An unknown plan is 400; the retired `free` plan is 402 `PLAN_REQUIRED`; 409 `ALREADY_SUBSCRIBED` while a subscription is active. 502 `CARD_PROCESSOR_ERROR` when the processor fails; 503 `CARD_NOT_CONFIGURED` when card payments (or this price) are not configured.
         */
        get: operations["cardCheckoutRedirect"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/card/credits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * 302 to the card processor's one-off checkout for a credit pack.
         * @description `price` is the processor's price id of one of the credit packs the platform sells (`creditPacks` of `GET /api/billing`); any other id is 400 `UNKNOWN_PRICE` (the client never sets an amount). Credits are added when the card webhook confirms payment. 502 `CARD_PROCESSOR_ERROR` when the processor fails; 503 `CARD_NOT_CONFIGURED` when card payments (or this price) are not configured.
         */
        get: operations["cardCreditsRedirect"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/card/portal": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * 302 to the card processor's billing portal, where the user updates the card, sees invoices or cancels.
         * @description Returns to `/settings/billing`. 404 `NO_CARD_CUSTOMER` before a first checkout. 502 `CARD_PROCESSOR_ERROR` when the processor fails; 503 `CARD_NOT_CONFIGURED` when card payments (or this price) are not configured.
         */
        get: operations["cardPortalRedirect"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/card/storage-upgrade": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start a one-off checkout for extra agent storage on top of the plan.
         * @description Answers `{url, sessionId}` of a checkout for `storageGb` GB; the storage is added to the account (`extraStorageGb` of `GET /api/billing`) when the card webhook confirms payment. 402 `SUBSCRIPTION_REQUIRED` without an active subscription. 502 `CARD_PROCESSOR_ERROR` when the processor fails; 503 `CARD_NOT_CONFIGURED` when card payments (or this price) are not configured.
         */
        post: operations["cardStorageUpgrade"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/channels/discord/{hookId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Discord interactions endpoint of the community-bot skill: PING and application commands.
         * @description Verified with Ed25519 as Discord signs (`X-Signature-Ed25519` over `X-Signature-Timestamp` + body, the application's public key given to `connect`). A PING answers `{type: 1}`; an application command's text (its `message` option, else its first string option) goes to the agent and the reply is the interaction response `{type: 4, data: {content}}`.
         */
        post: operations["channelInboundDiscord"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/channels/slack/{hookId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Slack Events API endpoint of team-chat: url_verification and message events.
         * @description `X-Slack-Signature: v0=<HMAC-SHA256 of "v0:<X-Slack-Request-Timestamp>:<body>" with the signing secret>`, the timestamp within five minutes. `url_verification` answers `{challenge}`; a user `message` event goes to the agent and the reply is posted to the channel; bot messages and other events are acknowledged and ignored.
         */
        post: operations["channelInboundSlack"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/channels/telegram/{hookId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Telegram Bot API webhook of the chat-bot skill: an Update with a message.
         * @description `X-Telegram-Bot-Api-Secret-Token` must be the secret the platform gave Telegram with setWebhook when the skill connected. Answers `{ok: true}`; updates without text are acknowledged and ignored.
         */
        post: operations["channelInboundTelegram"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/channels/whatsapp/{hookId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * WhatsApp Cloud API webhook of business-messaging: incoming messages.
         * @description `X-Hub-Signature-256: sha256=<HMAC-SHA256 of the raw body with the app secret given to `connect`>`. Each text message of `entry[].changes[].value.messages[]` is stored and answered; statuses and other fields are acknowledged and ignored.
         */
        post: operations["channelInboundWhatsapp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/chat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Message history with one of the caller's agents, newest first.
         * @description 404 when the agent is missing or not the caller's. Page with `before` = the previous answer's `nextBefore` (null on the last page).
         *
         *     Rate limit scope: `chat`.
         */
        get: operations["getChatMessages"];
        put?: never;
        /**
         * Send a message to one of the caller's agents and get its reply.
         * @description Both the message and the reply are stored in the agent's history. 402 without an active subscription (admins exempt); 404 when the agent is missing or not the caller's; 409 when the agent is not running; 502 when the agent does not answer.
         *
         *     Rate limit scope: `chat`.
         */
        post: operations["postChatMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/checkout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Retired checkout: always 410 Gone; use `GET /api/card/checkout`.
         * @deprecated
         */
        get: operations["getLegacyCheckout"];
        put?: never;
        /**
         * Retired checkout: always 410 Gone; use `GET /api/card/checkout`.
         * @deprecated
         * @description Whatever the body (it is not parsed), the answer is 410.
         */
        post: operations["postLegacyCheckout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/credits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's credit balance and a page of the ledger, newest first.
         * @description Every change of the balance (purchase, referral, usage, refund, adjustment) is one ledger entry written in the same transaction, so the balance always equals the sum of the ledger. `cursor` continues the ledger where the previous page ended (null on the last page).
         */
        get: operations["getCredits"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Host health: healthy when CPU and memory are both at or below 70%, degraded up to 85%, unhealthy above.
         * @description The database is probed too (one read, its outcome reused for a few seconds): when it does not answer within its time budget the platform cannot serve anything, so the answer is 503 with the failure body, and load balancers and monitors see it.
         */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/heartbeat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's heartbeat settings.
         * @description Defaults until first saved: frequency `3h`, disabled.
         */
        get: operations["getHeartbeat"];
        put?: never;
        /**
         * Change the heartbeat frequency or switch it on or off; the next heartbeat is rescheduled.
         * @description Fields left out keep their stored value (defaults: `3h`, disabled). Frequencies are `<n>m`, `<n>h` or `<n>d`, from 5m to 30d. Switching on makes the first heartbeat due at once; a new frequency while on reschedules to the last heartbeat plus the new frequency (at once if that is past). Each heartbeat checks the running instance, records a metrics sample and marks an unhealthy instance (and so its agents) `error`.
         */
        post: operations["updateHeartbeat"];
        /**
         * Reset the heartbeat settings to their defaults.
         * @description Back to `3h`, disabled; lastHeartbeat is kept as history.
         */
        delete: operations["resetHeartbeat"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/infra-mcp/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Permanent redirect (301) to the vendor documentation. */
        get: operations["redirectInfraMcpDocs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/infra-mcp/examples": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Example prompts for five use cases. */
        get: operations["listInfraMcpExamples"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/infra-mcp/github": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Permanent redirect (301) to the vendor repository. */
        get: operations["redirectInfraMcpGithub"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/infra-mcp/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Status of the MCP gateway, with the official repository, image and documentation. */
        get: operations["getInfraMcpHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/infra-mcp/info": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What the MCP server is, who maintains it, where it lives and what it can do. */
        get: operations["getInfraMcpInfo"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/infra-mcp/setup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** How to set the MCP server up: recommended approach, three quick-start steps and an example configuration. */
        get: operations["getInfraMcpSetup"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/infra-mcp/tools": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The MCP server's 21 tools in their 7 categories. */
        get: operations["listInfraMcpTools"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/infra-mcp/validate-config": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Check an MCP configuration: `api_key` is required, must start with `rnd_` and be at least 20 characters.
         * @description The check is offline: the key is never stored, logged or echoed back, and a given `endpoint` must be an https URL but is never contacted (no request leaves the platform). Any bad body, including a missing or malformed `api_key`, a malformed `endpoint` or an unknown field, answers 400 `{valid: false, errors, help}` rather than the generic validation error.
         */
        post: operations["validateInfraMcpConfig"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read the caller's instance record; optionally wait until it reaches a status.
         * @description The path `userId` must be the caller's own id (403 otherwise); 404 when the account has no instance. With `waitFor=<status>` the answer is held until the instance is in that status or `timeout` seconds (1 to 25, default 25) pass, whichever comes first; then the record carries `reached` (true when it got there). Like Fly Machines' `wait`: use it instead of polling.
         *
         *     Rate limit scope: `instance`.
         */
        get: operations["getInstance"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The lifecycle event log of the caller's instance and agents, oldest first.
         * @description Every transition with its time, operation id and cause (kept 90 days). The path `userId` must be the caller's own id (403 otherwise). `cursor` continues where the previous page ended (null on the last page).
         *
         *     Rate limit scope: `instance`.
         */
        get: operations["listInstanceEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/repair": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Repair the instance (from any state → `provisioning` → `running`); the backend answer is returned as is.
         * @description Replaces a broken or failed instance with a fresh one carrying the same memory, skills and configuration. Accepted from every state (see the state machine of this group): an operation that arrives while a launch is in flight supersedes it. The path `userId` must be the caller's own id (403 otherwise); 404 when the account has no instance; 502 when the provisioning queue is unreachable. The success body is the spec's plus `current` (the status the instance is in now) and `operationId` (carried by the events of this operation); wait for the outcome with `GET /api/instance/{userId}?waitFor=running`. Every failure answers `{success: false, status: "error", error?}`.
         *
         *     Rate limit scope: `instance`.
         */
        post: operations["repairInstance"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/reset-memory": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Clear the memory of the caller's agents; a running or starting instance relaunches to drop its copy, others keep their status. The backend answer is returned as is.
         * @description Deletes every stored memory entry (the key-value memory of spec 2.11) of the account's agents and ends the conversation the runtime replays into prompts: the messages so far stay stored and readable (`GET /api/agents/{id}/messages`, `/logs`) but are no longer sent to the model. A running instance is told at once (its agents forget their memory and conversation), then relaunches. Accepted from every state (see the state machine of this group): an operation that arrives while a launch is in flight supersedes it. The path `userId` must be the caller's own id (403 otherwise); 404 when the account has no instance; 502 when the provisioning queue is unreachable. The success body is the spec's plus `current` (the status the instance is in now) and `operationId` (carried by the events of this operation); wait for the outcome with `GET /api/instance/{userId}?waitFor=running`. Every failure answers `{success: false, status: "error", error?}`.
         *
         *     Rate limit scope: `instance`.
         */
        post: operations["resetInstanceMemory"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/restart": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Restart the instance (from any state → `provisioning` → `running`).
         * @description Relaunches the instance; memory and installed skills are delivered again, so nothing is lost. Accepted from every state (see the state machine of this group): an operation that arrives while a launch is in flight supersedes it. The path `userId` must be the caller's own id (403 otherwise); 404 when the account has no instance; 502 when the provisioning queue is unreachable. The success body is the spec's plus `current` (the status the instance is in now) and `operationId` (carried by the events of this operation); wait for the outcome with `GET /api/instance/{userId}?waitFor=running`. Every failure answers `{success: false, status: "error", error?}`.
         *
         *     Rate limit scope: `instance`.
         */
        post: operations["restartInstance"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/runtime/a2a": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Runtime: one of the account's agents sends a message to another of its agents (agent-to-agent, spec 2.16).
         * @description Called by the account's agent runtime, not by users: `Authorization: Bearer <gateway token>` (the token of `GET /api/instance/{userId}/token`); any other credential answers 401 `TOKEN_INVALID`. The runtime never holds provider keys or platform secrets. Both agents must be the account's (404 otherwise); an active subscription is required unless the owner is an admin (402). Each message counts against the plan's A2A limit per UTC day (label 100, solo 500, collective 2,000, network 10,000), counted in the database so concurrent sends never pass it: beyond it 429 `A2A_LIMIT_REACHED` with `current` and `limit`. The message is stored in the recipient's history (role `user`, prefixed with the sender), where its runtime reads it.
         */
        post: operations["runtimeA2aMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/runtime/agents/{agentId}/skills/{skill}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Call a skill installed on the agent, from the agent's runtime.
         * @description Called by the account's agent runtime, not by users: `Authorization: Bearer <gateway token>` (any other credential answers 401 `TOKEN_INVALID`). The body is the skill endpoint's body (`POST /api/skills/{skill}`) and so is the answer. A skill that is not installed on the agent, or disabled, answers 404, as does an agent that is not the account's.
         */
        post: operations["runtimeSkillCall"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/runtime/chat/completions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Runtime: the platform's model layer for an agent, OpenAI chat completions format; the platform picks the agent's model and holds the provider key.
         * @description Called by the account's agent runtime, not by users: `Authorization: Bearer <gateway token>` (the token of `GET /api/instance/{userId}/token`); any other credential answers 401 `TOKEN_INVALID`. The runtime never holds provider keys or platform secrets. The model is the agent's (`config.model`, else its provisioned model) and must be allowed by the account's plan (403 `MODEL_RESTRICTED`); a plan and an active subscription are required unless the owner is an admin (402 `PLAN_REQUIRED` / `SUBSCRIPTION_REQUIRED`), and the call is metered and charged like every model call (402 `INSUFFICIENT_CREDITS`, see `POST /api/ai/chat`). 503 `MODEL_NOT_CONFIGURED` while no provider serves the model; 502 `MODEL_PROVIDER_ERROR` when the provider fails or times out.
         */
        post: operations["runtimeChatCompletion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/runtime/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Runtime: store the messages of one chat exchange and the agent's figures (message history and the stats fallback read them).
         * @description Called by the account's agent runtime, not by users: `Authorization: Bearer <gateway token>` (the token of `GET /api/instance/{userId}/token`); any other credential answers 401 `TOKEN_INVALID`. The runtime never holds provider keys or platform secrets. 404 when the agent is not the account's.
         */
        post: operations["reportRuntimeExchange"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/runtime/state": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Runtime: the agents an instance serves, with configuration, memory and recent history (loaded at start, so a restart loses nothing).
         * @description Called by the account's agent runtime, not by users: `Authorization: Bearer <gateway token>` (the token of `GET /api/instance/{userId}/token`); any other credential answers 401 `TOKEN_INVALID`. The runtime never holds provider keys or platform secrets. `agentId` narrows the answer to one agent (an empty list when it is not the account's). History: the newest 50 messages per agent.
         */
        get: operations["getRuntimeState"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/start": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start the instance (from any state → `running`; a no-op while it starts or runs).
         * @description Starts the instance; while it is already starting or running the answer carries the operation in flight. Accepted from every state (see the state machine of this group): an operation that arrives while a launch is in flight supersedes it. The path `userId` must be the caller's own id (403 otherwise); 404 when the account has no instance; 502 when the provisioning queue is unreachable. The success body is the spec's plus `current` (the status the instance is in now) and `operationId` (carried by the events of this operation); wait for the outcome with `GET /api/instance/{userId}?waitFor=running`. Every failure answers `{success: false, status: "error", error?}`.
         *
         *     Rate limit scope: `instance`.
         */
        post: operations["startInstance"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read the caller's instance CPU and memory figures.
         * @description The path `userId` must be the caller's own id (403 otherwise); 404 when the account has no instance; 502 when the backend is unreachable.
         *
         *     Rate limit scope: `instance`.
         */
        get: operations["getInstanceStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/stop": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Stop the instance (from any state → `stopped`).
         * @description Stops the running instance; memory and configuration are kept. Accepted from every state (see the state machine of this group): an operation that arrives while a launch is in flight supersedes it. The path `userId` must be the caller's own id (403 otherwise); 404 when the account has no instance; 502 when the provisioning queue is unreachable. The success body is the spec's plus `current` (the status the instance is in now) and `operationId` (carried by the events of this operation); wait for the outcome with `GET /api/instance/{userId}?waitFor=running`. Every failure answers `{success: false, status: "error", error?}`.
         *
         *     Rate limit scope: `instance`.
         */
        post: operations["stopInstance"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read the gateway token the instance uses; one is generated (and stored encrypted) when none exists.
         * @description Returns exactly the token the running instance checks. The path `userId` must be the caller's own id (403 otherwise); 502 when the backend is unreachable.
         *
         *     Rate limit scope: `instance`.
         */
        get: operations["getInstanceToken"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/token/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replace the instance gateway token with a new one, now.
         * @description For an owner who suspects the token leaked: the old token stops working on the platform at once; a running instance is handed the new one over its old one and swaps it in place (agents, memory and history stay; open connections made with the old token are closed); a stopped instance starts with the new one. Password resets rotate it too, as do password changes and sign-out everywhere. Answers the new token (as `GET .../token` would). The path `userId` must be the caller's own id (403 otherwise). `rotated: false` when no token existed yet (one is generated and returned).
         *
         *     Rate limit scope: `instance`.
         */
        post: operations["rotateInstanceToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/instance/{userId}/update": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Update the instance image / runtime version and relaunch it (from any state → `provisioning` → `running`; rolled back if never healthy).
         * @description Triggers an image update on the backend. The optional body picks a runtime version or an operator-approved image; an empty or absent body moves to the latest approved version. Accepted from every state (see the state machine of this group): an operation that arrives while a launch is in flight supersedes it. The path `userId` must be the caller's own id (403 otherwise); 404 when the account has no instance; 502 when the provisioning queue is unreachable. The success body is the spec's plus `current` (the status the instance is in now) and `operationId` (carried by the events of this operation); wait for the outcome with `GET /api/instance/{userId}?waitFor=running`. Every failure answers `{success: false, status: "error", error?}`.
         *
         *     Rate limit scope: `instance`.
         */
        post: operations["updateInstance"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's API keys (previews only, never the keys). */
        get: operations["listApiKeys"];
        put?: never;
        /**
         * Create an API key; the `sk_` key is returned once and can never be read again.
         * @description 400 `KEY_LIMIT` when the account already holds 25 keys.
         */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one owned API key record (without the key). */
        get: operations["getApiKey"];
        put?: never;
        post?: never;
        /** Revoke an owned API key; requests with it are refused from then on. */
        delete: operations["deleteApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/memory": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an owned agent's memory.
         * @description `lastUpdated` is the newest write among the keys, null while the memory is empty. An agent that is not the caller's answers 404, exactly like a missing one.
         */
        get: operations["getMemory"];
        put?: never;
        /**
         * Write one key (`key` + `memory`) or up to 50 keys at once (`memory` object); bulk writes are all-or-nothing.
         * @description Limits, on the compact JSON encoding in UTF-8: each value at most 102400 bytes (`MEMORY_VALUE_TOO_LARGE`), at most 50 keys per bulk write (`MEMORY_TOO_MANY_KEYS`), at least one (`MEMORY_EMPTY`), and the values of one bulk write together at most 3670016 bytes (`MEMORY_BULK_TOO_LARGE`; one database transaction holds 4 MB). Every limit is checked before anything is written: a refused request changes nothing. The write and a check that the agent still exists are one transaction, so an agent deleted meanwhile answers 404 and keeps no memory. Writing a key again replaces its value. Once stored, the change is pushed to the account's running instance (best effort, within 2 s), so the agent uses it from its next answer; an instance that is not running or cannot be reached reads it when it next loads its state.
         */
        post: operations["writeMemory"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Platform-wide figures: agents, messages, deployments, uptime, performance and storage.
         * @description Read from counters kept in the same writes that change agents and deployments (never a scan of agents). agents.active = running, failed = error, inactive = the rest (stopped, provisioning). messages: UTC day, ISO week (from Monday) and calendar month. uptime and performance come from the heartbeat checks of the last 30 days: platformUptime = checks the instance answered at all, averageAgentUptime = checks it answered healthy, response time and rates from the messages the agents processed; 0 / `0%` when there were none. storage: the table size DynamoDB reports (refreshed by AWS about every six hours) against the configured quota.
         */
        get: operations["getPlatformMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/metrics/{userId}/historical": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Samples of the user's CPU, memory, messages and errors over a time range, with their averages.
         * @description Only the caller's own userId is answered (an admin may read any); another user's id is 404, never their data.
         */
        get: operations["getHistoricalMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/metrics/{userId}/performance": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The user's current CPU, memory and error rate (percent) and response time (ms).
         * @description Only the caller's own userId is answered (an admin may read any); another user's id is 404, never their data. cpu and memory from the newest measured heartbeat sample; errorRate and responseTime over the newest 12 samples; zeros when there are none.
         */
        get: operations["getPerformanceMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/metrics/{userId}/summary": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The user's dashboard summary: revenue, bookings, fans, streams and skills.
         * @description Only the caller's own userId is answered (an admin may read any); another user's id is 404, never their data. Counted from the records the account stores (installed skills, bookings, fans, monthly streams and revenue); zeros when there are none. Ticket sales (event-ticketing orders) are completed bookings; revenue is USD: royalty statements and USD ticket sales, each counted once. Growth and change compare this calendar month (UTC) with the previous one: `0%` when both are zero, `N/A` when only the previous is.
         */
        get: operations["getMetricsSummary"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The OpenAPI 3.1 document generated from this contract. */
        get: operations["getOpenApi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/provision": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Provision an agent connected to chatBot, communityBot and/or businessMessaging; proxied to the backend provisioning service.
         * @description At least one channel token is required (400). The removed identifier fields (phone number id, account id, guild id, channel id) are refused as unknown fields (400). The agent always joins the authenticated caller's own account (session or `sk_` API key). Without one the answer is 402 `PAYMENT_REQUIRED` with one message for every case, whatever `email`, `x-user-email` or `cardSubscriptionId` say: neither is a secret, so they never choose an account nor tell registered addresses from unknown ones. Signed in: 402 `PAYMENT_REQUIRED` when `plan` is omitted or `free`, or, unless the account is an admin or tester (its current, verified address is in the operator's list), when the STORED subscription (kept current by verified card webhooks) is not active, is not the one `cardSubscriptionId` names, or is not for `plan`. `email` and the header grant nothing: the bypass applies only to a signed-in admin or tester account. The agent goes through the same pipeline as `POST /api/agents/provision` (plan agent limit → 429 `AGENT_LIMIT_REACHED`, queued launch → 502 when the provisioning service is unavailable). Channel tokens, the AI provider key and the stream key are stored envelope-encrypted and never returned, except the stream key once in this answer and to the owner through `GET /api/provision/{id}/stream`. The live stream comes from the streaming adapter.
         *
         *     Rate limit scope: `provision`.
         */
        post: operations["provisionWithChannels"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/provision/{id}/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read back the live stream of an agent provisioned with `POST /api/provision`: RTMP server and key, playback and HLS URLs.
         * @description Owner only: an agent that is not the caller's, or that was not provisioned with channels, answers 404. The stream key is decrypted for the owner; treat it as a secret.
         *
         *     Rate limit scope: `agents`.
         */
        get: operations["getProvisionedStream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/provision/{id}/stream/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replace the stream key of a channel-provisioned agent (the old key stops publishing); answers the stream with the new key.
         * @description For an owner whose key leaked: the streaming provider issues a new key for the same live stream (same id, server and playback URLs), which is stored envelope-encrypted. Owner only (404 otherwise); 502 when the streaming provider fails (the old key stays).
         *
         *     Rate limit scope: `agents`.
         */
        post: operations["rotateProvisionedStreamKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/register": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create an account with email and password.
         * @description `name` defaults to the email. The password is stored as an argon2id hash. A referral code (case-insensitive) must match an existing account (400 `INVALID_REFERRAL_CODE` otherwise) and credits both the new user and the referrer with REFERRAL_CREDITS (default 100) once, when the new user confirms the address, up to REFERRAL_CAP (default 20) credited referrals per referrer. Bot detection runs first when it is enabled: the client sends the challenge token it got from the bot-check widget in the `x-bot-check-token` header; a missing or refused token answers 403 `BOT_DETECTED` (503 `BOT_CHECK_UNAVAILABLE` when the verification service cannot be reached). The local stack runs with bot detection off. 409 `USER_EXISTS` when the email is taken (compared case-insensitively; of concurrent sign-ups of one email exactly one succeeds). Limited per client address (scope `register`). Emits `user.created`. Does not sign the user in: call the credentials callback next. A confirmation link is emailed to the address (see `POST /api/auth/verify-email`). Until it is opened the account can sign in and use everything that needs no proven address, but it CANNOT yet: hold admin or tester rights (even for an address in the operator's lists), be linked by an OAuth sign-in with the same email, or earn referral credit (for itself or its referrer). Settings show `emailVerified`.
         *
         *     Rate limit scope: `register`.
         *
         *     Cross-site requests are refused with 403 `CROSS_SITE_REQUEST`: a browser `Origin` other than the application's, or `Sec-Fetch-Site` other than `same-origin`/`none` (login CSRF).
         */
        post: operations["register"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/settings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's profile. */
        get: operations["getSettings"];
        put?: never;
        /**
         * Change the display name and/or email; answers the updated profile.
         * @description Changing the email needs `currentPassword` (401 `CURRENT_PASSWORD_REQUIRED` when missing, 401 `INVALID_PASSWORD` when wrong; an account without a password, OAuth or wallet only, needs a session signed in within the last 10 minutes instead, else 401 `REAUTH_REQUIRED`). The new email must be unique (case-insensitive): 409 `EMAIL_IN_USE` otherwise; the uniqueness record moves with the profile change in one transaction, so of two accounts racing for one address exactly one gets it. Addresses in the operator's admin or tester list are refused with 403 `EMAIL_RESERVED`. The new address is proven before it takes effect: the answer shows it as `pendingEmail` and a confirmation link goes to it; opening the link (`POST /api/auth/verify-email`) moves the account and signs out every session (tokens carry the email). An empty body changes nothing and answers the current profile. Emits `user.updated` when something changed.
         */
        post: operations["updateSettings"];
        /**
         * Delete the caller's account and everything it owns.
         * @description `password` is required unless the session is fresh (its token was issued by a sign-in within the last 10 minutes, per the JWT `iat`); accounts without a password (OAuth or wallet only) must use a fresh session. Missing password on a stale session → 401 `REAUTH_REQUIRED`; wrong password → 401 `INVALID_PASSWORD`. API-key callers are refused (403): only a session may delete the account. Revokes every session, frees the email, referral code and sign-in identities (their global look-ups are deleted), deletes every item of the account's partition (profile, credits ledger, agents, keys, memory, wallets, skills, subscription record...), clears the session cookie and emits `user.deleted`. The one item kept is the session-revocation record, with a TTL past the longest token lifetime, so no unexpired token of the account works again. An absent body is read as `{}`. An account with an instance or a card subscription answers 202 `{success: true, status: "deleting"}`: sessions and API keys are revoked at once, and the deletion worker stops the instance (ECS task or local process), cancels the subscription at the card processor (recorded past the deletion), then deletes the data as above; a failure part-way leaves the account `deleting` and the worker retries until it is done. Either way the user gets a final email. 502 when the deletion cannot be queued (nothing is revoked).
         */
        delete: operations["deleteAccount"];
        options?: never;
        head?: never;
        /**
         * Change the display name and/or notification preferences; answers the updated profile.
         * @description `notifications` is merged key by key into the stored preferences. Emits `user.updated` when something changed.
         */
        patch: operations["patchSettings"];
        trace?: never;
    };
    "/api/settings/password": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Change the caller's password.
         * @description Wrong `currentPassword` → 401 `INVALID_PASSWORD` (the session stays valid). On success every other session of the account is signed out (the caller's stays valid) and any emailed reset link stops working. The instance gateway token is rotated (a running instance swaps it in place), API keys are revoked when `revokeApiKeys` is true, and the account gets an email listing what was revoked.
         */
        post: operations["changePassword"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The skill catalogue, optionally one category or only featured skills, with the category list and the featured skills. */
        get: operations["listSkills"];
        put?: never;
        /**
         * Install a skill on an owned agent, within the plan's skill limit (429 when reached). Installing it again changes nothing.
         * @description Needs an active subscription (admins exempt). The plan's skill limit (label 3, solo 10, collective 25, network 100; admins 100) counts the skills installed on **each agent**, held by a per-agent counter changed in the install's transaction, so concurrent installs cannot pass it. The running instance picks the skill up with its next state load (`GET /api/instance/{userId}/runtime/state`).
         */
        post: operations["installSkill"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/{skillId}/rating": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Rate a catalogue skill from 1 to 5 stars; rating again replaces the caller's earlier rating. The catalogue's `rating` is the average. */
        post: operations["rateSkill"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/booking-settlement": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Run a read-only booking-settlement action with its fields in the query.
         * @description The spec lets booking-settlement answer GET as well as POST. GET runs only the actions that change nothing (`list`, `get`, `simulate_settlement`); escrow creation and release need POST. For `simulate_settlement` the booking object is given flat: `guarantee`, `backend`, `deposit`.
         */
        get: operations["skillBookingSettlementGet"];
        put?: never;
        /**
         * booking-settlement skill (payments): Settle bookings through escrow: create it, release funds, simulate guarantee and backend payouts.
         * @description Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.
         */
        post: operations["skillBookingSettlement"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/browser": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * browser skill (development): Fetch and read public web pages; private and loopback addresses are refused.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillBrowser"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/business-messaging": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * business-messaging skill (channels): Message fans and promoters on businessMessaging.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillBusinessMessaging"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/business-messaging-api": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * business-messaging-api skill (channels): Send template and bulk messages through the businessMessaging business API.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillBusinessMessagingApi"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/calendar": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * calendar skill (productivity): Read and manage calendar events.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillCalendar"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/chat-bot": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * chat-bot skill (channels): Talk to fans through a chatBot bot.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillChatBot"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/community-bot": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * community-bot skill (channels): Post and answer in communityBot servers.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillCommunityBot"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/demo-submitter": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * demo-submitter skill (music): Submit demos to labels and curators.
         * @description Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.
         */
        post: operations["skillDemoSubmitter"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/dj-streaming": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * dj-streaming skill (streaming): Run live DJ sets: start and stop the stream, queue tracks and read listener figures.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillDjStreaming"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/email": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * email skill (communication): Send and read email on behalf of the agent.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillEmail"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/event-scheduler": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * event-scheduler skill (events): Schedule events and announce them on the agent's channels.
         * @description Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.
         */
        post: operations["skillEventScheduler"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/event-ticketing": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * event-ticketing skill (events): Sell tickets by tier and deliver them by email.
         * @description Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.
         */
        post: operations["skillEventTicketing"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/festival-finder": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * festival-finder skill (events): Find festivals by genre, country and ticket price.
         * @description Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.
         */
        post: operations["skillFestivalFinder"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/festival-finder/catalogue": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Import festivals into the catalogue festival-finder searches (operator only).
         * @description The file format is this body: `{festivals: [{id, name, country, city?, genres, startDate, endDate?, ticketPrice}]}` (ticketPrice in USD). Same id replaces; `replace: true` removes festivals not in the file.
         */
        post: operations["importFestivals"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/file-manager": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * file-manager skill (productivity): Store, list and share files such as press kits and riders.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillFileManager"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/groupie-manager": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * groupie-manager skill (marketing): Segment fans into superfans, casual and new.
         * @description Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.
         */
        post: operations["skillGroupieManager"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/guestlist": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * guestlist skill (events): Keep guest lists for shows: add, remove and check in guests, export the list.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillGuestlist"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/instant-split": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Run a read-only instant-split action with its fields in the query.
         * @description The spec lets instant-split answer GET as well as POST. GET runs only the actions that change nothing (`list_pending`, `get_balance`, `simulate`); creating and executing split rules need POST.
         */
        get: operations["skillInstantSplitGet"];
        put?: never;
        /**
         * instant-split skill (payments): Split incoming revenue between collaborators by rule, instantly.
         * @description Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.
         */
        post: operations["skillInstantSplit"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/notes-workspace": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * notes-workspace skill (productivity): Create, update and search notes and pages in a notes workspace.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillNotesWorkspace"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/royalty-tracker": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * royalty-tracker skill (finance): Total royalties across releases and platforms.
         * @description Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.
         */
        post: operations["skillRoyaltyTracker"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/setlist-oracle": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * setlist-oracle skill (music): Build a setlist for a genre and a set length.
         * @description Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.
         */
        post: operations["skillSetlistOracle"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/team-chat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * team-chat skill (channels): Post updates to team chat channels for the crew.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillTeamChat"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/track-archaeologist": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * track-archaeologist skill (music): Dig up tracks by BPM, genre and mood.
         * @description Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.
         */
        post: operations["skillTrackArchaeologist"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/treasury": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * treasury skill (finance): Track balances, allocations and spending across wallets.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillTreasury"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/usdc-payments": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * usdc-payments skill (payments): Send, request and check USDC payments from the agent's wallet.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillUsdcPayments"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/venue-finder": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * venue-finder skill (events): Find venues by city, type, capacity and price.
         * @description Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.
         */
        post: operations["skillVenueFinder"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/venue-finder/catalogue": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Import venues into the catalogue venue-finder searches (operator only).
         * @description The file format is this body: `{venues: [{id, name, city, country, type, capacity, price}]}` (price: one night's hire in USD). An entry with an id already stored replaces it; `replace: true` first removes every venue not in the file. Nothing is invented: an empty catalogue searches empty.
         */
        post: operations["importVenues"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/visual-synthesizer": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * visual-synthesizer skill (creative): Generate visuals from a prompt and a style.
         * @description Request fields as the spec's skill table gives them; the answer is `{success: true, ...skill data}`.
         */
        post: operations["skillVisualSynthesizer"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/webhook": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * webhook skill (development): Call outside HTTPS webhooks; private and loopback addresses are refused.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/skills/workspace-suite": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * workspace-suite skill (productivity): Work with documents, spreadsheets and shared drives in an office workspace.
         * @description The spec leaves this skill's request fields open; this shape is designed: `action` names the operation and `params` carries its arguments as JSON. The answer is `{success: true, ...skill data}`.
         */
        post: operations["skillWorkspaceSuite"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/gateway": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a plugin (`agent`, `generate-text` (default), `tts`, `stt`), paid by card subscription or MPP.
         * @description The plugin is the `X-Plugin-Id` header, else the body `plugin`, else `generate-text`; an unknown plugin, from the header or the body, answers 502 `no_plugin`. Every field of the body except `plugin` is forwarded to the plugin as is. The body must be `application/json` (else 400 `UNSUPPORTED_CONTENT_TYPE`). Payment method: `X-Payment-Method` (`card` or `mpp`), else `mpp` when `Authorization: Payment <credential>` is sent, else `card`. Card payment needs a session (cookie, Bearer JWT or API key) whose stored account has an active subscription (admins exempt); `receipt` is null. Without payment the answer is 402 with the challenge body (a fresh single-use nonce, stored with its plugin, price, token, recipient and chain) and a `WWW-Authenticate: Payment amount=<amount>, currency=<currency>, recipient=<recipient>` header. MPP (push mode): pay `amount` of the `currency` token to `recipient` on chain `MPP_CHAIN_ID`, then send `Authorization: Payment {"scheme":"tempo","transaction":"<tx hash>","challengeNonce":"<nonce>"}` (the JSON, or the same base64url-encoded; the drafts' `{challenge:{id},payload:{type:"hash",hash}}` is accepted too). The nonce must be ours, unexpired, unused and for this plugin; the receipt must be successful, on the configured chain, with `MPP_CONFIRMATIONS` confirmations, and hold a `Transfer` or `TransferWithMemo` log of the token to the recipient for at least the price in base units; the hash must be unused. A refused credential is 402 with a fresh challenge and `code` (`UNKNOWN_NONCE`, `EXPIRED`, `ALREADY_USED`, `WRONG_PLUGIN`, `TX_NOT_FOUND`, `TX_REVERTED`, `WRONG_CHAIN`, `NOT_CONFIRMED`, `WRONG_TOKEN`, `WRONG_RECIPIENT`, `AMOUNT_TOO_LOW`, `MALFORMED_CREDENTIAL`, `MPP_NOT_CONFIGURED`); an unreachable chain RPC is 503 `CHAIN_UNAVAILABLE`. Nonce and hash are spent in one transaction, so parallel copies of a credential succeed once. If the plugin fails after the payment was spent, the same credential stays redeemable until one call is served; it is never served twice. A success sets `x-plugin-id`, and for MPP also `Payment-Receipt` (base64url JSON `{status, method, reference: <tx hash>, timestamp}`). Plugin inputs (checked before any payment is spent; 400 `VALIDATION_ERROR` otherwise): `generate-text` and `agent` take `prompt` or `messages` ([{role, content}]), optional `system`, `model`, `taskType`, `temperature`, `top_p`, `maxTokens`; `agent` also `maxSteps` (≤ 20) and `agentId` (one of the caller's agents: its memory and installed skills become tools; an MPP payer gets account-free tools only) and answers with `steps`. `tts` takes `input` (≤ 4096 characters), `voice` (default `alloy`), `format` (`mp3` default, `opus`, `aac`, `flac`, `wav`, `pcm`), `model` (default `tts-1`) and answers `audio {base64, mediaType, format}`; `stt` takes `audio` (base64, ≤ 700 KB decoded), `model` (default `whisper-1`), `language`, and answers the transcript as `message` (OpenAI-compatible `/audio/speech` and `/audio/transcriptions` providers). With `Accept: text/event-stream`, `generate-text` and `agent` answer `text/event-stream`: `event: delta` `{text}` per chunk, then `event: done` with the success body. The status (200) and headers are sent with the first chunk, and from that chunk on the call counts as served: the payment is spent (an MPP credential is not redeemable again) even if the provider fails later, in which case the stream ends with `event: error` `{error, code, message?}` (as the non-streamed failure body, e.g. `{error: "internal", code: "PLUGIN_FAILED", message}`) instead of `done`. A failure before the first chunk is an ordinary JSON error answer and leaves an MPP payment redeemable.
         *
         *     Rate limit scope: `gateway`.
         */
        post: operations["callGateway"];
        delete?: never;
        /**
         * CORS preflight: allows POST and OPTIONS with the Authorization, Content-Type, X-Plugin-Id and X-Payment-Method headers.
         * @description Origins allowed by `GATEWAY_ALLOWED_ORIGINS` (default the app origin) are echoed; `Payment-Receipt`, `WWW-Authenticate` and `x-plugin-id` are exposed to scripts.
         */
        options: operations["gatewayPreflight"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/payments/card/create": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The `checkoutUrl` of a gateway 402 challenge: 303 to a card subscription checkout that pays for gateway calls.
         * @description Gateway calls paid by card need a session whose account has an active subscription (spec 4.12), so a card payment always belongs to an account. With a session and no subscription: 303 to a subscription checkout for `plan` (default `label`, the smallest plan) with `metadata.plugin`; with one in force: 303 straight back to the app (`/settings/billing?plugin=<id>`). Without a session (the 402 challenge reaches callers without an account): 303 to the app (`/settings/billing?plugin=<id>&plan=<plan>`), which signs the caller in or up before the same subscription checkout; no one-off per-call card checkout is offered, as a payment without an account could not be redeemed by the gateway. An unknown plugin is 400. 502 `CARD_PROCESSOR_ERROR` when the processor fails; 503 `CARD_NOT_CONFIGURED` when card payments (or this price) are not configured.
         */
        get: operations["createGatewayCardPayment"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/wallet": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's wallet (or that there is none); without a session, the hosted wallet description when the hosted wallet is configured.
         * @description With a session: the caller's wallet (`hasWallet: true`) or `{address: null, hasWallet: false, message}`. `network` is the configured chain the balance is read from; `balance` is `unavailable` when that RPC cannot be read within its time bound. Without a session: the hosted-wallet description when the hosted wallet is configured (no auth needed, as the spec says), else 401.
         */
        get: operations["getWallet"];
        put?: never;
        /**
         * Create the caller's wallet (`create`) or read its public details (`get_seed`, no key material); `export_seed` is always refused.
         * @description `create`: 400 `WALLET_EXISTS` when the account already has a wallet. `get_seed`: 404 when it has none; answers only the address, network, creation time and a warning, never a seed or key. `export_seed`: always 403 `{error}`.
         */
        post: operations["runWalletAction"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/wallet/address": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The caller's wallet address, or that authentication is needed.
         * @description With a session: `{authenticated: true, address}` (`address` is null while the account has no wallet). Without one: `{authenticated: false, needsAuth: true, message}`; when wallet key custody is not configured (no KMS key in AWS): `{authenticated: false, needsAuth: true, error, setup}`.
         */
        get: operations["getWalletAddress"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/wallet/create": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a hosted wallet for the caller, usable on the test and main networks.
         * @description Requires a session (the spec shows none; key creation is not left open). `email` must be the caller's account email (403 otherwise): it names the wallet owner and grants nothing. 400 when `email` is missing or malformed, or the account already has a wallet (`WALLET_EXISTS`); 500 with `setup` when the hosted wallet is not configured, or with `details` (a short reason, never secrets) on another failure.
         */
        post: operations["createHostedWalletForEmail"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/wallet/hosted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Describe the hosted wallet: an EVM wallet on the main and test networks.
         * @description Requires a session (the spec shows none; the hosted-wallet routes are not left open). A fixed description; needs no provider.
         */
        get: operations["getHostedWalletInfo"];
        put?: never;
        /**
         * Set up the caller's hosted wallet on the test network from a given private key, or from a newly generated one.
         * @description Requires a session (the spec shows none; key creation is not left open). The key is stored envelope-encrypted and never returned or logged; the answer carries only the address. It is held in the platform's own key custody, so it needs no hosted-wallet provider. 400 when the key is not a valid secp256k1 private key (`INVALID_PRIVATE_KEY`) or the account already has a wallet (`WALLET_EXISTS`); 409 `WALLET_ADDRESS_TAKEN` when another account already holds that key.
         */
        post: operations["createHostedWallet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/card": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The card processor's signed webhook: subscription and payment events.
         * @description The processor's `stripe-signature` header is verified over the exact raw body with `CARD_WEBHOOK_SECRET` and a 5-minute timestamp tolerance; a missing, wrong or stale signature is 400 `INVALID_SIGNATURE` and nothing is processed (503 `CARD_NOT_CONFIGURED` when no secret is configured). Each event id takes effect once (a redelivery answers 200 without effect), and an event older than the stored state never overwrites it, so deliveries may come in any order:
         *     - `checkout.session.completed` / `checkout.session.async_payment_succeeded`, once paid: a subscription checkout activates `metadata.plan` for `client_reference_id` with the subscription id; a credit pack (`metadata.kind` `credits`) adds its credits with one ledger entry per session; a storage checkout adds its GB.
         *     - `customer.subscription.created` / `.updated` / `.deleted`: status (active when `active` or `trialing`), plan (`metadata.plan`, else the plan of the price), billing period and cancel-at-period-end, for `metadata.userId` (else the account of the customer). A cancellation of an older subscription does not end a newer active one.
         *     Other event types, and events for unknown accounts, are acknowledged and ignored. The event is the processor's own format, so its body is open.
         */
        post: operations["cardWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/endpoints": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's webhook endpoints (never their secrets). */
        get: operations["listWebhookEndpoints"];
        put?: never;
        /**
         * Register a webhook endpoint; its signing secret is returned once.
         * @description 400 `ENDPOINT_LIMIT` at 10 endpoints; 400 `URL_NOT_ALLOWED` for a URL the platform may not call.
         */
        post: operations["createWebhookEndpoint"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/endpoints/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove a webhook endpoint; nothing more is sent to it. */
        delete: operations["deleteWebhookEndpoint"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/endpoints/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The delivery log of one endpoint, newest first (kept 30 days). */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Agent: {
            attestationUid: string | null;
            /** Format: date-time */
            createdAt: string;
            /** @description only when the status is `error`: why the agent or its instance failed (the last launch error, a health check that never passed...) */
            failureReason?: string;
            id: string;
            model: string;
            name: string;
            /** @description plan of the owning account */
            plan: string;
            /** @description version of the agent runtime engine */
            runtimeVersion: string;
            /** @description when the instance last started; null while it has never run */
            startedAt: string | null;
            /** @enum {string} */
            status: "provisioning" | "running" | "stopped" | "error" | "active";
            subdomain: string;
            /** Format: date-time */
            updatedAt: string;
            /** Format: uri */
            url: string;
            verificationType: ("eas" | "coinbase" | "ens" | "webauthn") | null;
            verified: boolean;
            verifiedAt: string | null;
            /** Format: uri */
            websocketUrl: string;
        };
        /** @description Agent configuration; every field optional, omitted fields take the platform default. */
        AgentConfig: {
            /** @description which messaging channels the agent answers on */
            channels?: {
                businessMessaging?: boolean;
                chatBot?: boolean;
                communityBot?: boolean;
            };
            /** @description environment variables handed to the agent runtime, at most 50 entries */
            env?: {
                [key: string]: string;
            };
            /** @description maximum tokens per model answer */
            maxTokens?: number;
            /** @description model identifier of the form `<vendor>/<model>` */
            model?: string;
            /** @description installed skill ids (e.g. `event-scheduler`), at most 100, no duplicates */
            skills?: string[];
            /** @description at most 8000 characters */
            systemPrompt?: string;
            temperature?: number;
        };
        AgentLogEntry: {
            /** Format: date-time */
            at: string;
            id: string;
            /** @constant */
            kind: "runtime";
            level: string | null;
            line: string;
            /**
             * @description `runtime` when the runtime reported the line itself
             * @enum {string}
             */
            stream: "stdout" | "stderr" | "runtime";
        } | {
            /** Format: date-time */
            at: string;
            content: string;
            id: string;
            /** @constant */
            kind: "message";
            /** @enum {string} */
            role: "user" | "assistant" | "system";
        } | {
            /** Format: date-time */
            at: string;
            id: string;
            /** @constant */
            kind: "lifecycle";
            op: string | null;
            operationId: string | null;
            reason: string | null;
            status: string | null;
            type: string;
        };
        /** @description One message the agent received (`user`) or sent (`assistant`), or a `system` notice. */
        AgentMessage: {
            content: string;
            /** Format: date-time */
            createdAt: string;
            id: string;
            /** @enum {string} */
            role: "user" | "assistant" | "system";
        };
        AgentStats: components["schemas"]["AgentStatsLive"] | components["schemas"]["AgentStatsMock"];
        AgentStatsLive: {
            stats: {
                agentId: string;
                /** @constant */
                averageResponseTime: "N/A";
                cpu: string;
                /** @constant */
                errorRate: "N/A";
                /** @description used / limit, e.g. `120.5MiB / 2GiB` */
                memory: string;
                /** @description e.g. `5.88%` */
                memoryPercent: string;
                /** @constant */
                messagesPerHour: "N/A";
                /** @constant */
                messagesProcessed: "N/A";
                /** @description in / out, e.g. `1.2kB / 3.4kB` */
                network: string;
                pids: string;
                /** @description status the instance reports */
                status: string;
                /** @constant */
                successRate: "N/A";
                /** @description milliseconds */
                uptime: number;
                /** @description e.g. `3h 12m` */
                uptimeFormatted: string;
            };
            /** @constant */
            status: "ok";
        };
        AgentStatsMock: {
            stats: {
                agentId: string;
                /** @description milliseconds */
                averageResponseTime: number;
                errorRate: string;
                messagesPerHour: number;
                messagesProcessed: number;
                successRate: string;
                /** Format: date-time */
                timestamp: string;
                /** @description milliseconds */
                uptime: number;
            };
            /** @constant */
            status: "mock";
        };
        AgentSummary: {
            /** Format: date-time */
            createdAt: string;
            id: string;
            model: string;
            name: string;
            /** @enum {string} */
            status: "provisioning" | "running" | "stopped" | "error" | "active";
            /** Format: date-time */
            updatedAt: string;
            /** Format: uri */
            websocketUrl: string;
        };
        AgentVerification: {
            /** @description set for `eas` */
            attestationUid: string | null;
            metadata: {
                [key: string]: components["schemas"]["JsonValue"];
            } | null;
            /** @enum {string} */
            verificationType: "eas" | "coinbase" | "ens" | "webauthn";
            /** @constant */
            verified: true;
            /** Format: date-time */
            verifiedAt: string;
            /** @description the wallet that produced the proof, when there is one */
            verifierAddress: string | null;
        } | {
            attestationUid: null;
            metadata: null;
            verificationType: null;
            /** @constant */
            verified: false;
            verifiedAt: null;
            verifierAddress: null;
        };
        ApiKey: {
            /** Format: date-time */
            createdAt: string;
            id: string;
            /** @description truncated preview such as `sk_AbC…9xYz`; enough to recognise a key, not to use it */
            keyPreview: string;
            /** @description null until the key is first used */
            lastUsed: string | null;
            name: string;
        };
        BackendActionBody: {
            /**
             * @description where the instance is now
             * @enum {string}
             */
            current?: "provisioning" | "running" | "stopped" | "error" | "active";
            message: string;
            /** @description the operation that produced the current state */
            operationId?: string;
            /**
             * @description status after the action, when the backend reports it
             * @enum {string}
             */
            status?: "provisioning" | "running" | "stopped" | "error" | "active";
            /** @constant */
            success: true;
        } & {
            [key: string]: unknown;
        };
        ByokState: {
            /** @description true when at least one provider key is stored */
            enabled: boolean;
            /** @description providers with a stored key */
            providers: {
                /** @description the last four characters of the key, e.g. `…x9Qa`; the key itself is never returned */
                keyPreview: string;
                /**
                 * @description AI provider id
                 * @enum {string}
                 */
                provider: "openrouter" | "openai" | "anthropic" | "google" | "mistral";
                /** Format: date-time */
                updatedAt: string;
            }[];
        };
        ChatPaymentRequiredBody: {
            /** @enum {string} */
            code: "PLAN_REQUIRED" | "SUBSCRIPTION_REQUIRED";
            error: string;
            /** @constant */
            success: false;
        };
        ChatRequestBody: {
            max_tokens?: number;
            messages: {
                content: string;
                /** @enum {string} */
                role: "user" | "assistant" | "system";
            }[];
            /** @description auto-selected from taskType when omitted; must be allowed by the plan */
            model?: string;
            taskType?: string;
            temperature?: number;
            top_p?: number;
        };
        ChatSession: {
            agentId: string;
            /** Format: date-time */
            createdAt: string;
            id: string;
            messageCount: number;
            title: string;
            /** Format: date-time */
            updatedAt: string;
        };
        CreateApiKeyBody: {
            name: string;
        };
        CreateWalletBody: {
            /** Format: email */
            email: string;
        };
        CreditPack: {
            credits: number;
            /** @description the processor's price id */
            price: string;
        };
        EndpointMetadata: {
            description: string;
            /** @description the path */
            endpoint: string;
            /** @constant */
            method: "POST";
            optionalFields: string[];
            requiredFields: string[];
            /** @description fields of a successful answer */
            response: string[];
        };
        /** @description The error body of every failure: a message and, usually, a machine-readable code. */
        Error: {
            code?: string;
            error: string;
        } & {
            [key: string]: unknown;
        };
        GatewayPaymentRequiredBody: {
            card: {
                amount: number;
                /** @description card checkout for this plugin, `/api/v1/payments/card/create?plugin=<id>` */
                checkoutUrl: string;
                currency: string;
            };
            /** @enum {string} */
            code: "PAYMENT_REQUIRED" | "SUBSCRIPTION_REQUIRED" | "MPP_NOT_CONFIGURED" | "MALFORMED_CREDENTIAL" | "UNKNOWN_NONCE" | "EXPIRED" | "ALREADY_USED" | "WRONG_PLUGIN" | "TX_NOT_FOUND" | "TX_REVERTED" | "WRONG_CHAIN" | "NOT_CONFIRMED" | "WRONG_TOKEN" | "WRONG_RECIPIENT" | "AMOUNT_TOO_LOW";
            /** @constant */
            error: "payment_required";
            message: string;
            mpp: {
                /** @description price in the token (TIP-20, 6 decimals): the transfer must carry at least amount × 10^6 base units */
                amount: string;
                /** @description token contract address */
                currency: string;
                description: string;
                /** @description epoch milliseconds */
                expiresAt: number | null;
                /** @description single use; valid for MPP_CHALLENGE_TTL_SECONDS and for this plugin only */
                nonce: string | null;
                recipient: string | null;
                /**
                 * @description the Tempo charge method of the MPP drafts, push mode (the client pays, then sends the hash)
                 * @constant
                 */
                scheme: "tempo";
            };
        };
        GatewaySuccessBody: {
            /** @description the plugin's answer (text; the transcript for `stt`; for `tts` a short note beside the `audio` field) */
            message: string;
            payment: {
                /** @constant */
                method: "card";
                receipt: null;
            } | {
                /** @constant */
                method: "mpp";
                /** @description the payment transaction hash */
                receipt: string;
            };
            /** @enum {string} */
            plugin: "agent" | "generate-text" | "tts" | "stt";
            /** Format: date-time */
            timestamp: string;
        } & {
            [key: string]: unknown;
        };
        HealthBody: {
            cpu: {
                cores: number;
                /** @description percent of all cores, sampled over ~100 ms */
                usage: number;
            };
            /** @enum {string} */
            health: "healthy" | "degraded" | "unhealthy";
            memory: {
                /** @description bytes */
                free: number;
                /** @description bytes */
                total: number;
                /** @description percent of total memory in use */
                usage: number;
                /** @description bytes */
                used: number;
            };
            /** @constant */
            status: "ok";
            /** Format: date-time */
            timestamp: string;
            /** @description seconds the host has been up */
            uptime: number;
        };
        HealthFailureBody: {
            /** @constant */
            health: "unhealthy";
            /** @constant */
            status: "error";
            /** Format: date-time */
            timestamp: string;
        };
        HistoricalMetricsBody: {
            /** @description means over the samples in the range (cpu and memory over the measured ones); 0 when there are none */
            averages: {
                cpu: number;
                errors: number;
                memory: number;
                messages: number;
            };
            metrics: {
                /** @description null when the instance did not answer its stats at that heartbeat */
                cpu: number | null;
                /** @description of those, the ones that ended in an error */
                errors: number;
                /** @description percent of the instance memory limit; null when it did not answer */
                memory: number | null;
                /** @description messages the agents processed since the previous heartbeat */
                messages: number;
                /** Format: date-time */
                timestamp: string;
            }[];
            /** @enum {string} */
            timeRange: "24h" | "7d" | "30d";
            userId: string;
        };
        HostedWalletBody: {
            /** @description key to import; a new one is generated when omitted. Stored encrypted, never returned or logged */
            privateKey?: string;
        };
        HostedWalletConfigured: {
            agenticWallet: {
                features: (("create_wallet" | "get_balance" | "trade_tokens" | "x402_payments") | string)[];
                projectId: string;
                /** @constant */
                status: "configured";
            };
            instructions: string;
        };
        InfraMcpExamplesBody: {
            description: string;
            examples: {
                database_management: string[];
                deployment_monitoring: string[];
                monitoring_and_logs: string[];
                service_management: string[];
                troubleshooting: string[];
            };
        };
        InfraMcpHealthBody: {
            description: string;
            docker_image: string;
            /** Format: uri */
            documentation: string;
            name: string;
            /** Format: uri */
            official_repo: string;
            /** @constant */
            status: "operational";
            /** Format: date-time */
            timestamp: string;
            version: string;
        };
        InfraMcpInfoBody: {
            description: string;
            docker_image: string;
            /** Format: uri */
            documentation: string;
            features: string[];
            maintained_by: string;
            name: string;
            /** Format: uri */
            repository: string;
            /** @description where the setup guide is, e.g. `/api/infra-mcp/setup` */
            setup_guide: string;
            version: string;
        };
        InfraMcpSetupBody: {
            /** @description an MCP client configuration that runs the server image */
            docker_config_example: {
                [key: string]: components["schemas"]["JsonValue"];
            };
            /** @description link name to URL */
            documentation_links: {
                [key: string]: string;
            };
            quick_start: {
                step_1: string;
                step_2: string;
                step_3: string;
            };
            recommended_approach: string;
            title: string;
        };
        InfraMcpToolsBody: {
            /** Format: uri */
            complete_reference: string;
            source: string;
            tool_categories: {
                deployments: ("list_deploys" | "get_deploy")[];
                key_value: ("list_key_value" | "get_key_value" | "create_key_value")[];
                logs: ("list_logs" | "list_log_label_values")[];
                metrics: "get_metrics"[];
                postgres: ("list_postgres_instances" | "get_postgres" | "create_postgres" | "query_render_postgres")[];
                services: ("list_services" | "get_service" | "create_web_service" | "create_static_site" | "create_cron_job" | "update_environment_variables")[];
                workspaces: ("list_workspaces" | "select_workspace" | "get_selected_workspace")[];
            };
        };
        InfraMcpValidateConfigBody: {
            api_key?: string;
            endpoint?: string;
        };
        InfraMcpValidateFailureBody: {
            /** @description the messages of INFRA_MCP_VALIDATION_ERRORS, or one naming a malformed body */
            errors: string[];
            help: string;
            /** @constant */
            valid: false;
        };
        InstalledSkillRecord: {
            agentId: string;
            config: {
                [key: string]: components["schemas"]["JsonValue"];
            };
            enabled: boolean;
            /** Format: date-time */
            installedAt: string;
            skillId: string;
            /** Format: date-time */
            updatedAt: string;
        };
        Instance: {
            /** @description only when the status is `error`: why the last launch or health check failed */
            failureReason?: string;
            plan: string;
            /** @description only with `waitFor`: whether the instance reached that status before the timeout */
            reached?: boolean;
            runtimeVersion: string;
            /** @description null while the instance has never run */
            startedAt: string | null;
            /** @enum {string} */
            status: "provisioning" | "running" | "stopped" | "error" | "active";
            subdomain: string;
            /** Format: uri */
            url: string;
            userId: string;
        };
        InstanceStats: {
            cpu: string;
            /** @description memory in use, e.g. `120.5MiB` */
            memory: string;
            plan: string;
            runtimeVersion: string;
            /** @enum {string} */
            status: "provisioning" | "running" | "stopped" | "error" | "active";
            userId: string;
        };
        JsonValue: string | number | boolean | null | components["schemas"]["JsonValue"][] | {
            [key: string]: components["schemas"]["JsonValue"];
        };
        LedgerEntry: {
            /** Format: date-time */
            createdAt: string;
            /** @description credits added (positive) or spent (negative) */
            delta: number;
            id: string;
            note?: string;
            /** @enum {string} */
            reason: "purchase" | "referral" | "usage" | "refund" | "adjustment";
        };
        LifecycleEventRecord: {
            agentId?: string;
            /** Format: date-time */
            at: string;
            /** @description `user`, `provisioner`, `health-check`, `heartbeat`, `dead-letter` or `account-deletion` */
            cause: string;
            generation?: number;
            id: string;
            image?: string;
            /** @description the lifecycle operation: `launch`, `start`, `stop`, `restart`, `update`, `repair`, `reset-memory` */
            op?: string;
            operationId?: string;
            reason?: string;
            runtimeVersion?: string;
            /** @description status after the event */
            status?: string;
            /** @description `instance.requested`, `instance.launching`, `instance.running`, `instance.unhealthy`, `instance.stopped`, `instance.error`, `instance.superseded`, `instance.rolled_back`, `agent.running`, `agent.error` */
            type: string;
        };
        LifecycleFailureBody: {
            code?: string;
            error?: string;
            /** @constant */
            status: "error";
            /** @constant */
            success: false;
        } & {
            [key: string]: unknown;
        };
        MessageBody: {
            message: string;
        };
        MetricsSummaryBody: {
            bookings: {
                completed: number;
                conversion: string;
                pending: number;
            };
            fans: {
                active: number;
                /** @description change over the previous period, e.g. `+12.5%` */
                growth: string;
                segmentation: {
                    casual: number;
                    new: number;
                    superfans: number;
                };
                total: number;
            };
            revenue: {
                change: string;
                month: string;
                total: string;
            };
            skills: {
                active: number;
                /** @description change over the previous period, e.g. `+12.5%` */
                growth: string;
                total: number;
            };
            streams: {
                /** @description change over the previous period, e.g. `+12.5%` */
                growth: string;
                monthlyListeners: number;
                monthlyStreams: number;
            };
        };
        Model: {
            /** @description a configured provider can serve it (a direct vendor API or the OpenAI-compatible aggregator) */
            available: boolean;
            contextWindow: number;
            description: string;
            id: string;
            /** @description USD per million input (prompt) tokens */
            inputCost: number;
            name: string;
            /** @description USD per million output (completion) tokens */
            outputCost: number;
            provider: string;
            tags: string[];
        };
        ModelRestrictedBody: {
            allowedModels: string[];
            /** @constant */
            code: "MODEL_RESTRICTED";
            error: string;
            /** @constant */
            success: false;
        };
        /** @description notification preferences; defaults: email, agentStatus and billing on, productUpdates off */
        Notifications: {
            agentStatus: boolean;
            billing: boolean;
            email: boolean;
            productUpdates: boolean;
        };
        /** @description notification preferences to change; keys left out keep their current value */
        NotificationsPatch: {
            /** @description an agent changes status: running, stopped, error */
            agentStatus?: boolean;
            /** @description receipts, failed payments, renewals, low credit balance */
            billing?: boolean;
            /** @description account and security email (sign-in alerts, password changes) */
            email?: boolean;
            /** @description product news and announcements */
            productUpdates?: boolean;
        };
        NoWallet: {
            address: null;
            /** @description native balance in ether units (decimal string), or `unavailable` when the chain RPC cannot be read */
            balance: string | "unavailable";
            /** @constant */
            hasWallet: false;
            message: string;
            /** @enum {string} */
            network: "l2-test" | "l2-main";
        };
        PerformanceMetricsBody: {
            cpu: number;
            errorRate: number;
            memory: number;
            /** @description milliseconds */
            responseTime: number;
        };
        /** @description limits of the plan table (spec 2.16); zeros and no models without a plan; admins get `network` limits */
        PlanLimits: {
            /** @description agent-to-agent messages per day */
            a2aPerDay: number;
            agents: number;
            /** @description agent memory as the plan table lists it, e.g. `8 GB` */
            memory: string;
            /** @description model ids (`<vendor>/<model>`) the plan may use */
            models: string[];
            skills: number;
        };
        PlatformMetricsBody: {
            metrics: {
                agents: {
                    active: number;
                    failed: number;
                    inactive: number;
                    total: number;
                };
                deployments: {
                    failed: number;
                    successful: number;
                    total: number;
                };
                messages: {
                    thisMonth: number;
                    thisWeek: number;
                    today: number;
                };
                performance: {
                    /** @description milliseconds */
                    averageResponseTime: number;
                    errorRate: string;
                    successRate: string;
                };
                storage: {
                    /** @description percent of the quota; above 100 when the table outgrew it */
                    percentUsed: number;
                    /** @description MB */
                    total: number;
                    /** @description MB */
                    used: number;
                };
                uptime: {
                    averageAgentUptime: number;
                    platformUptime: number;
                };
            };
            /** @constant */
            status: "ok";
            /** Format: date-time */
            timestamp: string;
        };
        ProvisionAgentBody: {
            config?: components["schemas"]["AgentConfig"];
            /**
             * @default openai/gpt-4o-mini
             * @enum {string}
             */
            model?: "openai/gpt-4o-mini" | "anthropic/claude-3-5-haiku" | "custom";
            name: string;
            /**
             * @description accepted for compatibility and ignored: the agent limit always comes from the account plan
             * @enum {string}
             */
            tier?: "starter" | "pro" | "enterprise";
        };
        ProvisionAgentBodyInput: {
            config?: components["schemas"]["AgentConfig"];
            /**
             * @default openai/gpt-4o-mini
             * @enum {string}
             */
            model?: "openai/gpt-4o-mini" | "anthropic/claude-3-5-haiku" | "custom";
            name: string;
            /**
             * @description accepted for compatibility and ignored: the agent limit always comes from the account plan
             * @enum {string}
             */
            tier?: "starter" | "pro" | "enterprise";
        };
        ProvisionChannelsBody: {
            /**
             * @default openrouter
             * @enum {string}
             */
            aiProvider?: "openrouter" | "openai" | "anthropic" | "google" | "mistral";
            /** @description key for the AI provider; stored encrypted, never returned */
            apiKey?: string;
            /** @description businessMessaging access token; at least one channel token is required */
            businessMessagingToken?: string;
            /** @description active card subscription id; required unless the caller is an authenticated admin or tester */
            cardSubscriptionId?: string;
            /** @description chatBot bot token; at least one channel token is required */
            chatBotToken?: string;
            /** @description chatBot user id the agent is bound to (owner binding) */
            chatBotUserId?: string;
            /** @description communityBot bot token; at least one channel token is required */
            communityBotToken?: string;
            /**
             * Format: email
             * @description accepted for compatibility and ignored: the agent joins the authenticated caller's account
             */
            email?: string;
            /**
             * @description `free` or omitted answers 402 `PAYMENT_REQUIRED`
             * @enum {string}
             */
            plan?: "solo" | "collective" | "label" | "network" | "free";
        };
        ProvisionChannelsResponse: {
            liveStreamId: string;
            /** @description secret key for pushing the live stream; shown to the caller once */
            streamKey: string;
            subdomain: string;
            /** @constant */
            success: true;
            /** Format: uri */
            url: string;
            userId: string;
        };
        ProvisionedStream: {
            agentId: string;
            bitrate: string;
            /** Format: date-time */
            createdAt: string;
            hls: {
                playlistUrl: string;
            };
            /** @description when the stream key was last replaced; null while it is the first one */
            keyRotatedAt: string | null;
            liveStreamId: string;
            lowLatency: boolean;
            playbackUrl: string;
            provider: string;
            resolution: string;
            rtmp: {
                key: string;
                server: string;
            };
            rtmpServer: string;
            /** @description secret: whoever holds it can publish to the stream */
            streamKey: string;
        };
        RuntimeAgentState: {
            config: components["schemas"]["AgentConfig"];
            /** @description the agent's credentials (name → value, set with `POST /api/agent` action `set-credential`): decrypted only for this gateway-token read */
            credentials: {
                [key: string]: string;
            };
            id: string;
            memory: {
                [key: string]: components["schemas"]["JsonValue"];
            };
            /** @description the most recent messages, oldest first */
            messages: components["schemas"]["AgentMessage"][];
            /** @description the model the platform answers this agent with */
            model: string;
            name: string;
            /** @description the skills installed on the agent; the runtime calls them at `POST /api/instance/{userId}/runtime/agents/{agentId}/skills/{skill}` */
            skills: {
                config: {
                    [key: string]: components["schemas"]["JsonValue"];
                };
                enabled: boolean;
                skillId: string;
            }[];
        };
        RuntimeChatMessage: {
            content: string;
            /** @enum {string} */
            role: "system" | "user" | "assistant";
        };
        RuntimeCompletion: {
            choices: {
                finish_reason: string | null;
                index: number;
                message: {
                    content: string;
                    /** @constant */
                    role: "assistant";
                };
            }[];
            created: number;
            id: string;
            model: string;
            /** @constant */
            object: "chat.completion";
            usage: {
                completion_tokens: number;
                prompt_tokens: number;
                total_tokens: number;
            };
        };
        SettingsProfile: {
            credits: number;
            /**
             * Format: email
             * @description compared case-insensitively; stored lower-cased
             */
            email: string;
            /** @description the address was confirmed through an emailed link (or an OAuth provider); admin and tester rights, OAuth linking and referral credit need it */
            emailVerified: boolean;
            id: string;
            name: string;
            notifications: components["schemas"]["Notifications"];
            /** @description a new address waiting for its confirmation link; `email` changes when the link is opened */
            pendingEmail: string | null;
            /**
             * @description the account plan: a paid plan, a legacy tier, or `none` without a subscription (the retired `free` plan reads as `none`)
             * @enum {string}
             */
            plan: "none" | "label" | "solo" | "collective" | "network" | "starter" | "pro" | "enterprise";
            /** @description the account's own referral code, to share */
            referralCode: string;
            /** @description referrals of this account that were credited (at most REFERRAL_CAP) */
            referralsCredited: number;
            twoFactorEnabled: boolean;
        };
        SignedInBody: {
            user: components["schemas"]["User"];
        };
        Skill: {
            author: string;
            /** @enum {string} */
            category: "streaming" | "events" | "payments" | "finance" | "productivity" | "communication" | "development" | "channels" | "music" | "creative" | "marketing";
            description: string;
            downloads: number;
            featured: boolean;
            icon: string;
            id: string;
            name: string;
            rating: number;
        };
        SkillSuccessBody: {
            /** @constant */
            success: true;
        } & {
            [key: string]: unknown;
        };
        SuccessTrue: {
            /** @constant */
            success: true;
        };
        UpdateInstanceBody: {
            /** @description container image to run; must be one of the images the operator has approved, else 400 `IMAGE_NOT_ALLOWED` */
            image?: string;
            /** @description runtime engine version to move to; omitted means the latest the operator has approved */
            runtimeVersion?: string;
        };
        Usage: {
            /** @description agent-to-agent messages of the period */
            a2aMessages: number;
            /** @description per agent */
            agents: {
                a2aMessages: number;
                /** @description null: calls made outside any agent (POST /api/ai/chat) */
                agentId: string | null;
                calls: number;
                completionTokens: number;
                costUsd: number;
                /** @description credits charged (0 for allowance, BYOK and admin calls) */
                credits: number;
                promptTokens: number;
                totalTokens: number;
            }[];
            /** @description the plan's included model spend of the period, in credits, and how much of it is used; past it calls are debited from the balance */
            allowance: {
                includedCredits: number;
                usedCredits: number;
            };
            /** @description model cost of the period at catalogue prices, USD */
            costUsd: number;
            credits: {
                /** @description credits bought, granted or refunded this period */
                added: number;
                balance: number;
                /** @description credits spent on usage this period (sum of the ledger `usage` entries) */
                spent: number;
                /** @description number of `usage` ledger entries this period */
                usageEntries: number;
            };
            limits: components["schemas"]["PlanLimits"];
            /** @description per model */
            models: {
                calls: number;
                completionTokens: number;
                costUsd: number;
                /** @description credits charged (0 for allowance, BYOK and admin calls) */
                credits: number;
                model: string;
                promptTokens: number;
                totalTokens: number;
            }[];
            /** Format: date-time */
            periodEnd: string;
            /**
             * Format: date-time
             * @description start of the billing period (the calendar month, UTC, without a subscription period)
             */
            periodStart: string;
            /** @description model tokens of the period */
            tokens: {
                completion: number;
                prompt: number;
                total: number;
            };
        };
        User: {
            /** @description credit balance */
            credits: number;
            /**
             * Format: email
             * @description compared case-insensitively; stored lower-cased
             */
            email: string;
            id: string;
            name: string;
            /**
             * @description the account plan: a paid plan, a legacy tier, or `none` without a subscription (the retired `free` plan reads as `none`)
             * @enum {string}
             */
            plan: "none" | "label" | "solo" | "collective" | "network" | "starter" | "pro" | "enterprise";
        };
        ValidationError: {
            /** @constant */
            code: "VALIDATION_ERROR";
            error: string;
            issues: {
                message: string;
                path: string;
            }[];
        };
        VerifyAgentBody: {
            /** @description required for `eas`: the UID of the attestation about this agent */
            attestationUid?: string;
            /** @description required for `ens`: the name that must resolve to the signing wallet */
            ensName?: string;
            /** @description required for `coinbase`, `ens` and `webauthn` */
            signature?: string;
            /** @enum {string} */
            verificationType: "eas" | "coinbase" | "ens" | "webauthn";
            walletAddress?: string;
        };
        Wallet: {
            address: string;
            /** @description native balance in ether units (decimal string), or `unavailable` when the chain RPC cannot be read */
            balance: string | "unavailable";
            /** Format: date-time */
            createdAt: string;
            /** @constant */
            hasWallet: true;
            /** @enum {string} */
            network: "l2-test" | "l2-main";
        };
        WalletActionBody: {
            /** @enum {string} */
            action: "create" | "get_seed" | "export_seed";
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getAgentAction: {
        parameters: {
            query?: {
                action?: "health" | "sessions" | "session" | "memory" | "skills" | "credentials";
                /** @description for `memory` (required), `sessions`, `skills` and `credentials` (filter) */
                agentId?: string;
                /** @description for `sessions`: the `nextCursor` of the previous page */
                cursor?: string;
                /** @description for `sessions` and `session`: 50 by default, at most 200 */
                limit?: number;
                /** @description for `session` */
                sessionId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        endpoints: {
                            action: string | null;
                            description: string;
                            /** @enum {string} */
                            method: "GET" | "POST";
                        }[];
                    } | {
                        agents: {
                            id: string;
                            name: string;
                            /** @enum {string} */
                            status: "provisioning" | "running" | "stopped" | "error" | "active";
                        }[];
                        /**
                         * @description healthy: every agent running; degraded: some; unavailable: none or no agents
                         * @enum {string}
                         */
                        status: "healthy" | "degraded" | "unavailable";
                        /** Format: date-time */
                        timestamp: string;
                    } | {
                        /** @description pass as `cursor` for the next page; null on the last page */
                        nextCursor: string | null;
                        sessions: components["schemas"]["ChatSession"][];
                    } | {
                        /** @description the newest `limit` messages of the session, oldest first */
                        messages: components["schemas"]["AgentMessage"][];
                        session: components["schemas"]["ChatSession"];
                    } | {
                        agentId: string;
                        count: number;
                        memory: {
                            [key: string]: components["schemas"]["JsonValue"];
                        };
                    } | {
                        skills: {
                            agentId: string;
                            /** @description the skill's settings on this agent */
                            config: {
                                [key: string]: components["schemas"]["JsonValue"];
                            };
                            enabled: boolean;
                            /** Format: date-time */
                            installedAt: string;
                            skillId: string;
                            /** Format: date-time */
                            updatedAt: string;
                        }[];
                    } | {
                        /** @description names, previews and update times only; values are never returned */
                        credentials: {
                            agentId: string;
                            name: string;
                            /** @description a masked hint of the value (its last characters only when it is long enough to keep the rest secret) */
                            preview: string;
                            /** Format: date-time */
                            updatedAt: string;
                        }[];
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postAgentAction: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "chat",
                 *       "agentId": "agt_7Hk2mQ9xLp",
                 *       "message": "Draft a setlist for Friday night, 90 minutes of deep house."
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "chat";
                    /** @description defaults to the session's agent, else the caller's most recently created agent */
                    agentId?: string;
                    /** @description at most 32000 characters */
                    message: string;
                    /** @description continue this session; a new session is opened when omitted */
                    sessionId?: string;
                } | {
                    /** @constant */
                    action: "create-session";
                    agentId: string;
                    title?: string;
                } | {
                    /** @constant */
                    action: "update-skill";
                    /** @description only this agent; every agent of the caller with the skill installed when omitted */
                    agentId?: string;
                    /** @description replace the skill's settings on the agent(s) */
                    config?: {
                        [key: string]: components["schemas"]["JsonValue"];
                    };
                    /** @description enable or disable the skill */
                    enabled?: boolean;
                    skillId: string;
                } | {
                    /** @constant */
                    action: "set-credential";
                    agentId: string;
                    name: string;
                    /** @description stored envelope-encrypted; never returned or logged */
                    value: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: components["schemas"]["AgentMessage"];
                        sessionId: string;
                        usage: {
                            completionTokens: number;
                            promptTokens: number;
                            totalTokens: number;
                        };
                    } | {
                        skills: {
                            agentId: string;
                            /** @description the skill's settings on this agent */
                            config: {
                                [key: string]: components["schemas"]["JsonValue"];
                            };
                            enabled: boolean;
                            /** Format: date-time */
                            installedAt: string;
                            skillId: string;
                            /** Format: date-time */
                            updatedAt: string;
                        }[];
                        /** @constant */
                        success: true;
                    } | {
                        credential: {
                            agentId: string;
                            name: string;
                            /** @description a masked hint of the value (its last characters only when it is long enough to keep the rest secret) */
                            preview: string;
                            /** Format: date-time */
                            updatedAt: string;
                        };
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Created */
            201: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        session: components["schemas"]["ChatSession"];
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listAgents: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agents: components["schemas"]["AgentSummary"][];
                        count: number;
                        /** @constant */
                        status: "ok";
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createAgentDeprecated: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Tour Booking Assistant",
                 *       "model": "openai/gpt-4o-mini"
                 *     }
                 */
                "application/json": components["schemas"]["ProvisionAgentBodyInput"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description RFC 9745: when the operation was deprecated, as `@<epoch seconds>`. */
                    Deprecation?: string;
                    /** @description The successor operation: `<path>; rel="successor-version"`. */
                    Link?: string;
                    /** @description RFC 8594: the HTTP date after which the operation may stop answering. */
                    Sunset?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agent: {
                            /** Format: date-time */
                            createdAt: string;
                            id: string;
                            model: string;
                            name: string;
                            /** @enum {string} */
                            status: "provisioning" | "running";
                            /** Format: uri */
                            websocketUrl: string;
                        };
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required. Codes: `SUBSCRIPTION_REQUIRED`, `PLAN_REQUIRED`. */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        code: "SUBSCRIPTION_REQUIRED" | "PLAN_REQUIRED";
                        error: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`, `AGENT_LIMIT_REACHED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": ({
                        /** @constant */
                        code: "AGENT_LIMIT_REACHED";
                        /** @description agents the account has */
                        current: number;
                        error: string;
                        /** @description agents the account plan allows */
                        limit: number;
                    } & {
                        [key: string]: unknown;
                    }) | components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listInstalledSkills: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                agentId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agentId: string;
                        count: number;
                        limit: number;
                        skills: components["schemas"]["InstalledSkillRecord"][];
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    uninstallSkill: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                agentId: string;
                skillId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SuccessTrue"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAgent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agent: components["schemas"]["Agent"];
                        /** @constant */
                        status: "ok";
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateAgentDeprecated: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "systemPrompt": "Be brief.",
                 *       "temperature": 0.4
                 *     }
                 */
                "application/json": components["schemas"]["AgentConfig"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description RFC 9745: when the operation was deprecated, as `@<epoch seconds>`. */
                    Deprecation?: string;
                    /** @description The successor operation: `<path>; rel="successor-version"`. */
                    Link?: string;
                    /** @description RFC 8594: the HTTP date after which the operation may stop answering. */
                    Sunset?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        config: components["schemas"]["AgentConfig"];
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteAgentDeprecated: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description RFC 9745: when the operation was deprecated, as `@<epoch seconds>`. */
                    Deprecation?: string;
                    /** @description The successor operation: `<path>; rel="successor-version"`. */
                    Link?: string;
                    /** @description RFC 8594: the HTTP date after which the operation may stop answering. */
                    Sunset?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        deleted: true;
                        id: string;
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAgentBudget: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        budget: {
                            agentId?: string;
                            /** @description the UTC month the spend is counted in, `YYYY-MM` */
                            month: string;
                            /** @description null: no cap */
                            monthlyCapUsd: number | null;
                            /** @description what the cap covers is paused by the budget (the instance stopped, or the agent paused) */
                            paused: boolean;
                            /** @enum {string} */
                            scope: "account" | "agent";
                            /** @description catalogue cost of the metered calls of the month, calls in flight included */
                            spentUsd: number;
                            /**
                             * @description `warning` from 80 % of the cap, `exceeded` at the cap
                             * @enum {string}
                             */
                            status: "ok" | "warning" | "exceeded";
                        };
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putAgentBudget: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "monthlyCapUsd": 5
                 *     }
                 */
                "application/json": {
                    /** @description the cap in USD at catalogue price; null removes it */
                    monthlyCapUsd: number | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        budget: {
                            agentId?: string;
                            /** @description the UTC month the spend is counted in, `YYYY-MM` */
                            month: string;
                            /** @description null: no cap */
                            monthlyCapUsd: number | null;
                            /** @description what the cap covers is paused by the budget (the instance stopped, or the agent paused) */
                            paused: boolean;
                            /** @enum {string} */
                            scope: "account" | "agent";
                            /** @description catalogue cost of the metered calls of the month, calls in flight included */
                            spentUsd: number;
                            /**
                             * @description `warning` from 80 % of the cap, `exceeded` at the cap
                             * @enum {string}
                             */
                            status: "ok" | "warning" | "exceeded";
                        };
                        resumed: boolean;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAgentConfig: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        config: components["schemas"]["AgentConfig"];
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateAgentConfig: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "systemPrompt": "You are the booking assistant of a touring DJ. Answer promoters politely and never confirm a date without checking the calendar.",
                 *       "temperature": 0.7,
                 *       "maxTokens": 1024,
                 *       "model": "openai/gpt-4o-mini",
                 *       "channels": {
                 *         "chatBot": true,
                 *         "communityBot": false,
                 *         "businessMessaging": true
                 *       },
                 *       "skills": [
                 *         "event-scheduler",
                 *         "venue-finder",
                 *         "calendar"
                 *       ],
                 *       "env": {
                 *         "TIMEZONE": "Europe/London",
                 *         "DEFAULT_CURRENCY": "GBP"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["AgentConfig"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        config: components["schemas"]["AgentConfig"];
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAgentLogs: {
        parameters: {
            query?: {
                /** @description the `cursor` of the previous page */
                cursor?: string;
                /** @description event stream only: seconds to keep sending new entries (default 0) */
                follow?: number;
                /** @description entries per page (default 50) */
                limit?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        cursor: string | null;
                        entries: components["schemas"]["AgentLogEntry"][];
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listAgentMessages: {
        parameters: {
            query?: {
                limit?: number;
                offset?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        limit: number;
                        messages: components["schemas"]["AgentMessage"][];
                        offset: number;
                        /** @constant */
                        status: "ok";
                        total: number;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAgentStats: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentStats"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAgentVerification: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentVerification"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    verifyAgent: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "verificationType": "eas",
                 *       "attestationUid": "0x5f1b3c9e2a7d4b6f8e0c1a3d5b7f9e2c4a6d8b0f1e3c5a7d9b2f4e6c8a0d1b3f",
                 *       "walletAddress": "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
                 *     }
                 */
                "application/json": components["schemas"]["VerifyAgentBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        attestationUid: string | null;
                        /** @constant */
                        success: true;
                        /** @enum {string} */
                        verificationType: "eas" | "coinbase" | "ens" | "webauthn";
                        /** @constant */
                        verified: true;
                        /** Format: date-time */
                        verifiedAt: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `VERIFICATION_FAILED`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | ({
                        /** @constant */
                        code: "VERIFICATION_FAILED";
                        error: string;
                    } & {
                        [key: string]: unknown;
                    });
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    removeAgentVerification: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SuccessTrue"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    registerPasskey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "response": {
                 *         "id": "q2Fh6kR0yJ8wX5mZ1nB3cA",
                 *         "rawId": "q2Fh6kR0yJ8wX5mZ1nB3cA",
                 *         "type": "public-key",
                 *         "response": {
                 *           "clientDataJSON": "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0",
                 *           "attestationObject": "o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVgA"
                 *         },
                 *         "clientExtensionResults": {}
                 *       }
                 *     }
                 */
                "application/json": {
                    response: {
                        /** @enum {string} */
                        authenticatorAttachment?: "platform" | "cross-platform";
                        /** @default {} */
                        clientExtensionResults?: {
                            [key: string]: components["schemas"]["JsonValue"];
                        };
                        id: string;
                        rawId: string;
                        response: {
                            attestationObject: string;
                            clientDataJSON: string;
                            transports?: string[];
                        };
                        /** @constant */
                        type: "public-key";
                    };
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        credentialId: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    passkeyRegistrationOptions: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description base64url, single use, 5 minutes */
                        challenge: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    passkeyAssertionOptions: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description base64url, single use, 5 minutes */
                        challenge: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listProvisionedAgents: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agents: components["schemas"]["AgentSummary"][];
                        count: number;
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    provisionAgent: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Tour Booking Assistant",
                 *       "model": "openai/gpt-4o-mini",
                 *       "config": {
                 *         "systemPrompt": "You are the booking assistant of a touring DJ. Answer promoters politely and never confirm a date without checking the calendar.",
                 *         "temperature": 0.7,
                 *         "maxTokens": 1024,
                 *         "model": "openai/gpt-4o-mini",
                 *         "channels": {
                 *           "chatBot": true,
                 *           "communityBot": false,
                 *           "businessMessaging": true
                 *         },
                 *         "skills": [
                 *           "event-scheduler",
                 *           "venue-finder",
                 *           "calendar"
                 *         ],
                 *         "env": {
                 *           "TIMEZONE": "Europe/London",
                 *           "DEFAULT_CURRENCY": "GBP"
                 *         }
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ProvisionAgentBody"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agent: {
                            /** Format: date-time */
                            createdAt: string;
                            id: string;
                            model: string;
                            name: string;
                            /** @enum {string} */
                            status: "provisioning" | "running";
                            /** Format: uri */
                            websocketUrl: string;
                        };
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required. Codes: `SUBSCRIPTION_REQUIRED`, `PLAN_REQUIRED`. */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        code: "SUBSCRIPTION_REQUIRED" | "PLAN_REQUIRED";
                        error: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`, `AGENT_LIMIT_REACHED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": ({
                        /** @constant */
                        code: "AGENT_LIMIT_REACHED";
                        /** @description agents the account has */
                        current: number;
                        error: string;
                        /** @description agents the account plan allows */
                        limit: number;
                    } & {
                        [key: string]: unknown;
                    }) | components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    aiChat: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "messages": [
                 *         {
                 *           "role": "system",
                 *           "content": "You are a concise tour-booking assistant."
                 *         },
                 *         {
                 *           "role": "user",
                 *           "content": "Draft a two-line announcement for our Manchester show on 12 September."
                 *         }
                 *       ],
                 *       "taskType": "general",
                 *       "temperature": 0.7,
                 *       "max_tokens": 256
                 *     }
                 */
                "application/json": components["schemas"]["ChatRequestBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        message: {
                            content: string;
                            /** @constant */
                            role: "assistant";
                        };
                        model: string;
                        provider: string;
                        /** Format: date-time */
                        timestamp: string;
                        usage: {
                            completionTokens: number;
                            promptTokens: number;
                            totalTokens: number;
                        };
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required. Codes: `PLAN_REQUIRED`, `SUBSCRIPTION_REQUIRED`, `INSUFFICIENT_CREDITS`, `BUDGET_EXCEEDED`. */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChatPaymentRequiredBody"] | {
                        /** @enum {string} */
                        code: "INSUFFICIENT_CREDITS" | "BUDGET_EXCEEDED";
                        error: string;
                        /** @constant */
                        success: false;
                    };
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`, `MODEL_RESTRICTED`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ModelRestrictedBody"] | components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    estimateAiCost: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "model": "openai/gpt-4o-mini",
                 *       "inputTokens": 1200,
                 *       "outputTokens": 400
                 *     }
                 */
                "application/json": {
                    inputTokens: number;
                    model: string;
                    outputTokens: number;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        currency: string;
                        estimatedCost: number;
                        inputTokens: number;
                        model: string;
                        outputTokens: number;
                        /** Format: date-time */
                        timestamp: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAiHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        providers: {
                            [key: string]: boolean;
                        };
                        /** @enum {string} */
                        status: "healthy" | "degraded";
                        /** Format: date-time */
                        timestamp: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable. Codes: `AI_NOT_CONFIGURED`. */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        code: "AI_NOT_CONFIGURED";
                        error: string;
                        /** @constant */
                        status: "error";
                    };
                };
            };
        };
    };
    listAiModels: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        count: number;
                        models: components["schemas"]["Model"][];
                        /** Format: date-time */
                        timestamp: string;
                    } & {
                        [key: string]: number;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listAiProviderModels: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                provider: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        count: number;
                        models: components["schemas"]["Model"][];
                        provider: string;
                        /** Format: date-time */
                        timestamp: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    selectAiModel: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "taskType": "coding"
                 *     }
                 */
                "application/json": {
                    /** @default general */
                    taskType?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        model: {
                            id: string;
                            provider: string;
                        };
                        taskType: string;
                        /** Format: date-time */
                        timestamp: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    codehostOAuthCallback: {
        parameters: {
            query: {
                code?: string;
                error?: string;
                state: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Found */
            302: {
                headers: {
                    /** @description Where the client goes next. */
                    Location?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    signInWithCredentials: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "email": "ada@example.com",
                 *       "password": "correct horse battery"
                 *     }
                 */
                "application/json": {
                    /**
                     * Format: email
                     * @description compared case-insensitively; stored lower-cased
                     */
                    email: string;
                    password: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignedInBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CROSS_SITE_REQUEST`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    signInWithWallet: {
        parameters: {
            query?: {
                /** @description where to land after sign-in: a path on this site; absolute URLs are refused */
                callbackUrl?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "message": "app.example.com wants you to sign in with your Ethereum account:\n0x5B38Da6a701c568545dCfcB03FcB875f56beddC4\n\nSign in to the agent platform.\n\nURI: https://app.example.com\nVersion: 1\nChain ID: 8453\nNonce: k8Jd2mQp7XrT4vLz\nIssued At: 2025-01-15T10:00:00.000Z",
                 *       "signature": "0x454349e422f05297191ead13e21d3db520e5abef52055e4964b82fb213f593a1043a718774c572bd8a25adbeb1bfcd5c0256ae11cecf9f9c3f925d0e52beaf891b"
                 *     }
                 */
                "application/json": {
                    /** @description the full EIP-4361 message text */
                    message: string;
                    /** @description 0x-prefixed; ERC-6492 wrapped signatures are long */
                    signature: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SignedInBody"];
                };
            };
            /** @description Found */
            302: {
                headers: {
                    /** @description Where the client goes next. */
                    Location?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CROSS_SITE_REQUEST`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    webidOAuthCallback: {
        parameters: {
            query: {
                code?: string;
                error?: string;
                state: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Found */
            302: {
                headers: {
                    /** @description Where the client goes next. */
                    Location?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getCsrfToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        csrfToken: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    forgotPassword: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "email": "ada@example.com"
                 *     }
                 */
                "application/json": {
                    /**
                     * Format: email
                     * @description compared case-insensitively; stored lower-cased
                     */
                    email: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSiweNonce: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        expiresAt: string;
                        /** @description alphanumeric, as EIP-4361 requires */
                        nonce: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    startCodehostOAuth: {
        parameters: {
            query?: {
                /** @description where to land after sign-in: a path on this site; absolute URLs are refused */
                callbackUrl?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Found */
            302: {
                headers: {
                    /** @description Where the client goes next. */
                    Location?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    startWebidOAuth: {
        parameters: {
            query?: {
                /** @description where to land after sign-in: a path on this site; absolute URLs are refused */
                callbackUrl?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Found */
            302: {
                headers: {
                    /** @description Where the client goes next. */
                    Location?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    resetPassword: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "token": "q3Xv9cJf0bN2kLr7TzWy5eA1uH8sDg4MpQo6iVxKc0E",
                 *       "password": "new-secret-42"
                 *     }
                 */
                "application/json": {
                    password: string;
                    /** @description from the emailed link */
                    token: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    signOut: {
        parameters: {
            query?: {
                /** @description `true` revokes every session of the account, this one included */
                everywhere?: "true" | "false";
            };
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "revokeApiKeys": true
                 *     }
                 */
                "application/json": {
                    /** @description with `everywhere=true`, also revoke every API key of the account */
                    revokeApiKeys?: boolean;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SuccessTrue"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSocialRefreshInfo: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EndpointMetadata"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    refreshSocialSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "refreshToken": "q3Xv9cJf0bN2kLr7TzWy5eA1uH8sDg4MpQo6iVxKc0E="
                 *     }
                 */
                "application/json": {
                    /** @description base64 */
                    refreshToken: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description seconds; 86400 */
                        expiresIn: number;
                        message: string;
                        /** @description 32 random bytes, base64; single use, valid 30 days */
                        refreshToken: string;
                        /** @description base64 of a platform session JWT (send the decoded JWT as `Authorization: Bearer`); valid for 86400 seconds */
                        sessionToken: string;
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSocialVerifyInfo: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EndpointMetadata"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    verifySocialIdentity: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "fidToken": "eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJzdWIiOjEyMzQ1LCJhdWQiOiJhcHAuZXhhbXBsZS5jb20iLCJleHAiOjE3MzY5NDU2MDB9.c2lnbmF0dXJl",
                 *       "address": "0x5B38Da6a701c568545dCfcB03FcB875f56beddC4"
                 *     }
                 */
                "application/json": {
                    /** @description wallet to check for token gating */
                    address?: string;
                    /** @description identity token (JWT) issued by the social provider */
                    fidToken: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description `token-holder` when the gating check passed, `basic` otherwise
                         * @enum {string}
                         */
                        accessLevel: "basic" | "token-holder";
                        address: string | null;
                        /** @description seconds the session token is valid; 86400 */
                        expiresIn: number;
                        fid: string;
                        message: string;
                        /** @description 32 random bytes, base64; single use, valid 30 days */
                        refreshToken: string;
                        /** @description base64 of a platform session JWT (send the decoded JWT as `Authorization: Bearer`); valid for 86400 seconds */
                        sessionToken: string;
                        /** @constant */
                        success: true;
                        /** @description true when a gating check ran and passed */
                        tokenGated: boolean;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code?: string;
                        error: string;
                        minBalance: string;
                        /** @description what is missing, e.g. `at least 1000000000000000000 of TOKEN on l2-main` */
                        required: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getTokenGatingStatus: {
        parameters: {
            query: {
                address: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        address: string;
                        /** @description network the balance is read on (`l2-main`) */
                        chain: string;
                        /** @description the gating token contract; null while gating is off */
                        contractAddress: string | null;
                        hasAccess: boolean;
                        /** @description minimum balance of the gating token, in its smallest unit */
                        minBalance: string;
                        /**
                         * Format: uri
                         * @description public RPC URL, no credentials
                         */
                        rpcEndpoint: string;
                        /** @description symbol of the gating token */
                        token: string;
                        /** @description whether token gating is enabled; when false everyone has access */
                        tokenGated: boolean;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    verifyTokenGating: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "fid": "12345",
                 *       "address": "0x5B38Da6a701c568545dCfcB03FcB875f56beddC4"
                 *     }
                 */
                "application/json": {
                    address: string;
                    fid: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        address: string;
                        /** @description network the balance is read on (`l2-main`) */
                        chain: string;
                        fid: string;
                        hasAccess: boolean;
                        message: string;
                        /** @description minimum balance of the gating token, in its smallest unit */
                        minBalance: string;
                        /** Format: date-time */
                        timestamp: string;
                        /** @description symbol of the gating token */
                        token: string;
                        /** @description whether token gating is enabled; when false everyone has access */
                        tokenGated: boolean;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    verifyEmail: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "token": "mF3kQ9vX2pLr8TnWc5yBd1FgE4sJuO6aZ7hY0iKxNcA"
                 *     }
                 */
                "application/json": {
                    /** @description from the emailed link */
                    token: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * Format: email
                         * @description compared case-insensitively; stored lower-cased
                         */
                        email: string;
                        /** @constant */
                        emailVerified: true;
                        message: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    resendVerificationEmail: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getBilling: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description true while the subscription is `active` or `trialing` (always true for admins) */
                        active: boolean;
                        byok: components["schemas"]["ByokState"];
                        cancelAtPeriodEnd: boolean;
                        /** @description what `buy-credits` and `GET /api/card/credits` accept */
                        creditPacks: components["schemas"]["CreditPack"][];
                        credits: number;
                        currentPeriodEnd: string | null;
                        /** @description agent storage bought on top of the plan */
                        extraStorageGb: number;
                        limits: components["schemas"]["PlanLimits"];
                        /**
                         * @description the account plan: a paid plan, a legacy tier, or `none` without a subscription (the retired `free` plan reads as `none`)
                         * @enum {string}
                         */
                        plan: "none" | "label" | "solo" | "collective" | "network" | "starter" | "pro" | "enterprise";
                        /**
                         * @description state of the card subscription as the processor last reported it; `none` when the account never subscribed
                         * @enum {string}
                         */
                        status: "none" | "active" | "trialing" | "past_due" | "canceled" | "incomplete" | "incomplete_expired" | "unpaid" | "paused";
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postBilling: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "get-usage"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "create-checkout";
                    /**
                     * @description `label`, `solo`, `collective` or `network`; the retired `free` plan is answered 402 `PLAN_REQUIRED`
                     * @enum {string}
                     */
                    plan: "label" | "solo" | "collective" | "network" | "free";
                } | {
                    /** @constant */
                    action: "enable-byok";
                    /** @description stored envelope-encrypted; never returned or logged */
                    apiKey: string;
                    /**
                     * @description AI provider id
                     * @enum {string}
                     */
                    provider: "openrouter" | "openai" | "anthropic" | "google" | "mistral";
                } | {
                    /** @constant */
                    action: "disable-byok";
                    /**
                     * @description AI provider id
                     * @enum {string}
                     */
                    provider: "openrouter" | "openai" | "anthropic" | "google" | "mistral";
                } | {
                    /** @constant */
                    action: "get-usage";
                } | {
                    /** @constant */
                    action: "buy-credits";
                    /** @description price id of one of the credit packs `GET /api/billing` lists */
                    price: string;
                } | {
                    /** @constant */
                    action: "change-plan";
                    /**
                     * @description `label`, `solo`, `collective` or `network`; the retired `free` plan is answered 402 `PLAN_REQUIRED`
                     * @enum {string}
                     */
                    plan: "label" | "solo" | "collective" | "network" | "free";
                } | {
                    /** @constant */
                    action: "billing-portal";
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description buy-credits only */
                        credits?: number;
                        /** @description checkout session id at the processor */
                        sessionId: string;
                        /**
                         * Format: uri
                         * @description the card processor's hosted checkout page
                         */
                        url: string;
                    } | {
                        byok: components["schemas"]["ByokState"];
                        /** @constant */
                        success: true;
                    } | {
                        usage: components["schemas"]["Usage"];
                    } | {
                        /** @description the plan asked for; the account moves to it when the card webhook confirms */
                        plan: string;
                        previousPlan: string | null;
                        /** @constant */
                        status: "pending";
                        subscriptionId: string;
                        /** @constant */
                        success: true;
                    } | {
                        /** Format: uri */
                        url: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `PLAN_LIMIT_EXCEEDED`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] | ({
                        /** @constant */
                        code: "PLAN_LIMIT_EXCEEDED";
                        current: {
                            agents: number;
                            skills: number;
                        };
                        error: string;
                        limit: {
                            agents: number;
                            skills: number;
                        };
                    } & {
                        [key: string]: unknown;
                    });
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAccountBudget: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        budget: {
                            agentId?: string;
                            /** @description the UTC month the spend is counted in, `YYYY-MM` */
                            month: string;
                            /** @description null: no cap */
                            monthlyCapUsd: number | null;
                            /** @description what the cap covers is paused by the budget (the instance stopped, or the agent paused) */
                            paused: boolean;
                            /** @enum {string} */
                            scope: "account" | "agent";
                            /** @description catalogue cost of the metered calls of the month, calls in flight included */
                            spentUsd: number;
                            /**
                             * @description `warning` from 80 % of the cap, `exceeded` at the cap
                             * @enum {string}
                             */
                            status: "ok" | "warning" | "exceeded";
                        };
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putAccountBudget: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "monthlyCapUsd": 25
                 *     }
                 */
                "application/json": {
                    /** @description the cap in USD at catalogue price; null removes it */
                    monthlyCapUsd: number | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        budget: {
                            agentId?: string;
                            /** @description the UTC month the spend is counted in, `YYYY-MM` */
                            month: string;
                            /** @description null: no cap */
                            monthlyCapUsd: number | null;
                            /** @description what the cap covers is paused by the budget (the instance stopped, or the agent paused) */
                            paused: boolean;
                            /** @enum {string} */
                            scope: "account" | "agent";
                            /** @description catalogue cost of the metered calls of the month, calls in flight included */
                            spentUsd: number;
                            /**
                             * @description `warning` from 80 % of the cap, `exceeded` at the cap
                             * @enum {string}
                             */
                            status: "ok" | "warning" | "exceeded";
                        };
                        resumed: boolean;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    cardCheckoutRedirect: {
        parameters: {
            query: {
                /** @description `label`, `solo`, `collective` or `network`; the retired `free` plan is answered 402 `PLAN_REQUIRED` */
                plan: "label" | "solo" | "collective" | "network" | "free";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Found */
            302: {
                headers: {
                    /** @description Where the client goes next. */
                    Location?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    cardCreditsRedirect: {
        parameters: {
            query: {
                price: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Found */
            302: {
                headers: {
                    /** @description Where the client goes next. */
                    Location?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    cardPortalRedirect: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Found */
            302: {
                headers: {
                    /** @description Where the client goes next. */
                    Location?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    cardStorageUpgrade: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "storageGb": 4
                 *     }
                 */
                "application/json": {
                    /** @description extra storage in GB, at most 64 */
                    storageGb: number;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description checkout session id at the processor */
                        sessionId: string;
                        /**
                         * Format: uri
                         * @description the card processor's hosted checkout page
                         */
                        url: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    channelInboundDiscord: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the hook id of the connection (from the skill `connect` answer `inboundUrl`) */
                hookId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "id": "1200000000000000001",
                 *       "type": 2,
                 *       "token": "interaction-token",
                 *       "channel_id": "1098765432109876543",
                 *       "data": {
                 *         "name": "ask",
                 *         "options": [
                 *           {
                 *             "name": "message",
                 *             "type": 3,
                 *             "value": "hi"
                 *           }
                 *         ]
                 *       }
                 *     }
                 */
                "application/json": {
                    [key: string]: unknown;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    channelInboundSlack: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the hook id of the connection (from the skill `connect` answer `inboundUrl`) */
                hookId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "type": "event_callback",
                 *       "team_id": "T0001",
                 *       "event": {
                 *         "type": "message",
                 *         "user": "U0123",
                 *         "text": "hi",
                 *         "channel": "C0123456789",
                 *         "ts": "1700000000.000100"
                 *       }
                 *     }
                 */
                "application/json": {
                    [key: string]: unknown;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    channelInboundTelegram: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the hook id of the connection (from the skill `connect` answer `inboundUrl`) */
                hookId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "update_id": 10001,
                 *       "message": {
                 *         "message_id": 42,
                 *         "from": {
                 *           "id": 555,
                 *           "username": "fan"
                 *         },
                 *         "chat": {
                 *           "id": 555,
                 *           "type": "private"
                 *         },
                 *         "date": 1700000000,
                 *         "text": "hi"
                 *       }
                 *     }
                 */
                "application/json": {
                    [key: string]: unknown;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    channelInboundWhatsapp: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the hook id of the connection (from the skill `connect` answer `inboundUrl`) */
                hookId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "object": "whatsapp_business_account",
                 *       "entry": [
                 *         {
                 *           "id": "102290129340398",
                 *           "changes": [
                 *             {
                 *               "field": "messages",
                 *               "value": {
                 *                 "messaging_product": "whatsapp",
                 *                 "metadata": {
                 *                   "phone_number_id": "106540352242922"
                 *                 },
                 *                 "messages": [
                 *                   {
                 *                     "from": "447700900123",
                 *                     "id": "wamid.HBgL",
                 *                     "timestamp": "1700000000",
                 *                     "type": "text",
                 *                     "text": {
                 *                       "body": "hi"
                 *                     }
                 *                   }
                 *                 ]
                 *               }
                 *             }
                 *           ]
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    [key: string]: unknown;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getChatMessages: {
        parameters: {
            query: {
                agentId: string;
                /** @description only messages created strictly before this time (the `nextBefore` of the previous page) */
                before?: string;
                /** @description 50 by default, at most 200 */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agentId: string;
                        hasMore: boolean;
                        messages: components["schemas"]["AgentMessage"][];
                        nextBefore: string | null;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postChatMessage: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "agentId": "agt_7Hk2mQ9xLp",
                 *       "message": "Which venues in Berlin hold 300 people?"
                 *     }
                 */
                "application/json": {
                    agentId: string;
                    /** @description at most 32000 characters */
                    message: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agentId: string;
                        /** @description the stored user message */
                        message: components["schemas"]["AgentMessage"];
                        reply: components["schemas"]["AgentMessage"];
                        usage: {
                            completionTokens: number;
                            promptTokens: number;
                            totalTokens: number;
                        };
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getLegacyCheckout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Gone. Codes: `GONE`. */
            410: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        code: "GONE";
                        error: string;
                        /** @description the replacement route */
                        use: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postLegacyCheckout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": unknown;
            };
        };
        responses: {
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Gone. Codes: `GONE`. */
            410: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        code: "GONE";
                        error: string;
                        /** @description the replacement route */
                        use: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getCredits: {
        parameters: {
            query?: {
                /** @description the `cursor` of the previous page */
                cursor?: string;
                /** @description ledger entries to return, 20 by default, at most 100 */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        balance: number;
                        /** @constant */
                        currency: "credits";
                        cursor: string | null;
                        ledger: components["schemas"]["LedgerEntry"][];
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthBody"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthFailureBody"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthFailureBody"];
                };
            };
        };
    };
    getHeartbeat: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        heartbeat: {
                            enabled: boolean;
                            frequency: string;
                            /** @description null before the first heartbeat */
                            lastHeartbeat: string | null;
                            /** @description null while disabled */
                            nextHeartbeat: string | null;
                        };
                        message: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateHeartbeat: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "frequency": "3h",
                 *       "enabled": true
                 *     }
                 */
                "application/json": {
                    enabled?: boolean;
                    frequency?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        enabled: boolean;
                        frequency: string;
                        /** @description null before the first heartbeat */
                        lastHeartbeat: string | null;
                        /** Format: date-time */
                        lastUpdated: string;
                        message: string;
                        /** @description null while disabled */
                        nextHeartbeat: string | null;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    resetHeartbeat: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    redirectInfraMcpDocs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Moved Permanently */
            301: {
                headers: {
                    /** @description Where the client goes next. */
                    Location?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listInfraMcpExamples: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InfraMcpExamplesBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    redirectInfraMcpGithub: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Moved Permanently */
            301: {
                headers: {
                    /** @description Where the client goes next. */
                    Location?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getInfraMcpHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InfraMcpHealthBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getInfraMcpInfo: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InfraMcpInfoBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getInfraMcpSetup: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InfraMcpSetupBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listInfraMcpTools: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InfraMcpToolsBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    validateInfraMcpConfig: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "api_key": "rnd_Xk29fLmQ7pR4tV8wZc1N",
                 *       "endpoint": "https://api.example.com/v1"
                 *     }
                 */
                "application/json": components["schemas"]["InfraMcpValidateConfigBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: string;
                        next_steps: string[];
                        /** @constant */
                        valid: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InfraMcpValidateFailureBody"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getInstance: {
        parameters: {
            query?: {
                /** @description seconds to wait at most (default 25) */
                timeout?: number;
                /** @description the status to wait for */
                waitFor?: "provisioning" | "running" | "stopped" | "error";
            };
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Instance"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listInstanceEvents: {
        parameters: {
            query?: {
                /** @description the `cursor` of the previous page */
                cursor?: string;
                /** @description events per page (default 50) */
                limit?: number;
            };
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        cursor: string | null;
                        events: components["schemas"]["LifecycleEventRecord"][];
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    repairInstance: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BackendActionBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
        };
    };
    resetInstanceMemory: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BackendActionBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
        };
    };
    restartInstance: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description where the instance is now (e.g. `provisioning` while a start is launching it)
                         * @enum {string}
                         */
                        current: "provisioning" | "running" | "stopped" | "error" | "active";
                        /** @description the operation that produced the current state; its events carry the same id */
                        operationId: string;
                        /** @constant */
                        status: "running";
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
        };
    };
    runtimeA2aMessage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "fromAgentId": "agt_7f3k2m9q",
                 *       "toAgentId": "agt_2b8x4n1c",
                 *       "message": "The Berlin venue confirmed 300 capacity."
                 *     }
                 */
                "application/json": {
                    fromAgentId: string;
                    message: string;
                    toAgentId: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message: {
                            /** Format: date-time */
                            createdAt: string;
                            fromAgentId: string;
                            id: string;
                            toAgentId: string;
                        };
                        /** @constant */
                        success: true;
                        usage: {
                            limit: number;
                            today: number;
                        };
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code?: string;
                        current: number;
                        error: string;
                        limit: number;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    runtimeSkillCall: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                agentId: string;
                skill: string;
                userId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "search",
                 *       "genre": "techno"
                 *     }
                 */
                "application/json": {
                    action?: string;
                } & {
                    [key: string]: unknown;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    runtimeChatCompletion: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "agentId": "agt_7f3k2m9q",
                 *       "messages": [
                 *         {
                 *           "role": "system",
                 *           "content": "You are the booking assistant of a touring DJ."
                 *         },
                 *         {
                 *           "role": "user",
                 *           "content": "Which dates are still open in June?"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    agentId: string;
                    messages: components["schemas"]["RuntimeChatMessage"][];
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RuntimeCompletion"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    reportRuntimeExchange: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "agentId": "agt_7f3k2m9q",
                 *       "messages": [
                 *         {
                 *           "role": "user",
                 *           "content": "Can you hold the 14th for the Bristol show?"
                 *         },
                 *         {
                 *           "role": "assistant",
                 *           "content": "I have pencilled in the 14th; I will confirm once the promoter signs."
                 *         }
                 *       ],
                 *       "responseMs": 840
                 *     }
                 */
                "application/json": {
                    agentId: string;
                    /** @description the exchange ended without an answer */
                    failed?: boolean;
                    messages: components["schemas"]["RuntimeChatMessage"][];
                    /** @description time the model took to answer */
                    responseMs?: number;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SuccessTrue"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getRuntimeState: {
        parameters: {
            query?: {
                agentId?: string;
            };
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agents: components["schemas"]["RuntimeAgentState"][];
                        runtimeVersion: string;
                        userId: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    startInstance: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description where the instance is now (e.g. `provisioning` while a start is launching it)
                         * @enum {string}
                         */
                        current: "provisioning" | "running" | "stopped" | "error" | "active";
                        /** @description the operation that produced the current state; its events carry the same id */
                        operationId: string;
                        /** @constant */
                        status: "running";
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
        };
    };
    getInstanceStats: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InstanceStats"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    stopInstance: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description where the instance is now (e.g. `provisioning` while a start is launching it)
                         * @enum {string}
                         */
                        current: "provisioning" | "running" | "stopped" | "error" | "active";
                        /** @description the operation that produced the current state; its events carry the same id */
                        operationId: string;
                        /** @constant */
                        status: "stopped";
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
        };
    };
    getInstanceToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        token: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rotateInstanceToken: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        rotated: boolean;
                        /** @constant */
                        success: true;
                        token: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateInstance: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "runtimeVersion": "2025.6.1"
                 *     }
                 */
                "application/json": components["schemas"]["UpdateInstanceBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description where the instance is now (e.g. `provisioning` while a start is launching it)
                         * @enum {string}
                         */
                        current: "provisioning" | "running" | "stopped" | "error" | "active";
                        /** @description the operation that produced the current state; its events carry the same id */
                        operationId: string;
                        /** @constant */
                        status: "running";
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `IMAGE_NOT_ALLOWED`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | ({
                        /** @constant */
                        code: "IMAGE_NOT_ALLOWED";
                        error: string;
                    } & {
                        [key: string]: unknown;
                    });
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LifecycleFailureBody"];
                };
            };
        };
    };
    listApiKeys: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        keys: components["schemas"]["ApiKey"][];
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "CI deploy key"
                 *     }
                 */
                "application/json": components["schemas"]["CreateApiKeyBody"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        id: string;
                        key: string;
                        name: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `KEY_LIMIT`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | ({
                        /** @constant */
                        code: "KEY_LIMIT";
                        error: string;
                        limit: number;
                    } & {
                        [key: string]: unknown;
                    });
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKey"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteApiKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SuccessTrue"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getMemory: {
        parameters: {
            query: {
                agentId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agentId: string;
                        count: number;
                        lastUpdated: string | null;
                        memory: {
                            [key: string]: components["schemas"]["JsonValue"];
                        };
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    writeMemory: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "agentId": "agt_7f3k2m9q",
                 *       "key": "favourite_venue",
                 *       "memory": {
                 *         "city": "Bristol",
                 *         "name": "The Fleece"
                 *       }
                 *     }
                 */
                "application/json": {
                    agentId: string;
                    key: string;
                    /** @description any JSON value, at most 102400 bytes once encoded */
                    memory: components["schemas"]["JsonValue"];
                } | {
                    agentId: string;
                    /** @description at most 50 keys, each value at most 102400 bytes */
                    memory: {
                        [key: string]: components["schemas"]["JsonValue"];
                    };
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        agentId: string;
                        key: string;
                        /** Format: date-time */
                        saved: string;
                        /** @constant */
                        success: true;
                    } | {
                        agentId: string;
                        keysUpdated: number;
                        /** Format: date-time */
                        saved: string;
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `MEMORY_VALUE_TOO_LARGE`, `MEMORY_TOO_MANY_KEYS`, `MEMORY_BULK_TOO_LARGE`, `MEMORY_EMPTY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | ({
                        /** @enum {string} */
                        code: "MEMORY_VALUE_TOO_LARGE" | "MEMORY_TOO_MANY_KEYS" | "MEMORY_BULK_TOO_LARGE" | "MEMORY_EMPTY";
                        error: string;
                        limit?: number;
                    } & {
                        [key: string]: unknown;
                    });
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPlatformMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PlatformMetricsBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        error: "Failed to fetch metrics";
                        metrics: Record<string, never>;
                    };
                };
            };
        };
    };
    getHistoricalMetrics: {
        parameters: {
            query?: {
                range?: "24h" | "7d" | "30d";
            };
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HistoricalMetricsBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPerformanceMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PerformanceMetricsBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getMetricsSummary: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MetricsSummaryBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getOpenApi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        openapi: "3.1.0";
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    provisionWithChannels: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "chatBotToken": "7412589630:AAHk3vQm9xZ2pLr8TnWc5yBd1FgE4sJuO6a",
                 *       "chatBotUserId": "528491736",
                 *       "aiProvider": "openrouter",
                 *       "plan": "solo",
                 *       "email": "dj.nova@example.com",
                 *       "cardSubscriptionId": "sub_1QfZ8kLmN3oP4qR5sT6uV7wX"
                 *     }
                 */
                "application/json": components["schemas"]["ProvisionChannelsBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProvisionChannelsResponse"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required. Codes: `PAYMENT_REQUIRED`. */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        code: "PAYMENT_REQUIRED";
                        error: string;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`, `AGENT_LIMIT_REACHED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": ({
                        /** @constant */
                        code: "AGENT_LIMIT_REACHED";
                        current: number;
                        error: string;
                        limit: number;
                    } & {
                        [key: string]: unknown;
                    }) | components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getProvisionedStream: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the agent id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProvisionedStream"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rotateProvisionedStreamKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                /** @description the agent id */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProvisionedStream"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    register: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "email": "ada@example.com",
                 *       "password": "correct horse battery",
                 *       "name": "Ada Lovelace",
                 *       "referralCode": "GRACE-2024"
                 *     }
                 */
                "application/json": {
                    /**
                     * Format: email
                     * @description compared case-insensitively; stored lower-cased
                     */
                    email: string;
                    name?: string;
                    password: string;
                    /** @description case-insensitive */
                    referralCode?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * Format: email
                         * @description compared case-insensitively; stored lower-cased
                         */
                        email: string;
                        id: string;
                        name: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CROSS_SITE_REQUEST`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getSettings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SettingsProfile"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateSettings: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Ada King",
                 *       "email": "ada.king@example.com",
                 *       "currentPassword": "correct horse battery"
                 *     }
                 */
                "application/json": {
                    /** @description required when `email` changes */
                    currentPassword?: string;
                    /**
                     * Format: email
                     * @description compared case-insensitively; stored lower-cased
                     */
                    email?: string;
                    name?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SettingsProfile"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteAccount: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "password": "correct horse battery"
                 *     }
                 */
                "application/json": {
                    password?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SuccessTrue"];
                };
            };
            /** @description Accepted */
            202: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "deleting";
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    patchSettings: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Ada",
                 *       "notifications": {
                 *         "agentStatus": false,
                 *         "productUpdates": true
                 *       }
                 *     }
                 */
                "application/json": {
                    name?: string;
                    notifications?: components["schemas"]["NotificationsPatch"];
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SettingsProfile"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    changePassword: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "currentPassword": "correct horse battery",
                 *       "newPassword": "staple-battery-horse-9",
                 *       "revokeApiKeys": true
                 *     }
                 */
                "application/json": {
                    currentPassword: string;
                    newPassword: string;
                    /** @description `true` also revokes every API key of the account */
                    revokeApiKeys?: boolean;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SuccessTrue"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listSkills: {
        parameters: {
            query?: {
                /** @description `all` or omitted lists every category */
                category?: "all" | "streaming" | "events" | "payments" | "finance" | "productivity" | "communication" | "development" | "channels" | "music" | "creative" | "marketing";
                /** @description `true` lists featured skills only */
                featured?: "true" | "false";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        categories: ("streaming" | "events" | "payments" | "finance" | "productivity" | "communication" | "development" | "channels" | "music" | "creative" | "marketing")[];
                        featured: components["schemas"]["Skill"][];
                        skills: components["schemas"]["Skill"][];
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    installSkill: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "skillId": "setlist-oracle",
                 *       "agentId": "agt_3f9c2a"
                 *     }
                 */
                "application/json": {
                    agentId: string;
                    /** @description the skill's id, its catalogue name */
                    skillId: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description false when the agent already had the skill */
                        installed: boolean;
                        skill: components["schemas"]["InstalledSkillRecord"];
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        code?: string;
                        current: number;
                        error: string;
                        limit: number;
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rateSkill: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                skillId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "rating": 4
                 *     }
                 */
                "application/json": {
                    rating: number;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description the skill's new average */
                        rating: number;
                        ratingCount: number;
                        skillId: string;
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillBookingSettlementGet: {
        parameters: {
            query?: {
                action?: "list" | "get" | "simulate_settlement";
                backend?: number;
                /** @description for get */
                bookingId?: string;
                deposit?: number;
                guarantee?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillBookingSettlement: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "simulate_settlement",
                 *       "booking": {
                 *         "guarantee": 1500,
                 *         "backend": 70,
                 *         "deposit": 500
                 *       }
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "list";
                } | {
                    /** @constant */
                    action: "get";
                    bookingId: string;
                } | {
                    /** @constant */
                    action: "create_escrow";
                    booking: {
                        /** @description percentage of the net revenue, 0..100 */
                        backend: number;
                        deposit: number;
                        guarantee: number;
                        /** @description the show's net revenue (after costs); without it the backend earns nothing yet */
                        netRevenue?: number;
                    };
                    bookingId: string;
                } | {
                    /** @constant */
                    action: "release_funds";
                    bookingId: string;
                    netRevenue?: number;
                } | {
                    /** @constant */
                    action: "simulate_settlement";
                    booking: {
                        /** @description percentage of the net revenue, 0..100 */
                        backend: number;
                        deposit: number;
                        guarantee: number;
                        /** @description the show's net revenue (after costs); without it the backend earns nothing yet */
                        netRevenue?: number;
                    };
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillBrowser: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "fetch",
                 *       "url": "https://example.com/news"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "fetch";
                    /**
                     * @description longest text returned; a longer page is cut and `textTruncated` says so
                     * @default 20000
                     */
                    maxChars?: number;
                    url: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillBusinessMessaging: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "send",
                 *       "to": "447700900123",
                 *       "text": "Your guestlist spot is confirmed."
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "connect";
                    /** @description the agent inbound messages go to; default the agent the token was provisioned for */
                    agentId?: string;
                    /** @description the Meta app secret that signs webhooks (`X-Hub-Signature-256`) */
                    appSecret?: string;
                    /** @description the WhatsApp Business account whose templates are listed */
                    businessAccountId?: string;
                    /** @description phone number (E.164 digits) scheduled posts go to */
                    defaultTarget?: string;
                    /** @description the WhatsApp business phone number id messages are sent from */
                    phoneNumberId?: string;
                    /** @description the bot token; optional when `POST /api/provision` stored one */
                    token?: string;
                } | {
                    /** @constant */
                    action: "send";
                    text: string;
                    /** @description recipient phone number, E.164 digits; default the connection's defaultTarget */
                    to?: string;
                } | {
                    /** @constant */
                    action: "list_messages";
                    /** @enum {string} */
                    direction?: "in" | "out";
                    /** @default 20 */
                    limit?: number;
                } | {
                    /** @constant */
                    action: "channel_info";
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillBusinessMessagingApi: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "send_template",
                 *       "to": "447700900123",
                 *       "template": "ticket_confirmation",
                 *       "languageCode": "en_GB",
                 *       "parameters": [
                 *         "Ada"
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "connect";
                    /** @description the agent inbound messages go to; default the agent the token was provisioned for */
                    agentId?: string;
                    /** @description the Meta app secret that signs webhooks (`X-Hub-Signature-256`) */
                    appSecret?: string;
                    /** @description the WhatsApp Business account whose templates are listed */
                    businessAccountId?: string;
                    /** @description phone number (E.164 digits) scheduled posts go to */
                    defaultTarget?: string;
                    /** @description the WhatsApp business phone number id messages are sent from */
                    phoneNumberId?: string;
                    /** @description the bot token; optional when `POST /api/provision` stored one */
                    token?: string;
                } | {
                    /** @constant */
                    action: "send_template";
                    /** @default en_US */
                    languageCode?: string;
                    /**
                     * @description the body parameters {{1}}, {{2}}…
                     * @default []
                     */
                    parameters?: string[];
                    /** @description an approved message template */
                    template: string;
                    to?: string;
                } | {
                    /** @constant */
                    action: "list_templates";
                } | {
                    /** @constant */
                    action: "list_messages";
                    /** @enum {string} */
                    direction?: "in" | "out";
                    /** @default 20 */
                    limit?: number;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillCalendar: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "create_event",
                 *       "title": "Soundcheck",
                 *       "start": "2026-07-12T16:00:00Z",
                 *       "end": "2026-07-12T17:00:00Z",
                 *       "location": "Band on the Wall"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "create_event";
                    description?: string;
                    /** Format: date-time */
                    end: string;
                    location?: string;
                    /** Format: date-time */
                    start: string;
                    title: string;
                } | {
                    /** @constant */
                    action: "list_events";
                    /** Format: date-time */
                    from?: string;
                    /** Format: date-time */
                    to?: string;
                } | {
                    /** @constant */
                    action: "get_event";
                    eventId: string;
                } | {
                    /** @constant */
                    action: "update_event";
                    /** @description null removes it */
                    description?: string | null;
                    /** Format: date-time */
                    end?: string;
                    eventId: string;
                    /** @description null removes it */
                    location?: string | null;
                    /** Format: date-time */
                    start?: string;
                    title?: string;
                } | {
                    /** @constant */
                    action: "delete_event";
                    eventId: string;
                } | {
                    /** @constant */
                    action: "free_busy";
                    /** Format: date-time */
                    from: string;
                    /** Format: date-time */
                    to: string;
                } | {
                    /** @constant */
                    action: "export_ics";
                    /** Format: date-time */
                    from?: string;
                    /** Format: date-time */
                    to?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillChatBot: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "send",
                 *       "to": "123456789",
                 *       "text": "Doors open at 8pm tonight!"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "connect";
                    /** @description the agent inbound messages go to; default the agent the token was provisioned for */
                    agentId?: string;
                    /** @description Telegram chat id scheduled posts go to */
                    defaultTarget?: string;
                    /** @description the bot token; optional when `POST /api/provision` stored one */
                    token?: string;
                } | {
                    /** @constant */
                    action: "send";
                    text: string;
                    /** @description Telegram chat id; default the connection's defaultTarget */
                    to?: string;
                } | {
                    /** @constant */
                    action: "list_messages";
                    /** @enum {string} */
                    direction?: "in" | "out";
                    /** @default 20 */
                    limit?: number;
                } | {
                    /** @constant */
                    action: "channel_info";
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillCommunityBot: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "send",
                 *       "to": "1098765432109876543",
                 *       "text": "New mix drops Friday."
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "connect";
                    /** @description the agent inbound messages go to; default the agent the token was provisioned for */
                    agentId?: string;
                    /** @description Discord channel id scheduled posts go to */
                    defaultTarget?: string;
                    /** @description verifies the interactions Discord posts to the inbound route */
                    publicKey?: string;
                    /** @description the bot token; optional when `POST /api/provision` stored one */
                    token?: string;
                } | {
                    /** @constant */
                    action: "send";
                    text: string;
                    /** @description Discord channel id; default the connection's defaultTarget */
                    to?: string;
                } | {
                    /** @constant */
                    action: "list_messages";
                    /** @enum {string} */
                    direction?: "in" | "out";
                    /** @default 20 */
                    limit?: number;
                } | {
                    /** @constant */
                    action: "channel_info";
                    target?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillDemoSubmitter: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "submit",
                 *       "title": "Midnight Drive",
                 *       "artist": "Nova Lane"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "submit";
                    artist: string;
                    /**
                     * Format: uri
                     * @description where the demo can be heard
                     */
                    link?: string;
                    /** @description the label or curator it is for */
                    recipient?: string;
                    title: string;
                } | {
                    /** @constant */
                    action: "list";
                    /** @enum {string} */
                    status?: "submitted" | "accepted" | "rejected";
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillDjStreaming: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "start_stream",
                 *       "agentId": "agt_3f9c2a",
                 *       "title": "Friday night house set",
                 *       "genre": "house"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "start_stream";
                    /** @description the agent whose stream to use; an agent's own runtime calls leave it out */
                    agentId?: string;
                    genre?: string;
                    title?: string;
                } | {
                    /** @constant */
                    action: "stop_stream";
                    /** @description the agent whose stream to use; an agent's own runtime calls leave it out */
                    agentId?: string;
                } | {
                    /** @constant */
                    action: "status";
                    /** @description the agent whose stream to use; an agent's own runtime calls leave it out */
                    agentId?: string;
                } | {
                    /** @constant */
                    action: "list_sets";
                    /** @description the agent whose stream to use; an agent's own runtime calls leave it out */
                    agentId?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillEmail: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "send",
                 *       "to": "promoter@example.com",
                 *       "subject": "Hold for 12 July",
                 *       "body": "Can we confirm the hold?"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "send";
                    body: string;
                    subject: string;
                    to: string | string[];
                } | {
                    /** @constant */
                    action: "list";
                    limit?: number;
                } | {
                    /** @constant */
                    action: "usage";
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillEventScheduler: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "schedule",
                 *       "title": "Album launch party",
                 *       "date": "2025-09-12",
                 *       "time": "20:30",
                 *       "channels": [
                 *         "chatBot",
                 *         "communityBot"
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "schedule";
                    channels: ("chatBot" | "communityBot" | "businessMessaging" | "teamChat")[];
                    /** Format: date */
                    date: string;
                    message?: string;
                    time: string;
                    title: string;
                } | {
                    /** @constant */
                    action: "list";
                    /** @enum {string} */
                    status?: "scheduled" | "cancelled" | "delivering" | "delivered" | "failed";
                } | {
                    /** @constant */
                    action: "cancel";
                    postId: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillEventTicketing: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "purchase",
                 *       "eventId": "evt_summer-24",
                 *       "email": "fan@example.com",
                 *       "tier": "general"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "create_event";
                    /** @default USD */
                    currency?: string;
                    /** Format: date */
                    date: string;
                    name: string;
                    tiers: {
                        priceCents: number;
                        quantity: number;
                        tier: string;
                    }[];
                    venue?: string;
                } | {
                    /** @constant */
                    action: "list_events";
                } | {
                    /** @constant */
                    action: "purchase";
                    /** Format: email */
                    email: string;
                    eventId: string;
                    /** @default 1 */
                    quantity?: number;
                    tier: string;
                } | {
                    /** @constant */
                    action: "list_orders";
                    eventId?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillFestivalFinder: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "search",
                 *       "genre": "electronic",
                 *       "country": "NL",
                 *       "maxPrice": 250
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "search";
                    /** @description ISO 3166 alpha-2 code */
                    country?: string;
                    genre?: string;
                    maxPrice?: number;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    importFestivals: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "festivals": [
                 *         {
                 *           "id": "ade-2026",
                 *           "name": "Amsterdam Dance Event",
                 *           "country": "NL",
                 *           "city": "Amsterdam",
                 *           "genres": [
                 *             "electronic"
                 *           ],
                 *           "startDate": "2026-10-14",
                 *           "ticketPrice": 120
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    festivals: {
                        city?: string;
                        country: string;
                        /** Format: date */
                        endDate?: string;
                        genres: string[];
                        id: string;
                        name: string;
                        /** Format: date */
                        startDate: string;
                        /** @description cheapest full ticket */
                        ticketPrice: number;
                    }[];
                    /** @default false */
                    replace?: boolean;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        imported: number;
                        removed: number;
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `ADMIN_REQUIRED`, `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillFileManager: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "list",
                 *       "folder": "press-kit"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "upload";
                    /**
                     * Format: base64
                     * @description the file, base64; at most 524288 bytes decoded
                     */
                    contentBase64: string;
                    /** @default application/octet-stream */
                    contentType?: string;
                    /**
                     * @description / = the top level
                     * @default /
                     */
                    folder?: "/" | string;
                    name: string;
                } | {
                    /** @constant */
                    action: "upload_url";
                    /** @default application/octet-stream */
                    contentType?: string;
                    /**
                     * @description / = the top level
                     * @default /
                     */
                    folder?: "/" | string;
                    name: string;
                    /** @description bytes; at most 104857600 */
                    size: number;
                } | {
                    /** @constant */
                    action: "confirm_upload";
                    fileId: string;
                } | {
                    /** @constant */
                    action: "list";
                    /** @description omitted = every file */
                    folder?: "/" | string;
                } | {
                    /** @constant */
                    action: "get";
                    fileId: string;
                } | {
                    /** @constant */
                    action: "delete";
                    fileId: string;
                } | {
                    /** @constant */
                    action: "usage";
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillGroupieManager: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "segment"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "segment";
                } | {
                    /** @constant */
                    action: "add_fan";
                    /** Format: email */
                    email?: string;
                    /**
                     * Format: date-time
                     * @description when the fan first engaged; default now
                     */
                    firstSeenAt?: string;
                    handle?: string;
                    /** Format: date-time */
                    lastActiveAt?: string;
                    name: string;
                    /** @default 0 */
                    purchases?: number;
                    /**
                     * @description total spend in USD
                     * @default 0
                     */
                    spend?: string;
                    /** @default 0 */
                    streams?: number;
                } | {
                    /** @constant */
                    action: "import_fans";
                    fans: {
                        /** Format: email */
                        email?: string;
                        /**
                         * Format: date-time
                         * @description when the fan first engaged; default now
                         */
                        firstSeenAt?: string;
                        handle?: string;
                        /** Format: date-time */
                        lastActiveAt?: string;
                        name: string;
                        /** @default 0 */
                        purchases?: number;
                        /**
                         * @description total spend in USD
                         * @default 0
                         */
                        spend?: string;
                        /** @default 0 */
                        streams?: number;
                    }[];
                } | {
                    /** @constant */
                    action: "list_fans";
                    /** @enum {string} */
                    segment?: "superfan" | "casual" | "new";
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillGuestlist: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "add_guest",
                 *       "eventId": "evt_summer-24",
                 *       "name": "Ada Lovelace",
                 *       "email": "ada@example.com",
                 *       "plusOnes": 1
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "create_list";
                    capacity: number;
                    eventId: string;
                    name?: string;
                } | {
                    /** @constant */
                    action: "add_guest";
                    /** Format: email */
                    email?: string;
                    eventId: string;
                    name: string;
                    /**
                     * @description guests they bring; each takes a spot
                     * @default 0
                     */
                    plusOnes?: number;
                } | {
                    /** @constant */
                    action: "remove_guest";
                    eventId: string;
                    guestId: string;
                } | {
                    /** @constant */
                    action: "check_in";
                    eventId: string;
                    guestId: string;
                } | {
                    /** @constant */
                    action: "list_guests";
                    eventId: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillInstantSplitGet: {
        parameters: {
            query?: {
                action?: "list_pending" | "get_balance" | "simulate";
                /** @description for simulate: payout per stream */
                rate?: number;
                /** @description for simulate */
                streams?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillInstantSplit: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "create_split_rule",
                 *       "splits": [
                 *         {
                 *           "recipientAddress": "0x1111111111111111111111111111111111111111",
                 *           "percentage": 60,
                 *           "role": "artist",
                 *           "name": "Nova Lane"
                 *         },
                 *         {
                 *           "recipientAddress": "0x2222222222222222222222222222222222222222",
                 *           "percentage": 40,
                 *           "role": "producer",
                 *           "name": "K. Ito"
                 *         }
                 *       ],
                 *       "threshold": 100
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "create_split_rule";
                    splits: {
                        name?: string;
                        percentage: number;
                        recipientAddress: string;
                        role?: string;
                    } | {
                        name?: string;
                        percentage: number;
                        recipientAddress: string;
                        role?: string;
                    }[];
                    /** @description the smallest amount (payment token) an execution may split; default 0 */
                    threshold?: number;
                } | {
                    /** @constant */
                    action: "list_pending";
                } | {
                    /** @constant */
                    action: "get_balance";
                } | {
                    /** @constant */
                    action: "execute_split";
                    /** @description default: the wallet's whole balance */
                    amount?: string;
                    splitId: string;
                } | {
                    /** @constant */
                    action: "simulate";
                    /** @description payout per stream */
                    rate: number;
                    /** @description a rule to split the revenue by; without it only the revenue is computed */
                    splitId?: string;
                    streams: number;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillNotesWorkspace: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "search",
                 *       "query": "tech rider"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "create_note";
                    /** @default  */
                    content?: string;
                    /** @default [] */
                    tags?: string[];
                    title: string;
                } | {
                    /** @constant */
                    action: "get_note";
                    noteId: string;
                } | {
                    /** @constant */
                    action: "update_note";
                    content?: string;
                    noteId: string;
                    tags?: string[];
                    title?: string;
                } | {
                    /** @constant */
                    action: "delete_note";
                    noteId: string;
                } | {
                    /** @constant */
                    action: "list_notes";
                    tag?: string;
                } | {
                    /** @constant */
                    action: "search";
                    query: string;
                    tag?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillRoyaltyTracker: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "total"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "total";
                } | {
                    /** @constant */
                    action: "import_statements";
                    statements: {
                        /** @description USD, exact decimal string, negative for adjustments */
                        amount: string;
                        /**
                         * @default USD
                         * @constant
                         */
                        currency?: "USD";
                        period: string;
                        /** @description the distributor's id of the statement line; a reference imports once */
                        reference?: string;
                        release?: string;
                        /** @description platform or distributor */
                        source: string;
                    }[];
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillSetlistOracle: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "build",
                 *       "genre": "techno",
                 *       "duration": 90
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "build";
                    /** @description set length in minutes */
                    duration: number;
                    /** @description only tracks of this genre (case-insensitive) */
                    genre?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillTeamChat: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "send",
                 *       "to": "C0123456789",
                 *       "text": "Soundcheck moved to 5pm."
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "connect";
                    /** @description the agent inbound messages go to; default the agent the token was provisioned for */
                    agentId?: string;
                    /** @description Slack channel id scheduled posts go to */
                    defaultTarget?: string;
                    /** @description the Slack app signing secret that signs Events API requests */
                    signingSecret?: string;
                    /** @description the bot token; optional when `POST /api/provision` stored one */
                    token?: string;
                } | {
                    /** @constant */
                    action: "send";
                    text: string;
                    /** @description Slack channel id; default the connection's defaultTarget */
                    to?: string;
                } | {
                    /** @constant */
                    action: "list_messages";
                    /** @enum {string} */
                    direction?: "in" | "out";
                    /** @default 20 */
                    limit?: number;
                } | {
                    /** @constant */
                    action: "channel_info";
                    target?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillTrackArchaeologist: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "search",
                 *       "bpm": 124,
                 *       "genre": "deep house",
                 *       "mood": "uplifting"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "search";
                    /** @description matches within `bpmTolerance` of this tempo */
                    bpm?: number;
                    bpmMax?: number;
                    bpmMin?: number;
                    /** @default 3 */
                    bpmTolerance?: number;
                    /** @description case-insensitive, exact */
                    genre?: string;
                    /** @description case-insensitive, exact */
                    mood?: string;
                } | {
                    /** @constant */
                    action: "add";
                    track: {
                        artist: string;
                        bpm: number;
                        durationSeconds: number;
                        genre: string;
                        key?: string;
                        mood?: string;
                        title: string;
                    };
                } | {
                    /** @constant */
                    action: "import";
                    tracks: {
                        artist: string;
                        bpm: number;
                        durationSeconds: number;
                        genre: string;
                        key?: string;
                        mood?: string;
                        title: string;
                    }[];
                } | {
                    /** @constant */
                    action: "delete";
                    trackId: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillTreasury: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "get_balances"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "get_balances";
                } | {
                    /** @constant */
                    action: "add_wallet";
                    address: string;
                    label?: string;
                } | {
                    /** @constant */
                    action: "remove_wallet";
                    address: string;
                } | {
                    /** @constant */
                    action: "list_wallets";
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillUsdcPayments: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "send",
                 *       "to": "0x1111111111111111111111111111111111111111",
                 *       "amount": "25.50",
                 *       "memo": "Deposit for 12 July"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "send";
                    amount: string;
                    memo?: string;
                    to: string;
                } | {
                    /** @constant */
                    action: "get_balance";
                } | {
                    /** @constant */
                    action: "set_daily_limit";
                    amount: string;
                } | {
                    /** @constant */
                    action: "status";
                    hash: string;
                } | {
                    /** @constant */
                    action: "list";
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillVenueFinder: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "search",
                 *       "city": "Manchester",
                 *       "type": "club",
                 *       "capacity": 500,
                 *       "maxPrice": 2000
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "search";
                    /** @description at least this many people */
                    capacity?: number;
                    city?: string;
                    maxPrice?: number;
                    type?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    importVenues: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "venues": [
                 *         {
                 *           "id": "albert-hall-mcr",
                 *           "name": "Albert Hall",
                 *           "city": "Manchester",
                 *           "country": "GB",
                 *           "type": "club",
                 *           "capacity": 1800,
                 *           "price": 1500
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @default false */
                    replace?: boolean;
                    venues: {
                        capacity: number;
                        city: string;
                        country: string;
                        id: string;
                        name: string;
                        /** @description hire price for one night */
                        price: number;
                        /** @description club, bar, theatre, arena, outdoor… */
                        type: string;
                    }[];
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        imported: number;
                        removed: number;
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `ADMIN_REQUIRED`, `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillVisualSynthesizer: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "prompt": "Neon skyline over a crowded dance floor",
                 *       "style": "synthwave"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action?: "generate";
                    /** @description what the image shows */
                    prompt: string;
                    /**
                     * @default 1024x1024
                     * @enum {string}
                     */
                    size?: "1024x1024" | "1024x1536" | "1536x1024";
                    /** @description the look: synthwave, watercolour, 35 mm photo... */
                    style?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "send",
                 *       "endpointId": "whe_AbCdEfGhIjKl",
                 *       "type": "show.announced",
                 *       "payload": {
                 *         "city": "Leeds"
                 *       }
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "register";
                    url: string;
                } | {
                    /** @constant */
                    action: "list";
                } | {
                    /** @constant */
                    action: "remove";
                    endpointId: string;
                } | {
                    /** @constant */
                    action: "send";
                    endpointId: string;
                    /** @description message id; repeating one does not send again (safe retries). Default: a new id */
                    id?: string;
                    /** @description the event data (JSON object) */
                    payload: {
                        [key: string]: components["schemas"]["JsonValue"];
                    };
                    /** @description the event type receivers see */
                    type: string;
                } | {
                    /** @constant */
                    action: "deliveries";
                    cursor?: string;
                    endpointId: string;
                    /** @default 20 */
                    limit?: number;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    skillWorkspaceSuite: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional; a unique value per intended operation (a UUID). The first completed (2xx) answer is kept for 24 hours under your account, this operation and the key, and a repeat with the same key and body gets that answer again (header `Idempotent-Replayed: true`) without running twice. The same key with a different body answers 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first request still runs answers 409 `IDEMPOTENCY_IN_PROGRESS`. A failed request keeps nothing, so it may be retried with the same key. */
                "Idempotency-Key"?: string;
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "create_document",
                 *       "title": "Tour budget 2026"
                 *     }
                 */
                "application/json": {
                    /** @constant */
                    action: "create_folder";
                    name: string;
                    /** @description omitted = top level */
                    parentId?: string;
                } | {
                    /** @constant */
                    action: "list_folder";
                    /** @description omitted = top level */
                    folderId?: string;
                } | {
                    /** @constant */
                    action: "delete_folder";
                    folderId: string;
                } | {
                    /** @constant */
                    action: "create_document";
                    /** @default  */
                    content?: string;
                    folderId?: string;
                    title: string;
                } | {
                    /** @constant */
                    action: "get_document";
                    documentId: string;
                } | {
                    /** @constant */
                    action: "update_document";
                    content?: string;
                    documentId: string;
                    title?: string;
                } | {
                    /** @constant */
                    action: "move_document";
                    documentId: string;
                    /** @description null = top level */
                    folderId: string | null;
                } | {
                    /** @constant */
                    action: "delete_document";
                    documentId: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SkillSuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `INVALID_IDEMPOTENCY_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict. Codes: `IDEMPOTENCY_IN_PROGRESS`. */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unprocessable request. Codes: `IDEMPOTENCY_KEY_REUSED`. */
            422: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    callGateway: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "plugin": "generate-text",
                 *       "prompt": "Write a two-line gig announcement for Friday.",
                 *       "maxTokens": 120
                 *     }
                 */
                "application/json": {
                    /** @description default `generate-text`; `X-Plugin-Id` overrides it */
                    plugin?: string;
                } & {
                    [key: string]: unknown;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["GatewaySuccessBody"];
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `UNSUPPORTED_CONTENT_TYPE`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        error: "Unauthorized";
                    } | components["schemas"]["Error"];
                };
            };
            /** @description Payment or subscription required. Codes: `PAYMENT_REQUIRED`, `SUBSCRIPTION_REQUIRED`, `MPP_NOT_CONFIGURED`, `MALFORMED_CREDENTIAL`, `UNKNOWN_NONCE`, `EXPIRED`, `ALREADY_USED`, `WRONG_PLUGIN`, `TX_NOT_FOUND`, `TX_REVERTED`, `WRONG_CHAIN`, `NOT_CONFIRMED`, `WRONG_TOKEN`, `WRONG_RECIPIENT`, `AMOUNT_TOO_LOW`. */
            402: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["GatewayPaymentRequiredBody"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests. Codes: `RATE_LIMITED`. */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        error: "internal";
                    } | components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        error: "no_plugin";
                    };
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    gatewayPreflight: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No Content */
            204: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createGatewayCardPayment: {
        parameters: {
            query: {
                plan?: "label" | "solo" | "collective" | "network";
                plugin: "agent" | "generate-text" | "tts" | "stt";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description See Other */
            303: {
                headers: {
                    /** @description Where the client goes next. */
                    Location?: string;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Backend unavailable */
            502: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWallet: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Wallet"] | components["schemas"]["NoWallet"] | components["schemas"]["HostedWalletConfigured"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    runWalletAction: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "action": "create"
                 *     }
                 */
                "application/json": components["schemas"]["WalletActionBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        address: string;
                        message: string;
                        /** @enum {string} */
                        network: "l2-test" | "l2-main";
                    } | {
                        address: string;
                        /** Format: date-time */
                        createdAt: string;
                        /** @enum {string} */
                        network: "l2-test" | "l2-main";
                        warning: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `WALLET_EXISTS`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | ({
                        /** @constant */
                        code: "WALLET_EXISTS";
                        error: string;
                    } & {
                        [key: string]: unknown;
                    });
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": ({
                        error: string;
                        /** @description what the operator must configure: names of the missing settings, never their values */
                        setup: string;
                    } & {
                        [key: string]: unknown;
                    }) | components["schemas"]["Error"];
                };
            };
        };
    };
    getWalletAddress: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        address: string | null;
                        /** @constant */
                        authenticated: true;
                    } | {
                        /** @constant */
                        authenticated: false;
                        message: string;
                        /** @constant */
                        needsAuth: true;
                    } | {
                        /** @constant */
                        authenticated: false;
                        error: string;
                        /** @constant */
                        needsAuth: true;
                        /** @description what the operator must configure: names of the missing settings, never their values */
                        setup: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createHostedWalletForEmail: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "email": "dj.nova@example.com"
                 *     }
                 */
                "application/json": components["schemas"]["CreateWalletBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        networks: ("l2-test" | "l2-main")[];
                        /** @constant */
                        success: true;
                        walletAddress: string;
                        walletId: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `WALLET_EXISTS`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | ({
                        /** @constant */
                        code: "WALLET_EXISTS";
                        error: string;
                    } & {
                        [key: string]: unknown;
                    });
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": ({
                        error: string;
                        /** @description what the operator must configure: names of the missing settings, never their values */
                        setup: string;
                    } & {
                        [key: string]: unknown;
                    }) | ({
                        details: string;
                        error: string;
                    } & {
                        [key: string]: unknown;
                    }) | components["schemas"]["Error"];
                };
            };
        };
    };
    getHostedWalletInfo: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "ok";
                        supportedChains: ("l2-test" | "l2-main")[];
                        /** @constant */
                        type: "evm_wallet";
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createHostedWallet: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /** @example {} */
                "application/json": components["schemas"]["HostedWalletBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        address: string;
                        /** @constant */
                        network: "l2-test";
                        /** @constant */
                        success: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`, `WALLET_EXISTS`, `INVALID_PRIVATE_KEY`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | ({
                        /** @enum {string} */
                        code: "WALLET_EXISTS" | "INVALID_PRIVATE_KEY";
                        error: string;
                    } & {
                        [key: string]: unknown;
                    });
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": ({
                        error: string;
                        /** @description what the operator must configure: names of the missing settings, never their values */
                        setup: string;
                    } & {
                        [key: string]: unknown;
                    }) | components["schemas"]["Error"];
                };
            };
        };
    };
    cardWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "id": "evt_1QbX2cL4mN8pRsTu",
                 *       "object": "event",
                 *       "type": "checkout.session.completed",
                 *       "created": 1736935200,
                 *       "livemode": false,
                 *       "data": {
                 *         "object": {
                 *           "id": "cs_test_a1B2c3D4e5F6",
                 *           "object": "checkout.session",
                 *           "mode": "subscription",
                 *           "customer": "cus_R4nD0mCu5t0m3r",
                 *           "subscription": "sub_1QbX2cL4mN8pRsTu",
                 *           "client_reference_id": "usr_7Hk2mQ9xLp",
                 *           "metadata": {
                 *             "userId": "usr_7Hk2mQ9xLp",
                 *             "plan": "solo",
                 *             "kind": "subscription"
                 *           },
                 *           "payment_status": "paid"
                 *         }
                 *       }
                 *     }
                 */
                "application/json": {
                    created?: number;
                    data: {
                        object: {
                            [key: string]: unknown;
                        };
                    } & {
                        [key: string]: unknown;
                    };
                    id: string;
                    type: string;
                } & {
                    [key: string]: unknown;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        received: true;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Service unavailable */
            503: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhookEndpoints: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        endpoints: {
                            /** Format: date-time */
                            createdAt: string;
                            /** @description the event types sent to it; `instance.*` and `agent.*` select a family */
                            events: string[];
                            id: string;
                            url: string;
                        }[];
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "https://hooks.example.com/agent-platform",
                 *       "events": [
                 *         "instance.*"
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @description default: every account event */
                    events?: (("instance.requested" | "instance.launching" | "instance.running" | "instance.unhealthy" | "instance.stopped" | "instance.error" | "instance.superseded" | "instance.rolled_back" | "agent.running" | "agent.error" | "agent.paused" | "agent.resumed" | "budget.warning" | "budget.exceeded" | "schedule.run" | "schedule.skipped") | ("instance.*" | "agent.*" | "budget.*" | "schedule.*"))[];
                    /**
                     * Format: uri
                     * @description where events are POSTed; in AWS it must be https and resolve to a public address
                     */
                    url: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        endpoint: {
                            /** Format: date-time */
                            createdAt: string;
                            /** @description the event types sent to it; `instance.*` and `agent.*` select a family */
                            events: string[];
                            id: string;
                            url: string;
                        };
                        secret: string;
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `INVALID_JSON`, `JSON_TOO_DEEP`, `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"] | components["schemas"]["Error"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Payload too large. Codes: `PAYLOAD_TOO_LARGE`. */
            413: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unsupported media type. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
            415: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: {
                /** @description Required with the session cookie: the value of the `csrf_token` cookie. Not needed with a Bearer token or API key. */
                "x-csrf-token"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SuccessTrue"];
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden. Codes: `CSRF_INVALID`. */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description the `cursor` of the previous page */
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        cursor: string | null;
                        deliveries: {
                            /** Format: date-time */
                            at: string;
                            /** @description 1 for the first try, more for the retries */
                            attempt: number;
                            error?: string;
                            eventId: string;
                            /** @enum {string} */
                            outcome: "delivered" | "failed";
                            /** @description what the endpoint answered, when it answered */
                            statusCode?: number;
                            type: string;
                        }[];
                    };
                };
            };
            /** @description Bad request or validation failure. Codes: `VALIDATION_ERROR`. */
            400: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidationError"];
                };
            };
            /** @description Missing or invalid authentication. Codes: `TOKEN_INVALID`, `AUTH_REQUIRED`. */
            401: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found */
            404: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Too many requests */
            429: {
                headers: {
                    /** @description Seconds until the rate-limit window admits another request. */
                    "Retry-After"?: number;
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. Codes: `INTERNAL`, `AUTH_ERROR`. */
            500: {
                headers: {
                    /** @description The request id, also in the server logs. */
                    "x-request-id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}

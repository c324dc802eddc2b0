import * as z from 'zod/mini';

/**
 * zod's English messages ("Too small: expected number to be >0"). Classic zod installs them when it
 * loads; zod/mini installs none, so a process that loads only mini schemas would report every issue
 * as a bare "Invalid input". Imported by platform/config.ts, which every function and test loads. In
 * the bundles `locales` holds `en` alone (build/zod-lean/mini.ts).
 */
z.config(z.locales.en());

import type * as z from 'zod/mini';
import { festivalFinderActions as bodies, type FestivalEntry } from '#contract/skill-actions/events';
import { listFestivals } from '#data/skills/finder-catalogues';
import { action, type SkillModule } from '#domain/skills/skill-module';

type Festival = z.infer<ReturnType<typeof FestivalEntry>>;

/** Festivals of the operator's catalogue listing the genre, in the country, with a ticket at most `maxPrice`. Soonest first. */
export const searchFestivals = (festivals: Festival[], f: z.infer<ReturnType<typeof bodies>['search']>) =>
  festivals
    .filter((x) => f.genre === undefined || x.genres.some((g) => g.toLowerCase() === f.genre!.toLowerCase()))
    .filter((x) => f.country === undefined || x.country.toLowerCase() === f.country.toLowerCase())
    .filter((x) => f.maxPrice === undefined || x.ticketPrice <= f.maxPrice)
    .sort((a, b) => a.startDate.localeCompare(b.startDate) || a.name.localeCompare(b.name));

export const skill: SkillModule = {
  name: 'festival-finder',
  actions: {
    search: action(bodies().search, async (_call, body) => {
      const festivals = searchFestivals(await listFestivals<Festival>(), body);
      return { festivals, count: festivals.length };
    }),
  },
};

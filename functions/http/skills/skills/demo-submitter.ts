import { demoSubmitterActions as bodies } from '#contract/skill-actions/music';
import { listDemos, submitDemo } from '#data/skills/music';
import { action, type SkillModule } from '#domain/skills/skill-module';

/** Demos are stored with a status (`submitted` until a reply is recorded) and listed newest first. */
export const skill: SkillModule = {
  name: 'demo-submitter',
  actions: {
    submit: action(bodies().submit, async (call, { action: _a, ...demo }) => ({ demo: await submitDemo(call.userId, demo, call.now) })),
    list: action(bodies().list, async (call, body) => {
      const demos = (await listDemos(call.userId)).filter((d) => !body.status || d.status === body.status);
      return { demos, count: demos.length };
    }),
  },
};

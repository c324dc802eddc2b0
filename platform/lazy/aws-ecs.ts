/** The parts of the ECS client the launcher uses, loaded on its first call (adapters/launcher-ecs.ts; see aws-kms.ts for why). */
export {
  DescribeTaskDefinitionCommand,
  DescribeTasksCommand,
  ECSClient,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  StopTaskCommand,
} from '@aws-sdk/client-ecs';

/** The memory every Lambda function is deployed with; the bench prices its duration from it. */
export const LAMBDA_MEMORY_MB = 1024;

import { installLambdaStreamingRuntime } from '../../local/lambda/streaming';

// The Lambda runtime defines `awslambda` before a function's module loads; the list handler needs it at import.
installLambdaStreamingRuntime();

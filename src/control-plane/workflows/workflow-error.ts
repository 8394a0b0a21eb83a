// An error inside a workflow execution, named as ASL names them (States.Timeout, a function's own error type, ...), with its cause.

export class WorkflowError extends Error {
  /** The error name Retry and Catch match on: `States.TaskFailed`, `ValueError`, ... */
  readonly error: string;
  /** The human-readable explanation (ASL's Cause). */
  readonly causeText: string;

  constructor(error: string, causeText: string) {
    super(`${error}: ${causeText}`);
    this.name = 'WorkflowError';
    this.error = error;
    this.causeText = causeText;
  }
}

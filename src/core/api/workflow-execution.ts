// A workflow execution as the API serves it: status, history events (as AWS Step Functions lists them), summaries.
import type { StateType } from './workflow-definition.js';

export type ExecutionStatus = 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

export type HistoryEventType =
  | 'ExecutionStarted'
  | 'ExecutionSucceeded'
  | 'ExecutionFailed'
  | 'ExecutionTimedOut'
  | 'ExecutionAborted'
  | 'StateEntered'
  | 'StateExited'
  | 'TaskScheduled'
  | 'TaskSucceeded'
  | 'TaskFailed'
  | 'TaskTimedOut'
  | 'TaskRetryScheduled'
  | 'ErrorCaught';

/** One step of an execution's history, as AWS Step Functions' execution history lists them. */
export interface HistoryEvent {
  id: number;
  timestamp: string;
  type: HistoryEventType;
  state?: string;
  stateType?: StateType;
  input?: unknown;
  output?: unknown;
  /** The function a Task called. */
  function?: string;
  /** The attempt of a Task (1 is the first), or the retry number of a TaskRetryScheduled. */
  attempt?: number;
  error?: string;
  cause?: string;
  /** How long a retry waits. */
  delaySeconds?: number;
  /** Where the execution goes next (StateExited, ErrorCaught). */
  next?: string;
}

export type ExecutionPhase = 'RUNNING' | ExecutionStatus;

/** An execution as stored and served (`GET .../workflows/NAME/executions/EXEC`). */
export interface WorkflowExecution {
  apiVersion: 'minik8s.io/v1';
  kind: 'WorkflowExecution';
  metadata: { name: string; namespace: string; creationTimestamp: string };
  workflow: string;
  /** The Workflow's uid when the execution started: executions outlive neither their workflow nor a namesake's creation. */
  workflowUid?: string;
  status: ExecutionPhase;
  startTime: string;
  stopTime?: string;
  input?: unknown;
  output?: unknown;
  error?: string;
  cause?: string;
  history: HistoryEvent[];
  /** Events left out of `history` to keep the record within its size bound (the oldest go first). */
  historyDropped?: number;
}

/** A list item: the record without its history. */
export type WorkflowExecutionSummary = Omit<WorkflowExecution, 'history'> & { events: number };

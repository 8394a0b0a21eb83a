// GET /apis/minik8s.io/v1/namespaces/NS/workflows/NAME/executions[/EXEC]: a workflow's execution records (newest first) or one with its history.
import type { Context, Hono } from 'hono';
import { workflowKind } from '../../core/api/workflow.js';
import type { UserInfo } from '../api-server/auth.js';
import type { ObjectService } from '../api-server/object-service.js';
import type { ExecutionStore } from './execution-store.js';

export const EXECUTIONS_PATH = '/apis/minik8s.io/v1/namespaces/:namespace/workflows/:name/executions';

export interface ExecutionRoutesOptions {
  service: ObjectService;
  executions: ExecutionStore;
}

function json(c: Context, body: unknown): Response {
  return c.body(JSON.stringify(body), 200, { 'content-type': 'application/json' });
}

/** Registered after authentication and authorization (which lets any user who may read workflows read these). */
export function registerWorkflowExecutionRoutes<E extends { Variables: { user: UserInfo } }>(app: Hono<E>, options: ExecutionRoutesOptions): void {
  app.get(EXECUTIONS_PATH, async (c: Context) => {
    const namespace = c.req.param('namespace')!;
    const name = c.req.param('name')!;
    // 404 for a workflow that does not exist, as for any object's subresource.
    await options.service.get(workflowKind, namespace, name);
    const items = await options.executions.list(namespace, name);
    return json(c, { apiVersion: 'minik8s.io/v1', kind: 'WorkflowExecutionList', metadata: {}, items });
  });
  app.get(`${EXECUTIONS_PATH}/:execution`, async (c: Context) => {
    const namespace = c.req.param('namespace')!;
    const name = c.req.param('name')!;
    await options.service.get(workflowKind, namespace, name);
    return json(c, await options.executions.get(namespace, name, c.req.param('execution')!));
  });
}

// `minik8s create -f` and `minik8s create namespace|secret generic|configmap|job|cronjob NAME`: the command line; the work is in ../create.ts, ../create-resource.ts and ../create-job.ts.
import type { LeafCommand } from './command.js';
import { filenameFlag, recursiveFlag, str, strings } from './flags.js';

export const createCommand: LeafCommand = {
  command: 'create [words..]',
  describe: 'Create objects from manifests, one namespace, secret, configmap, job or cronjob from flags, or a ServiceAccount token',
  builder: (y) =>
    y
      .positional('words', {
        type: 'string',
        array: true,
        describe: 'namespace NAME | secret generic NAME | configmap NAME | token SERVICEACCOUNT | job NAME | cronjob NAME (without -f)',
      })
      .option('f', filenameFlag)
      .option('R', recursiveFlag)
      .option('from-literal', { type: 'string', array: true, requiresArg: true, describe: 'secret, configmap: a KEY=VALUE entry (repeatable)' })
      .option('from-file', {
        type: 'string',
        array: true,
        requiresArg: true,
        describe: 'secret, configmap: a file, KEY=FILE, or a directory of files (repeatable)',
      })
      .option('type', { type: 'string', requiresArg: true, describe: 'secret: its type (default Opaque)' })
      .option('duration', { type: 'string', requiresArg: true, describe: "token: its lifetime, e.g. 1h (default: the server's, 1h)" })
      .option('audience', { type: 'string', array: true, requiresArg: true, describe: 'token: an audience (repeatable; default the API server)' })
      .option('bound-object-kind', { type: 'string', requiresArg: true, describe: 'token: bind it to this kind of object (Pod)' })
      .option('bound-object-name', { type: 'string', requiresArg: true, describe: 'token: the object it is bound to' })
      .option('bound-object-uid', { type: 'string', requiresArg: true, describe: "token: that object's uid" })
      .option('image', { type: 'string', requiresArg: true, describe: "job, cronjob: the container's image" })
      .option('from', { type: 'string', requiresArg: true, describe: "job: a CronJob's template to run now, as cronjob/NAME" })
      .option('schedule', { type: 'string', requiresArg: true, describe: "cronjob: the cron schedule, e.g. '*/1 * * * *'" })
      .option('restart', { type: 'string', requiresArg: true, describe: "cronjob: the job's restart policy, OnFailure (default) or Never" }),
  run: async (ctx, a) => {
    const words = strings(a.words);
    if (words.length === 0) return (await import('../create.js')).runCreate(ctx, { filename: strings(a.f), recursive: Boolean(a.R) });
    if (words[0] === 'token') {
      return (await import('../create-token.js')).runCreateToken(ctx, {
        names: words.slice(1),
        duration: str(a.duration),
        audience: strings(a.audience),
        boundObjectKind: str(a['bound-object-kind']),
        boundObjectName: str(a['bound-object-name']),
        boundObjectUid: str(a['bound-object-uid']),
      });
    }
    if (words[0] === 'job' || words[0] === 'cronjob' || words[0] === 'cj') {
      // Words before `--` are positionals; those after it, the container's command, land in `_` after `create`.
      const [kind, ...names] = words;
      const command = strings(a._).slice(1);
      const jobs = await import('../create-job.js');
      if (names.length !== 1)
        throw new (await import('../cli-error.js')).CliError(
          `exactly one NAME is required, got ${names.length}\nSee 'minik8s create ${kind} -h' for help and examples`,
        );
      const name = names[0]!;
      if (kind === 'job') return jobs.runCreateJob(ctx, { name, image: str(a.image), from: str(a.from), command });
      return jobs.runCreateCronJob(ctx, { name, image: str(a.image), schedule: str(a.schedule), restart: str(a.restart), command });
    }
    return (await import('../create-resource.js')).runCreateResource(ctx, {
      words,
      fromLiteral: strings(a['from-literal']),
      fromFile: strings(a['from-file']),
      type: str(a.type),
    });
  },
};

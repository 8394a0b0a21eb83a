// Cron schedules of function triggers: the syntax check a schema can call, and the next time a schedule fires.
import { Cron } from 'croner';

/**
 * croner parses the schedules: it has no dependencies, ships its own types, is maintained, and
 * reads the classic five fields with names (MON, JAN), ranges, lists, steps, `?` and the
 * @hourly-style nicknames, OR-ing day-of-month and day-of-week as Vixie cron does. We use only
 * its parser and next-time arithmetic (paused jobs, never its timers): firing is ours.
 */
function parse(schedule: string): Cron {
  return new Cron(schedule.trim(), { paused: true, mode: '5-part', domAndDow: false });
}

/** The problem with a five-field cron schedule (or @hourly, @daily, ...), or undefined when it is good. */
export function cronProblem(schedule: string): string | undefined {
  if (typeof schedule !== 'string' || schedule.trim() === '') return 'must be a cron schedule such as "*/5 * * * *"';
  const fields = schedule.trim().split(/\s+/).length;
  if (!schedule.trim().startsWith('@') && fields !== 5)
    return `must have five fields (minute hour day-of-month month day-of-week), such as "*/5 * * * *"; found ${fields}`;
  let cron: Cron;
  try {
    cron = parse(schedule);
  } catch (err) {
    const message = err instanceof Error ? err.message.replace(/^CronPattern: /, '') : String(err);
    return `not a valid cron schedule (minute hour day-of-month month day-of-week): ${message}`;
  }
  // `0 0 31 2 *` parses but never comes: a trigger that can never fire is a mistake.
  if (cron.nextRun(new Date(0)) === null) return 'this schedule never fires';
  return undefined;
}

/** The first time after `after` (strictly) that the schedule fires, in the machine's local time zone; undefined if never. */
export function nextCronTime(schedule: string, after: Date): Date | undefined {
  return parse(schedule).nextRun(after) ?? undefined;
}

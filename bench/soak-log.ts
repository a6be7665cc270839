// What the soak (bench/soak.mjs) takes from `envhook nri`'s stderr, line by line as it comes:
// the containers it reports missed and evicted (by id), eviction failures, error lines, and
// whether any line holds a canary value (the no-value rule). No line is kept whole: a day of
// log costs a few counters, the last messages (names only: the `msg` field) and a bounded set
// of ids reported before the soak knew the container.
const EARLY_IDS = 10_000;
const LAST_MESSAGES = 20;

/** What a report marks on an app container's record: reported missed, evicted. */
type Mark = 'reported' | 'evicted';
export interface AppMarks {
  id: string;
  reported?: boolean;
  evicted?: boolean;
}

export interface EnvhookLog {
  lines: number;
  canaryLines: number;
  notJson: number;
  errors: number;
  missedLines: number;
  evictedLines: number;
  evictFailedLines: number;
  lastErrors: string[];
  last: string[];
  /** Container id → the app record it belongs to (bench/soak-pods.mjs), set by adopt(). */
  apps: Map<string, AppMarks>;
  /** Ids reported before the soak had the container's id (a report can race CreateContainer's answer). */
  early: Map<string, Set<Mark>>;
  onLine(line: string): void;
  /** The app record `app` now has its id: reports that came before apply to it. */
  adopt(app: AppMarks): void;
}

export function envhookLog(canary: string): EnvhookLog {
  const log: EnvhookLog = {
    lines: 0,
    canaryLines: 0,
    notJson: 0,
    errors: 0,
    missedLines: 0,
    evictedLines: 0,
    evictFailedLines: 0,
    lastErrors: [],
    last: [],
    apps: new Map(),
    early: new Map(),
    onLine(line) {
      if (line === '') return;
      log.lines++;
      if (line.includes(canary)) log.canaryLines++;
      let o: { msg?: unknown; level?: unknown; id?: unknown };
      try {
        o = JSON.parse(line) as typeof o;
      } catch {
        log.notJson++;
        return;
      }
      const msg = typeof o.msg === 'string' ? o.msg : '';
      push(log.last, msg, LAST_MESSAGES);
      if (typeof o.level === 'number' && o.level >= 50) {
        log.errors++;
        push(log.lastErrors, msg, LAST_MESSAGES);
      }
      if (msg.startsWith('nri: container runs without envhook')) {
        log.missedLines++;
        mark(log, o.id, 'reported');
      } else if (msg.startsWith('nri: evicted:')) {
        log.evictedLines++;
        mark(log, o.id, 'evicted');
      } else if (msg.startsWith('nri: eviction failed')) {
        log.evictFailedLines++;
      }
    },
    adopt(app) {
      log.apps.set(app.id, app);
      const early = log.early.get(app.id);
      if (early) {
        for (const k of early) app[k] = true;
        log.early.delete(app.id);
      }
    },
  };
  return log;
}

function mark(log: EnvhookLog, id: unknown, what: Mark): void {
  if (typeof id !== 'string') return;
  const app = log.apps.get(id);
  if (app) {
    app[what] = true;
    return;
  }
  const set = log.early.get(id) ?? new Set<Mark>();
  set.add(what);
  log.early.set(id, set);
  if (log.early.size > EARLY_IDS) log.early.delete(log.early.keys().next().value!);
}

function push(list: string[], x: string, max: number): void {
  list.push(x);
  if (list.length > max) list.shift();
}

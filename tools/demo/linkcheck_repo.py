"""linkcheck's source tree: a small TypeScript web service that crawls links and reports on its dependencies."""

from __future__ import annotations

CWD = "/home/mira/work/linkcheck"

PACKAGE = """\
{
  "name": "linkcheck",
  "version": "1.8.2",
  "private": true,
  "type": "module",
  "scripts": {
    "dev": "tsx watch src/server.ts",
    "build": "tsc -p .",
    "test": "vitest run",
    "e2e": "playwright test"
  },
  "dependencies": {
    "chalk": "^5.4.1",
    "fastify": "^5.3.2",
    "ioredis": "^5.6.1",
    "pg": "^8.15.6"
  },
  "devDependencies": {
    "@playwright/test": "^1.52.0",
    "@types/pg": "^8.11.14",
    "tsx": "^4.19.4",
    "typescript": "^5.8.3",
    "vitest": "^3.1.2"
  }
}
"""

DEPS = """\
import Redis from "ioredis";
import pg from "pg";

export interface Deps {
  db: Pick<pg.Pool, "query">;
  redis: Pick<Redis, "ping" | "llen">;
}

export function connect(env = process.env): Deps {
  return {
    db: new pg.Pool({ connectionString: env.DATABASE_URL }),
    redis: new Redis(env.REDIS_URL ?? "redis://127.0.0.1:6379", { lazyConnect: true, maxRetriesPerRequest: 1 }),
  };
}
"""

HEALTH = """\
import chalk from "chalk";
import type { FastifyInstance } from "fastify";
import type { Deps } from "./deps.js";

export class DependencyError extends Error {
  constructor(
    readonly dependency: string,
    cause: unknown,
  ) {
    super(`${dependency} unavailable`, { cause });
    this.name = "DependencyError";
    if (cause instanceof Error) this.message += `: ${cause.message}`;
  }
}

async function timed(name: string, check: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  try {
    await check();
  } catch (err) {
    throw new DependencyError(name, err);
  }
  return Math.max(1, Math.round(performance.now() - started));
}

export function registerHealth(app: FastifyInstance, deps: Deps): void {
  app.get("/healthz", async (_req, reply) => {
    const postgres = await timed("postgres", () => deps.db.query("SELECT 1"));
    const redis = await timed("redis", () => deps.redis.ping());
    app.log.info(chalk.blue(`healthz ok: postgres ${postgres} ms, redis ${redis} ms`));
    return reply.send({ status: "ok", checks: { postgres: { ms: postgres }, redis: { ms: redis } } });
  });
}
"""

SERVER = """\
import Fastify from "fastify";
import { connect } from "./deps.js";
import { registerHealth } from "./health.js";
import { renderStatus } from "./views/status.js";

const deps = connect();
const app = Fastify({ logger: true });

registerHealth(app, deps);

app.get("/status", async (_req, reply) => {
  const queued = await deps.redis.llen("linkcheck:queue").catch(() => 0);
  return reply.type("text/html").send(renderStatus({ status: "ok", queued, checkedAt: new Date() }));
});

await app.listen({ host: "0.0.0.0", port: Number(process.env.PORT ?? 3000) });
"""

STATUS_VIEW = """\
export interface StatusView {
  status: "ok" | "degraded" | "down";
  queued: number;
  checkedAt: Date;
}

const css = `
body { margin: 0; font: 15px/1.4 system-ui, sans-serif; background: #f6f7f9; color: #1d2330; }
header { background: #12305c; color: #fff; padding: 14px 16px; font-weight: 600; font-size: 17px; }
.card { background: #fff; margin: 12px; border-radius: 10px; padding: 14px 16px; }
.sum { display: flex; justify-content: space-between; align-items: center; white-space: nowrap; }
.badge { padding: 3px 12px; border-radius: 999px; font-size: 13px; font-weight: 600; }
.ok { background: #dff5e4; color: #17662c; }
small { color: #667; }
`;

export function renderStatus(view: StatusView): string {
  const time = view.checkedAt.toISOString().slice(11, 19);
  return `<!doctype html>
<meta name="viewport" content="width=device-width">
<title>linkcheck status</title>
<style>${css}</style>
<header>linkcheck · status</header>
<div class="card">
  <div class="sum"><b>Overall</b><span class="badge ok">all systems normal</span></div>
  <small>Checked ${time} UTC · ${view.queued.toLocaleString("en")} links in queue</small>
</div>`;
}
"""

HEALTH_TEST = """\
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { registerHealth } from "../src/health.js";

function app(redisUp = true) {
  const server = Fastify();
  registerHealth(server, {
    db: { query: async () => ({ rows: [{ "?column?": 1 }] }) } as never,
    redis: { ping: async () => (redisUp ? "PONG" : Promise.reject(new Error("connect ECONNREFUSED"))), llen: async () => 0 } as never,
  });
  return server;
}

describe("/healthz", () => {
  it("is ok when every dependency answers", async () => {
    const res = await app().inject("/healthz");
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe("ok");
  });
});
"""

E2E = """\
import { expect, test } from "@playwright/test";

test.use({ baseURL: "http://127.0.0.1:3000" });

test("status page shows the overall state", async ({ page }) => {
  await page.goto("/status");
  await expect(page.locator(".sum .badge")).toHaveText("all systems normal");
  await expect(page).toHaveScreenshot("status.png", { mask: [page.locator("small")] });
});
"""

CONFIG = """\
export interface CrawlConfig {
  /** Requests in flight at once, over all hosts. */
  concurrency: number;
  /** Requests in flight at once to one host; the crawler queues the rest. */
  perHost: number;
  /**
   * Retries the crawler may spend per hour, over all hosts. A 429 or 503 costs one retry; when the budget
   * is spent, failures are reported as they are instead of retried.
   */
  retryBudget: number;
  /** A link is checked again after this many hours. */
  recheckHours: number;
}

export const defaults: CrawlConfig = { concurrency: 32, perHost: 2, retryBudget: 200, recheckHours: 24 };

export function fromEnv(env = process.env): CrawlConfig {
  const num = (name: string, fallback: number) => Math.max(0, Number(env[name] ?? fallback) || fallback);
  return {
    concurrency: num("LINKCHECK_CONCURRENCY", defaults.concurrency),
    perHost: num("LINKCHECK_PER_HOST", defaults.perHost),
    retryBudget: num("LINKCHECK_RETRY_BUDGET", defaults.retryBudget),
    recheckHours: num("LINKCHECK_RECHECK_HOURS", defaults.recheckHours),
  };
}
"""

RETRY = """\
import type { CrawlConfig } from "./config.js";

/** Spends the hourly retry budget; one instance is shared by every worker. */
export class RetryBudget {
  private spent = 0;
  private windowStart = Date.now();

  constructor(private readonly config: Pick<CrawlConfig, "retryBudget">) {}

  take(now = Date.now()): boolean {
    if (now - this.windowStart >= 3_600_000) {
      this.windowStart = now;
      this.spent = 0;
    }
    if (this.spent >= this.config.retryBudget) return false;
    this.spent += 1;
    return true;
  }
}
"""

FILES = {
    "package.json": PACKAGE,
    "src/deps.ts": DEPS,
    "src/health.ts": HEALTH,
    "src/server.ts": SERVER,
    "src/views/status.ts": STATUS_VIEW,
    "src/crawl/config.ts": CONFIG,
    "src/crawl/retry.ts": RETRY,
    "test/health.test.ts": HEALTH_TEST,
    "test/e2e/status.spec.ts": E2E,
}

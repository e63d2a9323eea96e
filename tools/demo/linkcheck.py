"""Sessions D and E (linkcheck, an oh-my-pi user): /healthz degraded instead of 500, the status page on a
phone; and a quick question about the crawler's retry budget."""

from __future__ import annotations

from pathlib import Path

from tools.demo.builder import Call, Repo, Session, bash, grep

D_ID = "0196c1a4-7f30-7d55-8e21-b4c9a06e3d72"
E_ID = "0196c6f2-3b8e-7f14-9a07-c2d815e4b6a0"
IMAGES = Path(__file__).parent / "images"

HEALTH_NEW = """\
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

export type Check = { ok: true; ms: number } | { ok: false; error: string };

export interface HealthReport {
  /** "down" when the service cannot work (postgres), "degraded" when it works without a dependency (redis). */
  status: "ok" | "degraded" | "down";
  checks: { postgres: Check; redis: Check };
}

async function check(name: string, run: () => Promise<unknown>): Promise<Check> {
  const started = performance.now();
  try {
    await run();
  } catch (err) {
    return { ok: false, error: new DependencyError(name, err).message };
  }
  return { ok: true, ms: Math.max(1, Math.round(performance.now() - started)) };
}

export async function health(deps: Deps): Promise<HealthReport> {
  const [postgres, redis] = await Promise.all([
    check("postgres", () => deps.db.query("SELECT 1")),
    check("redis", () => deps.redis.ping()),
  ]);
  const status = !postgres.ok ? "down" : !redis.ok ? "degraded" : "ok";
  return { status, checks: { postgres, redis } };
}

/** What failed, for people: "redis unavailable: connect ECONNREFUSED ...". */
export function failures(report: HealthReport): string {
  return Object.values(report.checks)
    .flatMap((c) => (c.ok ? [] : [c.error]))
    .join("; ");
}

export function registerHealth(app: FastifyInstance, deps: Deps): void {
  app.get("/healthz", async (_req, reply) => {
    const report = await health(deps);
    const colour = report.status === "ok" ? chalk.blue : chalk.yellow;
    app.log.info(colour(`healthz ${report.status}${report.status === "ok" ? "" : `: ${failures(report)}`}`));
    return reply.code(report.status === "down" ? 503 : 200).send(report);
  });
}
"""

HEALTH_TESTS = """\
function app(redisUp = true, postgresUp = true) {
  const server = Fastify();
  const refused = () => Promise.reject(new Error("connect ECONNREFUSED"));
  registerHealth(server, {
    db: { query: async () => (postgresUp ? { rows: [{ "?column?": 1 }] } : refused()) } as never,
    redis: { ping: async () => (redisUp ? "PONG" : refused()), llen: async () => 0 } as never,
  });
  return server;
}

describe("/healthz", () => {
  it("is ok when every dependency answers", async () => {
    const res = await app().inject("/healthz");
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe("ok");
  });

  it("is degraded, not an error, without redis", async () => {
    const res = await app(false).inject("/healthz");
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: "degraded",
      checks: { postgres: { ok: true }, redis: { ok: false, error: "redis unavailable: connect ECONNREFUSED" } },
    });
  });

  it("is down with 503 without postgres", async () => {
    const res = await app(true, false).inject("/healthz");
    expect(res.statusCode).toBe(503);
    expect(res.json().status).toBe("down");
  });
});
"""

VITEST = (
    "\n> linkcheck@1.8.2 test\n> vitest run health\n\n"
    "\x1b[7m\x1b[1m\x1b[36m RUN \x1b[39m\x1b[22m\x1b[27m \x1b[36mv3.1.2 \x1b[39m\x1b[90m/home/mira/work/linkcheck\x1b[39m\n\n"
    " \x1b[32m✓\x1b[39m test/health.test.ts \x1b[2m(\x1b[22m\x1b[2m3 tests\x1b[22m\x1b[2m)\x1b[22m\x1b[32m 14\x1b[2mms\x1b[22m\x1b[39m\n\n"
    "\x1b[2m Test Files \x1b[22m \x1b[1m\x1b[32m1 passed\x1b[39m\x1b[22m\x1b[90m (1)\x1b[39m\n"
    "\x1b[2m      Tests \x1b[22m \x1b[1m\x1b[32m3 passed\x1b[39m\x1b[22m\x1b[90m (3)\x1b[39m\n"
    "\x1b[2m   Start at \x1b[22m 10:11:26\n"
    "\x1b[2m   Duration \x1b[22m 418ms\x1b[2m (transform 64ms, setup 0ms, collect 91ms, tests 14ms, environment 0ms, prepare 73ms)\x1b[22m"
)

CURL = """\
{
  "status": "degraded",
  "checks": {
    "postgres": {
      "ok": true,
      "ms": 3
    },
    "redis": {
      "ok": false,
      "error": "redis unavailable: connect ECONNREFUSED 10.0.3.7:6379"
    }
  }
}"""

E2E_FAIL = """\

Running 2 tests using 2 workers

  ✘  1 [desktop] › test/e2e/status.spec.ts:5:5 › status page shows the overall state (5.4s)
  ✘  2 [mobile] › test/e2e/status.spec.ts:5:5 › status page shows the overall state (5.6s)

  1) [desktop] › test/e2e/status.spec.ts:5:5 › status page shows the overall state ─────────────────

    Error: Timed out 5000ms waiting for expect(locator).toHaveText(expected)

    Locator: locator('.sum .badge')
    Expected string: "all systems normal"
    Received string: "degraded: redis unavailable: connect ECONNREFUSED 10.0.3.7:6379"

      5 | test("status page shows the overall state", async ({ page }) => {
      6 |   await page.goto("/status");
    > 7 |   await expect(page.locator(".sum .badge")).toHaveText("all systems normal");
        |                                             ^
      8 |   await expect(page).toHaveScreenshot("status.png", { mask: [page.locator("small")] });
      9 | });

  2) [mobile] › test/e2e/status.spec.ts:5:5 › status page shows the overall state ──────────────────

    Error: Timed out 5000ms waiting for expect(locator).toHaveText(expected)

    Locator: locator('.sum .badge')
    Expected string: "all systems normal"
    Received string: "degraded: redis unavailable: connect ECONNREFUSED 10.0.3.7:6379"

    attachment #1: screenshot (image/png) ──────────────────────────────────────────────────────────
    test-results/status-status-page-shows-the-overall-state-mobile/test-failed-1.png
    ────────────────────────────────────────────────────────────────────────────────────────────────

  2 failed
    [desktop] › test/e2e/status.spec.ts:5:5 › status page shows the overall state ──────────────────
    [mobile] › test/e2e/status.spec.ts:5:5 › status page shows the overall state ───────────────────"""

SHOT = "test-results/status-status-page-shows-the-overall-state-mobile/test-failed-1.png"


def session_d(repo: Repo) -> Session:
    s = Session(
        D_ID,
        repo.cwd,
        "2026-05-11T08:02:51.877",
        "gpt-5.1-codex",
        title="Healthz reports degraded instead of 500 when Redis is down",
        omp=True,
    )
    s.model_change("gpt-5.1-codex", after=0.8)
    s.thinking_level("high", after=1.5)
    s.user(
        '/healthz returns 500 as soon as redis is down. it should answer 200 with status "degraded" and say '
        "which check failed. postgres down is fatal though, that should be a 503",
        after=19,
    )
    s.assistant(
        thinking="**Locating the health route**\n\nRead the handler and its test before changing anything.",
        calls=[repo.read("src/health.ts"), repo.read("test/health.test.ts")],
        after=6.6,
    )
    s.assistant(
        "`timed()` turns a failed check into a thrown `DependencyError`, and Fastify answers any throw with "
        "500. I'll make each check return a result instead of throwing, and derive the status from both.",
        thinking=(
            "**Designing the result**\n\nRun both checks concurrently with `Promise.all`, each returning "
            "`{ ok: true, ms } | { ok: false, error }`. Status: postgres failed → `down` (503), redis failed → "
            "`degraded` (200), else `ok`. Keep `DependencyError` for its message format."
        ),
        calls=[
            repo.failed_edit(
                "src/health.ts",
                '  const postgres = await timed("postgres", () => deps.db.query("SELECT 1"));\n'
                '  const redis = await timed("redis", () => deps.redis.ping());\n',
                "  const report = await health(deps);\n",
            )
        ],
        after=24.1,
    )
    s.assistant(
        thinking="**Edit missed**\n\nThe handler body is indented by four spaces, not two. Since the module's "
        "shape changes anyway, write it whole.",
        calls=[repo.write("src/health.ts", HEALTH_NEW)],
        after=31.7,
    )
    old_tests = repo.files["test/health.test.ts"]
    s.assistant(
        calls=[repo.edit("test/health.test.ts", old_tests[old_tests.index("function app") :], HEALTH_TESTS)],
        after=14.9,
    )
    s.assistant(calls=[bash("npm test -- health", VITEST, took=2.4)], after=2.0)
    s.assistant(calls=[bash("npx tsc --noEmit -p .", "", took=3.8)], after=1.9)
    s.assistant(
        "`/healthz` now reports instead of throwing:\n\n"
        "| postgres | redis | HTTP | `status` |\n|---|---|---|---|\n"
        "| up | up | 200 | `ok` |\n| up | down | 200 | `degraded` |\n| down | any | 503 | `down` |\n\n"
        "Each check in `checks` is `{ ok: true, ms }` or `{ ok: false, error }`, with the error's message "
        "(`redis unavailable: connect ECONNREFUSED …`). The checks run concurrently now, so a hanging redis no "
        "longer delays the postgres check. Tests cover all three cases; `tsc` is clean.",
        after=9.4,
    )
    s.bash_execution(
        "docker compose stop redis",
        " Container linkcheck-redis-1  Stopping\n Container linkcheck-redis-1  Stopped\n",
        after=74,
    )
    s.bash_execution("curl -s localhost:3000/healthz | jq", CURL + "\n", after=11)
    s.user(
        "works. the status page should show it too, /status is still all green with redis down. there's a "
        "playwright screenshot test for it",
        after=38,
    )
    s.assistant(
        calls=[repo.read("src/views/status.ts"), repo.read("src/server.ts"), repo.read("test/e2e/status.spec.ts")],
        after=5.1,
    )
    s.assistant(
        '`/status` hard-codes `status: "ok"`. I\'ll pass it the health report and give each state its badge.',
        calls=[
            repo.edit(
                "src/views/status.ts",
                "export interface StatusView {\n",
                "const badges = {\n"
                '  ok: ["ok", "all systems normal"],\n'
                '  degraded: ["warn", "degraded"],\n'
                '  down: ["bad", "down"],\n'
                "} as const;\n\n"
                "export interface StatusView {\n",
            ),
            repo.edit(
                "src/views/status.ts",
                "  checkedAt: Date;\n}\n",
                "  checkedAt: Date;\n  /** What failed, shown beside the state. */\n  failed?: string;\n}\n",
            ),
            repo.edit(
                "src/views/status.ts",
                ".ok { background: #dff5e4; color: #17662c; }\n",
                ".ok { background: #dff5e4; color: #17662c; }\n"
                ".warn { background: #fff1d6; color: #8a5300; }\n"
                ".bad { background: #fde2e1; color: #9b1c1c; }\n",
            ),
            repo.edit(
                "src/views/status.ts",
                "  const time = view.checkedAt.toISOString().slice(11, 19);\n",
                "  const time = view.checkedAt.toISOString().slice(11, 19);\n"
                "  const [cls, label] = badges[view.status];\n"
                "  const text = view.failed ? `${label}: ${view.failed}` : label;\n",
            ),
            repo.edit(
                "src/views/status.ts",
                '<span class="badge ok">all systems normal</span>',
                '<span class="badge ${cls}">${escapeHtml(text)}</span>',
            ),
            repo.edit(
                "src/views/status.ts",
                "export function renderStatus(",
                "function escapeHtml(text: string): string {\n"
                '  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);\n'
                "}\n\n"
                "export function renderStatus(",
            ),
            repo.edit(
                "src/server.ts",
                'import { registerHealth } from "./health.js";\n',
                'import { failures, health, registerHealth } from "./health.js";\n',
            ),
            repo.edit(
                "src/server.ts",
                '  return reply.type("text/html").send(renderStatus({ status: "ok", queued, checkedAt: new Date() }));\n',
                "  const report = await health(deps);\n"
                "  const view = { status: report.status, failed: failures(report), queued, checkedAt: new Date() };\n"
                '  return reply.type("text/html").send(renderStatus(view));\n',
            ),
        ],
        after=36.2,
    )
    s.assistant(calls=[bash("npx playwright test status", E2E_FAIL, code=1, took=9.8)], after=2.7)
    screenshot = (IMAGES / "status-mobile-actual.png").read_bytes()
    s.assistant(
        "Both fail because redis is still stopped from your check, so the page really is degraded and the "
        "badge says so. The test expects the healthy state. Let me see how the degraded page looks on the "
        "phone viewport.",
        calls=[Call("read", {"path": SHOT}, "Read image file [image/png]", images=[screenshot], took=0.1)],
        after=8.8,
    )
    s.assistant(
        'On a phone the badge runs off the screen: `.sum` is `white-space: nowrap`, which suits the short "all '
        'systems normal" but not an error message. Letting the row wrap and long words break:',
        calls=[
            repo.edit(
                "src/views/status.ts",
                ".sum { display: flex; justify-content: space-between; align-items: center; white-space: nowrap; }\n"
                ".badge { padding: 3px 12px; border-radius: 999px; font-size: 13px; font-weight: 600; }\n",
                ".sum { display: flex; flex-wrap: wrap; gap: 6px 12px; justify-content: space-between; align-items: center; }\n"
                ".badge { padding: 3px 12px; border-radius: 999px; font-size: 13px; font-weight: 600; overflow-wrap: anywhere; }\n",
            )
        ],
        after=17.3,
    )
    passed = (
        " Container linkcheck-redis-1  Starting\n Container linkcheck-redis-1  Started\n\n"
        "Running 2 tests using 2 workers\n\n"
        "  ✓  1 [desktop] › test/e2e/status.spec.ts:5:5 › status page shows the overall state (1.1s)\n"
        "  ✓  2 [mobile] › test/e2e/status.spec.ts:5:5 › status page shows the overall state (1.3s)\n\n"
        "  2 passed (3.2s)"
    )
    s.assistant(
        calls=[bash("docker compose start redis && sleep 2 && npx playwright test status", passed, took=8.1)], after=4.0
    )
    s.assistant(
        "With redis back the existing screenshot test passes on both viewports, so the healthy page is "
        "unchanged. The degraded badge now wraps inside the card on a phone instead of running off it.\n\n"
        "I restarted redis (`docker compose start redis`) for the test; it was stopped for your curl check.\n\n"
        "Not covered yet: an e2e case for the degraded page. It would need the server started with redis "
        "unreachable (e.g. `REDIS_URL=redis://127.0.0.1:1`) in a second Playwright project. Want me to add that?",
        after=10.6,
    )
    return s


TICKET = """\
**Why one flaky host can starve the others of retries**

`retryBudget` (default 200, `LINKCHECK_RETRY_BUDGET`) is **global**: one `RetryBudget` instance is shared by \
every worker, and `take()` only counts retries per hour, not per host (`src/crawl/retry.ts`). A host that \
answers 429/503 to most requests spends the whole hour's budget on itself; every other host's transient \
failure after that is reported as a failure instead of being retried.

Options:
1. **Cap retries per host** within the global budget (e.g. at most 10% of it per host). Small change in \
`RetryBudget.take(host)`.
2. **Back off per host** on 429/503 (honour `Retry-After`), so a flaky host is retried later rather than \
immediately and repeatedly.

(1) fixes the starvation; (2) is kinder to the flaky host. I'd start with (1).
"""


def session_e(repo: Repo) -> Session:
    s = Session(E_ID, repo.cwd, "2026-05-12T14:31:09.640", "claude-sonnet-4-5", omp=True)
    s.model_change("claude-sonnet-4-5", after=0.9)
    s.user(
        "what does retryBudget in src/crawl/config.ts actually do, is it per host or global? we have a ticket "
        "saying one flaky host eats all the retries",
        after=16,
    )
    hits = "\n".join(
        f"{path}:{n}:{line}"
        for path in ("src/crawl/config.ts", "src/crawl/retry.ts")
        for n, line in enumerate(repo.files[path].splitlines(), 1)
        if "retryBudget" in line
    )
    s.assistant(calls=[grep("retryBudget", "src", hits)], after=4.2)
    s.assistant(calls=[repo.read("src/crawl/retry.ts")], after=3.6)
    s.assistant(
        "**Global.** `retryBudget` is how many retries the whole crawler may spend per hour, over all hosts:\n\n"
        "- `RetryBudget` counts `spent` in one window of an hour and refuses once `spent >= retryBudget`.\n"
        "- Its class comment says one instance is shared by every worker, and `take()` has no host argument, "
        "so nothing is counted per host.\n\n"
        "So the ticket is right: a host that keeps answering 429 or 503 can spend the hour's 200 retries on "
        "itself, and after that every other host's transient failure is reported instead of retried. "
        "`perHost` limits only concurrent requests, not retries.",
        after=14.8,
    )
    s.user("ok makes sense. no code change for now, can you draft a comment for the ticket?", after=71)
    s.assistant(TICKET, after=18.5)
    return s

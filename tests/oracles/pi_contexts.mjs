// Runs pi 0.73.1's own session code (npm @mariozechner/pi-coding-agent@0.73.1, installed in PI_DIR)
// on copies of session files (pi rewrites old files it opens) and prints, per file, what pi's
// buildSessionContext returns: whole at every tree leaf and the default leaf, and as one signature
// per entry, for tests/test_context_oracle.py.
//
//   node tests/oracles/pi_contexts.mjs PI_DIR OUT.json FILE.jsonl...
//
// Entries are named by their index in pi's getEntries() (file order): a v1 file gets random ids.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const [piDir, outFile, ...files] = process.argv.slice(2);
const entry = path.join(path.resolve(piDir), "node_modules/@mariozechner/pi-coding-agent/dist/index.js");
const pi = await import(pathToFileURL(entry).href);

// One signature string per message, as tests/oracle_support.py computes it for sitegen.
function signature(messages) {
	const parts = messages.map(m => {
		const content = m?.content;
		const blocks = Array.isArray(content) ? `${content.length}:${content.map(b => b?.type).join(",")}` : typeof content;
		return `${m?.role}\u001f${String(m?.timestamp)}\u001f${blocks}`;
	});
	return createHash("sha256").update(parts.join("\u001e")).digest("hex");
}

const sandbox = fs.mkdtempSync(path.join(os.tmpdir(), "pi-oracle-"));
const results = [];
try {
	files.forEach((file, n) => {
		const copy = path.join(sandbox, `copy-${n}.jsonl`);
		fs.copyFileSync(file, copy);
		const result = { file };
		try {
			const sm = pi.SessionManager.open(copy, sandbox);
			const entries = sm.getEntries();
			const defaultLeaf = sm.getLeafId();
			const parents = new Set(entries.map(e => e.parentId));
			const index = new Map(entries.map((e, i) => [e.id, i]));
			result.entryCount = entries.length;
			result.defaultLeaf = defaultLeaf == null ? null : (index.get(defaultLeaf) ?? null);
			result.leaves = {};
			result.signatures = entries.map((e, i) => {
				const context = pi.buildSessionContext(entries, e.id);
				if (!parents.has(e.id) || e.id === defaultLeaf) result.leaves[i] = context;
				return signature(context.messages);
			});
		} catch (error) {
			result.error = error instanceof Error ? error.message : String(error);
		}
		results.push(result);
	});
} finally {
	fs.rmSync(sandbox, { recursive: true, force: true });
}
fs.writeFileSync(outFile, JSON.stringify({ pi: "0.73.1", files: results }));

// Runs omp 18.3.4's own session code (the reference oracle in ../shared/oracles/omp, installed) on
// session files and prints, per file, what omp's buildSessionContext returns: whole at every tree
// leaf and the default leaf, and as one signature per entry (the context at that entry), so that
// tests/test_context_oracle.py can hold sitegen's context equal to omp's at every entry.
//
//   bun tests/oracles/omp_contexts.ts ORACLE_DIR OUT.json FILE.jsonl...
//
// Entries are named by their index in omp's getEntries() (file order), not by id: a v1 file gets
// random ids from omp's migration.
import * as fs from "node:fs";
import * as path from "node:path";

const [oracleDir, outFile, ...files] = process.argv.slice(2);
const oracle = await import(path.join(path.resolve(oracleDir), "lib/oracle.ts"));

// One signature string per message: what sitegen computes the same way (tests/oracle_support.py).
function signature(messages: any[]): string {
	const parts = messages.map(m => {
		const content = m?.content;
		const blocks = Array.isArray(content) ? `${content.length}:${content.map((b: any) => b?.type).join(",")}` : typeof content;
		return `${m?.role}\u001f${String(m?.timestamp)}\u001f${blocks}`;
	});
	return new Bun.CryptoHasher("sha256").update(parts.join("\u001e")).digest("hex");
}

const first = oracle.prepareSandbox(files[0]);
const omp = await oracle.loadOmp("bundle");
const results: any[] = [];
try {
	for (const file of files) {
		const copy = path.join(first.sessionsDir, `copy-${results.length}.jsonl`);
		fs.copyFileSync(file, copy);
		const result: any = { file };
		try {
			const storage = new omp.FileSessionStorage();
			const sm = await omp.SessionManager.open(copy, undefined, storage, { suppressBreadcrumb: true, throwIfMissing: true });
			const entries = sm.getEntries();
			const defaultLeaf = sm.getLeafId();
			const parents = new Set(entries.map((e: any) => e.parentId));
			const index = new Map<string, number>();
			entries.forEach((e: any, i: number) => index.set(e.id, i));
			result.entryCount = entries.length;
			result.defaultLeaf = defaultLeaf == null ? null : index.get(defaultLeaf) ?? null;
			result.leaves = {};
			result.signatures = [];
			entries.forEach((entry: any, i: number) => {
				sm.branch(entry.id);
				const context = sm.buildSessionContext();
				result.signatures.push(signature(context.messages));
				if (!parents.has(entry.id) || entry.id === defaultLeaf) result.leaves[i] = JSON.parse(oracle.toJson(context));
			});
		} catch (error) {
			result.error = error instanceof Error ? error.message : String(error);
		}
		results.push(result);
	}
} finally {
	first.cleanup();
}
fs.writeFileSync(outFile, oracle.toJson({ omp: oracle.OMP_VERSION, files: results }, undefined));

"""Does aider's repo map, focused on a bug report, show the file the real fix changed?

Run with aider's own venv (made by bench/setup.sh):

    bench/.cache/aider-venv/bin/python bench/aider_quality.py \
        [--cases ../shared/bench/cases.jsonl] [--src bench/.cache/devbench/src] \
        [--budgets 1024 2048 4096] [--limit N] [--cases-from ID] [--out FILE.jsonl]

For every case whose sources exist under SRC/<root>/: list the repo's .py files
(focus.list_py_files), extract the report's focus (focus.extract_focus), build aider's map
(all files as other_fnames, no chat files, mentioned_fnames = focus files, mentioned_idents =
focus idents) at each budget and record whether a gold file is among the files in the map.
One JSON line per case on stdout (and in --out), then a summary line {"summary": ...}.
Per root, one RepoMap (and so one tags cache, ROOT/.aider.tags.cache.v*) serves all its cases.
"""

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import aider_map  # noqa: E402  (installs the offline guard, sends stray prints to stderr)
import focus  # noqa: E402

OUT = aider_map.REAL_STDOUT


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=focus.CASES_PATH)
    ap.add_argument("--src", default=os.path.join(HERE, ".cache", "devbench", "src"))
    ap.add_argument("--budgets", type=int, nargs="+", default=[1024, 2048, 4096])
    ap.add_argument("--limit", type=int, default=None, help="at most N cases (with sources)")
    ap.add_argument("--cases-from", default=None, help="start at the case with this id")
    ap.add_argument("--out", default=None, help="also write the JSON lines to this file")
    ap.add_argument("--model", default="gpt-4o")
    return ap.parse_args(argv)


def select_cases(cases, src, cases_from=None, limit=None):
    if cases_from:
        ids = [c["id"] for c in cases]
        if cases_from not in ids:
            raise SystemExit(f"--cases-from {cases_from}: no such case")
        cases = cases[ids.index(cases_from) :]
    picked = [c for c in cases if os.path.isdir(os.path.join(src, c["root"]))]
    return picked[:limit] if limit is not None else picked


def summarize(rows, budgets):
    def block(sub):
        d = {"cases": len(sub)}
        for b in budgets:
            d[f"hit@{b}"] = sum(r["hits"][str(b)] for r in sub)
            d[f"hit_code@{b}"] = sum(r["hits_code"][str(b)] for r in sub)
        d["seconds"] = round(sum(r["seconds_total"] for r in sub), 1)
        return d

    out = {
        "all": block(rows),
        "has_traceback": block([r for r in rows if r["has_traceback"]]),
        "no_traceback": block([r for r in rows if not r["has_traceback"]]),
    }
    for pkg in sorted({r["package"] for r in rows}):
        out[pkg] = block([r for r in rows if r["package"] == pkg])
    return out


def main(argv=None):
    args = parse_args(argv)
    cases = select_cases(focus.load_cases(args.cases), args.src, args.cases_from, args.limit)
    print(f"{len(cases)} cases with sources under {args.src}", file=sys.stderr)
    io = aider_map.make_io()
    model = aider_map.make_model(args.model)
    model.token_count("warm up the tokenizer")

    with contextlib.ExitStack() as stack:
        out_fh = stack.enter_context(open(args.out, "w", encoding="utf-8")) if args.out else None
        run_cases(args, cases, io, model, out_fh)


def run_cases(args, cases, io, model, out_fh):
    from aider.repomap import RepoMap  # noqa: PLC0415  (after the offline guard)

    rows = []
    maps = {}  # root -> (RepoMap, rel files, abs files)
    for case in cases:
        root = os.path.abspath(os.path.join(args.src, case["root"]))
        if root not in maps:
            maps.clear()  # one root at a time keeps memory flat
            rels = focus.list_py_files(root)
            rm = RepoMap(
                map_tokens=max(args.budgets),
                root=root,
                main_model=model,
                io=io,
                max_context_window=None,
                refresh="always",
            )
            maps[root] = (rm, rels, [os.path.join(root, r) for r in rels])
        rm, rels, abs_files = maps[root]
        files, idents = focus.extract_focus(case["problem_statement"], rels)
        gold = set(case["gold_files"])
        row = {
            "id": case["id"],
            "package": case["package"],
            "root": case["root"],
            "has_traceback": bool(case["has_traceback"]),
            "gold_files": case["gold_files"],
            "n_files": len(rels),
            "focus_files": files,
            "focus_idents": idents,
            "focus_has_gold": bool(gold & set(files)),
            "hits": {},
            "hits_code": {},
            "files_in_map": {},
            "map_tokens": {},
            "seconds": {},
        }
        for b in args.budgets:
            rm.max_map_tokens = b
            secs, text = aider_map.build_map(rm, abs_files, files, idents)
            listed, with_code = aider_map.count_map_files(text)
            row["hits"][str(b)] = bool(gold & set(listed))
            row["hits_code"][str(b)] = bool(gold & set(with_code))
            row["files_in_map"][str(b)] = len(listed)
            row["map_tokens"][str(b)] = round(rm.token_count(text)) if text else 0
            row["seconds"][str(b)] = round(secs, 2)
        row["seconds_total"] = round(sum(row["seconds"].values()), 2)
        rows.append(row)
        line = json.dumps(row)
        OUT.write(line + "\n")
        OUT.flush()
        if out_fh:
            out_fh.write(line + "\n")
            out_fh.flush()
        print(
            f"{case['id']}: "
            + " ".join(f"{b}:{'HIT' if row['hits'][str(b)] else '-'}" for b in args.budgets)
            + f" ({row['seconds_total']}s)",
            file=sys.stderr,
        )

    summary = {
        "summary": summarize(rows, args.budgets),
        "budgets": args.budgets,
        "wall_seconds": round(time.perf_counter() - T0, 1),
        "net_attempts": len(aider_map.NET_ATTEMPTS),
    }
    OUT.write(json.dumps(summary) + "\n")
    if out_fh:
        out_fh.write(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main()

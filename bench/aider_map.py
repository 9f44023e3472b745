"""Time aider's RepoMap on a fixed list of files (one measurement per process).

Run with aider's own venv (made by bench/setup.sh), never ours:

    bench/.cache/aider-venv/bin/python bench/aider_map.py --root DIR --files FILELIST \
        --tokens N --mode cold|warm|touch [--touch-file REL [--append-comment]] \
        [--focus-files F ...] [--focus-idents I ...] [--print-map]

FILELIST holds repo-relative paths, one per line; aider maps exactly those (passed as
`other_fnames`, absolute, no chat files).  Modes:
  cold   delete aider's tags cache (ROOT/.aider.tags.cache.v*) first, then time the map
  warm   reuse the tags cache a previous run left, time the map
  touch  warm cache, bump --touch-file's mtime to now (os.utime, content unchanged) or, with
         --append-comment, append "\\n# bench touch\\n" (content and mtimes are restored
         afterwards), then time the map

Prints one JSON line on stdout; everything aider itself prints goes to stderr.
The map budget is exactly --tokens: aider's x8 "no files in chat" multiplier only applies
when a context window is known, and we pass none unless --max-context-window is given.
No network: litellm uses its bundled cost map and tokenizer, aider's model-info download is
disabled, and any socket connect / DNS lookup raises (counted as "net_attempts").
Deterministic: the script re-execs itself with PYTHONHASHSEED=0 unless PYTHONHASHSEED is set
(aider's ranking otherwise varies a little from process to process).
"""

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402

# ---- deterministic maps ------------------------------------------------------------------
# aider's ranking iterates sets of strings/Tags (defines[ident], definitions[key]), so with
# Python's per-process string hash randomization the same inputs can give a slightly different
# map in every process. Re-exec once with a fixed PYTHONHASHSEED (keep yours if it is set).
if os.environ.get("PYTHONHASHSEED") is None:
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

# ---- offline guard ---------------------------------------------------------------------
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # litellm: bundled model cost map
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("AIDER_ANALYTICS", "false")
os.environ.setdefault("TQDM_DISABLE", "1")  # aider's "Scanning repo" bar (stderr noise)
NET_ATTEMPTS = []


def _no_connect(self, address, *a, **k):
    NET_ATTEMPTS.append(str(address))
    raise OSError("network disabled by bench/aider_map.py")


def _no_getaddrinfo(host, *a, **k):
    NET_ATTEMPTS.append(str(host))
    raise socket.gaierror("network disabled by bench/aider_map.py")


socket.socket.connect = _no_connect
socket.socket.connect_ex = _no_connect
socket.getaddrinfo = _no_getaddrinfo

# Everything printed by aider / litellm / tqdm goes to stderr; stdout carries our JSON only.
REAL_STDOUT = sys.stdout
sys.stdout = sys.stderr

COMMENT_BY_EXT = {".py": "#", ".rb": "#", ".sh": "#"}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, help="repository root")
    ap.add_argument("--files", required=True, help="text file: repo-relative paths, one a line")
    ap.add_argument("--tokens", type=int, required=True, help="map_tokens budget")
    ap.add_argument("--mode", choices=("cold", "warm", "touch"), required=True)
    ap.add_argument("--touch-file", help="repo-relative file to touch (touch mode)")
    ap.add_argument(
        "--append-comment",
        action="store_true",
        help="touch mode: append a comment line instead of only bumping mtime",
    )
    ap.add_argument("--focus-files", nargs="*", default=[], help="mentioned_fnames (relative)")
    ap.add_argument("--focus-idents", nargs="*", default=[], help="mentioned_idents")
    ap.add_argument("--model", default="gpt-4o", help="model whose tokenizer counts tokens")
    ap.add_argument(
        "--max-context-window",
        type=int,
        default=None,
        help="pass a context window to RepoMap (enables aider's x8 multiplier "
        "when no files are in the chat); default: none",
    )
    ap.add_argument("--print-map", action="store_true", help="also write the map to stderr")
    return ap.parse_args(argv)


def make_io():
    """An aider InputOutput that prints nothing (messages are kept in .messages)."""
    from aider.io import InputOutput  # noqa: PLC0415  (after the offline guard)

    class QuietIO(InputOutput):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.messages = []

        def tool_output(self, *messages, log_only=False, bold=False):
            self.messages.append(("output", " ".join(str(m) for m in messages)))

        def tool_warning(self, message="", strip=True):
            self.messages.append(("warning", str(message)))

        def tool_error(self, message="", strip=True):
            self.messages.append(("error", str(message)))

    return QuietIO(
        pretty=False,
        yes=True,
        fancy_input=False,
        input_history_file=None,
        chat_history_file=None,
        llm_history_file=None,
    )


def make_model(name):
    """aider Model for token counting, without aider's model-info download."""
    import aider.models as am  # noqa: PLC0415  (after the offline guard)

    # ModelInfoManager would GET litellm's price list from GitHub (5 s timeout, prints the
    # error, writes ~/.aider/caches/...). Pretend its cache is loaded and empty, so aider falls
    # back to litellm.get_model_info(), which reads litellm's bundled copy.
    am.model_info_manager._cache_loaded = True
    am.model_info_manager._update_cache = lambda: None
    return am.Model(name)


def count_map_files(text):
    """Files listed in an aider map.

    aider's to_tree() writes, per file, either "path:" followed by code lines that start with
    "│" (shown line) or "⋮" (elided lines), or a bare "path" line for files shown without
    code. Returns (all listed files, files shown with code).
    """
    listed, with_code = [], []
    for line in (text or "").splitlines():
        if not line.strip() or line[0] in "│⋮":
            continue
        if line.endswith(":"):
            listed.append(line[:-1])
            with_code.append(line[:-1])
        else:
            listed.append(line)
    return listed, with_code


def build_map(rm, abs_files, focus_files=(), focus_idents=()):
    """Time one get_repo_map() call. Returns (seconds, map text or '')."""
    t = time.perf_counter()
    text = rm.get_repo_map(
        chat_files=[],
        other_files=abs_files,
        mentioned_fnames=set(focus_files),
        mentioned_idents=set(focus_idents),
        force_refresh=True,
    )
    return time.perf_counter() - t, text or ""


def main(argv=None):
    args = parse_args(argv)
    root = os.path.abspath(args.root)
    with open(args.files, encoding="utf-8") as fh:
        rels = [ln.strip() for ln in fh if ln.strip()]
    abs_files = [os.path.join(root, r) for r in rels]

    from aider import __version__ as aider_version  # noqa: PLC0415  (after the offline guard)
    from aider.repomap import RepoMap  # noqa: PLC0415  (after the offline guard)

    cache_dirs = glob.glob(os.path.join(root, ".aider.tags.cache.v*"))
    if args.mode == "cold":
        for d in cache_dirs:
            shutil.rmtree(d)
    elif not os.path.isdir(os.path.join(root, RepoMap.TAGS_CACHE_DIR)):
        print(
            f"warning: {args.mode} mode but no {RepoMap.TAGS_CACHE_DIR} in {root}: "
            "run --mode cold first",
            file=sys.stderr,
        )

    io = make_io()
    model = make_model(args.model)
    # refresh="always": never serve the in-memory map cache (force_refresh=True too).
    rm = RepoMap(
        map_tokens=args.tokens,
        root=root,
        main_model=model,
        io=io,
        max_context_window=args.max_context_window,
        refresh="always",
    )
    model.token_count("warm up the tokenizer")  # load litellm + tiktoken outside the timing

    touched = None
    if args.mode == "touch":
        if not args.touch_file:
            raise SystemExit("--mode touch needs --touch-file")
        path = os.path.join(root, args.touch_file)
        st = os.stat(path)
        if args.append_comment:
            with open(path, "rb") as fh:
                original = fh.read()
            mark = COMMENT_BY_EXT.get(os.path.splitext(path)[1], "//")
            touched = (path, original, st.st_atime_ns, st.st_mtime_ns)
            with open(path, "ab") as fh:
                fh.write(f"\n{mark} bench touch\n".encode())
        else:
            os.utime(path)  # mtime := now, content unchanged
            if os.stat(path).st_mtime_ns == st.st_mtime_ns:
                time.sleep(0.01)
                os.utime(path)

    setup_seconds = time.perf_counter() - T0
    try:
        seconds, text = build_map(rm, abs_files, args.focus_files, args.focus_idents)
    finally:
        if touched:  # restore the original bytes and timestamps
            path, original, atime_ns, mtime_ns = touched
            with open(path, "wb") as fh:
                fh.write(original)
            os.utime(path, ns=(atime_ns, mtime_ns))

    listed, with_code = count_map_files(text)
    result = {
        "mode": args.mode + ("+append" if args.mode == "touch" and args.append_comment else ""),
        "tokens_budget": args.tokens,
        "seconds": round(seconds, 3),
        "process_seconds": round(time.perf_counter() - T0, 3),
        "setup_seconds": round(setup_seconds, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "map_tokens": round(rm.token_count(text)) if text else 0,
        "map_tokens_exact": model.token_count(text) if text else 0,
        "map_chars": len(text),
        "files_in_map": len(listed),
        "files_with_code": len(with_code),
        "n_files": len(abs_files),
        "touch_file": args.touch_file if args.mode == "touch" else None,
        "aider_version": aider_version,
        "io_messages": len(io.messages),
        "net_attempts": len(NET_ATTEMPTS),
    }
    if args.print_map:
        print(text, file=sys.stderr)
    REAL_STDOUT.write(json.dumps(result) + "\n")
    REAL_STDOUT.flush()


if __name__ == "__main__":
    main()

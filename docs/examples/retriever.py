"""A grep-like retriever speaking cce.retriever/v1 (docs/retrievers.md): python3 retriever.py CORPUS_DIR"""
import json
import os
import re
import sys

words = re.compile(r"[a-z0-9_]+")
root = sys.argv[1]
lines = {}  # "path/in/corpus" -> [set of words on line 1, line 2, ...]
for folder, subfolders, names in os.walk(root):
    subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
    for name in sorted(names):
        path = os.path.join(folder, name)
        with open(path, encoding="utf-8", errors="replace") as fh:
            key = os.path.relpath(path, root).replace(os.sep, "/")
            lines[key] = [set(words.findall(line.lower())) for line in fh.read().split("\n")]

for request in map(json.loads, sys.stdin):
    query = set(words.findall(request["query"].lower()))
    scored = sorted((-len(query & line), path, number)
                    for path, file_lines in lines.items() for number, line in enumerate(file_lines, 1))
    results = [{"file_path": path, "start_line": number, "end_line": number, "score": -score}
               for score, path, number in scored[: request["k"]] if score < 0]
    print(json.dumps({"id": request["id"], "results": results}), flush=True)

#!/usr/bin/env python3
"""Check the project's Markdown: every relative link resolves, and every code
block marked as quoted from a file is in that file.

  scripts/check_docs.py [--root DIR] [FILE.md ...]

Without files it checks every Markdown file git tracks under DIR (default:
the checkout this script lives in; every *.md below DIR, build trees left
out, where git is not available). A link is checked when it is relative:
[text](path), [text](path#anchor), [text](#anchor), ![alt](image) and
reference definitions [label]: path. The path must name a file or folder
that exists; an anchor into a Markdown file must be one of its headings'
GitHub slugs (or an explicit <a name|id="...">). Links with a scheme
(https:, mailto:) and links inside code spans and fenced code blocks are
left alone.

A fenced block right after a line `<!-- verbatim: PATH -->` (PATH relative
to DIR) must quote that file: its lines, split at lines that are only an
elision (`…`, `// …` or `# …`), must stand in PATH in that order, each piece
as consecutive lines. So the README's sample deck and kernel stay the files
the tests run.

Prints one line per problem (FILE:LINE: ...) and exits 1 if there is any, 0
otherwise.
"""
import argparse
import os
import re
import subprocess
import sys
import urllib.parse

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
CODESPAN = re.compile(r"(`+)(?:.*?[^`])?\1(?!`)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
ANCHOR_TAG = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.IGNORECASE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
VERBATIM = re.compile(r"^\s*<!--\s*verbatim:\s*(\S+)\s*-->\s*$")
ELISION = re.compile(r"^\s*(//|#)?\s*…\s*$")


def slug(text):
    """GitHub's heading anchor: lower case, markup and punctuation dropped,
    spaces to hyphens (hyphens and underscores kept)."""
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)
    text = text.lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors_of(path, cache={}):
    if path not in cache:
        found, counts, fenced = set(), {}, False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if FENCE.match(line):
                    fenced = not fenced
                    continue
                if fenced:
                    continue
                found.update(ANCHOR_TAG.findall(line))
                m = HEADING.match(line)
                if m:
                    s = slug(m.group(2))
                    n = counts.get(s, 0)
                    counts[s] = n + 1
                    found.add(s if n == 0 else f"{s}-{n}")
        cache[path] = found
    return cache[path]


def links_of(path):
    """(line number, target) of every link outside code."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if fenced:
                continue
            m = REFDEF.match(line)
            if m:
                yield number, m.group(1)
                continue
            for m in INLINE.finditer(CODESPAN.sub("", line)):
                yield number, m.group(1)


def problem(source, target, root):
    """None when target, a link in source, resolves; else what is wrong."""
    if not target or SCHEME.match(target) or target.startswith("//"):
        return None
    path, _, anchor = target.partition("#")
    path = urllib.parse.unquote(path)
    if path.startswith("/"):
        resolved = os.path.join(root, path.lstrip("/"))
    elif path:
        resolved = os.path.join(os.path.dirname(source), path)
    else:
        resolved = source
    resolved = os.path.normpath(resolved)
    if not os.path.exists(resolved):
        return f"{path}: no such file or folder"
    if anchor and resolved.endswith(".md") and os.path.isfile(resolved):
        if urllib.parse.unquote(anchor).lower() not in anchors_of(resolved):
            return f"#{anchor}: no such heading in {os.path.relpath(resolved, root)}"
    return None


def quotes_of(path):
    """(line number, quoted file, block lines) of every block marked verbatim."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        m = VERBATIM.match(line)
        if not m:
            continue
        start = i + 1
        if start >= len(lines) or not FENCE.match(lines[start]):
            yield i + 1, m.group(1), None
            continue
        end = next((j for j in range(start + 1, len(lines)) if FENCE.match(lines[j])), len(lines))
        yield i + 1, m.group(1), lines[start + 1:end]


def misquoted(block, quoted, root):
    """None when every piece of block stands in the file quoted, in order."""
    if block is None:
        return "no fenced block follows the verbatim marker"
    path = os.path.join(root, quoted)
    if not os.path.isfile(path):
        return f"{quoted}: no such file"
    with open(path, encoding="utf-8") as f:
        text = f.read().split("\n")
    pieces, piece = [], []
    for line in block + ["…"]:
        if ELISION.match(line):
            if piece:
                pieces.append(piece)
            piece = []
        else:
            piece.append(line)
    at = 0
    for piece in pieces:
        found = next((k for k in range(at, len(text) - len(piece) + 1)
                      if text[k:k + len(piece)] == piece), None)
        if found is None:
            return f"not in {quoted} (after its line {at}): {piece[0].strip()!r} ..."
        at = found + len(piece)
    return None


def markdown_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "*.md"],
                             check=True, capture_output=True).stdout.decode()
        files = [os.path.join(root, f) for f in out.split("\0") if f]
        if files:
            return [f for f in files if os.path.isfile(f)]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = [d for d in subdirs if not d.startswith((".", "build"))]
        files += [os.path.join(directory, n) for n in names if n.endswith(".md")]
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    files = [os.path.abspath(f) for f in args.files] or markdown_files(root)
    broken = links = 0
    for source in sorted(files):
        for number, target in links_of(source):
            links += 1
            why = problem(source, target, root)
            if why:
                broken += 1
                print(f"{os.path.relpath(source, root)}:{number}: broken link ({target}): {why}")
        for number, quoted, block in quotes_of(source):
            links += 1
            why = misquoted(block, quoted, root)
            if why:
                broken += 1
                print(f"{os.path.relpath(source, root)}:{number}: quoted block: {why}")
    print(f"check_docs: {len(files)} Markdown files, {links} links and quotes, {broken} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())

"""docs/python.md is executed: every ```python block, in order, in one
namespace, in a fresh directory holding a copy of plans/ (what the tour's
relative paths name). A block that fails names itself by its line."""

import re
import shutil

DOC_BLOCK = re.compile(r"^```python\n(.*?)^```\s*$", re.S | re.M)


def python_blocks(text):
    """(first line number, source) of every ```python block of a Markdown text."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in DOC_BLOCK.finditer(text)]


def test_python_blocks_are_found():
    text = "x\n```python\na = 1\n```\n\n```sh\nno\n```\n```python\nb = 2\n```\n"
    assert python_blocks(text) == [(3, "a = 1\n"), (10, "b = 2\n")]


def test_every_snippet_of_docs_python_md_runs(repo, tmp_path, monkeypatch):
    doc = repo / "docs" / "python.md"
    blocks = python_blocks(doc.read_text(encoding="utf-8"))
    assert blocks, "docs/python.md has no python blocks"
    shutil.copytree(repo / "plans", tmp_path / "plans")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    for line, source in blocks:
        code = compile(source, f"docs/python.md:{line}", "exec")
        exec(code, namespace)  # noqa: S102 - the documentation's own snippets

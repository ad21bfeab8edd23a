"""docs/python.md is executed: every ```python block, in order, in one
namespace, in a fresh directory holding a copy of plans/ (what the tour's
relative paths name). A block that fails names itself by its line."""

import re
import shutil

import pytest

DOC_BLOCK = re.compile(r"^```python\n(.*?)^```\s*$", re.S | re.M)


def python_blocks(text):
    """(first line number, source) of every ```python block of a Markdown text."""
    blocks = [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in DOC_BLOCK.finditer(text)]
    # An unclosed block would be silently left out.
    assert len(blocks) == len(re.findall(r"(?m)^```python$", text)), "an unclosed ```python block"
    return blocks


def test_python_blocks_are_found():
    text = "x\n```python\na = 1\n```\n\n```sh\nno\n```\n```python\nb = 2\n```\n"
    assert python_blocks(text) == [(3, "a = 1\n"), (10, "b = 2\n")]
    with pytest.raises(AssertionError, match="unclosed"):
        python_blocks(text + "```python\nc = 3\n")


@pytest.fixture(scope="module")
def tour(repo, tmp_path_factory):
    """Runs the tour once; its directory and namespace."""
    where = tmp_path_factory.mktemp("tour")
    doc = repo / "docs" / "python.md"
    blocks = python_blocks(doc.read_text(encoding="utf-8"))
    shutil.copytree(repo / "plans", where / "plans")
    namespace = {"__name__": "__docs__"}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(where)
        for line, source in blocks:
            code = compile(source, f"docs/python.md:{line}", "exec")
            exec(code, namespace)  # noqa: S102 - the documentation's own snippets
    return where, namespace, blocks


def test_every_snippet_of_docs_python_md_runs(tour):
    where, namespace, blocks = tour
    assert len(blocks) >= 8
    # What the tour promises it made.
    assert namespace["record"].status == "complete"
    assert len(list((where / "records").iterdir())) == 2


def test_the_tour_plot_with_matplotlib(tour):
    where, namespace, _ = tour
    if namespace["plt"] is None:
        pytest.skip("matplotlib is not installed (optional: python3-matplotlib); "
                    "the tour's plotting lines did not draw")
    assert (where / "outcomes.png").stat().st_size > 0

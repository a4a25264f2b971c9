"""The course's shape, as the lessons promise it (README "The lessons"): every link between
lessons resolves, and each numbered lesson is one sitting -- about 35 cells (36 at most) and about
1,800 words of markdown (whitespace-separated tokens, math and links included: 1,900 at most), no
markdown cell over about 250 words (300 at most), no visible code cell over 25 lines,
a stated run time, a "You will find out" box of questions under the title and a "What to remember" list
after the predictions, a prediction asked before an experiment, and folded answers."""
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
LESSONS = sorted(ROOT.glob("notebooks/[0-9][0-9]-*.ipynb"))
LINK = re.compile(r"\]\(((?:\.\./)?[\w./-]+\.(?:ipynb|md))(?:#[\w-]+)?\)")


def _cells(path):
    return json.loads(path.read_text())["cells"]


def _text(cell):
    return "".join(cell["source"])


def _words(cell):
    return len(_text(cell).split())


def test_the_lessons_are_numbered_without_gaps():
    numbers = [int(p.name[:2]) for p in LESSONS]
    assert numbers == list(range(1, len(LESSONS) + 1)), [p.name for p in LESSONS]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_every_link_of_a_lesson_resolves(path):
    for cell in _cells(path):
        if cell["cell_type"] != "markdown":
            continue
        for target in LINK.findall(_text(cell)):
            assert (path.parent / target).resolve().is_file(), (path.name, target)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_each_lesson_is_one_sitting(path):
    cells = _cells(path)
    markdown = [c for c in cells if c["cell_type"] == "markdown"]
    visible = [c for c in cells if c["cell_type"] == "code"
               and not c.get("metadata", {}).get("jupyter", {}).get("source_hidden")]
    assert len(cells) <= 36, (path.name, len(cells))
    assert sum(map(_words, markdown)) <= 1900, (path.name, sum(map(_words, markdown)))
    assert max(map(_words, markdown)) <= 300, path.name
    assert max(len(_text(c).splitlines()) for c in visible) <= 25, path.name
    first = _text(markdown[0])
    # one format in every lesson, so a learner compares them at a glance
    assert re.search(r"\*Run time: about [^*]+ on a 2-core CPU[^*]*; longer on a busy machine\.\*", first), \
        f"{path.name}: no run time under the title, or not in the course's format"
    # the box under the title asks; the answers wait for the end, so no prediction is answered before it is asked
    assert "**You will find out**" in first, f"{path.name}: no 'You will find out' box under the title"
    assert "**What to remember**" not in first, f"{path.name}: the answers are given under the title"
    predicts = [i for i, c in enumerate(markdown) if "Predict" in _text(c)]
    remember = [i for i, c in enumerate(markdown) if "**What to remember**" in _text(c)]
    assert predicts, f"{path.name}: asks for no prediction"
    assert remember and remember[0] > predicts[0], f"{path.name}: no 'What to remember' after the first prediction"
    assert any("<details>" in _text(c) for c in markdown), f"{path.name}: nothing folded"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_a_stored_lesson_shows_no_error(path):
    # `%run -i checks/NN.py` turns a failing assert into an error output of a cell that succeeds:
    # stored, a reader would see the traceback while nbval's fresh run passes.
    raised = [i for i, c in enumerate(_cells(path)) for out in c.get("outputs", []) if out.get("output_type") == "error"]
    assert not raised, (path.name, raised)


@pytest.mark.parametrize("path", sorted(ROOT.glob("notebooks/*.ipynb")) + [ROOT / "app" / "lab.ipynb"],
                         ids=lambda p: p.name[:2])
def test_nbval_markers_are_written_as_nbval_reads_them(path):
    # nbval honours a marker only on a comment line holding the marker alone: "# NBVAL_IGNORE_OUTPUT
    # (why)" is read as no marker, and the cell's run-to-run output is then compared.
    for cell in _cells(path):
        for line in _text(cell).splitlines():
            if "NBVAL_" in line and line.lstrip().startswith("#"):
                assert re.fullmatch(r"#\s*NBVAL_[A-Z_]+\s*", line.strip()), (path.name, line)


CHECKS = sorted(ROOT.glob("notebooks/checks/[0-9][0-9].py"))


@pytest.mark.parametrize("path", CHECKS, ids=lambda p: p.stem)
def test_a_lessons_checks_file_is_run_by_its_lesson_last(path):
    # The authors' asserts (every number the prose states, re-checked on each run) live in
    # notebooks/checks/NN.py, out of the learner's way; the lesson's last code cell runs them in its
    # own namespace, so nbval and `make notebooks` still fail when a run disagrees with the text.
    lesson = [p for p in LESSONS if p.name[:2] == path.stem]
    assert lesson, f"{path.name}: no lesson {path.stem}"
    code = [_text(c) for c in _cells(lesson[0]) if c["cell_type"] == "code"]
    # alone on its line: IPython hands anything after a line magic to it as arguments
    assert re.search(rf"^%run -i checks/{path.name}$", code[-1], re.M), (lesson[0].name, code[-1][:200])
    assert re.search(r"\bassert\b", path.read_text()), f"{path.name} checks nothing"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_nbval_markers_are_cell_tags_not_code_a_learner_reads(path):
    # A cell whose output moves between runs carries the "nbval-ignore-output" tag (kept by
    # tools/run_notebooks.py), not a "# NBVAL_IGNORE_OUTPUT" line in the code the learner reads.
    for cell in _cells(path):
        if cell["cell_type"] == "code":
            assert "NBVAL_" not in _text(cell), (path.name, _text(cell)[:120])
            assert set(cell.get("metadata", {}).get("tags", [])) <= {"nbval-ignore-output", "nbval-skip"}


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_every_relative_link_target_exists(path):
    # Any "](target)" that is not a web address or an anchor: a file that exists. Catches a link
    # whose target text was cut or spliced (a footer once read "](02-batch-size-and-noise.i- ...").
    for cell in _cells(path):
        if cell["cell_type"] != "markdown":
            continue
        for target in re.findall(r"\]\(([^)\s]*)", _text(cell)):
            if re.match(r"(https?:|mailto:|#)", target):
                continue
            assert (path.parent / target.split("#")[0]).resolve().exists(), (path.name, target)


_DECIMAL = re.compile(r"(?<![\w.])(\d[\d,]*\.\d+)")  # 1.06, 12.74, 1,366.3: a quoted measurement
_LESSON_LINK = re.compile(r"\]\((\d\d)-[\w-]+\.ipynb")


def _outputs(path):
    """A lesson's stored outputs alone: what its last execution printed."""
    return "\n".join("".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))
                     for cell in _cells(path) for output in cell.get("outputs", []))


def _stored(path):
    """A lesson's markdown, code, stored outputs and authors' checks, as one text."""
    # the checks' comments do not count: one quoting another lesson ("17 measures 26.10") once hid a stale quote
    uncommented = lambda code: re.sub(r"(?m)(^|\s)#.*$", "", code)  # noqa: E731
    checks = ROOT / "notebooks" / "checks" / f"{path.name[:2]}.py"
    return ("\n".join(_text(cell) for cell in _cells(path)) + "\n" + _outputs(path)
            + (uncommented(checks.read_text()) if checks.is_file() else ""))


def test_a_number_quoted_beside_a_link_is_in_the_lesson_it_links():
    # Re-executing a lesson moves its timings and memory peaks; a sentence elsewhere that links it and quotes one
    # (05: "which 06 reads as 1.06") must move with it. A decimal in such a sentence has to appear in a linked
    # lesson or be the quoting lesson's own (its outputs, code or checks); references are exempt
    stored = {p.name[:2]: _stored(p) for p in LESSONS}
    stale = []
    for path in LESSONS:
        number = path.name[:2]
        for cell in _cells(path):
            text = _text(cell)
            if cell["cell_type"] != "markdown" or text.lstrip().startswith("## References"):
                continue
            for sentence in re.split(r"(?<=[.;:!?])\s+(?=[A-Z*(\[$])|\n\n", text):
                linked = set(_LESSON_LINK.findall(sentence)) - {number}
                if not linked:
                    continue
                # the quoting lesson's own text counts without the sentence itself
                sources = [stored[number].replace(sentence, "")] + [stored.get(lesson, "") for lesson in linked]
                for value in _DECIMAL.findall(sentence):
                    found = re.compile(r"(?<![\d.])" + re.escape(value) + r"(?!\d)")
                    if not any(found.search(source) for source in sources):
                        stale.append((path.name, sorted(linked), value, sentence[:120]))
    assert not stale, stale


def test_the_readme_states_the_courses_length_in_words():
    # "their about 34,000 words of prose": within 5% of the lessons' markdown, counted as the caps count it
    stated = re.search(r"their about ([\d,]+)\s+words of prose", (ROOT / "README.md").read_text())
    assert stated, "README's lesson section no longer states the course's words"
    words = sum(_words(c) for path in LESSONS for c in _cells(path) if c["cell_type"] == "markdown")
    assert abs(int(stated.group(1).replace(",", "")) - words) <= 0.05 * words, (stated.group(1), words)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_a_reading_quoted_as_the_stored_runs_is_in_the_stored_outputs(path):
    # A timing or memory reading moves between runs, so the prose may quote one only as the stored run's
    # ("3.4 on the stored run"), and re-executing the lesson must then update the sentence: every decimal in a
    # sentence that says "stored run" has to be among the lesson's stored outputs
    printed = _outputs(path)
    stale = []
    for cell in _cells(path):
        if cell["cell_type"] != "markdown":
            continue
        for sentence in re.split(r"(?<=[.;:!?])\s+(?=[A-Z*(\[$])|\n\n", _text(cell)):
            if "stored run" not in sentence.lower():
                continue
            for value in _DECIMAL.findall(sentence):
                if not re.search(r"(?<![\d.])" + re.escape(value) + r"(?!\d)", printed):
                    stale.append((value, sentence[:120]))
    assert not stale, stale

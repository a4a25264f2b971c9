"""memory_peaks and format_memory_peaks on a hand-written result: plain fit's runs at b rows are
keyed by N = B // b, the others by accum_steps; runs without the measure are left out."""
from gradlab.studies.bench.memory_report import format_memory_peaks, memory_peaks


def _row(contender, batch, accum_steps, overlap, train_mb, step_mb):
    return {"contender": contender, "batch": batch, "accum_steps": accum_steps, "overlap": overlap,
            "train_mb": train_mb, "step_mb": step_mb}


RESULT = {"config": {"batch": 512},
          "rows": [_row("plain", 512, 1, 1, 333.3, 328.1), _row("plain", 64, 1, 1, 42.3, 41.2),
                   _row("accumulating", 512, 8, 1, 39.5, 39.6), _row("accumulating", 512, 8, 2, 77.2, 68.3),
                   _row("keras", 64, 8, 1, 42.5, None),  # a run that measured no update peak
                   _row("input", 512, 1, 1, 5.0, None)]}


def test_memory_peaks_keys_plain_fit_by_the_n_its_batch_stands_for():
    assert memory_peaks(RESULT) == {("plain", 1, 1): 333.3, ("plain", 8, 1): 42.3, ("accumulating", 8, 1): 39.5,
                                    ("accumulating", 8, 2): 77.2, ("keras", 8, 1): 42.5, ("input", 1, 1): 5.0}


def test_memory_peaks_leaves_out_runs_without_the_measure():
    update = memory_peaks(RESULT, "step_mb")
    assert ("keras", 8, 1) not in update and ("input", 1, 1) not in update
    assert update[("plain", 8, 1)] == 41.2 and update[("accumulating", 8, 2)] == 68.3


def test_format_memory_peaks_prints_epoch_and_update_per_n_with_a_dash_where_none_ran():
    lines = format_memory_peaks(RESULT).splitlines()
    assert len(lines) == 1 + 2 * 2  # header, then N = 1 and N = 8, each epoch and update
    n8_epoch, n8_update = lines[3].split(), lines[4].split()
    assert n8_epoch[-4:] == ["42.3", "39.5", "77.2", "42.5"]
    assert n8_update[-4:] == ["41.2", "39.6", "68.3", "-"]
    assert lines[1].split()[-4:] == ["333.3", "-", "-", "-"]

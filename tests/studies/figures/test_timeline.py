"""The compute/communication timeline: its totals and bars worked out by hand."""
import pytest

from gradlab.studies.figures.timeline import (plot_micro_batches, plot_overlap, plot_three_ways, plot_timeline,
                                              schedule)

# Three layers, forward order 0, 1, 2: backward runs 2 (0-3 ms), 1 (3-5), 0 (5-6).
C, M = [1.0, 2.0, 3.0], [2.0, 2.0, 2.0]


def test_without_overlap_the_all_reduces_follow_the_backward_pass():
    s = schedule(C, M, overlap=False)
    assert s["compute"] == [(2, 0.0, 3.0), (1, 3.0, 5.0), (0, 5.0, 6.0)]
    assert s["comm"] == [((2,), 6.0, 8.0), ((1,), 8.0, 10.0), ((0,), 10.0, 12.0)]
    assert s["total"] == 1 + 2 + 3 + 2 + 2 + 2 == 12


def test_with_overlap_each_bucket_waits_for_its_gradient_and_the_link():
    # layer 2 ready at 3: 3-5; layer 1 ready at 5, link free at 5: 5-7; layer 0 ready at 6,
    # link free at 7: 7-9 (the link, not the compute, is the critical path here)
    s = schedule(C, M, overlap=True)
    assert s["comm"] == [((2,), 3.0, 5.0), ((1,), 5.0, 7.0), ((0,), 7.0, 9.0)]
    assert s["total"] == 9
    # buckets of two layers: (2, 1) ready at 5: 5-9; (0,) ready at 6, link free at 9: 9-11
    assert schedule(C, M, bucket_layers=2)["comm"] == [((2, 1), 5.0, 9.0), ((0,), 9.0, 11.0)]
    assert schedule(C, M, bucket_layers=3)["total"] == 12  # one bucket: no overlap at all


def test_when_compute_dominates_overlap_hides_all_but_the_last_all_reduce():
    c, m = [4.0, 4.0, 4.0], [1.0, 1.0, 1.5]
    assert schedule(c, m, overlap=False)["total"] == 12 + 3.5
    assert schedule(c, m, overlap=True)["total"] == 12 + 1.0  # only layer 0's, sent last
    assert schedule([5.0], [2.0], overlap=True)["total"] == schedule([5.0], [2.0], overlap=False)["total"] == 7


def test_every_bucket_pays_the_latency_once():
    # alpha = 1 ms per bucket. Buckets of one layer, overlapped: layer 2 ready at 3: 3-6;
    # layer 1 ready at 5, link free at 6: 6-9; layer 0: 9-12. Buckets of two: (2, 1) ready at
    # 5: 5-10 (1 + 2 + 2); (0,) at 10: 10-13. One bucket of all three: 6 + 1 + 6 = 13.
    s = schedule(C, M, latency_ms=1.0)
    assert s["comm"] == [((2,), 3.0, 6.0), ((1,), 6.0, 9.0), ((0,), 9.0, 12.0)] and s["total"] == 12
    assert schedule(C, M, bucket_layers=2, latency_ms=1.0)["comm"] == [((2, 1), 5.0, 10.0), ((0,), 10.0, 13.0)]
    assert schedule(C, M, bucket_layers=3, latency_ms=1.0)["total"] == 13
    assert schedule(C, M, overlap=False, latency_ms=1.0)["total"] == 6 + 3 * (1 + 2)
    # many tiny layers: alpha dominates, and one bucket beats one per layer even without overlap
    c, m = [1.0] * 8, [0.1] * 8
    assert schedule(c, m, latency_ms=2.0)["total"] == pytest.approx(1.0 + 8 * 2.1)  # link-bound from layer 7 on
    assert schedule(c, m, bucket_layers=8, latency_ms=2.0)["total"] == pytest.approx(8 + 2 + 0.8)


@pytest.mark.parametrize("overlap, total", [(False, 12.0), (True, 9.0)])
def test_the_figure_draws_both_rows_and_returns_the_total(overlap, total):
    fig, got = plot_timeline(C, M, overlap=overlap)
    assert got == total
    ax = fig.axes[0]
    bars = [_bar(coll) for coll in ax.collections]  # (start, width, bottom) of each bar
    compute = sorted((x, w) for x, w, y in bars if y > 1)
    comm = sorted((x, w) for x, w, y in bars if y < 1)
    assert compute == [(0.0, 3.0), (3.0, 2.0), (5.0, 1.0)]
    start = 3.0 if overlap else 6.0  # then every 2 ms, one after the other on the link
    assert comm == [(start, 2.0), (start + 2, 2.0), (start + 4, 2.0)]
    assert f"{total:.3g} ms of backward + all-reduce" in ax.get_title()  # no forward pass
    assert [t.get_text() for t in ax.get_yticklabels()] == ["all-reduce", "backward"]


def test_both_schedules_on_one_figure():
    from matplotlib.figure import Figure
    fig = Figure()
    top, bottom = fig.subplots(2, 1, sharex=True)
    (f1, t1), (f2, t2) = plot_timeline(C, M, overlap=False, ax=top), plot_timeline(C, M, ax=bottom)
    assert f1 is f2 is fig and (t1, t2) == (12.0, 9.0)
    assert [len(ax.collections) for ax in (top, bottom)] == [6, 6]
    assert top.get_xlim() == bottom.get_xlim() == (0.0, 12.0 * 1.05)  # the longer schedule's reach


def test_plot_overlap_draws_both_schedules_on_one_axis():
    fig, totals = plot_overlap(C, M)
    assert totals == (12.0, 9.0)
    top, bottom = fig.axes
    assert top.get_title().startswith("without overlap: 12 ms") and bottom.get_title().startswith("with overlap: 9 ms")
    assert top.get_xlim() == bottom.get_xlim() == (0.0, 12.0 * 1.05) and bottom.get_xlabel() == "ms"
    assert plot_overlap(C, M, bucket_layers=3, latency_ms=1.0)[1] == (6 + 1 + 6, 13.0)


def _bar(coll):
    """(start, width, bottom) of a broken_barh's one bar, from its path's corners."""
    v = coll.get_paths()[0].vertices
    return float(v[:, 0].min()), float(v[:, 0].max() - v[:, 0].min()), float(v[:, 1].min())


@pytest.mark.parametrize("c, m, kwargs, error, words", [
    ([1.0], [1.0, 2.0], {}, ValueError, "1 compute, 2 comm"),
    ([], [], {}, ValueError, "at least one"),
    ([1.0, -1.0], [1.0, 1.0], {}, ValueError, "layer_compute_ms must be one finite time >= 0"),
    (["a"], [1.0], {}, TypeError, "layer_compute_ms must be a sequence of numbers"),
    ([1.0], [1.0], {"bucket_layers": 0}, ValueError, "bucket_layers must be an integer >= 1, got 0"),
    ([1.0], [1.0], {"latency_ms": -1.0}, ValueError, "latency_ms must be one finite time >= 0"),
])
def test_bad_input_is_refused_naming_it(c, m, kwargs, error, words):
    with pytest.raises(error) as e:
        schedule(c, m, **kwargs)
    assert words in str(e.value)


def test_micro_batches_follow_one_another_and_a_deferred_one_sends_nothing():
    # forward 1 ms, then C, M overlapped: backward 2 (0-3), 1 (3-5), 0 (5-6); all-reduces 3-5, 5-7, 7-9,
    # so a micro-batch that sends takes 1 + 9 = 10 ms and one that defers 1 + 6 = 7
    from matplotlib.figure import Figure
    each_waits, deferred = Figure().subplots(), Figure().subplots()
    assert plot_micro_batches(1.0, C, M, each_waits, sends=(True, True)) == 20.0
    assert plot_micro_batches(1.0, C, M, deferred, sends=(False, True)) == 17.0
    assert len(each_waits.collections) == 2 * (1 + 3 + 3) and len(deferred.collections) == (1 + 3) + (1 + 3 + 3)
    second_forward = deferred.collections[4].get_paths()[0].vertices[:, 0]
    assert (second_forward.min(), second_forward.max()) == (7.0, 8.0)  # starts when the deferring one ends




def test_three_ways_end_where_worked_out_by_hand():
    # a micro-batch that sends takes 1 + 9 = 10 ms, one that defers 1 + 6 = 7 (the test above). Blocking, two
    # micro-batches: 20. Deferred: 7 + 10 = 17. Not blocking: forward 0-1, backward 1-4, 4-6, 6-7, forward 7-8,
    # backward 8-11, 11-13, 13-14; all-reduces 4-6, 6-8, 8-10, then 11-13, 13-15, 15-17: 17, as deferred
    fig, ends = plot_three_ways(1.0, C, M, micro_batches=2)
    assert ends == {"blocking": 20.0, "not blocking": 17.0, "deferred": 17.0}
    axes = fig.axes
    assert len(axes) == 3 and [ax.get_title() for ax in axes] == [
        "N = 2, per micro-batch, blocking (gaps of 3.0 ms): update 20.0 ms",
        "N = 2, per micro-batch, not blocking: update 17.0 ms",
        "N = 2, one, deferred to the last micro-batch: update 17.0 ms"]
    assert len(axes[1].collections) == 2 * (3 + 1) * 2  # compute blocks and forward passes, then their all-reduces
    # (a forward pass's is empty: 0 ms)

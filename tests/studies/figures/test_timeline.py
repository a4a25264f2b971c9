"""The compute/communication timeline: its totals and bars worked out by hand."""
import pytest

from gradlab.studies.figures.timeline import plot_bucket_sweep, plot_micro_batches, plot_overlap, plot_timeline, schedule

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


def test_tower_copies_are_drawn_in_microseconds_with_schedules_totals():
    from gradlab.studies.figures.timeline import plot_tower_copies
    fig, totals = plot_tower_copies(C, M)  # the hand-worked schedules above, read as µs
    assert totals == (12, 9)
    top, bottom = fig.axes
    assert top.get_title() == "without overlap: 12 µs of backward + gradient copies"
    assert bottom.get_title() == "with overlap: 9 µs of backward + gradient copies"
    assert [t.get_text() for t in bottom.get_yticklabels()] == ["gradient copy", "backward"]
    assert bottom.get_xlabel() == "µs"


def test_tower_step_halves_the_compute_and_adds_two_copies_per_other_tower():
    from gradlab.studies.figures.timeline import plot_tower_step
    # by hand: one device 100 ms; 2 towers 100/2 + 2 x 1 x 6.25 = 62.5; 8 towers 12.5 + 14 x 6.25 = 100
    fig, totals = plot_tower_step(100.0, 6.25)
    assert totals == (100.0, 62.5)
    top, bottom = fig.axes
    assert top.get_title() == "one device: 100 ms"
    assert bottom.get_title() == "2 towers: 50 + 2 x 1 x 6.25 = 62.5 ms"
    assert [t.get_text() for t in bottom.texts] == ["2 towers at once"]
    assert [t.get_text() for t in bottom.get_legend().get_texts()] == ["gradients in (1 x 6.25 ms)",
                                                                       "weights out (1 x 6.25 ms)"]
    assert plot_tower_step(100.0, 6.25, towers=8)[1] == (100.0, 100.0)
    with pytest.raises(ValueError, match="towers must be an integer >= 2, got 1"):
        plot_tower_step(100.0, 6.25, towers=1)


def test_the_bucket_sweep_marks_the_least_total_and_labels_both_ends():
    # 4 tensors, buckets of 1, 2, 4 tensors: 4, 2 and 1 bucket(s); totals as given, least 3.0 at 2
    fig, (k, total) = plot_bucket_sweep([1, 2, 4], [5.0, 3.0, 4.0], tensors=4)
    assert (k, total) == (2, 3.0)
    ax = fig.axes[0]
    assert ax.lines[0].get_xdata().tolist() == [1, 2, 4] and ax.lines[0].get_ydata().tolist() == [5.0, 3.0, 4.0]
    assert ax.lines[1].get_xdata().tolist() == [2] and ax.lines[1].get_ydata().tolist() == [3.0]
    assert [t.get_text() for t in ax.texts] == ["4 buckets: 5.0 ms", "1 bucket: 4.0 ms"]
    assert plot_bucket_sweep([1, 2, 3], [2.0, 1.0, 1.0], tensors=3)[1] == (2, 1.0)  # a tie: the first
    with pytest.raises(ValueError):
        plot_bucket_sweep([2, 1], [1.0, 2.0], tensors=2)  # not increasing


def test_the_bucket_sweeps_labels_stay_inside_the_frame_clear_of_the_legend_and_points():
    # lesson 14's sweep: the one-bucket end is the highest total, at the top right corner
    fig, _ = plot_bucket_sweep([1, 5, 7, 8, 10, 25, 50, 200],
                               [90.33, 75.66, 75.22, 75.15, 75.31, 79.08, 86.97, 136.36], tensors=200)
    ax = fig.axes[0]
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # lay the figure out (constrained layout), then measure in pixels
    renderer = canvas.get_renderer()
    frame, legend = ax.get_window_extent(renderer), ax.get_legend().get_window_extent(renderer)
    points = ax.transData.transform(list(zip(ax.lines[0].get_xdata(), ax.lines[0].get_ydata())))
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, text
        assert not box.overlaps(legend), text.get_text()
        assert not any(box.contains(x, y) for x, y in points), text.get_text()


def test_tower_layouts_match_the_four_closed_forms_worked_by_hand():
    from gradlab.studies.figures.timeline import TOWER_LAYOUTS, tower_layouts
    # C = 100 ms, m = 6.25 ms, R = 8: compute 12.5 (forward 12.5 / 3, backward 25 / 3); GPU 0's 7 + 7
    # copies 87.5; the ring 2 x 7/8 x 6.25 = 10.9375
    s = tower_layouts(100.0, 6.25, 8)
    assert list(s) == list(TOWER_LAYOUTS)
    assert [s[k]["total"] for k in TOWER_LAYOUTS] == pytest.approx([12.5 + 87.5, 50.0 + 43.75, 12.5 + 10.9375, 17.1875])
    after = s["GPU 0, copies after"]["link"]
    assert after[0] == ("gradient in", 12.5, 18.75) and after[6] == ("gradient in", 50.0, 56.25)
    assert after[7] == ("weights out", 56.25, 62.5) and after[-1] == ("weights out", 93.75, 100.0)
    # overlapped, 4 buckets: bucket j is ready at 12.5 / 3 + (j + 1) x 25 / 12 = 6.25, 8.33, 10.42, 12.5.
    # GPU 0's 43.75 ms of gradients in (10.9375 a bucket) outlast the backward: 6.25 + 43.75 = 50, then
    # the weights 50 -> 93.75
    over = s["GPU 0, overlapped"]["link"]
    assert [(w, pytest.approx(a), pytest.approx(b)) for w, a, b in over[:4]] == [
        ("gradient in", 6.25, 17.1875), ("gradient in", 17.1875, 28.125), ("gradient in", 28.125, 39.0625),
        ("gradient in", 39.0625, 50.0)]
    assert over[4][0] == "weights out" and over[4][1:] == pytest.approx((50.0, 56.25)) and len(over) == 11
    assert s["ring, copies after"]["link"] == [("all-reduce", 12.5, 23.4375)]
    # the ring's 2.734375 ms buckets: the link, not the backward, sets the pace after the first
    ring = s["ring, overlapped"]["link"]
    assert [b for _, _, b in ring] == pytest.approx([8.984375, 11.71875, 14.453125, 17.1875])
    assert [a for _, a, _ in ring][:2] == pytest.approx([6.25, 8.984375])
    assert all(v["compute"] == [("forward", 0.0, 12.5 / 3), ("backward", 12.5 / 3, 12.5)] for v in s.values())
    # a fast link: each ring bucket leaves as it is ready, the total is the compute plus the last bucket
    fast = tower_layouts(100.0, 1.0, 8)["ring, overlapped"]
    assert fast["total"] == pytest.approx(12.5 + 1.75 / 4) and fast["link"][0][1] == pytest.approx(6.25)
    # two towers: compute 50 (forward 50 / 3); the last bucket is ready at 50, so overlapped GPU 0 takes
    # 50 + 6.25 / 4 + 6.25 and the ring 50 + 6.25 / 4
    two = tower_layouts(100.0, 6.25, 2)
    assert [two[k]["total"] for k in TOWER_LAYOUTS] == pytest.approx([62.5, 57.8125, 56.25, 51.5625])
    # one bucket: nothing overlaps; the link starts when the compute ends, as "copies after"
    one = tower_layouts(100.0, 6.25, 8, buckets=1)
    assert one["ring, overlapped"]["total"] == pytest.approx(one["ring, copies after"]["total"])
    assert one["GPU 0, overlapped"]["total"] == pytest.approx(one["GPU 0, copies after"]["total"])
    with pytest.raises(ValueError, match="towers must be an integer >= 2, got 1"):
        tower_layouts(100.0, 6.25, 1)
    with pytest.raises(ValueError, match="buckets must be an integer >= 1, got 0"):
        tower_layouts(100.0, 6.25, 8, buckets=0)


def test_the_tower_layouts_figure_has_a_column_per_link_and_the_totals():
    from gradlab.studies.figures.timeline import plot_tower_layouts
    fig, totals = plot_tower_layouts(100.0, {"slow": 6.25, "fast": 1.0}, towers=8)
    assert totals["slow"] == pytest.approx({"GPU 0, copies after": 100.0, "GPU 0, overlapped": 93.75,
                                            "ring, copies after": 23.4375, "ring, overlapped": 17.1875})
    assert totals["fast"]["GPU 0, copies after"] == 12.5 + 14.0
    assert totals["fast"]["ring, overlapped"] == pytest.approx(12.5 + 1.75 / 4)  # the compute, then the last bucket
    assert len(fig.axes) == 8
    assert fig.axes[0].get_title() == "slow\nGPU 0, copies after: 100 ms"
    assert fig.axes[1].get_title() == "fast\nGPU 0, copies after: 26.5 ms"
    assert fig.axes[7].get_title() == "ring, overlapped: 12.9 ms"
    assert fig.axes[0].get_xlim() == pytest.approx((0.0, 103.0))  # each column its own axis
    assert fig.axes[1].get_xlim() == pytest.approx((0.0, 26.5 * 1.03))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["GPU 0's link", "compute"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["forward", "backward", "gradient in",
                                                                  "weights out", "all-reduce"]
    with pytest.raises(ValueError, match="links must name at least one link"):
        plot_tower_layouts(100.0, {})


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


def test_the_bucket_sweep_labels_ticks_far_enough_apart_not_to_overlap():
    # lesson 14's sweep: 8, 10, 11 and 12 sit 0.04 to 0.18 decades apart; only 10, the least total's, is labelled
    sweep = [1, 5, 8, 10, 11, 12, 25, 50, 200]
    fig, _ = plot_bucket_sweep(sweep, [110.33, 79.66, 77.65, 77.31, 77.44, 77.38, 79.88, 87.37, 136.46], tensors=200)
    ax = fig.axes[0]
    assert ax.get_xticks().tolist() == sweep  # a tick at every size swept
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "5", "", "10", "", "", "25", "50", "200"]
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
    assert not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:]))
    from gradlab.studies.figures.timeline import _spaced_labels
    assert _spaced_labels([1, 10, 11]) == {1, 11}  # the last is labelled, its close neighbour is not
    assert _spaced_labels([1, 9, 10, 12, 100], keep=(12,)) == {1, 12, 100}  # kept first; 9 and 10 too close to 12
    assert _spaced_labels([1, 2, 4, 8], min_decades=0.3) == {1, 2, 4, 8}  # log10(2) = 0.301 apart: all fit
    x_pixels = ax.transData.transform([(v, 100.0) for v in sweep])[:, 0]  # labelled ticks at least 15 px apart
    shown = [x for x, t in zip(x_pixels, ax.get_xticklabels()) if t.get_text()]
    assert min(b - a for a, b in zip(shown, shown[1:])) > 15

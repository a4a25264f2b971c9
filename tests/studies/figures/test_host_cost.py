"""The host-cost figures: the round trip and the host timeline worked out by hand, and what they refuse."""
import pytest


def test_host_schedule_one_after_another_and_overlapped_by_hand():
    from gradlab.studies.figures.host_cost import host_schedule

    # N = 2 micro-batches, d = 1 (device), c = 2 (bus, each way), s = 3 (host's sum), ms
    serial = host_schedule(1.0, 2.0, 3.0, 2, overlap=False)
    assert serial["device"] == [("compute", 0.0, 1.0), ("compute", 6.0, 7.0)]
    assert serial["bus"] == [("copy out", 1.0, 3.0), ("copy out", 7.0, 9.0), ("copy back", 12.0, 14.0)]
    assert serial["host"] == [("sum", 3.0, 6.0), ("sum", 9.0, 12.0)]
    assert serial["total"] == 2 * (1 + 2 + 3) + 2 == 14
    # overlapped: micro-batch 1 computes at 1-2, waits for the bus until 3 (3-5), for the host
    # until 6 (6-9); the copy back follows the last sum, 9-11
    lapped = host_schedule(1.0, 2.0, 3.0, 2)
    assert lapped["device"] == [("compute", 0.0, 1.0), ("compute", 1.0, 2.0)]
    assert lapped["bus"] == [("copy out", 1.0, 3.0), ("copy out", 3.0, 5.0), ("copy back", 9.0, 11.0)]
    assert lapped["host"] == [("sum", 3.0, 6.0), ("sum", 6.0, 9.0)]
    assert lapped["total"] == 1 + 2 + 2 * 3 + 2 == 11  # the host's sums back to back set the pace
    # when the copies are the slowest stream: d + N c + s + c = 1 + 8 + 1 + 4
    assert host_schedule(1.0, 4.0, 1.0, 2)["total"] == 14
    assert host_schedule(1.0, 4.0, 1.0, 2, overlap=False)["total"] == 2 * 6 + 4


def test_host_schedule_buffers_bound_what_waits_by_hand():
    from gradlab.studies.figures.host_cost import host_schedule

    # N = 3, d = 1, c = 2, s = 3 (ms). No limit: the device runs ahead, all three wait at once
    free = host_schedule(1.0, 2.0, 3.0, 3)
    assert free["device"] == [("compute", 0.0, 1.0), ("compute", 1.0, 2.0), ("compute", 2.0, 3.0)]
    assert free["host"] == [("sum", 3.0, 6.0), ("sum", 6.0, 9.0), ("sum", 9.0, 12.0)]
    # held: device [0, 3], [1, 5], [2, 7] (compute start to copy end): 3 at t = 2; host [1, 6], [3, 9], [5, 12]: 3
    assert free["total"] == 14.0 and free["held"] == {"device": 3, "host": 3}
    # two buffers a side: micro-batch 2 computes once copy 0 has ended (3), is copied once sum 0 has ended (6)
    two = host_schedule(1.0, 2.0, 3.0, 3, buffers=2)
    assert two["device"] == [("compute", 0.0, 1.0), ("compute", 1.0, 2.0), ("compute", 3.0, 4.0)]
    assert two["bus"] == [("copy out", 1.0, 3.0), ("copy out", 3.0, 5.0), ("copy out", 6.0, 8.0),
                          ("copy back", 12.0, 14.0)]
    assert two["total"] == 14.0 and two["held"] == {"device": 2, "host": 2}  # the same time, fewer held
    # one buffer: copy and sum alternate; device [0, 3], [3, 8], [8, 13]; host [1, 6], [6, 11], [11, 16]
    one = host_schedule(1.0, 2.0, 3.0, 3, buffers=1)
    assert one["bus"] == [("copy out", 1.0, 3.0), ("copy out", 6.0, 8.0), ("copy out", 11.0, 13.0),
                          ("copy back", 16.0, 18.0)]
    assert one["total"] == 18.0 and one["held"] == {"device": 1, "host": 1}
    # one after another holds one a side
    assert host_schedule(1.0, 2.0, 3.0, 3, overlap=False)["held"] == {"device": 1, "host": 1}
    # one buffer on the device, two on the host: compute waits for the copy out of i - 1, the copy out
    # for the sum of i - 2. Device [0, 1], [3, 4], [6, 7]; bus [1, 3], [4, 6], [7, 9] (copy 2 waits for
    # compute 2, not sum 0, which ended at 6); host [3, 6], [6, 9], [9, 12]; back [12, 14]
    mixed = host_schedule(1.0, 2.0, 3.0, 3, buffers=(1, 2))
    assert mixed["device"] == [("compute", 0.0, 1.0), ("compute", 3.0, 4.0), ("compute", 6.0, 7.0)]
    assert mixed["bus"] == [("copy out", 1.0, 3.0), ("copy out", 4.0, 6.0), ("copy out", 7.0, 9.0),
                            ("copy back", 12.0, 14.0)]
    assert mixed["host"] == [("sum", 3.0, 6.0), ("sum", 6.0, 9.0), ("sum", 9.0, 12.0)]
    # held: device [0, 3], [3, 6], [6, 9]: 1 (one ends as the next starts); host [1, 6], [4, 9], [7, 12]: 2
    assert mixed["total"] == 14.0 and mixed["held"] == {"device": 1, "host": 2}
    assert host_schedule(1.0, 2.0, 3.0, 3, buffers=(2, 2)) == two  # a pair of equal k is k a side
    for bad in (0, (1, 0), (1, 2, 3), (1, True)):
        with pytest.raises(ValueError, match="buffers"):
            host_schedule(1.0, 2.0, 3.0, 3, buffers=bad)


def test_host_timeline_draws_both_schedules_and_refuses_bad_input():
    from gradlab.studies.figures.host_cost import host_schedule, plot_host_timeline

    fig, totals = plot_host_timeline(1.0, 2.0, 3.0, 2)
    assert totals == (14.0, 11.0)
    top, bottom = fig.axes
    assert [top.get_title(), bottom.get_title()] == [
        "one after another: 14.0 ms, the device busy 2.0 ms\nat most 1 gradient on the device, 1 gradient + the running total on the host",
        "overlapped, no limit: 11.0 ms, the device busy 2.0 ms\nat most 2 gradients on the device, 2 gradients + the running total on the host"]
    # rows bottom-up: host (2 sums), bus (2 copies out, 1 back), device (2 computes)
    spans = [tuple(c.get_paths()[0].get_extents().intervalx) for c in bottom.collections]  # (start, end)
    assert spans == [(3.0, 6.0), (6.0, 9.0), (1.0, 3.0), (3.0, 5.0), (9.0, 11.0), (0.0, 1.0), (1.0, 2.0)]
    assert [c.get_hatch() for c in bottom.collections][:2] == ["//", "//"]  # the sums: measured here
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "device's work, 2 x 1.00 ms", "copy out, 2 x 2.00 ms", "host's sum, 2 x 3.00 ms (measured here)",
        "copy back, 2.00 ms"]
    fig3, totals3 = plot_host_timeline(1.0, 2.0, 3.0, 3, buffers=(None, 1))
    assert totals3 == (20.0, 14.0, 18.0) and len(fig3.axes) == 3
    assert fig3.axes[2].get_title() == ("overlapped, 1 buffer a side: 18.0 ms, the device busy 3.0 ms\nat most 1 gradient on the device, "
                                        "1 gradient + the running total on the host")
    fig4, totals4 = plot_host_timeline(1.0, 2.0, 3.0, 3, buffers=((1, 2),))
    assert totals4 == (20.0, 14.0)
    assert fig4.axes[1].get_title() == ("overlapped, 1 buffer on the device, 2 on the host: 14.0 ms, "
                                        "the device busy 3.0 ms\nat most 1 gradient on the device, 2 gradients + the running total on the host")
    # a stage far shorter than the update is drawn min_width of the longest total wide (0.01 x 17.003
    # ms), from its true start: the device's 0.001 ms computes at 0, 5.001, 10.002 (one after another)
    fig_thin, totals_thin = plot_host_timeline(0.001, 2.0, 3.0, 3, min_width=0.01)
    thin = [tuple(c.get_paths()[0].get_extents().intervalx) for c in fig_thin.axes[0].collections][-3:]
    assert [round(a, 6) for a, _ in thin] == [0.0, 5.001, 10.002]
    assert all(abs((b - a) - 0.01 * max(totals_thin)) < 1e-9 for a, b in thin)
    true = plot_host_timeline(0.001, 2.0, 3.0, 3, min_width=0)[0]
    assert [round(b - a, 6) for a, b in (tuple(c.get_paths()[0].get_extents().intervalx)
                                         for c in true.axes[0].collections[-3:])] == [0.001] * 3
    with pytest.raises(ValueError, match="integer"):
        host_schedule(1.0, 2.0, 3.0, 0)
    with pytest.raises(ValueError, match="finite"):
        host_schedule(1.0, -2.0, 3.0, 2)
    with pytest.raises(ValueError, match="measured"):
        plot_host_timeline(1.0, 2.0, 3.0, 2, measured=["bus"])


def test_host_timeline_compares_hosts_one_panel_each():
    from gradlab.studies.figures.host_cost import host_schedule, plot_host_timeline

    # two hosts, two buffers a side, no one-after-another panel: one panel a host, each on its own axis
    fig, totals = plot_host_timeline(1.0, 2.0, {"slow": 3.0, "fast": 2.0}, 3, measured=(), buffers=(2,),
                                     serial=False)
    assert totals == tuple(host_schedule(1.0, 2.0, s, 3, True, 2)["total"] for s in (3.0, 2.0))
    assert [ax.get_title().split(":")[0] for ax in fig.axes] == [
        "slow, overlapped, 2 buffers a side", "fast, overlapped, 2 buffers a side"]
    assert [ax.get_xlim()[1] for ax in fig.axes] == [t * 1.03 for t in totals]  # its own ms axis
    assert "host's sum, 3 x 3.00 or 2.00 ms" in [t.get_text() for t in fig.legends[0].get_texts()]
    assert len(plot_host_timeline(1.0, 2.0, {"a": 3.0, "b": 2.0}, 3, buffers=(1,))[1]) == 4  # 2 a host
    with pytest.raises(ValueError, match="nothing to draw"):
        plot_host_timeline(1.0, 2.0, 3.0, 2, buffers=(), serial=False)


def test_host_timeline_marks_the_card_in_every_panel():
    from gradlab.studies.figures.host_cost import plot_host_timeline

    # card_ms: a dotted line at the device's own time in each panel, named in the legend, inside every axis
    fig, totals = plot_host_timeline(1.0, 2.0, 3.0, 2, buffers=(None, 1), card_ms=4.0)
    assert totals == (14.0, 11.0, 13.0)
    for ax in fig.axes:
        xs = sorted(line.get_xdata()[0] for line in ax.get_lines())
        assert len(xs) == 2 and xs[0] == 4.0 and xs[1] in totals  # the card's line and the panel's total
        assert [line.get_linestyle() for line in ax.get_lines() if line.get_xdata()[0] == 4.0] == [":"]
    assert [t.get_text() for t in fig.legends[0].get_texts()][-1] == "accumulating on the device instead: 4 ms"
    # a card slower than every host schedule widens the axis to show it
    far = plot_host_timeline(1.0, 2.0, 3.0, 2, card_ms=20.0)[0]
    assert far.axes[0].get_xlim()[1] == 20.0 * 1.03
    # without card_ms: one line a panel (its total), four legend entries, as before
    plain = plot_host_timeline(1.0, 2.0, 3.0, 2)[0]
    assert [len(ax.get_lines()) for ax in plain.axes] == [1, 1] and len(plain.legends[0].get_texts()) == 4
    with pytest.raises(ValueError, match="card_ms"):
        plot_host_timeline(1.0, 2.0, 3.0, 2, card_ms=float("nan"))


def test_host_timeline_names_the_dashed_total_when_asked():
    from gradlab.studies.figures.host_cost import plot_host_timeline

    fig, totals = plot_host_timeline(1.0, 2.0, 3.0, 2, card_ms=4.0, total_in_legend=True)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[-2:] == ["the update's end, in each panel", "accumulating on the device instead: 4 ms"]
    assert len(labels) == 6
    dashed = [line for line in fig.legends[0].get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == 1 and dashed[0].get_color() == "black"
    # each panel's dashed line sits at its total
    assert [[line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() == "--"] for ax in fig.axes] == [
        [t] for t in totals]


def test_host_timeline_rounds_its_times_to_digits():
    from gradlab.studies.figures.host_cost import plot_host_timeline

    # lesson 20's stages at 3 significant digits: the titles and legend print what the prose states
    tau_d, tau_c, tau_h = 6e12 * 4096 / (0.4 * 756e12), 4e12 / 25e9, 12e12 / 20.9e9  # ms: 1B parameters
    fig, totals = plot_host_timeline(tau_d, tau_c, tau_h, 10, measured=(), buffers=(2,), digits=3)
    assert [round(t, 1) for t in totals] == [8314.3, 6142.9]
    assert [ax.get_title().split("\n")[0] for ax in fig.axes] == [
        "one after another: 8,314 ms, the device busy 813 ms",
        "overlapped, 2 buffers a side: 6,143 ms, the device busy 813 ms"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "device's work, 10 x 81.3 ms", "copy out, 10 x 160 ms", "host's sum, 10 x 574 ms", "copy back, 160 ms"]
    # small times keep their significant digits; the default keeps one decimal in titles, two in the legend
    assert plot_host_timeline(0.01234, 2.0, 3.0, 2, digits=2)[0].legends[0].get_texts()[0].get_text() == (
        "device's work, 2 x 0.012 ms")
    assert plot_host_timeline(tau_d, tau_c, tau_h, 10)[0].axes[0].get_title().startswith(
        "one after another: 8,314.3 ms, the device busy 812.7 ms")
    for bad in (0, 2.5, "3"):
        with pytest.raises(ValueError, match="digits"):
            plot_host_timeline(1.0, 2.0, 3.0, 2, digits=bad)


def test_host_timeline_gives_every_block_a_white_edge():
    from matplotlib.colors import to_rgba

    from gradlab.studies.figures.host_cost import plot_host_timeline

    # lesson 20's middle panel: the first two compute blocks run back to back; a white edge keeps them apart
    fig, _ = plot_host_timeline(1.0, 2.0, 3.0, 3, measured=(), buffers=(2,))
    bars = [c for ax in fig.axes for c in ax.collections]
    assert len(bars) == 2 * (3 + 3 + 3 + 1)  # two panels: 3 computes, 3 copies, 3 sums, 1 copy back
    for c in bars:
        assert tuple(c.get_edgecolor()[0]) == to_rgba("white") and c.get_linewidth()[0] == 0.5


def test_host_timeline_bars_are_the_times_passed_in_lesson_03s_update():
    from gradlab.studies.figures.host_cost import plot_host_timeline

    # lesson 03's update: ten micro-batches of 8.13 ms compute, 8.0 ms copy out, 76.5 ms host add, then one
    # 8.0 ms copy back. One after another, by hand: 10 (8.13 + 8.0 + 76.5) + 8.0 = 934.3 ms
    d, c, s, n = 8.13, 8.0, 76.5, 10
    fig, totals = plot_host_timeline(d, c, s, n, card_ms=81.3, digits=3)
    assert abs(totals[0] - 934.3) < 1e-9
    serial = fig.axes[0]
    widths = [[round(b - a, 9) for a, b in (tuple(p.get_extents().intervalx) for p in coll.get_paths())]
              for coll in serial.collections]  # one collection a bar: host's, then bus's, then device's
    flat = [w for ws in widths for w in ws]
    assert flat == [s] * n + [c] * n + [c] + [d] * n  # every bar as long as the time passed in
    # the bars end to end: the serial panel's last bar (the copy back) ends at the total
    ends = [tuple(p.get_extents().intervalx)[1] for coll in serial.collections for p in coll.get_paths()]
    assert abs(max(ends) - totals[0]) < 1e-9
    # the card's line at 81.3 ms, dotted
    assert [round(line.get_xdata()[0], 9) for line in serial.lines if line.get_linestyle() == ":"] == [81.3]

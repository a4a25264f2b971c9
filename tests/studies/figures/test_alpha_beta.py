"""The alpha-beta line of measured all-reduce times: alpha and beta worked out by hand."""
import numpy as np
import pytest

from gradlab.studies.figures.alpha_beta import alpha_beta_of_line, plot_alpha_beta

GIB = 2 ** 30


def test_two_replicas_take_two_latencies_and_send_the_whole_message():
    # R = 2: t = 2 alpha + M / beta. a = 0.98 ms -> alpha 490 µs; b = 1 ms per 2.5 GiB -> 2.5 GiB per ms
    alpha_us, beta = alpha_beta_of_line(0.98, 1 / (2.5 * GIB), 2)
    assert alpha_us == pytest.approx(490.0)
    assert beta == pytest.approx(2500.0)  # GiB/s


def test_four_replicas_take_six_latencies_and_send_one_and_a_half_messages():
    # R = 4: t = 6 alpha + 1.5 M / beta. a = 3 ms -> alpha 500 µs; b = 1.5 ms per GiB -> beta 1 GiB per ms
    alpha_us, beta = alpha_beta_of_line(3.0, 1.5 / GIB, 4)
    assert alpha_us == pytest.approx(500.0)
    assert beta == pytest.approx(1000.0)


def test_the_figure_draws_the_times_and_the_line_through_them():
    sizes, times = [2 ** 16, 2 ** 19, 2 ** 21, 2 ** 23], [1.0, 1.2, 1.8, 3.9]
    slope, intercept = np.polyfit(sizes, times, 1)
    fig, (alpha_us, beta) = plot_alpha_beta(sizes, times, intercept, slope, 2)
    points, line = fig.axes[0].lines[:2]
    assert points.get_xdata().tolist() == [0.0625, 0.5, 2, 8]  # MiB
    assert points.get_ydata().tolist() == times
    assert fig.axes[0].get_xscale() == "linear" and fig.axes[0].get_yscale() == "linear"
    x, y = line.get_xdata() * 2 ** 20, line.get_ydata()  # back to bytes
    assert x[0] == 0 and x[-1] == pytest.approx(2 ** 23)  # from M = 0: the intercept shows on the time axis
    assert y[0] == pytest.approx(intercept) and y[-1] == pytest.approx(intercept + slope * 2 ** 23)
    assert alpha_us == pytest.approx(1000 * intercept / 2) and beta == pytest.approx(1000 / slope / GIB)
    assert fig.axes[0].get_title() == rf"$R$ = 2: $\alpha$ = {alpha_us:.0f} µs, $\beta$ = {beta:.2f} GiB/s"  # mathtext


def test_a_line_without_replicas_to_share_it_or_a_slope_is_refused():
    with pytest.raises(ValueError):
        alpha_beta_of_line(1.0, 1e-9, 1)
    with pytest.raises(ValueError):
        alpha_beta_of_line(1.0, 0.0, 2)
    with pytest.raises(ValueError):
        plot_alpha_beta([1, 2], [1.0], 1.0, 1e-9, 2)

def test_log_axes_draw_the_line_over_the_sizes_and_the_intercept_as_a_level():
    # a = 0.1 ms, b = 1 ms per MiB: at 16 KiB (1/64 MiB) t = 0.1 + 1/64 = 0.115625 ms; at 8 MiB t = 8.1 ms
    sizes, times = [2 ** 14, 2 ** 20, 2 ** 23], [0.12, 1.0, 8.0]
    fig, (alpha_us, beta) = plot_alpha_beta(sizes, times, 0.1, 1 / 2 ** 20, 2, log=True)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert [label.get_text() for label in ax.get_xticklabels()] == ["16 KiB", "1 MiB", "8 MiB"]
    fig.canvas.draw()
    assert ax.get_yticks().tolist() == times  # one tick at each time measured, named to two decimals
    assert [label.get_text() for label in ax.get_yticklabels()] == ["0.12", "1.00", "8.00"]
    assert not ax.get_yticklabels(minor=True)  # no unlabelled minor ticks between them
    points, line, level = ax.lines[:3]
    assert points.get_xdata().tolist() == [1 / 64, 1, 8]  # MiB
    x, y = line.get_xdata(), line.get_ydata()
    assert x[0] == pytest.approx(1 / 64) and x[-1] == pytest.approx(8)  # from the smallest size, not from 0
    assert y[0] == pytest.approx(0.115625) and y[-1] == pytest.approx(8.1)
    assert np.allclose(y, 0.1 + x)  # still the line t = a + b M, drawn as a curve
    assert list(level.get_ydata()) == [0.1, 0.1]  # the intercept, 2 (R - 1) alpha
    assert alpha_us == pytest.approx(50.0) and beta == pytest.approx(1000 / 1024)  # R = 2: a / 2; 1 MiB per ms


def test_log_axes_refuse_an_intercept_they_cannot_show():
    with pytest.raises(ValueError):
        plot_alpha_beta([2 ** 14, 2 ** 20], [0.1, 1.0], -0.01, 1 / 2 ** 20, 2, log=True)


def test_the_legend_gives_the_slope_in_the_titles_unit():
    # b = 1 ms per 2.5 GiB -> M / (2500 GiB/s); at R = 2 that is beta, as the title says (not 2560 MiB per ms)
    fig, (_, beta) = plot_alpha_beta([2 ** 16, 2 ** 23], [1.0, 1.0031], 1.0, 1 / (2.5 * GIB), 2, log=True)
    ax = fig.axes[0]
    assert beta == pytest.approx(2500.0)
    assert r"$\beta$ = 2500.00 GiB/s" in ax.get_title()
    assert [label.get_text() for label in ax.get_yticklabels()] == ["1.00"]  # 1.0 and 1.0031: one label, not two
    assert ax.get_legend().get_texts()[1].get_text() == "fitted line: 1.00 ms + M / (2500.00 GiB/s)"


def test_held_out_points_are_drawn_hollow_and_the_line_spans_them():
    # fitted 64 KiB to 8 MiB; held out 4 bytes and 6.21 MiB (6,512,680 bytes), as lesson 14 times them
    sizes, times = [2 ** 16, 2 ** 19, 2 ** 21, 2 ** 23], [0.51, 0.55, 0.76, 2.26]
    fig, _ = plot_alpha_beta(sizes, times, 0.42, 1 / (4.31 * GIB / 1000), 2, log=True,
                             held_out=([4, 6_512_680], [0.62, 1.69]))
    ax = fig.axes[0]
    points, line, held = ax.lines[:3]
    assert held.get_xdata().tolist() == [4 / 2 ** 20, 6_512_680 / 2 ** 20] and held.get_ydata().tolist() == [0.62, 1.69]
    assert held.get_markerfacecolor() == "none" and "held out" in held.get_label()
    assert line.get_xdata()[0] == pytest.approx(4 / 2 ** 20) and line.get_xdata()[-1] == pytest.approx(8)
    fig.canvas.draw()
    # 0.55 sits 3 % of the time axis above 0.51; 2 MiB 10 % of the size axis right of 512 KiB, 8 MiB 2 % right
    # of 6.21 MiB: their ticks are left out
    assert [label.get_text() for label in ax.get_yticklabels()] == ["0.51", "0.62", "0.76", "1.69", "2.26"]
    assert [label.get_text() for label in ax.get_xticklabels()] == ["4 B", "64 KiB", "512 KiB", "6.21 MiB"]


def test_held_out_needs_one_time_per_size():
    with pytest.raises(ValueError):
        plot_alpha_beta([2 ** 14, 2 ** 20], [0.1, 1.0], 0.1, 1 / 2 ** 20, 2, log=True, held_out=([4, 8], [0.1]))

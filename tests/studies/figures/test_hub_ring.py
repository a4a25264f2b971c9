import matplotlib.figure
import matplotlib.pyplot as plt
import pytest

from gradlab.studies.figures.hub_ring import plot_hub_vs_ring


def test_plot_hub_vs_ring_draws_2_r_minus_1_copies_against_2_r_minus_1_over_r():
    # G = 1 MB at 1 GB/s: one copy takes 1 ms = 1,000 µs; at R = 4 the hub's link carries 3 copies out, then 3 back,
    # 6,000 µs an update, a ring's 1,500 (its sends and receives at once)
    fig = plot_hub_vs_ring(1e6, 1e9, compute_ms=0.5, towers=[2, 4, 8], compute_label="32 rows of compute")
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    hub, ring, compute = ax.lines
    assert list(hub.get_xdata()) == [2, 4, 8] and list(hub.get_ydata()) == pytest.approx([2000, 6000, 14000])
    assert list(ring.get_ydata()) == pytest.approx([1000, 1500, 1750])
    assert list(compute.get_ydata()) == pytest.approx([500, 500]) and ax.get_yscale() == "log"
    assert "R - 1" in hub.get_label() and "2 (R - 1) / R" in ring.get_label()
    assert compute.get_label() == "32 rows of compute" and "µs" in ax.get_ylabel()


def test_plot_hub_vs_ring_refuses_bad_input():
    for bad in ({"copy_bytes": 0}, {"link_bytes_per_s": float("nan")}, {"compute_ms": True}, {"towers": [1, 2]},
                {"towers": []}):
        args = {"copy_bytes": 1e6, "link_bytes_per_s": 1e9, "compute_ms": 0.5} | bad
        with pytest.raises(ValueError, match=next(iter(bad))):
            plot_hub_vs_ring(**args)

"""Lesson 14's overlap widget: the schedule it draws at two settings (14's printed numbers), the
controls redraw it, and a bad setting raises a ValueError naming the value."""
import pytest

from gradlab.lab.overlap import Overlap, overlap_schedule, plot_overlap_schedule


def test_the_schedule_at_14s_setting_and_at_n_8():
    s = overlap_schedule(R=8, N=1, beta_gbs=50, blocks=4)  # 14's overlap cell: 99.4, 66.3, 70.0 and 86.6 ms
    assert (round(s["forward"] + s["backward"], 1), round(s["backward"], 1), round(s["all_reduce"], 1)) == (
        99.4, 66.3, 70.0)
    assert round(s["update_with"] - s["forward"], 1) == 86.6 and round(s["exposed_with"], 1) == 20.3
    assert round(s["update_without"] - s["forward"], 1) == 136.3 and s["exposed_without"] == pytest.approx(70.0, 1e-3)
    assert f"{s['share_without']:.1%}" == "41.3%"  # 14's table, N = 1 without overlap
    s8 = overlap_schedule(R=8, N=8, beta_gbs=50, blocks=4)  # one all-reduce, deferred to the 8th micro-batch
    assert (f"{s8['share_without']:.1%}", f"{s8['share_with']:.1%}") == ("8.1%", "2.5%")  # 14's table at N = 8
    assert round(s8["update_with"], 1) == 815.5 and s8["exposed_with"] == pytest.approx(s["exposed_with"])


def test_finer_blocks_and_a_faster_link_hide_more():
    coarse, fine = overlap_schedule(blocks=4), overlap_schedule(blocks=32)
    assert fine["exposed_with"] < coarse["exposed_with"] and fine["exposed_without"] == pytest.approx(70.0, 1e-3)
    nvlink = overlap_schedule(beta_gbs=450)  # 70 ms / 9: the link keeps up, only the last block shows
    assert nvlink["all_reduce"] == pytest.approx(70.0 / 9, 1e-3)
    assert nvlink["exposed_with"] == pytest.approx(nvlink["all_reduce"] / 4, 1e-6)
    assert overlap_schedule(R=2)["all_reduce"] == pytest.approx(70.0 * (1 / 2) / (7 / 8), 1e-3)  # 2 (R-1)/R G


def test_the_figure_draws_both_rows_and_the_widget_redraws():
    fig, s = plot_overlap_schedule(N=2)
    top, bottom = fig.axes
    assert top.get_title().startswith(f"without overlap: update {s['update_without']:.1f} ms")
    assert bottom.get_title().startswith(f"with overlap: update {s['update_with']:.1f} ms")
    o = Overlap()
    first = o.controls.plot.value
    assert first[:4] == b"\x89PNG" and "41.3% exposed" in o.controls.text.value
    o.controls.N.value = 8
    assert o.controls.plot.value != first and o.result == overlap_schedule(N=8)
    o.controls.beta_gbs.value = 450
    o.controls.blocks.value = 16
    o.controls.R.value = 16
    assert o.result == overlap_schedule(R=16, N=8, beta_gbs=450, blocks=16)
    assert "application/vnd.jupyter.widget-view+json" in o._repr_mimebundle_()
    assert repr(o).startswith("<gradlab.lab.Overlap R=16 N=8 beta=450 GB/s blocks=16")


@pytest.mark.parametrize("bad, named", [(dict(R=1), "R=1"), (dict(N=0), "N=0"), (dict(blocks=2.5), "blocks=2.5"),
                                        (dict(beta_gbs=0), "beta_gbs=0"), (dict(beta_gbs=float("nan")), "nan"),
                                        (dict(N=True), "N=True"), (dict(R="8"), "R='8'")])
def test_a_bad_setting_raises_naming_the_value(bad, named):
    with pytest.raises(ValueError, match=named):
        overlap_schedule(**bad)
    with pytest.raises(ValueError, match=named):
        Overlap(**bad)

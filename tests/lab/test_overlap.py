"""Lesson 14's overlap widget: the schedule it draws at two settings (14's printed numbers), the
controls redraw it, start-ups make finer blocks cost as well as hide, and a bad setting raises a
ValueError naming the value."""
import base64

import pytest

from gradlab.lab.overlap import Overlap, overlap_schedule, plot_overlap_schedule


def test_the_schedule_at_14s_setting_and_at_n_8():
    s = overlap_schedule(R=8, N=1, beta_gbs=50, blocks=4, alpha_us=0)  # 14's overlap cell: 99.4, 66.3, 70.0 and 86.6 ms
    assert (round(s["forward"] + s["backward"], 1), round(s["backward"], 1), round(s["all_reduce"], 1)) == (
        99.4, 66.3, 70.0)
    assert round(s["update_with"] - s["forward"], 1) == 86.6 and round(s["exposed_with"], 1) == 20.3
    assert round(s["update_without"] - s["forward"], 1) == 136.3 and s["exposed_without"] == pytest.approx(70.0, 1e-3)
    assert f"{s['share_without']:.1%}" == "41.3%"  # 14's table, N = 1 without overlap
    s8 = overlap_schedule(R=8, N=8, beta_gbs=50, blocks=4, alpha_us=0)  # one all-reduce, deferred to the 8th micro-batch
    assert (f"{s8['share_without']:.1%}", f"{s8['share_with']:.1%}") == ("8.1%", "2.5%")  # 14's table at N = 8
    assert round(s8["update_with"], 1) == 815.5 and s8["exposed_with"] == pytest.approx(s["exposed_with"])


def test_without_start_ups_finer_blocks_and_a_faster_link_hide_more():
    coarse, fine = overlap_schedule(blocks=4, alpha_us=0), overlap_schedule(blocks=32, alpha_us=0)
    assert fine["exposed_with"] < coarse["exposed_with"] and fine["exposed_without"] == pytest.approx(70.0, 1e-3)
    nvlink = overlap_schedule(beta_gbs=450, alpha_us=0)  # 70 ms / 9: the link keeps up, only the last block shows
    assert nvlink["all_reduce"] == pytest.approx(70.0 / 9, 1e-3)
    assert nvlink["exposed_with"] == pytest.approx(nvlink["all_reduce"] / 4, 1e-6)
    assert overlap_schedule(R=2, alpha_us=0)["all_reduce"] == pytest.approx(70.0 * (1 / 2) / (7 / 8), 1e-3)


def test_start_ups_by_hand_each_pack_pays_them_so_about_18_blocks_show_least():
    # 8 replicas, alpha 14 us: a pack's all-reduce pays 2 (R - 1) = 14 start-ups, 0.196 ms. Backward
    # b = 4e9 * 16,384 / 989e12 s = 66.27 ms, bytes 70 ms. In k blocks the link waits b / k for the
    # first gradient, then stays busy 70 + 0.196 k (each pack outlasts the next block), so
    # exposed(k) = 70 - b + b / k + 0.196 k, least near k = sqrt(b / 0.196) = 18.4.
    b = 1000 * 4e9 * 16_384 / 989e12
    exposed = {k: overlap_schedule(blocks=k, alpha_us=14)["exposed_with"] for k in range(1, 129)}
    for k in (1, 4, 18, 100):
        assert exposed[k] == pytest.approx(70 - b + b / k + 0.196 * k, abs=1e-6), k
    assert min(exposed, key=exposed.get) == 18 and round(exposed[18], 1) == 10.9
    assert (round(exposed[4], 1), round(exposed[100], 1)) == (21.1, 24.0)
    s = overlap_schedule(blocks=100, alpha_us=14)
    assert s["start_ups"] == pytest.approx(19.6) and s["packs"] == pytest.approx(70.0 + 19.6, abs=1e-3)
    # without overlap the gradient goes whole, one all-reduce: its start-ups once, whatever the blocks
    assert s["all_reduce"] == pytest.approx(70.196, abs=1e-3) and s["exposed_without"] == pytest.approx(s["all_reduce"])


def test_the_figure_draws_both_rows_and_the_widget_redraws():
    fig, s = plot_overlap_schedule(N=2)
    top, bottom = fig.axes
    assert top.get_title().startswith(f"without overlap: update {s['update_without']:.1f} ms")
    assert bottom.get_title().startswith(f"with overlap: update {s['update_with']:.1f} ms")
    o = Overlap()
    first = o.controls.plot.value
    assert first[:4] == b"\x89PNG" and "41.4% exposed" in o.controls.text.value  # 70.2 / 169.6, alpha 14 us
    o.controls.N.value = 8
    assert o.controls.plot.value != first and o.result == overlap_schedule(N=8)
    o.controls.beta_gbs.value = 450
    o.controls.blocks.value = 16
    o.controls.R.value = 16
    o.controls.alpha_us.value = 0
    assert o.result == overlap_schedule(R=16, N=8, beta_gbs=450, blocks=16, alpha_us=0)
    bundle = o._repr_mimebundle_()  # the widget, and its picture for renderers without widgets (GitHub)
    assert "application/vnd.jupyter.widget-view+json" in bundle and base64.b64decode(bundle["image/png"]) == o.controls.plot.value
    assert repr(o).startswith("<gradlab.lab.Overlap R=16 N=8 beta=450 GB/s blocks=16 alpha=0 µs")


@pytest.mark.parametrize("bad, named", [(dict(R=1), "R=1"), (dict(N=0), "N=0"), (dict(blocks=2.5), "blocks=2.5"),
                                        (dict(beta_gbs=0), "beta_gbs=0"), (dict(beta_gbs=float("nan")), "nan"),
                                        (dict(N=True), "N=True"), (dict(R="8"), "R='8'"),
                                        (dict(alpha_us=-1), "alpha_us=-1"), (dict(blocks=129), "blocks=129")])
def test_a_bad_setting_raises_naming_the_value(bad, named):
    with pytest.raises(ValueError, match=named):
        overlap_schedule(**bad)
    with pytest.raises(ValueError, match=named):
        Overlap(**bad)

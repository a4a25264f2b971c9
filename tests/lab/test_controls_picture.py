"""The still of the lab's controls stored beside its widget (`Lab.controls_picture`)."""
import base64

import numpy as np
from matplotlib.image import imread
import io

from gradlab.lab import Lab, figures
from gradlab.studies.cache import ResultCache


def test_the_still_lists_the_controls_as_set_and_the_bundle_carries_it_as_a_png(tmp_path):
    lab = Lab(updates=20, eval_every=10, memory=False, cache=ResultCache(tmp_path / "cache"), redraw_seconds=0)
    lab.set(strategy="fused", accum_steps=4, micro_batch=25, lr=0.5, seeds=3, setting="exact")
    rows = dict(figures.controls_rows(lab))
    # the oracle: the values set just above, written out by hand
    assert rows["strategy"] == "fused" and rows["N (accum_steps)"] == "4" and rows["b (micro_batch)"] == "25"
    assert rows["lr"] == "0.5" and rows["seeds"] == "3" and rows["setting"] == "exact"
    assert "100" in rows["effective batch"]  # B = N b = 4 x 25
    bundle = lab._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "text/plain" in bundle
    png = base64.b64decode(bundle["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = imread(io.BytesIO(png))
    assert pixels.shape[1] == round(figures.PICTURE_WIDTH * 0.6 * figures.PICTURE_DPI)  # 576 pixels wide
    assert np.ptp(pixels[..., :3]) > 0.5  # something drawn on it, not a blank image
    fig = figures.plot_controls(figures.controls_rows(lab))
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert {"fused", "4", "25", "0.5", "3", "exact", "Run", "Stop", "Measure"} <= texts

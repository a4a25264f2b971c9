"""The authors' checks of lesson 16 (not part of the lesson): they re-check every number the prose states.

The lesson's last cell runs this file in its own namespace (`%run -i checks/16.py`), so a re-run whose numbers
disagree with the text fails there. nbval also pins every printed number.
"""
# verdict's "exact" (README, "Two yardsticks"): ten spacings at the largest weight, 0.42, in [0.25, 0.5)
top = max(float(np.max(np.abs(w))) for w in large.get_weights())
assert 0.25 <= top < 0.5 and f"{top:.2f}" == "0.42", top

# Mirrored fit clips each replica's part: by hand at update 1, then every update of 10
assert clip_acts == 10 and len(clip_misses) == 10 and all(m > 1e-3 for m in clip_misses), clip_misses  # every update
assert (f"{min(clip_misses):.1%}", f"{max(clip_misses):.1%}") == ("48.9%", "74.8%"), clip_misses  # 01's miss, each update
assert abs(first_miss - clip_misses[0]) < 1e-4 and f"{first_miss:.1%}" == f"{clip_misses[0]:.1%}", (first_miss, clip_misses[0])
# c = 1.5: "the clip shortens 2 of the 10 updates, and fit misses each of those by about 12%"; where the large
# batch's update is not shortened (and no part is longer than c here), fit lands on it (answer 1)
assert len(acts) == 10 and sum(acts) == len(hit) == 2 and len(rest) == 8, (acts, hit, rest)
assert all(0.11 < m < 0.125 for m in hit) and f"{min(hit):.0%}" == f"{max(hit):.0%}" == "12%", hit
assert (f"{min(hit):.1%}", f"{max(hit):.1%}") == ("11.7%", "11.8%"), hit  # "misses those two by 11.7% and 11.8%"
assert max(rest) <= 10, rest  # the other 8: rounding, in spacings at the weights
# "each replica's part is ... at most 0.98 long, so fit's clip never acts ... the mean is 1.68 long, against 1.5":
# on the 2 clipped updates no part reaches c, so fit takes the unclipped step and misses by |g_B| / c - 1 ("about 12%")
assert len(parts_c) == 4 and max(parts_c) < 1.5 and f"{max(parts_c):.2f}" == "0.98", parts_c
assert len(means_c) == 2 and all(f"{g:.2f}" == "1.68" for g in means_c), means_c
assert all(abs(m - (g / 1.5 - 1)) < 1e-3 for m, g in zip(hit, means_c)), (hit, means_c)
# "1.68 / 1.5 = 1.12: fit's step is 12% too long" (equal shards [30, 30]: the same direction); "a clip at Rc ...
# Here that is 3.0, above all ten gradients" (unclipped, at most 1.70)
assert all(f"{g / 1.5:.2f}" == "1.12" for g in means_c) and f"{1.68 / 1.5:.2f}" == "1.12", means_c
assert f"{dist.num_replicas_in_sync * 1.5:.1f}" == "3.0" and max(norms) < 3.0, norms
# "Unclipped, this MLP's mean gradient is 1.09 to 1.70 long (median 1.30)": so c = 1.5 sits above most of them
assert len(norms) == 10 and [f"{v:.2f}" for v in (min(norms), max(norms), np.median(norms))] == ["1.09", "1.70", "1.30"]
assert np.median(norms) < 1.5 < max(norms), norms  # "above most": above the median, below the longest
_parts = [length([u / 2 for u in g]) for g in (g0, g1)]
assert min(_parts) > clip_norm  # "both parts are longer than c, so each is cut to c"
assert all(abs(length(p) - clip_norm) < 1e-5 for p in parts)
assert length(mirrored_grad) > clip_norm and abs(length(large_grad) - clip_norm) < 1e-5  # "longer than c"; the mean cut to c
assert length(mirrored_grad) <= 2 * clip_norm + 1e-5  # at most R c (answer 1)
assert f"{length(mirrored_grad) / clip_norm:.1f}" == "1.6"  # answer 1: "about 1.6c of a possible 2c" (1.65)
assert [f"{v:.2f}" for v in (*_parts, length(mirrored_grad), length([(u + v) / 2 for u, v in zip(g0, g1)]),
                              length(large_grad))] == ["0.85", "0.76", "0.82", "1.32", "0.50"]  # the prose's lengths
assert keras_clip.startswith("miss")  # mirrored fit against the clipped large batch, 600 digits
assert verdict(clip_ref.get_weights(), large.get_weights()).startswith("miss")  # clipping acts on 611: not vacuous

# The two-all-reduce route (the learner's or the solution): exact, a shard of 0 included
assert public_miss.startswith("exact"), public_miss
check_clip(clipped_step)
if clipped_step is not solution_clipped_step:
    check_clip(solution_clipped_step)


# Public apply sums what every replica hands it (moved here from lesson 13): handed g_B it steps R g_B ("2.000"),
# handed g_B / R the large batch's step ("1.000"), both at the price of apply's own all-reduce (2 an update)
assert dist.num_replicas_in_sync == 2 and f"{apply_ratios['g_B']:.3f}" == "2.000", apply_ratios
assert f"{apply_ratios['g_B / R']:.3f}" == "1.000" and apply_reduces == {"g_B": 2, "g_B / R": 2}, apply_reduces


def check_passthrough(f):  # the pairs pass through; nested or overlapping entries and an error leave no trace
    opt, pairs = keras.optimizers.SGD(0.1), [(tf.ones([2]), "v")]
    with f(opt):
        with f(opt):  # a second replica's entry
            assert opt._all_reduce_sum_gradients(pairs)[0][0] is pairs[0][0]
        assert opt._all_reduce_sum_gradients(pairs)[0][0] is pairs[0][0]
    first, second = f(opt), f(opt)  # as MirroredStrategy's threads do: replica 0 enters, replica 1, 0 exits
    first.__enter__(), second.__enter__(), first.__exit__(None, None, None)
    assert opt._all_reduce_sum_gradients(pairs)[0][0] is pairs[0][0], "it ends while replica 1 is inside"
    second.__exit__(None, None, None)
    assert "_all_reduce_sum_gradients" not in vars(opt), "overlapping entries leave the pass-through on"
    try:
        with f(opt):
            raise KeyError("inside")
    except KeyError:
        pass
    assert "_all_reduce_sum_gradients" not in vars(opt), "the optimizer keeps the pass-through after exit"


from gradlab._compat import optimizers as _opt
check_passthrough(gradients_already_reduced)  # gradlab's pass-through (the one-all-reduce route's): pairs pass, nothing stays
assert not _opt._OPEN, _opt._OPEN  # its count of open entries is back to empty
# the lesson's passthrough, the idea: inside it the pairs pass as they are; afterwards Keras's method shows again
_o, _pairs = keras.optimizers.SGD(0.1), [(tf.ones([2]), "v")]
with passthrough(_o):
    assert _o._all_reduce_sum_gradients(_pairs)[0][0] is _pairs[0][0]
assert "_all_reduce_sum_gradients" not in vars(_o) and _opt.gradients_already_reduced is gradients_already_reduced
assert not any("_all_reduce_sum_gradients" in vars(m.optimizer) for m in (one_model, acc)), "pass-through left on"
# The one-all-reduce route (its check_one ran in the lesson: a shard of 0 included): exact, clipped by hand
assert one_miss.startswith("exact"), one_miss
# gl.AccumulatingModel (Keras clips in apply) gives the one-all-reduce route's weights
assert acc_misses["the one-all-reduce route"].startswith("exact"), acc_misses

# All-reduces per update and their bytes (the Summary's table); gradlab's counter (all_reduces_per_update) agrees
assert reduces == {"mirrored fit": (1, 101_800),
                   "the two-all-reduce route": (2, 203_604), "the one-all-reduce route": (1, 101_804),
                   "gl.AccumulatingModel": (1, 101_812)}, reduces  # 4 x 25,450 weights, + 4 a scalar
assert 4 * large.count_params() == 101_800 and 203_604 == 2 * 101_800 + 4
from gradlab.lessons import all_reduces_per_update as _count
_models = {"mirrored fit": keras_clip_model, "the two-all-reduce route": public,
           "the one-all-reduce route": one_model, "gl.AccumulatingModel": acc}
assert {n: int(_count(m, dist, x, y)) for n, m in _models.items()} == {n: k for n, (k, _) in reduces.items()}, reduces
assert reduces["gl.AccumulatingModel"][1] - 4 * large.count_params() == 12  # "the gradient and a few scalars"
# The second all-reduce's price (lesson 14's ring, alpha left out): 7 GB sent, 15.6 ms on NVLink 4, 140.0 ms on NDR
assert (R_gpus, G) == (8, 4 * 10**9) and f"{sent / 1e9:.0f}" == "7" and sent == 1.75 * G
assert [f"{1000 * s:.1f}" for s in second.values()] == ["15.6", "140.0"], second
# "twice 14's 70 ms, because float32 doubles the bytes": the same ring in bfloat16 (2 bytes a weight) between nodes
assert f"{1000 * (sent / 2) / links['InfiniBand NDR, 8 nodes']:.0f}" == "70"
assert list(links.values()) == [450e9, 50e9]  # README's hardware table: NVLink 4 and one NDR adapter, each way
# The update it is set against (lesson 14's model and its exposed / update): a micro-batch of 16,384 tokens a GPU,
# 6 P FLOPs a token at the H100 SXM datasheet's 989 TFLOP/s (dense bfloat16), 99.4 ms as in 14; N of them, then both all-reduces, none
# overlapped. Between nodes the second, 140 ms, is 36.9% of the update at N = 1 and 13.0% at N = 8
assert (P, tokens, peak) == (1e9, 16_384, 989e12) and f"{1000 * compute:.1f}" == "99.4", compute
exposed = share(second["InfiniBand NDR, 8 nodes"], 8)  # the second all-reduce's share between nodes at N = 8
assert abs(exposed - 0.140 / (8 * compute + 0.280)) < 1e-9 and abs(update(0.140, 1) - compute - 0.280) < 1e-12
# the printed table's shares (the prose: "from 36.9% at N = 1 to 13.0% at N = 8" between nodes)
assert [(f"{share(s, 1):.1%}", f"{share(s, 8):.1%}") for s in second.values()] == [
    ("11.9%", "1.9%"), ("36.9%", "13.0%")], second
# gl.AccumulatingModel, mirrored: the large batch clipped, unclipped and with an empty shard
assert all(m.startswith("exact") for m in acc_misses.values()), acc_misses
# gradlab probes the private name at first use (the prose: "stops with an error if not")
assert "_all_reduce_sum_gradients" in _opt.PRIVATE_NAMES
from gradlab import doctor  # the printed line is the probe's line in `python -m gradlab doctor` ("ok" on this Keras)
_line = next(l for l in doctor.render(doctor.report()).splitlines() if "_all_reduce_sum_gradients" in l)
assert _line.split()[0] == "ok" and hook_probe == _line.strip(), (_line, hook_probe)
import pathlib as _pathlib  # "gradlab declares the Keras versions it was tested with (3.8 up to 3.15)"
assert '"keras>=3.8,<3.16"' in (_pathlib.Path("..") / "pyproject.toml").read_text()

# Problem 3: in Keras's source, apply -> _backend_apply_gradients clips, then _backend_update_step all-reduces, then updates
import inspect as _inspect
from keras.src.backend.tensorflow.optimizer import TFOptimizer as _TFOptimizer
from keras.src.optimizers.base_optimizer import BaseOptimizer as _BaseOptimizer
assert "self._backend_apply_gradients(" in _inspect.getsource(_BaseOptimizer.apply)
_apply, _update = (_inspect.getsource(f) for f in (_BaseOptimizer._backend_apply_gradients, _TFOptimizer._backend_update_step))
assert _apply.index("self._clip_gradients(grads)") < _apply.index("self._backend_update_step(")
assert _update.index("self._all_reduce_sum_gradients(grads_and_vars)") < _update.index("self._distributed_tf_update_step")
# "clipnorm (each variable clipped alone) and clipvalue run in the same place": the same _clip_gradients, before
# the all-reduce (above)
_clip = _inspect.getsource(_BaseOptimizer._clip_gradients)
assert "self.clipnorm" in _clip and "self._clip_by_norm(g)" in _clip and "self.clipvalue" in _clip

# the clip by hand, g min(1, c / |g|), is tf.clip_by_global_norm bit for bit ("bit for bit (0 spacings)")
assert verdict(large_grad, tf.clip_by_global_norm(mean_grad, clip_norm)[0]) == "exact: 0 spacings, bit for bit"
# c = 1.5: "the other 8 by at most 1.0 spacing: rounding" (the cell's own loop, spacings at the weights); the unclipped
# run's "2 of 10 above 1.5" and the clipped run's "clips 2 of its 10" are two runs, each stated as its own
assert len(gaps_c) == len(misses_c) == 10 and max(rest) <= 10 and f"{max(rest):.1f}" == "1.0", gaps_c
assert sum(n > 1.5 for n in norms) == 2 and sum(acts) == 2, (norms, acts)
# the cell's misses are each_update_miss's (lesson 15's measure, folded in gradlab), written out
assert all(abs(m - e) < 1e-6 for m, e in zip(misses_c, each_update_miss(fit_c, dist, path_c, (x[:600], y[:600])))), misses_c
# The cheap workaround, global_clipnorm = c / R = 0.25: "misses each update by 13.2% to 25.7%, against 48.9% to 74.8%
# at c: closer, not exact, as the shards disagree (the first update's parts, 0.85 and 0.76 long, sum to 1.32, not 1.61)"
assert clip_norm / dist.num_replicas_in_sync == 0.25 and len(over_R_misses) == 10
assert (f"{min(over_R_misses):.1%}", f"{max(over_R_misses):.1%}") == ("13.2%", "25.7%"), over_R_misses
assert max(over_R_misses) < min(clip_misses) and min(over_R_misses) > 0.01, (over_R_misses, clip_misses)
assert f"{0.85 + 0.76:.2f}" == "1.61" and sum(_parts) > length(mean_grad) + 0.2  # the parts are not parallel
# "Does it matter?": the mean loss on the 600 digits after the epoch, each run printed; fit at c trains faster than the
# clipped large batch (its steps are longer than c allows), fit at c / R slower
assert {k: f"{v:.4f}" for k, v in losses.items()} == {"unclipped": "1.7281", "the clipped large batch": "2.0951",
                                                      "mirrored fit at c": "1.9443", "at c / R": "2.1427"}, losses
assert losses["unclipped"] < losses["mirrored fit at c"] < losses["the clipped large batch"] < losses["at c / R"], losses
# "The two-all-reduce route lands 0.5 spacing from the clipped large batch, an empty shard included"
if clipped_step is solution_clipped_step:
    assert public_miss == "exact: 0.5 spacings", public_miss  # 611 digits; the checker's print shows 601's, pinned by nbval
# Answer 4: the parts' lengths 0.85 and 0.76 give sqrt(0.85^2 + 0.76^2) = 1.14 (from the unrounded lengths too),
# but their sum, the mean gradient, is 1.32 long: the cross terms
assert f"{(_parts[0] ** 2 + _parts[1] ** 2) ** 0.5:.2f}" == "1.14" == f"{(0.85 ** 2 + 0.76 ** 2) ** 0.5:.2f}"
assert f"{length(mean_grad):.2f}" == "1.32"
# "Does it matter? Here the final loss differs by 0.15 (7%)": fit at c against the clipped large batch
_gap = losses["the clipped large batch"] - losses["mirrored fit at c"]
assert f"{_gap:.2f}" == "0.15" and f"{_gap / losses['the clipped large batch']:.0%}" == "7%", losses
# "(a little less where the shards disagree)": a part reached 0.98 where the mean over R was 0.84
assert max(parts_c) > max(means_c) / dist.num_replicas_in_sync, (parts_c, means_c)
# "These shares assume peak FLOP/s: at 40% of peak (248 ms a micro-batch, as in 14) they fall to 26.5% and 6.2% between nodes"
_slow = lambda s, N: s / (N * compute / 0.4 + 2 * s)  # noqa: E731  the share at 40% of peak
assert f"{compute / 0.4 * 1000:.0f}" == "248" and round(compute / 0.4 * 1000, -1) == 250, compute
_s = second["InfiniBand NDR, 8 nodes"]
assert (f"{_slow(_s, 1):.1%}", f"{_slow(_s, 8):.1%}") == ("26.5%", "6.2%"), _s
# Answer 2, run: the two-all-reduce route with L2(0.01), the penalty's gradient whole before the clip, "exact"
assert l2_verdict.startswith("exact"), l2_verdict
# "its all-reduce carries 8 bytes more (101,812): its loss sum ... and its count of micro-batches that failed
# gradlab's check, 4 bytes each": gradlab's places.reduce_replicas sends [loss, rows, broken] + the gradient
assert reduces["gl.AccumulatingModel"][1] == 101_812 and reduces["gl.AccumulatingModel"][1] - reduces[
    "the one-all-reduce route"][1] == 8 and reduces["mirrored fit"][1] == 101_800
print("lesson 16: every number the prose states checks out")

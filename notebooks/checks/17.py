"""The authors' checks of lesson 17 (17-the-lab.ipynb), not part of the lesson.

Run by the lesson's last cell with `%run -i`, over the notebook's names: it re-checks every number the
prose states against the run the notebook just made, and fails loudly where a run disagrees with the
text."""
import numpy as np

assert len(mnist.x_train) == 4000 and len(mnist.x_test) == 1000  # one test digit is 0.1 points

# Step 1: your loop; fused within float32 rounding of the large batch (gradlab's verdict: exact), no accuracy change
assert loss_fused.shape == loss_large.shape == (3, 150)
assert most <= 10 and acc_by_seed == [0.0] * 3, (most, acc_by_seed)
assert verdict(loss_fused, loss_large) == "exact: 3.0 spacings", verdict(loss_fused, loss_large)
assert [round(float(x), 6) for x in first.results[0].losses[:2]] == [round(float(x), 6) for x in loss_fused[0, :2]]
# Measure's runs are your loop's, bit for bit ("0.0 spacings"), and accuracy for accuracy
assert yours_vs_lab == 0.0 and same_acc, (yours_vs_lab, same_acc)
assert [r.config.seed for g in measured["exact"] for r in g.results] == [0, 1, 2] * 3
assert [g.results[0].config.strategy for g in measured["exact"]] == ["large_batch", "fused", "keras"]
# both accumulating ways exact at every update (Measure's lines: gradlab's 3.0, Keras's 2.0 spacings), no accuracy change
keras_losses = [r.losses for r in keras_exact.results], [r.losses for r in large.results]  # 3 seeds x 150
assert verdict([r.losses for r in accumulated.results], keras_losses[1]) == verdict(loss_fused, loss_large)
assert np.all(paired(keras_exact, large) == 0) and np.all(paired(accumulated, large) == 0)
# Keras's way, every loss: gradlab's verdict, exact (inside the README's ten); seeds alone: the large batch 92.8 to 94.3 %
assert verdict(*keras_losses) == "exact: 2.0 spacings", verdict(*keras_losses)
assert spacings(*keras_losses) <= 10, spacings(*keras_losses)
assert [f"{100 * a:.1f}" for a in (acc_large.min(), acc_large.max())] == ["92.8", "94.3"], acc_large


def change(group):  # final accuracy against the large batch, seed by seed, in points
    return np.array([100 * (r.accuracy - group.reference[r.config.seed].accuracy) for r in group.results])


# Step 2: Keras's schedule; gradlab's way exact (3.5 spacings), no accuracy change; Keras's losses miss 31.8%, 4.2 to 5.3 points
cosine_ours, keras_c = measured["cosine lr schedule"][1:]
assert keras_c is keras_cosine and [r.config.strategy for r in keras_c.results] == ["keras"] * 3
_ref = [r.losses for r in measured["cosine lr schedule"][0].results]
_vc = verdict([r.losses for r in cosine_ours.results], _ref), verdict([r.losses for r in keras_c.results], _ref)
assert _vc == ("exact: 3.5 spacings", "miss 31.8%"), _vc
assert np.all(np.abs(change(cosine_ours)) < 0.05)
assert [round(c, 1) for c in (change(keras_c).max(), change(keras_c).min())] == [-4.2, -5.3]
assert np.allclose(keras_gaps, change(keras_c))
assert keras_c.results[0].config.updates == 150 and round(150 / 4) == 38  # "spent after about 38"
assert [f"{x:.2f}" for x in flat["Keras's way"]] == ["0.46", "0.45"], flat
assert [f"{x:.2f}" for x in flat["large batch"]] == ["0.34", "0.22"], flat
# the paired interval: yours is gradlab's (to rounding), -4.8 ± 1.4, which excludes zero
assert "{:+.1f} ± {:.1f}".format(*lab_iv) == "-4.8 ± 1.4" and abs(lab_iv[0]) > lab_iv[1], lab_iv
assert verdict(yours_iv, lab_iv).startswith("exact: 0.0 spacings"), verdict(yours_iv, lab_iv)

# the checklist on the convnet: 1, 2 (yours) and 4 exact by gradlab's verdict on the update; 3: gradlab's way and the large
# batch give the cosine's rate at 2 updates, Keras's own accumulation 0 (it counted 8 micro-batches); check 5, Dropout,
# misses (gradlab's verdict), the large batch with other masks about as much; every convnet starts from the same
# weights (Dropout's seed is explicit)
assert all(np.array_equal(a, b) for a, b in zip(convnet(0.25, 1).get_weights(), w_0))
assert f"{grad_norm:.2f}" == "0.74" and grad_norm > 0.5, grad_norm
assert update_check in (my_update_check, solution_update_check)
_v = [check_12, judge(two_replicas, large_c)]
assert _v == ["exact: 1.0 spacings", "exact: 1.1 spacings"] and check_12 == solution_update_check(4), _v
assert all(spacings(net.get_weights(), large_c.get_weights()) <= 10 for net in (trained(4)[0], two_replicas))
_d5, _d1 = judge(dropout_N4, dropout_large), judge(dropout_other, dropout_large)
assert (_d5, _d1) == ("miss 46.7%", "miss 48.5%"), (_d5, _d1)
_m5, _m1 = update_miss(dropout_N4, dropout_large), update_miss(dropout_other, dropout_large)
assert abs(_m5 - _m1) < 0.1 * _m1, (_m5, _m1)  # "about as much"
# the checklist's batch of 98 in 4 micro-batches: "25, 25, 24 and 24" (printed)
assert gl.split_sizes(98, 4) == [25, 25, 24, 24]
# check 3 by public names (Problem 2): each optimizer's rate against the cosine at its updates (0.250 at 2); Keras's own
# schedule counted 8 micro-batches ("its cosine spent on 8 micro-batches", read here from the private count)
assert (int(opts[4].iterations), int(opts[1].iterations), int(keras_way.optimizer._iterations)) == (2, 2, 8)
_sc = [schedule_check(o, cosine) for o in schedules.values()]
assert [u for u, _, _ in _sc] == [2, 2, 2] and [c for _, _, c in _sc] == [True, True, False], _sc
assert [f"{r:.3f}" for _, r, _ in _sc] == ["0.250", "0.250", "0.000"] and f"{float(cosine(2)):.3f}" == "0.250", _sc
assert np.isclose(float(opts[4].learning_rate), float(opts[1].learning_rate))
assert float(keras_way.optimizer.learning_rate) == 0.0 and float(cosine(8)) == 0.0  # spent: 0 from count 4 on
assert schedule_check in (my_schedule_check, solution_schedule_check)

# Problem 1: BatchNorm per micro-batch +0.5 to +1.1 a seed, +0.7 ± 0.8; per update +0.2 ± 0.6; both hold zero
_micro, _window = bn_gaps["BatchNorm per micro-batch"], bn_gaps["BatchNorm per update"]
assert np.allclose(_micro, change(measured[bn][2])) and np.allclose(_window, change(measured[bn][1]))
assert np.all(_micro > 0) and [f"{x:+.1f}" for x in (_micro.min(), _micro.max())] == ["+0.5", "+1.1"], _micro
_ivs = {k: seed_gaps.interval(d) for k, d in bn_gaps.items()}
assert np.allclose(np.ravel(bn_ivs), np.ravel(list(_ivs.values())), atol=1e-9), bn_ivs  # yours is gradlab's
assert ["{:+.1f} ± {:.1f}".format(*iv) for iv in _ivs.values()] == ["+0.7 ± 0.8", "+0.2 ± 0.6"], _ivs
assert all(abs(m) <= h for m, h in _ivs.values()), _ivs
# how many seeds would settle it, if the gaps kept their mean and s_d (0.32 per micro-batch): 4, and 7 per update
_need = [next(n for n in sorted(T_975) if T_975[n] * d.std(ddof=1) / np.sqrt(n) < abs(d.mean())) for d in (_micro, _window)]
assert _need == [4, 7] and f"{_micro.std(ddof=1):.2f}" == "0.32", (_need, _micro)
assert list(range(2, 11)) == sorted(T_975) and all(T_975[n] > T_975[n + 1] for n in range(2, 10))
print("lesson 17: every number the prose states checks out")

"""The authors' checks of lesson 07 (not part of the lesson): each re-checks a number or claim the
prose states, over the notebook's names, and fails loudly if a run ever disagrees with the text.

Run by the lesson's last code cell as `%run -i checks/07.py`; it reuses the notebook's names
(`x`, `y`, `tokens`, `target`, `naive`, `pf`, ...) and recomputes a few small things the lesson no
longer shows (Keras's reductions on the whole batch; the masked loss counted first by hand).
"""
import numpy as np

# Going further's table (r4): the lesson's cell works one row by hand (u, fed: mean_with_sample_weight as it is and
# times N D_i / D) and runs every row through pf.loss_table_row (rows); the names the checks below read, from rows
as_is = list(table)
keras_errors = {row: r["scaled_error"] for row, r in rows.items()}
fed_spacings = {row: r["scaled_spacings"] for row, r in rows.items()}
fed_verdicts = {row: r["scaled_verdict"] for row, r in rows.items()}
as_is_u = {row: r["as_is"] for row, r in rows.items()}
as_is_length = {row: r["length"] for row, r in rows.items()}
as_is_gaps = {row: r["best"] for row, r in rows.items()}
fed_exact = sum(v.startswith("exact: ") for v in fed_verdicts.values())
mean_w_as_it_is = pf.relative_error(as_is_u["mean_with_sample_weight"], target)  # the naive rule again
# i07: the table's folded cell computes each row's best multiple k u (k = <u, g_B> / |u|^2) inline and prints its
# miss: rounding for the rows that divide by a fixed count, tens of percent for the D_i rows; gradlab's verdict agrees
assert all((best_row_miss[r] < 1e-4) == as_is_gaps[r].startswith("exact") for r in table), (best_row_miss, as_is_gaps)
assert max(best_row_miss[r] for r in ("default", "default, per token", "sum")) < 1e-4, best_row_miss
assert min(best_row_miss["mean_with_sample_weight"], best_row_miss["ignore_class"]) > 0.3, best_row_miss
assert abs(best_row_miss["mean_with_sample_weight"] - best_miss) < 1e-3  # Problem 3's best multiple, the same 57%
# c29: "even the best multiple ... misses by 57.0% and 71.7% on the stored run" (seeded, deterministic gradients)
assert [f"{best_row_miss[r]:.1%}" for r in ("mean_with_sample_weight", "ignore_class")] == ["57.0%", "71.7%"], best_row_miss
# the ignore_class row as it is is the naive rule (its best multiple still misses)
assert as_is_gaps["ignore_class"].startswith("miss ") and as_is_gaps["mean_with_sample_weight"].startswith("miss ")
# each row's loss on micro-batch 1 is its summed loss S_1 over the row's count (the table's "divides S_i by")
logits_1, out_1 = mlp_model(x[:16]), tf.identity(seq_model(ids[:8]))  # identity: the Embedding's mask left behind
wl_1 = float(tf.reduce_sum(tokens[:16] * pf.per_example_loss(y[:16], logits_1)))  # the digits' S_1 = sum_j ω_j l_j
l_1 = float(tf.reduce_sum(valid[:8] * pf.per_example_loss(labels[:8], out_1)))  # the sequences': l_j of valid tokens
_first = {"default": (loss_fn(y[:16], logits_1, sample_weight=tokens[:16]), wl_1 / 16),
           "default, per token": (loss_fn(labels[:8], out_1, sample_weight=valid[:8]), l_1 / valid[:8].size),
           "mean_with_sample_weight": (mean_w(y[:16], logits_1, sample_weight=tokens[:16]), wl_1 / D_i[0]),
           "ignore_class": (ignore_fn(labels_ig[:8], out_1), l_1 / valid_i[0]),
           "sum": (sum_fn(y[:16], logits_1, sample_weight=tokens[:16]), wl_1)}
assert list(_first) == list(table) and [table[r][4](w) for r, w in zip(table, (tokens[:16], valid[:8], tokens[:16], valid[:8], tokens[:16]))] == [16, 240, D_i[0], valid_i[0], 1]

# gradlab's strategies the prose no longer prints: accumulate on the masked sequences (exact), keras fed the
# tokens as sample_weight (its step counts first: exact) and keras on the masked sequences (the naive rule)
seq_gradlab = make("accumulate", N, model=lambda: keras.models.clone_model(seq_model))
seq_gradlab.model.set_weights(seq_model.get_weights())  # a copy of seq_model, for gradlab
seq_gradlab_update = pf.update_of(seq_gradlab, ids, labels)
seq_gradlab_error = pf.relative_error(seq_gradlab_update, seq_target)
keras_w = pf.update_of(make("keras", N, loss=mean_w), x, y, sample_weight=tokens)
keras_digits, keras_w_spacings = pf.relative_error(keras_w, target), spacings(keras_w, target, at=mlp_weights)
keras_seq = make("keras", N, model=lambda: keras.models.clone_model(seq_model))
keras_seq.model.set_weights(seq_model.get_weights())
keras_seq_update = pf.update_of(keras_seq, ids, labels)
keras_seq_error = pf.relative_error(keras_seq_update, seq_target)

# the README's yardsticks for every rule that counts right: max |diff| in spacings at its target's largest entry for
# a gradient computed directly; for an update read off the weights (before minus after), at the weights' largest
at_top = {"fixed": spacings(fixed, target), "gradlab accumulate, digits": spacings(gradlab_fix, target, at=mlp_weights),
          "by D_i / D, sequences": spacings(seq_fixed, seq_target),
          "gradlab accumulate, sequences": spacings(seq_gradlab_update, seq_target, at=seq_weights),
          "fit, counted first": spacings(fit_counted, seq_target, at=seq_weights),
          "fit, counted first, own shapes": spacings(own_update, seq_target, at=seq_weights),
          **{f"fed, {row}": value for row, value in fed_spacings.items()},
          "gradlab's keras, loss=mean_w": keras_w_spacings}
fit_errors = {"as it is": pf.relative_error(fit_as_it_is, seq_target),
              "counted first": pf.relative_error(fit_counted, seq_target)}

# The count rule: tokens
assert pf.relative_error(naive, target) > 0.5 and pf.relative_error(fixed, target) < 1e-5
assert abs(coef * spread - pf.relative_error(naive, target)) < 1e-3  # N = 2: the formula is exact
assert D / (2 * D_i[0]) > 1 > D / (2 * D_i[1])
assert [f"{D / (2 * D_i[0]):.2f}", f"{D / (2 * D_i[1]):.2f}"] == ["8.42", "0.53"]  # "8.42 times its share ... 0.53"
# h07, "How gradlab counts": "Your weights are gradlab's: on average 0.119 on a short digit and 1.881 on a long one
# (N D_i/D)"; u_j = ω_j m / D by hand (m = 32 rows, D = 707), against the lesson's rescale and gradlab's own
assert (D_i[0], D) == (42, 707) and [f"{N * d / D:.3f}" for d in D_i] == ["0.119", "1.881"]
_u_by_hand = tokens.astype("float64") * 32 / 707
assert np.allclose(np.concatenate(u_i), _u_by_hand, rtol=1e-6) and [f"{u.mean():.3f}" for u in u_i] == ["0.119", "1.881"]
assert check_rescale(solution_rescale) is None  # the solution passes, whichever function the lesson uses
from gradlab.core.loss_terms import normalize_sample_weight  # the lesson's "your weights are gradlab's", from gradlab
assert np.allclose(np.concatenate(u_i), normalize_sample_weight(tokens, len(tokens), over_weights=True), rtol=1e-6)
# i07: "Keras's default loss divides each micro-batch by its rows, so fed u it gives g_B exactly.
# `mean_with_sample_weight` ... fed ω under Keras's accumulation ... (the naive rule) and misses by 57.1%. gradlab's
# `accumulate` is exact with that loss: it normalises ω over the whole update (gradlab/training/strategy.py, line 104)
# and rebuilds the loss with the default reduction (lines 67-72)": the lines, read from the file
import pathlib as _pathlib
import gradlab.training.strategy as _strategy
_lines = _pathlib.Path(_strategy.__file__).read_text().splitlines()
assert 'reduction", None) == "mean_with_sample_weight"' in _lines[68] and "if self._over_weights:" in _lines[69]
assert "from_config" in _lines[70] and '"reduction": "sum_over_batch_size"' in _lines[71], _lines[66:72]
assert "normalize_sample_weight(sample_weight, batch, self._over_weights)" in _lines[103], _lines[103]
assert verdict(rescaled, target).startswith("exact: ") and pf.relative_error(rescaled, target) < 1e-5
assert verdict(keras_mean_w, target, at=mlp_weights) == "miss 57.1%"
assert spacings(keras_mean_w, naive, at=mlp_weights) < 10  # Keras's accumulation of mean_w is the naive rule
# h07, the real lengths (GPL v3 paragraphs, 122 of them, 5,644 words): "in 2 micro-batches of 16 (the sorted example's
# shape) random real lengths make the naive rule miss by 9% in a typical update and 30% at worst, against the sorted
# 57%. In 8 micro-batches of 4 ...: 30% typically, 54% at worst, with 15% of the weight moved"; the summary's "typically
# 9% to 30%"; seeded draws, deterministic gradients
assert len(gpl_lengths) == 122 and gpl_lengths.sum() == 5644 and len(real[8, 4][0]) == len(real[2, 16][0]) == 100
_m84, _w84, _m216 = real[8, 4][0], real[8, 4][1], real[2, 16][0]
assert f"{np.median(_m216):.0%}" == "9%" and f"{max(_m216):.0%}" == "30%" and max(_m216) < coef * spread
assert f"{np.median(_m84):.0%}" == "30%" and f"{max(_m84):.0%}" == "54%" and max(_m84) < coef * spread
assert f"{np.median(_w84):.0%}" == "15%" and np.median(_m216) < np.median(_m84)
# the vectorised draw against the lesson's naive/fixed rule (oracle: solution_naive_and_fixed on the same split)
_rng = np.random.default_rng(3)
_om = _rng.choice(gpl_lengths, 32, replace=False).astype("float32")
_mb = [(x[k:k + 4], y[k:k + 4], _om[k:k + 4]) for k in range(0, 32, 4)]
_nv, _fx = solution_naive_and_fixed(mlp_model, _mb)
_flat32 = lambda gs: np.concatenate([np.ravel(g) for g in gs]).astype("float64")
assert abs(np.linalg.norm(_flat32(_nv) - _flat32(_fx)) / np.linalg.norm(_flat32(_fx)) - _m84[0]) < 1e-4, _m84[0]
assert pf.relative_error(naive, gradlab_naive) < 1e-5  # your naive rule (or the solution's) is gradlab's
assert pf.relative_error(gradlab_fix, target) < 1e-5  # gradlab's sample_weight under accumulate
assert pf.relative_error(fixed, gradlab_fix) < 1e-5
# no multiple of the naive gradient reaches the target (what Adam's scale-blindness cannot undo)
assert 0.3 < best_miss <= pf.relative_error(naive, target) + 1e-6
assert f"{best_miss:.2f}" == "0.57" and f"{k_best:.2f}" == "1.03"
# Adam's first update: blind to the scale k, not to the direction (70.1% in the prose)
assert pf.relative_error(adam_first([k_best * g for g in naive]), adam_first(naive)) < 1e-2
# "Adam's first update is about -lr sign(g) entry by entry ... a miss of 2 sqrt(f)": the update is -lr sign(g)
# (lr 0.001), and two sign vectors differing in a share f of their M nonzero entries miss each other by 2 sqrt(f)
_flat = lambda gs: np.concatenate([np.ravel(g) for g in gs])
_n, _f, _adam = _flat(naive), _flat(fixed), _flat(adam_first(fixed))
assert (_n != 0).sum() == (_f != 0).sum() and np.linalg.norm(_adam + 0.001 * np.sign(_f)) < 0.1 * np.linalg.norm(_adam)
_flipped = float(np.mean(np.sign(_n[_f != 0]) != np.sign(_f[_f != 0])))
assert f"{_flipped:.0%}" == "12%" and abs(2 * np.sqrt(_flipped) - adam_miss) < 0.02, (_flipped, adam_miss)
# "Here f = 0.121: 2 sqrt f ~ 0.70, the measured 70.1%" (the cell prints 0.695 from f unrounded)
assert f"{_flipped:.3f}" == "0.121" and f"{2 * np.sqrt(_flipped):.3f}" == "0.695" and f"{adam_miss:.3f}" == "0.701"
assert f"{_flipped:.4f}" == "0.1207", _flipped
assert abs(2 * np.sqrt(_flipped) - adam_miss) < 0.01
assert abs(flipped - _flipped) < 1e-12 and f"{flipped:.0%}" == "12%"  # printed by the answers cell
assert adam_miss > 0.3 and as_miss(adam_miss) == "70.1%" and as_miss(best_miss) == "57%"  # Problem 4's answer (Adam; Problem 3 before r2)

# Problem 3, the shuffled tagging windows (r15: its answer cell trains and prints the run, no longer the body): the naive rule's weight on the short sequences'
# tokens, by hand per window (oracle: each token of micro-batch i weighs 1 / (N D_i))
_w_by_hand = []
for (_words, _), _o in zip(tag_windows, orders):
    _n = (_words[_o] > 0).sum(axis=1)
    _short = (np.arange(16) < 8)[_o]
    _w_by_hand.append(sum(_n[j] / (2 * _n[h].sum()) for h in (slice(0, 8), slice(8, 16))
                          for j in range(16)[h] if _short[j]))
assert abs(np.mean(_w_by_hand) - naive_weight["shuffled"]) < 1e-12 and naive_weight["sorted"] == 0.5
assert f"{naive_weight['shuffled']:.3f}" == "0.101" and f"{naive_weight['shuffled'] / short_tokens:.2f}" == "1.11"
assert naive_weight["shuffled"] > short_tokens  # a shuffle still tilts the weight toward the short sequences
# r9: the shuffle has its own seeded generator, so re-running cells does not change it
_rng = np.random.default_rng(7)
assert all((_rng.permutation(16) == _o).all() for _o in orders) and len(orders) == len(tag_windows) == 200
# r9, c10's comment: the plain loss function ignores the Embedding's mask (only a Loss object reads it), so S_1
# needs no tf.identity (that the mask rides on the output, and identity drops it: below)
_out = seq_model(ids[:8])
assert np.array_equal(pf.per_example_loss(labels[:8], _out), pf.per_example_loss(labels[:8], tf.identity(_out)))

# padding masks
assert pf.relative_error(seq_naive, seq_target) > 1 and pf.relative_error(seq_fixed, seq_target) < 1e-5
assert abs(seq_coef * seq_spread - seq_errors[0]) < 1e-3
# "The cause is the random labels ... micro-batch 1's gradient is about sqrt(196/23) = 2.9 times as long as micro-batch
# 2's (3.3 here), and points elsewhere": grad L_1 longer, nearly at right angles to grad L_2
cos_12 = sum((a * b).sum() for a, b in zip(seq_g1, seq_g2)) / (norm(seq_g1) * norm(seq_g2))
assert norm(seq_g1) > 2 * norm(seq_g2) and cos_12 < 0.5  # grad L_1 longer, and pointing elsewhere
assert f"{cos_12:.2f}" == "0.14"
assert f"{seq_spread:.2f}" == "3.27" and f"{spread:.2f}" == "1.30"  # "by 3.27 times g_B's length, against 1.30 on the digits"
# "The counts, 23 and 196 valid tokens, are no more uneven than on the digits (the formula's coefficient is 0.395,
# against 0.441). The miss is larger because the two micro-batches' gradients differ more"
assert f"{seq_coef:.3f}" == "0.395" and f"{coef:.3f}" == "0.441" and seq_coef < coef and seq_spread > 2 * spread
# the Embedding's mask rides on its output tensor through the Dense, and the loss reads it off the model's output
# (an op that makes a new tensor, such as tf.identity, drops it: the table's folded cell relies on it for its unmasked rows)
_out = seq_model(ids[:8])
assert getattr(_out, "_keras_mask", None) is not None and getattr(tf.identity(_out), "_keras_mask", None) is None
# noise alone makes |grad L_1| / |grad L_2| about sqrt(D_2 / D_1): "about sqrt(196/23) = 2.9 ... (3.3 here)"
assert abs(norm(seq_g1) / norm(seq_g2) / np.sqrt(valid_i[1] / valid_i[0]) - 1) < 0.2
assert f"{norm(seq_g1) / norm(seq_g2):.1f}" == "3.3" and f"{np.sqrt(valid_i[1] / valid_i[0]):.1f}" == "2.9"
assert length_ratio == norm(seq_g1) / norm(seq_g2) and f"{length_ratio:.1f}" == "3.3"  # printed in Padding masks
# c11's fold: "... and points elsewhere (cosine 0.14; c10's last line)": nearly orthogonal, as noise is
assert f"{seq_cos:.2f}" == "0.14" and abs(seq_cos) < 0.5, seq_cos
# 'no update at all misses by 1': the naive 1.29 is farther from one batch's gradient than no update
assert pf.relative_error([0 * g for g in seq_target], seq_target) == 1 < seq_errors[0]
assert seq_gradlab_error < 1e-5
assert keras_naive_gap < 1e-5  # your naive rule with the valid mask as ω_j is Keras's masked mean of means

# Going further: each row's loss on micro-batch 1 is its sum over the table's count; fed as the table says, exact
for _row, (_loss_1, _count) in _first.items():
    assert abs(float(_loss_1) - _count) < 1e-4 * abs(_count), (_row, float(_loss_1), _count)
assert len(keras_errors) == 5 and max(keras_errors.values()) < 1e-5, keras_errors
assert valid[:8].size == 240  # the table's n_i T: 8 x 30 positions, padding included
# the masked row: the Embedding's mask divides micro-batch 1 by its valid tokens, as ignore_class does, not by 8 x 30
_masked_1 = float(loss_fn(labels[:8], seq_model(ids[:8])))
assert abs(_masked_1 - l_1 / valid_i[0]) < 1e-4 * _masked_1 and abs(_masked_1 - l_1 / 240) > 0.1 * _masked_1
# mean_with_sample_weight under Keras's accumulation as it is: the naive rule ("misses by 57%")
assert abs(mean_w_as_it_is - pf.relative_error(naive, target)) < 1e-3 and f"{mean_w_as_it_is:.2f}" == "0.57"
# Keras's accumulation fed the masked loss as it is: the naive rule, as yours; counted, exact
seq_window = [(ids[o:o + 8], labels[o:o + 8], v) for o, v in zip((0, 8), valid_i)]
_as_it_is = pf.keras_window_update(seq_model, seq_window, lambda t, out, v, D: loss_fn(t, out))
assert abs(pf.relative_error(_as_it_is, seq_target) - seq_errors[0]) < 1e-3
seq_counted = pf.keras_window_update(seq_model, seq_window, lambda t, out, v, D: N * v / D * loss_fn(t, out))
assert pf.relative_error(seq_counted, seq_target) < 1e-5  # the masked row, by hand
assert float(valid.sum()) == sum(valid_i) == 219 and valid_i == [23, 196]  # "The counts, 23 and 196 valid tokens"
# without the identity, the Embedding's mask reaches the default loss: it divides by D_i, and a per-position
# sample_weight ω_j N n_i T / D misses
_masked_default = pf.keras_window_update(seq_model, [(ids[h], labels[h], valid[h]) for h in (slice(0, 8), slice(8, 16))],
                               lambda t, out, w, D: loss_fn(t, out, sample_weight=w * N * w.size / D))
assert pf.relative_error(_masked_default, seq_target) > 0.5
# i07, c23/c27: "Not under `mean_with_sample_weight`: ... a weight constant over a micro-batch cancels (the naive rule
# again)"; "Under `mean_with_sample_weight` the same weights cancel: 129% again" (fit, counted first, that loss)
assert verdict(fit_mean_w, seq_target) == "miss 129%" and abs(pf.relative_error(fit_mean_w, seq_target) - seq_errors[0]) < 1e-3
# your count-first pipeline (or the solution) under fit: exact; the stream as it is: the naive rule
assert fit_errors["counted first"] < 1e-5 and abs(fit_errors["as it is"] - seq_errors[0]) < 1e-3
assert all(abs(s - N * v / sum(valid_i)) < 1e-6 for s, v in zip(weight_i, valid_i)) and len(weight_i) == N
assert pf.relative_error(keras_w, target) < 1e-5 and keras_digits < 1e-5  # the fold's gradlab keras line
# gradlab's keras on the masked sequences, no count: Keras's accumulation, the naive rule
assert abs(keras_seq_error - seq_errors[0]) < 1e-3 and f"{keras_seq_error:.2f}" == "1.29"

# What the miss does to training: tagging
t_nai, t_fix, t_big = tag_end.values()
t_shuf = shuffled_end  # Problem 3's answer
assert tag_gap <= 10 and verdict(fix_curve, big_curve).startswith("exact: ")  # "their curves exact" (printed)
# c16 (r4) answers the Predict: "The fix and the large batch coincide (their curves 2.4 spacings apart over 200
# updates); the naive run does not" (seeded runs: the printed digits)
assert verdict(fix_curve, big_curve) == "exact: 2.4 spacings" and len(tag_windows) == len(fix_curve) == 200, len(fix_curve)
assert not verdict(tag_runs["naive: 1/N"][1], big_curve).startswith("exact: ")
# c24 (r4): "0.46 = 219/480 for the padded sequences, counting padding": D / (N n T), 219 valid of 2 x 8 x 30 positions
assert sum(valid_i) == 219 and f"{219 / 480:.2f}" == f"{as_is_length['default, per token']:.2f}" == "0.46", as_is_length
assert t_nai[0] > t_fix[0] + 0.2 and t_nai[1] < t_fix[1] - 0.2  # each wins its own mean
# relative errors, compared with 1 (one spacing there, 1.2e-07): every rule that counts right is under ten
_eps = float(np.spacing(np.float32(1)))
assert f"{_eps:.1e}" == "1.2e-07"
_right = [pf.relative_error(fixed, target), pf.relative_error(gradlab_fix, target), pf.relative_error(fixed, gradlab_fix),
          pf.relative_error(seq_fixed, seq_target), seq_gradlab_error, pf.relative_error(seq_counted, seq_target),
          fit_errors["counted first"], pf.relative_error(keras_w, target),
          own_error, *keras_errors.values(), keras_digits]
assert max(_right) < 10 * _eps, _right
assert min(pf.relative_error(naive, target), pf.relative_error(seq_naive, seq_target), fit_errors["as it is"],
           adam_miss) > 100_000 * _eps  # every wrong count
assert abs(t_nai[2] - 0.5) < 0.05 and abs(t_fix[2] - short_tokens) < 0.02  # each bets what its loss counts
assert f"{t_fix[2]:.3f}" == "0.085" and f"{short_tokens:.3f}" == "0.091" and len(tag_windows) == 200
# the seeded runs' ends: the sorted naive run bets 0.496 (the prose states it); the fix (and one batch) 0.307 per
# token, 1.273 per sequence, printed in the table's two loss columns (one run each, no spread claimed); "it wins on the
# mean per sequence, 0.708 against the fix's 1.273, and loses on the mean per token, 0.708 against 0.307"
assert f"{t_nai[2]:.3f}" == "0.496" and [f"{t:.3f}" for t in (*t_fix[:2], *t_big[:2])] == ["0.307", "1.273"] * 2
assert t_fix[2] < short_tokens  # "near the best bet": the fix's 0.085 against 0.091 (the prose claims no trend)
# "the bet that minimises the loss per token, each word's share of tokens in short sequences" (printed: 0.091, beside
# the fix's 0.085): a bet q on the short tag costs -a ln q - b ln(1 - q), least at q = a / (a + b)
_p = np.linspace(0.001, 0.999, 999)
assert all(abs(_p[np.argmin(-a * np.log(_p) - b * np.log(1 - _p))] - a / (a + b)) < 1e-3 for a, b in zip(in_short, in_long))
assert f"{best_bet:.3f}" == "0.091" and t_fix[2] < best_bet and best_bet - t_fix[2] < 0.02
assert in_short.sum() + in_long.sum() == sum(int((w > 0).sum()) for w, _ in tag_windows)  # every token counted once
# c16: "The fix's 0.307 a token sits near what those best bets cost, 0.304" (floor: each word's entropy H(share) over
# all 200 windows, weighted by its tokens; the 0.307 is the last 20 windows' mean, so near, not above, is claimed)
assert f"{floor:.3f}" == "0.304" and abs(t_fix[0] - floor) < 0.01, (floor, t_fix)
assert abs(floor - np.sum((in_short + in_long) * H(in_short / (in_short + in_long))) / np.sum(in_short + in_long)) < 1e-12
# the sorted naive run's per-token and per-sequence losses coincide (0.708 both): a bet near 0.5 makes every
# token cost about ln 2 = 0.693, short or long; its final model's loss per token of each group, last 20 windows
assert f"{t_nai[0]:.3f}" == f"{t_nai[1]:.3f}" == "0.708" and f"{np.log(2):.3f}" == "0.693"
_nai_model = tag_runs["naive: 1/N"][0]
_group_loss = [np.mean([tag_losses(_nai_model, w[g], t[g])[0] for w, t in tag_windows[-20:]])
               for g in (slice(0, 8), slice(8, 16))]  # the short sequences', the long ones'
assert all(abs(l - np.log(2)) < 0.05 for l in _group_loss), _group_loss

# the table's masked row: a masked loss divides by its valid tokens whatever sample_weight holds
# (its D_i only for 0/1 weights); with weights 2 on every valid token it still divides by 23, not 46
w_two = 2.0 * np.ones((8, 30), "float32")
masked_w = float(loss_fn(labels[:8], seq_model(ids[:8]), sample_weight=w_two))
assert abs(masked_w - 2.0 * l_1 / valid_i[0]) < 1e-5 * masked_w and valid_i[0] == 23, (masked_w, l_1)

# "each run bets about the weight its rule gives the short sequences' tokens" (0.496/0.500, 0.085/0.091, 0.101/0.101)
assert all(abs(bet - weight) < 0.01 for bet, weight in ((t_nai[2], naive_weight["sorted"]), (t_fix[2], short_tokens),
                                                         (t_shuf[2], naive_weight["shuffled"])))
# shuffled, the naive rule lands near the fix; sorted (as bucketing makes it), far from it
assert abs(t_shuf[0] - t_fix[0]) < 0.5 * abs(t_nai[0] - t_fix[0]) and abs(t_shuf[2] - t_fix[2]) < 0.1
# Problem 3's answer: "The naive rule gives them 0.101 (1.11 times their share); its tagger bets 0.095, at 0.308 a
# token against the fix's 0.307" (r15: no longer in the body)
assert f"{t_shuf[0] - tag_end['fix (x N D_i / D)'][0]:.3f}" == "0.001", (t_shuf, tag_end)
assert f"{t_shuf[2]:.3f} {t_shuf[0]:.3f}" == "0.095 0.308"  # 'it bets 0.101' per token 0.308 (a seeded run: one run, no spread claimed)
assert list(tag_end) == list(tag_runs) == ["naive: 1/N", "fix (x N D_i / D)", "one large batch"]  # c13: "Three seeded runs"
assert shuffled_end == run_end(*shuffled_run) and "naive, shuffled" not in tag_runs  # the shuffled run: Problem 3's answer only

# The problems
# problem 2: micro-batches padded to their own longest sequence (8 x 4, 8 x 29); the stacking solution fails, the
# counts-only pipeline gives one batch's update, with the same weights (padding adds no valid tokens)
assert [tuple(part[0].shape) for part in own_length] == [(8, 4), (8, 29)]
assert batch_failure == "Cannot batch tensors with different shapes in component 0"
assert own_error < 1e-5 and f"{own_error:.1e}" == "1.1e-06"
# In `fit`: counted first, relative error 1.1e-06 (not stated), a gap of 0.5 spacings at the weights (printed)
assert f"{fit_errors['counted first']:.1e}" == "1.1e-06" and f"{at_top['fit, counted first']:.1f}" == "0.5"
assert at_top["fit, counted first"] < 10
assert [f"{w:.3f}" for w in own_weights] == [f"{w:.3f}" for w in weight_i] == ["0.210", "1.790"]
# c22-c23 (r15): the count in a custom train_step, no look-ahead: "exact too" (against one batch, and within rounding of
# count-first); the step saw the stream as it is, N micro-batches an update, and left no window half-summed
assert verdict(fit_in_step, seq_target, at=seq_weights).startswith("exact: ") and pf.relative_error(fit_in_step, seq_target) < 1e-5
assert spacings(fit_in_step, fit_counted, at=seq_weights) < 10
# j07: the sums live in variables and the step compiles ("a Python dict and `if` ... need `run_eagerly=True`"):
# it ran as a graph, saw N micro-batches an update, and emptied its sums after the last window
assert not step_model.run_eagerly and int(window["n"].numpy()) % N == 0 and float(window["D"].numpy()) == 0.0
assert all(not np.any(a.numpy()) for a in window["grad"]) and int(window["n"].numpy()) == len(ids) // 8
assert issubclass(CountInStep, keras.Sequential) and "train_step" in CountInStep.__dict__

# not stated in the prose: 01's Problem 3's arithmetic, 10 and 90 tokens at mean losses 4.0 and 2.0
assert (4.0 + 2.0) / 2 == 3.0 and abs((10 * 4.0 + 90 * 2.0) / 100 - 2.2) < 1e-12
# the yardstick: every rule that counts right, max |diff| in spacings (at the weights for updates read off them), under ten
assert len(at_top) == 12 and max(at_top.values()) < 10, at_top
assert set(at_top) >= {"fixed", "fit, counted first", "fit, counted first, own shapes"}, at_top
assert [f"{at_top[k]:.1f}" for k in ("fixed", "gradlab accumulate, digits", "gradlab accumulate, sequences")] == [
    "1.2", "0.5", "0.5"]  # fixed; gradlab's, at the weights (printed in their verdicts)
# the printed verdicts the prose states (gradlab.lessons.verdict, README "Two yardsticks"): "exact" for every rule
# that counts right, the naive rule's miss in %
_exact = [verdict(naive, gradlab_naive), verdict(fixed, target), verdict(gradlab_fix, target, at=mlp_weights),
          verdict(seq_fixed, seq_target), verdict(seq_gradlab_update, seq_target, at=seq_weights),
          verdict(seq_naive, combine([seq_g1, seq_g2], [1 / 2, 1 / 2])),
          verdict(fit_counted, seq_target, at=seq_weights), verdict(own_update, seq_target, at=seq_weights),
          verdict(keras_w, target, at=mlp_weights)]
assert all(v.startswith("exact: ") for v in _exact), _exact
assert verdict(naive, target) == "miss 57.1%" and as_miss(coef * spread) == "57.1%"  # "misses by 57.1%"
assert as_miss(mean_w_as_it_is) == "57.1%"  # Going further: "as it is misses by 57.1%"
# Going further: "As they are, the default rows (on equal micro-batches) and sum keep g_B's direction at another length
# ...; the losses that divide by D_i are the naive rule: even their best multiple misses" (the table's folded cell): the default row (equal n_i) gives g_B times D / (N n_i),
# sum times D / N, their direction exact; mean_with_sample_weight and ignore_class tilt it, so even their best
# multiples miss ("Only a count that differs between micro-batches tilts the gradient")
assert list(as_is) == list(table) and [as_is_gaps[r].startswith("exact: ") for r in as_is] == [True, True, False, False,
                                                                                              True], as_is_gaps
assert abs(as_is_length["default"] / (D / (N * 16)) - 1) < 1e-4 and abs(as_is_length["sum"] / (D / N) - 1) < 1e-4
assert abs(as_is_length["default, per token"] / (sum(valid_i) / (N * 240)) - 1) < 1e-4, as_is_length
assert abs(pf.relative_error(as_is_u["ignore_class"], seq_target) - seq_errors[0]) < 1e-3  # the naive rule: 129%
assert as_is_gaps["mean_with_sample_weight"].startswith("miss 57"), as_is_gaps  # as Problem 4's best multiple
assert verdict(seq_naive, seq_target) == verdict(fit_as_it_is, seq_target) == verdict(keras_seq_update, seq_target) \
    == "miss 129%" and as_miss(seq_coef * seq_spread) == "129%"  # "misses by 129%"
assert at_top["by D_i / D, sequences"] < 10 and keras_naive_gap < 1e-5 and keras_naive_spacings < 10  # Padding masks: your fixed; your naive vs Keras's
# Going further: "Scaled as the table says, every row is exact" (under ten spacings at the weights)
assert fed_exact == len(table) == 5 and all(v.startswith("exact: ") for v in fed_verdicts.values()), fed_verdicts
# "(22.09 and 353.50 times for the digits)": D / (N n) = 707 / 32 and D / N = 707 / 2
assert [f"{as_is_length[r]:.2f}" for r in ("default", "sum")] == ["22.09", "353.50"], as_is_length
# c24: "D/(N n) and D/N times. A learning rate absorbs that only where D is the same in every update": the length
# factors are the window's count D over a constant, so they move with D (here D = 707, N = 2, n = 16)
assert round(707 / (2 * 16), 2) == 22.09 and 707 / 2 == 353.5
# c22: "An update's best multiple is k u, the k minimising |k u - g_B|" (least squares: k = <u, g_B> / |u|^2, c23's k)
_fed_sp = [at_top[f"fed, {r}"] for r in table]
assert max(keras_errors.values()) < 1e-5 and max(_fed_sp) < 10 and keras_w_spacings < 10, (keras_errors, _fed_sp)


# c8/c11: "a masked loss divides by its own micro-batch's valid tokens: apply_mask in losses/loss.py weighs each valid
# position by all positions over valid ones"; c10 prints it and c11 states "its loss on micro-batch 1, 2.3070, is S_1/23,
# not S_1/240" (S_1: micro-batch 1's summed loss over its valid tokens, by hand)
_keras_masked_1 = float(loss_fn(labels[:8], seq_model(ids[:8])))
assert ids[:8].size == 240 and valid_i[0] == 23 and abs(S_1 - l_1) < 1e-5 * S_1, (S_1, l_1)
assert f"{_keras_masked_1:.4f}" == f"{S_1 / 23:.4f}" == "2.3070" and abs(_keras_masked_1 - S_1 / 240) > 0.5 * _keras_masked_1
import inspect as _inspect
from keras.src.losses import loss as _keras_loss_module
assert "ops.divide_no_nan(total, valid)" in _inspect.getsource(_keras_loss_module.apply_mask)  # total / valid, per valid position
# c19 (r15): "Keras's optimizer averages the N micro-batches' gradients ((g + acc_g) / steps in optimizers/base_optimizer.py)"
from keras.src.optimizers import base_optimizer as _keras_base_optimizer
assert "(g + acc_g) / steps" in _inspect.getsource(_keras_base_optimizer.BaseOptimizer._backend_apply_gradients)
# c8 ("In Keras 3 (3.15 here) a masked loss divides by its own micro-batch's valid tokens"): the version c1 prints
assert keras.__version__.startswith("3.15."), keras.__version__
print("lesson 07: every number the prose states checks out")

# Problem 2's answer reads its input once (r211: the earlier version zipped the input with its own counts, a second
# read; behind an unseeded shuffle its weights met other micro-batches in about half the windows): shuffled, each
# weight is still N times its own micro-batch's share of the window's valid tokens
_valid = [float(np.sum(part[0] > 0)) for part in own_length]
for _ in range(8):
    for _ids, _labels, _w in count_first_any_shape(padded_stream.shuffle(2), N):
        assert abs(float(_w[0, 0]) - N * float(np.sum(_ids.numpy() > 0)) / sum(_valid)) < 1e-6, (_w, _valid)

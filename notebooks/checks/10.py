"""The authors' checks of lesson 10 (not part of the lesson): they re-check every number the prose states.

The lesson's last cell runs this file in its own namespace (`%run -i checks/10.py`), so a re-run whose numbers
disagree with the text fails there. nbval also pins every printed number that is not marked as run-dependent.
"""
from gradlab.lessons import miss


def max_abs_diff(a, b):  # the largest |difference| over lists of arrays (the lesson's checkers use spacings)
    return max(float(np.max(np.abs(np.asarray(u) - np.asarray(v)))) for u, v in zip(a, b))


# Chollet's plain step is plain fit's "bit for bit (0 spacings)"
assert max_abs_diff(plain.inner.get_weights(), large.get_weights()) == 0
assert verdict(plain.inner.get_weights(), large.get_weights()).startswith("exact: 0 spacings, bit for bit")
# your step "not bit for bit, but equal up to rounding (1.0 spacings)" (verdict prints "exact: 1.0 spacings", cell 3
# says so); under LossScaleOptimizer "1.0 spacings" too
assert verdict(mine.inner.get_weights(), large.get_weights()) == "exact: 1.0 spacings"
assert max_abs_diff(mine.inner.get_weights(), large.get_weights()) > 0
assert verdict(scaled.inner.get_weights(), large.get_weights()).startswith("exact: 1.0 spacings")
assert isinstance(scaled.optimizer, keras.optimizers.LossScaleOptimizer) and float(scaled.optimizer.dynamic_scale) > 1
# Going further: "multiplies the loss by 2^15" (printed: loss scale 32768; an overflow would halve it, and it
# grows only after dynamic_growth_steps, 2,000 finite steps, far more than the 11 here)
assert float(scaled.optimizer.dynamic_scale) == 2.0**15 and scaled.optimizer.dynamic_growth_steps > 11 and scaled.optimizer.dynamic_growth_steps == 2000
# Answer 1: "In the traced step ... an empty micro-batch's mean is divide_no_nan(0, 0) = 0 (Solution 1 prints 0.0)"
assert float(empty_loss(x11[:0], y11[:0])) == 0.0

# Your step, the miscount, the while loop, the masked tokens: exact where the prose says exact
assert max_abs_diff(mine.inner.get_weights(), large.get_weights()) < 1e-6
assert max_abs_diff(looped.inner.get_weights(), large.get_weights()) < 1e-6
assert python_loop is solution_python_loop or python_loop is my_python_loop  # the checker chose it
assert micro_sum is solution_micro_sum or micro_sum is my_micro_sum
assert abs(float(probe.compute_loss(x11, y11, probe(x11))) - float(tf.reduce_sum(per_row)) / 11) < 1e-6  # L_i = S_i / D_i
# "Under `sample_weight` too, ... divides the weighted sum by the rows, not by the summed weights": the printed line
_sw_loss = float(probe.compute_loss(x11, y11, probe(x11), w11))
assert spacings(_sw_loss, weighted / 11) <= 10 and abs(_sw_loss - weighted / float(tf.reduce_sum(w11))) > 1e-2
assert probe.loss.reduction == "sum_over_batch_size"  # Keras's default reduction, the one compile gave
# "Only under reduction="mean_with_sample_weight" (the last line)": that reduction divides by the summed weights
assert spacings(float(by_weights), weighted / float(tf.reduce_sum(w11))) <= 10, float(by_weights)
assert accumulate is solution_accumulate or accumulate is my_accumulate
assert graph_ops.while_attrs(traced(Wrapper(fresh(), 4, accumulate)), spec) == [1]  # "parallel_iterations 1": one at a time
# "the default, 10, lets ten run at once": tf.while_loop's default parallel_iterations
import inspect
# "Keras wraps the step in tf.autograph.experimental.do_not_convert (backend/tensorflow/trainer.py)", and "with
# run_eagerly=True it trains": the installed Keras's source, and range_loop's Wrapper fitted eagerly (the folded
# range_loop cell prints it), 11 updates, on the large batch to rounding
import keras.src.backend.tensorflow.trainer as _tf_trainer
assert "@tf.autograph.experimental.do_not_convert\n        def one_step_on_data" in inspect.getsource(_tf_trainer)
assert eager.run_eagerly and int(eager.optimizer.iterations) == 11, eager.optimizer.iterations
assert spacings(eager.inner.get_weights(), large.get_weights()) <= 10
assert inspect.signature(tf.while_loop).parameters["parallel_iterations"].default == 10
# "fit traces your step with AutoGraph off": the tf.range loop fails in fit itself (the folded range_loop cell)
try:
    train(Wrapper(fresh(), 4, range_loop), keras.optimizers.SGD(0.1))
    _refused = False
except tf.errors.OperatorNotAllowedInGraphError:
    _refused = True
assert _refused, "fit ran a tf.range loop in train_step"
# "or in a loop function given its own tf.function, whose AutoGraph converts it": the folded cell fits it
assert isinstance(nested_loop, tf.types.experimental.PolymorphicFunction) and int(nested.optimizer.iterations) == 11
assert spacings(nested.inner.get_weights(), large.get_weights()) <= 10
# c15/c16 (r23): "05's for over a tf.range, summing the gradients in its body": range_loop accumulates inside its
# tf.range loop (it calls no other loop), so the verdicts test that loop; in its own tf.function AutoGraph makes it a
# tf.while_loop holding one micro-batch's 5 MatMuls, none outside it
_range_src = inspect.getsource(range_loop)
assert "for i in tf.range(N):" in _range_src and "python_loop" not in _range_src and "accumulate" not in _range_src
assert graph_ops.op_counts(traced(Wrapper(fresh(), 8, nested_loop)), spec) == (0, 5)
assert verdict(eager.inner.get_weights(), large.get_weights()) == verdict(nested.inner.get_weights(), large.get_weights()) == "exact: 1.0 spacings"
assert gl.split_sizes(11, 4) == [3, 3, 3, 2] and len(x) % 60 == 11  # "the 11 rows split 3, 3, 3, 2"
assert abs(history["loss"][0] - mine_history["loss"][0]) < 1e-6
assert abs(history["accuracy"][0] - mine_history["accuracy"][0]) < 1e-6  # your step logs compile's accuracy

# "fit traces your train_step with the batch dimension None, and runs that graph for every batch" (the last batch
# of 11 too): every trace fit makes of the step (two, as Keras 3.15 traces) sees the batch dimension None
_traced_batch = []


class _Traced(Wrapper):
    def train_step(self, data):
        _traced_batch.append(data[0].shape[0])
        return super().train_step(data)


train(_Traced(fresh(), 4, accumulate), keras.optimizers.SGD(0.1))
assert _traced_batch and set(_traced_batch) == {None}, _traced_batch

# The graphs: 5 MatMuls a micro-batch, unrolled N times or once in the while body; the loop's size is flat
for N in NS:
    assert matmuls["unrolled", N] == (5 * N, 0) and matmuls["while loop", N] == (0, 5), matmuls
# i10: the folded measurement cell counts them with gradlab's op_counts (05 teaches the count; my_matmuls is gone)
assert all(graph_ops.op_counts(_s, spec) == matmuls[_k] for _k, _s in graphs.items())
# c15/c16 (i10): "The nested tf.function gets tf.while_loop's default, parallel_iterations=10" (printed: [10]);
# loop_options reads the While ops of the step and of its nested functions; your own loop's is 1
assert nested_options == [10], nested_options
assert loop_options(traced(Wrapper(fresh(), 4, accumulate), jit=False)) == [1]
# the learner's steps are Wrapper with the loop that passed its check (the learner's own once written)
assert (mine.loop, looped.loop, mine16.loop) == (python_loop, accumulate, python_loop)

# c21: "one unrolled update lifted the allocator's peak by ... MiB and one while-loop update by ... MiB, on the
# stored run" (printed beside it; nbval leaves allocator readings free): the order, with room for a busy machine
assert os.environ.get("TF_CPU_ALLOCATOR_USE_BFC") == "true" and big[0].shape[0] == 960 == 16 * 60
assert peak_mib["unrolled"] > 2 * peak_mib["while loop"] > 0, peak_mib
# c22 (r23): "plain fit on all 960 rows [lifts] ... MiB (the stored run, printed): the while loop trades 900 rows'
# activations for one more gradient, small on this MLP": plain fit lies between the two loops; 900 rows' layer
# outputs outweigh one gradient, by less than one gradient
assert isinstance(at16["plain fit"], Plain) and not isinstance(at16["plain fit"], Wrapper)
assert peak_mib["unrolled"] > peak_mib["plain fit"] > peak_mib["while loop"], peak_mib
_act900 = 900 * (32 + 10) * 4 / 2**20
assert grad_mib < _act900 < 2 * grad_mib and peak_mib["plain fit"] - peak_mib["while loop"] < 2 * grad_mib, peak_mib
# c21 and the Summary: "A gradient is 4P = 101,800 bytes" (0.097 MiB printed); "2.2 gradients ..., 11.1 at the default ... 16.3 unrolled; plain fit 2.9" (the stored run, j10; bands below)
# (printed beside it, the stored run's; the Summary: "about 2 ... 16"): P by hand, the quotients in bands
assert P == 784 * 32 + 32 + 32 * 10 + 10 == 25_450 and f"{grad_mib:.3f}" == "0.097"
# c17 and c22, predicted from sizes: "a 60-row micro-batch's layer outputs, 60 (32 + 10) floats, 0.01 MiB"; "the
# unrolled step holds 16 gradients, 1.55 MiB (layer outputs add at most 0.15); one at a time, the sum and one
# gradient, 0.19 MiB"; the measured peaks lie near the gradient prediction, far above outputs alone
_act = 60 * (32 + 10) * 4 / 2**20
assert f"{_act:.2f}" == "0.01" and f"{16 * grad_mib:.2f}" == "1.55" and f"{16 * _act:.2f}" == "0.15"
assert f"{2 * grad_mib:.2f}" == "0.19" and peak_mib["unrolled"] > 16 * _act + 2 * grad_mib, peak_mib
assert 10 <= peak_mib["unrolled"] / grad_mib <= 24 and 1.5 <= peak_mib["while loop"] / grad_mib <= 3.5, peak_mib
# c21 (h10x): "... gradients in the while loop at its default parallel_iterations=10 (ten overlap)": the solution's
# loop with tf.while_loop's default, the same graph (5 MatMuls in its body), its peak between =1's and the unrolled one's
_p10 = "while loop, parallel_iterations=10"
assert LOOPS[_p10].func is solution_accumulate and LOOPS[_p10].keywords == {"parallel_iterations": 10}
assert graph_ops.while_attrs(graphs[_p10, 16], spec) == [10] and all(matmuls[_p10, N] == (0, 5) for N in NS)
assert 5 <= peak_mib[_p10] / grad_mib <= 14 and peak_mib[_p10] > 2.5 * peak_mib["while loop"], peak_mib
assert peak_mib["unrolled"] > peak_mib[_p10], peak_mib
# c21's worked problem (h10x): "a 124M-parameter model in float32 at N = 16 ... 0.50 GB ... 7.9 GB ... 1.0 GB"
assert f"{4 * 124e6 / 1e9:.2f}" == "0.50" and f"{16 * 4 * 124e6 / 1e9:.1f}" == "7.9" and f"{2 * 4 * 124e6 / 1e9:.1f}" == "1.0"

# j10, c21: "what makes them up" (printed): a gradient 101,800 bytes; layer outputs, rows x (32 + 10) floats, 10,080
# bytes for 60 rows and 161,280 for 960 (1.6 gradients); estimates 2.2 (the sum + one gradient + 60 rows' outputs and
# their gradients) and 4.2 (one gradient + 960 rows' outputs and their gradients), near the measured peaks
assert 4 * P == 101_800 and out_bytes == {60: 10_080, 960: 161_280} and f"{out_bytes[960] / (4 * P):.1f}" == "1.6"
assert f"{est['while loop']:.1f}" == "2.2" and f"{est['plain fit']:.1f}" == "4.2", est
assert abs(peak_mib["while loop"] / grad_mib - est["while loop"]) < 1.0, peak_mib
# "Plain fit ... held 2.9 [stored run; the Summary: about 3]: one gradient, 960 rows' outputs (1.6 gradients' worth) and
# some of their gradients": between one gradient plus the outputs (less slack) and the 4.2 of all of them (plus slack)
assert 1 + out_bytes[960] / (4 * P) - 0.8 <= peak_mib["plain fit"] / grad_mib <= est["plain fit"] + 1.0, peak_mib
# "Overlap does not explain it: at N = 16, ten overlapping iterations took 2.83 ms an update, one at a time 2.78"
# (stored run): parallel_iterations=10 buys no large saving over 1 (a generous band: timings move with load)
assert np.median(peak_ms[_p10]) > 0.7 * np.median(peak_ms["while loop"]), {k: np.median(v) for k, v in peak_ms.items()}
# "the unrolled loop holds more than not accumulating at all": unrolled > plain fit (asserted above); the same calls'
# times are printed beside them (the stored run's quoted; nine rounds each)
assert set(peak_ms) == set(peak_mib) and all(len(v) == 9 for v in peak_ms.values())
# c21's At scale, layer outputs (j10): assumed 12 layers, width 768, 1,024 tokens, 16 float32 vectors of width 768 a
# token in each layer: 0.59 MB a token, 0.60 GB a sequence, 2.4 GB at 4 sequences, 39 GB at 64; 36 GB saved
_tok = 16 * 768 * 4 * 12
assert f"{_tok / 1e6:.2f}" == "0.59" and f"{_tok * 1024 / 1e9:.2f}" == "0.60"
assert f"{4 * _tok * 1024 / 1e9:.1f}" == "2.4" and f"{64 * _tok * 1024 / 1e9:.0f}" == "39" and f"{60 * _tok * 1024 / 1e9:.0f}" == "36"
assert 16 * 4 == 64 and f"{4 * 124e6 / 1e9:.1f}" == "0.5"

# the finished step whole (WholeStep, the solutions in one train_step): "It lands where your pieces did, exact"
assert verdict(whole.inner.get_weights(), large.get_weights()).startswith("exact: "), "the whole step"
assert int(whole.optimizer.iterations) == 11 and spacings(whole.inner.get_weights(), looped.inner.get_weights()) <= 10
# the learner's whole train_step (stub + yours_or_solution), checked against Keras's own fit on the large batch; it
# logs plain fit's loss and accuracy (printed beside it)
assert train_step is solution_train_step or train_step is my_train_step
assert abs(whole_history["loss"][0] - history["loss"][0]) < 1e-6 and abs(whole_history["accuracy"][0] - history["accuracy"][0]) < 1e-6
assert whole.accum_steps == 4 and verdict(whole.inner.get_weights(), large.get_weights()) == "exact: 1.0 spacings"

# c22 and the Summary, the price in time (the folded timing cell; nbval leaves timings free): "At N = 8 the while loop
# took ... times the unrolled loop's time with XLA off ... and ... times with jit_compile=True (the stored run)", and
# "Cutting 60-row slices of static size, the loop took ... times: run-time sizes cost ... times under XLA, ... without"
# (the Summary: "bounds' run-time sizes cost ... times"): the stored run's medians are quoted; asserted here as
# generous bands and orders, as timings move with load
assert x8.shape[0] == 480 == 8 * 60 and set(ms) == {(n, j) for n in TIMED for j in (False, True)}
assert list(TIMED) == ["while loop", "unrolled"] and list(STATIC) == ["while loop", "static slices"]  # ratio: first / second
assert STATIC["static slices"] is static_loop and set(ms_static) == {(n, j) for n in STATIC for j in (False, True)}
assert all(len(v) == 200 for v in [*ms.values(), *ms_static.values()])
_r = lambda a, b, jit: (ratios if b == "unrolled" else ratios_static)[jit]  # the median over rounds of a / b (h10x)
_off, _on = _r("while loop", "unrolled", False), _r("while loop", "unrolled", True)
assert 0.8 <= _off <= 3.0, ratios  # XLA off: the while loop about as fast, or up to three times slower
assert 2.0 <= _on <= 12.0 and _on > _off, ratios  # XLA on: the while loop with bounds' sizes several times slower
# "The cause is bounds, not the loop": under XLA static slices cut the loop's time by a large factor, far more
# than with XLA off
assert 1.5 <= _r("while loop", "static slices", True) <= 10.0, ratios
assert 0.5 <= _r("while loop", "static slices", False) <= 2.0, ratios
assert _r("while loop", "static slices", True) > 1.3 * _r("while loop", "static slices", False), ratios
# "60-row slices": 480 / 8; the static-slice loop makes your while loop's update (one step each, XLA off)
_one = {name: Wrapper(fresh(), 8, loop) for name, loop in (("dynamic", accumulate), ("static", static_loop))}
for _m in _one.values():
    traced(_m)((x8, y8))
assert spacings(_one["static"].inner.get_weights(), _one["dynamic"].inner.get_weights()) <= 10
assert 480 // 8 == 60
# c21 (h10d): "XLA compiles fixed shapes, so it pads bounds' run-time slices to the whole batch: every
# iteration multiplies all 480 rows (printed above, the compiled step holds f32[480,32]; static 60-row slices',
# f32[60,32])": the folded timing cell compiles both steps under XLA (`hlo`, optimized HLO text) and prints the
# shapes found (h10e)
assert set(hlo) == {"while loop", "static slices"}
assert "f32[480,32]" in hlo["while loop"] and "f32[60,32]" not in hlo["while loop"]
assert "f32[60,32]" in hlo["static slices"] and "f32[480,32]" not in hlo["static slices"]
# c22 and the Summary (r23): "Static slices need a batch size fit knows: a tf.data pipeline batched with
# drop_remainder=True ... So fed, under XLA, they land on the large batch's first 10 updates (1.0 spacings)"
assert batched.element_spec[0].shape.as_list() == [60, 784] and static_fit.loop is static_loop
assert static_fit.jit_compile is True and int(static_fit.optimizer.iterations) == 10 == len(x) // 60
assert verdict(static_fit.inner.get_weights(), large_10.get_weights()) == "exact: 1.0 spacings"
# "what fit's default, "auto", picks on a GPU": Keras 3.15 resolves "auto" to XLA unless the machine has only CPUs
import keras.src.trainers.trainer as _trainer
assert "Disable XLA on CPU-only machines" in inspect.getsource(_trainer.Trainer._resolve_auto_jit_compile)
# c28's table and "AccumulatingModel on arrays gathers one micro-batch's rows at a time (fit_rows.py)": fit hands
# its train_step the 60 row indices (int64, one per row), not the rows; micro-batches of 15 (split_sizes(60, 4))
_handed = []


class _Handed(gl.AccumulatingModel):
    def train_step(self, data):
        _handed.append(tf.nest.map_structure(lambda t: (t.dtype.name, t.shape.rank), data))
        return super().train_step(data)


train(_Handed(fresh(), 4, jit_compile=False), keras.optimizers.SGD(0.1))
assert _handed and all(h == ("int64", 1) for h in _handed), _handed
assert gl.split_sizes(60, 4) == [15] * 4

# The two library ways
assert abs(mine_history["loss"][0] - acc_history["loss"][0]) < 1e-6
assert history["accuracy"][0] == acc_history["accuracy"][0]  # AccumulatingModel logs the large batch's accuracy
assert max_abs_diff(acc.get_weights(), large.get_weights()) < 1e-6
# "AccumulatingModel lands on the large batch and on your while loop (exact: 2.0 spacings): twice your Python loop's gap"
assert [verdict(acc.get_weights(), w).split(" at ")[0] for w in (large.get_weights(), looped.inner.get_weights())] \
    == ["exact: 2.0 spacings"] * 2
# Keras's epoch: "the large batch's after 10 updates (exact: ...)", and a miss against all 11
assert verdict(keras_model.get_weights(), large_10.get_weights()).startswith("exact: ")
assert int(large_10.optimizer.iterations) == 10 and verdict(keras_model.get_weights(), large_10.get_weights()).startswith(
    "exact: 1.0 spacings")
# "and miss its epoch by 26.4% of the move, the last update's share"
_start = fresh().get_weights()
assert verdict(keras_model.get_weights(), large.get_weights(), start=_start) == "miss 26.4%"
assert f"{miss(large_10.get_weights(), large.get_weights(), start=_start):.1%}" == "26.4%"
# c24 (i10): "XLA is off so that all three run as Keras's fit does on a CPU. AccumulatingModel's default picks XLA"
# (resolved here; its fixed-size slices are gradlab's loop_sum code, core/accumulate.py)
auto = {"Keras's": fresh(), "AccumulatingModel's": gl.AccumulatingModel(fresh(), accum_steps=4)}
for _m in auto.values():  # compile's default, jit_compile="auto"
    _m.compile(keras.optimizers.SGD(0.1), xent(from_logits=True))
if not tf.config.list_physical_devices("GPU"):  # the lesson's claim is for a CPU-only machine; a GPU may pick XLA
    assert auto["Keras's"].jit_compile is False
assert auto["AccumulatingModel's"].jit_compile is True
# Answer 2: "That update mixes epoch 1's 11 leftover digits with epoch 2's first 45": Keras's 11th update is the 41st
# micro-batch (11 digits, waiting) and epoch 2's first three micro-batches of 15
assert len(x) - 40 * 15 == 11 and (4 - 1) * 15 == 45
# the table's Keras column (lesson 06 takes it apart), printed: "the 611 digits in batches of 15 make 41 micro-batches,
# the last one 11 digits. Every four make an update: 10 updates from the first 40, while the 41st waits"; 41 apply calls
assert (len(fit_steps), int(keras_acc.iterations), int(keras_acc._iterations)) == (41, 10, 41), fit_steps
assert -(-len(x) // 15) == 41 and 41 // 4 == 10 and 41 % 4 == 1 and len(x) - 600 == 11

# Answer 3, masked tokens: counting rows misses ("9.61% of the epoch's move"), counting tokens lands "exact, 0.6
# spacings", as AccumulatingModel
seq_miss = {name: max_abs_diff(seq_w[name], seq_w["large batch"]) for name in seq}
assert seq_miss["AccumulatingModel"] < 1e-6 and seq_miss["tokens"] < 1e-6
assert seq_gaps["tokens"] == seq_gaps["AccumulatingModel"] == "exact: 0.6 spacings", seq_gaps
assert seq_gaps["rows"] == "miss 9.61%", seq_gaps
assert abs(seq_logs["tokens"] - seq_logs["large batch"]) < 1e-6  # counting tokens logs the large batch's loss
# "as in Keras's accumulation (bit for bit: 0 spacings)": Keras's own accumulation weighs the four means 1/4, as rows do
assert verdict(keras_seq.get_weights(), seq_w["rows"]).startswith("exact: 0 spacings, bit for bit")
assert seq_miss["rows"] > 1e-3  # counting rows is a miss, not rounding

# The problems' solutions
assert max_abs_diff(mine16.inner.get_weights(), large.get_weights()) < 1e-6 and sizes.count(0) == 5
# Problem 2: your step's 11th update reads its count of updates, 10: rate 0.1 * 0.5 ** (10 / 10) = 0.0500; Keras's
# accumulation makes it at the 44th apply call, which reads _iterations = 4 * 11 - 1 = 43 (lesson 06's rule: update k
# reads 4k - 1): 0.1 * 0.5 ** 4.3 = 0.0051
assert read[10][0] == 10 and f"{read[10][2]:.4f}" == "0.0500" == f"{0.1 * 0.5 ** (10 / 10):.4f}", read[10]
# recorded on a two-epoch Keras run (Solution 2, which prints "reads _iterations = 43"): "The 44th call reads
# `_iterations` = 43 ... rate ... 0.0051, recorded"
assert keras_11th[:2] == (10, 43) and f"{keras_11th[2]:.4f}" == "0.0051" == f"{0.1 * 0.5 ** (43 / 10):.4f}", keras_11th
# "the public `iterations` is `_iterations // 4`, the updates": on every fit step of the two-epoch run
assert all(updates == applies // 4 for updates, applies, _ in keras_read), keras_read

# the course's yardstick on the digits: right steps land 3.0e-08 to 6.0e-08 from plain fit, one or two spacings
# at the largest weight, 0.424 (np.spacing(np.float32(0.424)) = 3.0e-08, both printed in cell 2); the solution
# checkers allow the course's ten spacings; this cell holds the printed right steps to two
_W = max(float(np.abs(w).max()) for w in large.get_weights())
assert _W == w_max
_spacing = float(np.spacing(np.float32(_W)))
assert f"{_W:.3f}" == "0.424" and f"{_spacing:.1e}" == "3.0e-08", _W
_right = [max_abs_diff(m.get_weights(), large.get_weights()) for m in (mine.inner, looped.inner, acc, mine16.inner)]
assert max(_right) <= 2 * _spacing and [f"{min(_right):.1e}", f"{max(_right):.1e}"] == ["3.0e-08", "6.0e-08"], _right
assert max_abs_diff(mine.inner.get_weights(), large.get_weights()) <= _spacing  # "exact: 1.0 spacings"
assert verdict(mine16.inner.get_weights(), large.get_weights()).startswith("exact: 1.0 spacings")  # Answer 1: "as before"

# the at-a-glance table (cell 28, printed from `gaps`) and c29: "the plain step and every step that
# sums the S_i and D_i and divides once land in the rounding band: 0 to 2.0 spacings"; "MeanOfMeans miscounts: its
# D_i = 1, so it divides by N ... Only the last batch's micro-batches differ in rows (3, 3, 3, 2), yet it lands about
# 114,000 spacings off, a 4.34% miss. Keras's accumulation is drawn against the large batch's first 10 updates: 1.0
# spacings" (r2: drawn against the 11-update large batch, its red bar read as a miscount; c26 states the one-update gap)
_summing = [name for name in gaps if not name.startswith(("miscount", "Keras"))]
assert [round(gaps[name], 1) for name in _summing] == [0.0, 1.0, 1.0, 1.0, 2.0], gaps
assert round(gaps["miscount: D_i = 1, divides by N"], -3) == 114_000, gaps
assert verdict(miscount.inner.get_weights(), large.get_weights(), start=fresh().get_weights()) == "miss 4.34%"
_keras_gap = gaps["Keras's, to the first 10 updates"]  # printed, and in the prose
assert _keras_gap == spacings(keras_model.get_weights(), large_10.get_weights()) and f"{_keras_gap:.1f}" == "1.0", gaps
assert gl.split_sizes(60, 4) == [15] * 4 and gl.split_sizes(11, 4) == [3, 3, 3, 2]  # only the last batch's differ

# c16's note: "compute_loss adds the penalties in model.losses to each mean ... A weight penalty is the same in every
# micro-batch, so dividing by D counts it once: your step lands, 1.0 spacings": on this MLP with an L2 weight
# penalty, compute_loss is the mean plus the penalty, and your Python loop lands on plain fit's large batch
_reg_large, _reg_loop = penalised["kernel"]  # the folded side-check cell's, printed there
assert _reg_large.layers[0].kernel_regularizer is not None and _reg_large.layers[0].activity_regularizer is None
assert _reg_loop.loop is python_loop and _reg_loop.accum_steps == 4
_pen = float(sum(_reg_large.losses))
assert _pen > 0 and abs(float(_reg_large.compute_loss(x11, y11, _reg_large(x11))) - float(
    xent(from_logits=True)(y11, _reg_large(x11))) - _pen) < 1e-5, _pen
assert spacings(_reg_loop.inner.get_weights(), _reg_large.get_weights()) <= 10, "the penalty, counted once"
assert verdict(_reg_loop.inner.get_weights(), _reg_large.get_weights()) == "exact: 1.0 spacings"

# c15's folded note: "Keras 3.15 divides an activity regulariser's penalty by the batch's rows
# (keras/src/layers/layer.py), so with D_i = rows your step lands ... With D_i = tokens it does not (Solution 3)"
import keras.src.layers.layer as _layer
assert "Normalize by batch size" in inspect.getsource(_layer) and "ops.divide_no_nan(loss, batch_size)" in inspect.getsource(_layer)
active_large, active_mine = penalised["activity"]
active_large(x11)  # an eager call: its penalty, read here, is there
assert float(sum(active_large.losses)) > 0
assert verdict(active_mine.inner.get_weights(), active_large.get_weights()) == "exact: 1.0 spacings"
assert active_gap == "miss 7.85%", active_gap
# sample weights (the same folded cell): compute_loss divides the weighted sum by the rows, 2.953948 against
# 2.240926 by the summed weights 14.5
assert f"{weighted / 11:.6f}" == "2.953948" and f"{summed_w:.1f}" == "14.5" and f"{weighted / summed_w:.6f}" == "2.240926"

# c7: "compute_loss returns 2.323494, the 11 rows' summed loss, 25.558437, divided by 11"
assert f"{float(probe.compute_loss(x11, y11, probe(x11))):.6f}" == "2.323494"
assert f"{float(tf.reduce_sum(per_row)):.6f}" == "25.558437"

# the timeline (gradlab's lesson_plots.plot_fit_steps over the two recorded runs): your step 22 fit steps, 22
# updates; Keras's 82 fit steps, 82 apply calls, 20 updates; "Keras's 11th update mixes those 11 digits with epoch
# 2's first 45"
_mine_spans = lesson_plots.fit_step_spans(batches(60), [r[0] for r in read[1:]], len(x))
_keras_spans = lesson_plots.fit_step_spans(batches(15), [r[0] for r in keras_read[1:]], len(x))
assert len(_mine_spans["updates"]) == 22 and _mine_spans["across"] == [], _mine_spans
assert len(batches(15)) == 82 and keras_read[-1][:2] == (20, 82) and len(_keras_spans["updates"]) == 20
assert _keras_spans["across"] == [(600, 611, 656)] and _keras_spans["updates"][10] == 656, _keras_spans["across"]
# "The figure zooms in" (window 480 to 731, fit-step edges of both lanes): the crossing lies inside it
assert 480 % 60 == 480 % 15 == 0 and (731 - 611) % 60 == 0 and 480 < 600 < 656 < 731

print("lesson 10: every number the prose states checks out")

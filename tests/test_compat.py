"""Each private Keras/TensorFlow hook in gradlab/_compat/ does what it claims, measured."""
import ast
import contextlib
import pathlib
import re
import threading

import keras
import numpy as np
import pytest
import tensorflow as tf

from gradlab import _compat

from gradlab.core import distribute
from common import DEVICES


def test_on_two_replicas_a_loss_is_divided_once_by_default_and_not_at_all_inside_the_hook():
    dist = distribute.make_distribution(DEVICES)
    y, pred = tf.zeros((4, 1)), tf.ones((4, 1))
    mse = keras.losses.MeanSquaredError()

    def values():
        return dist.experimental_local_results(dist.run(lambda: mse(y, pred)))
    assert [float(v) for v in values()] == [0.5, 0.5]  # Keras: mean / num_replicas
    with _compat.losses_not_divided_by_replicas():
        assert [float(v) for v in values()] == [1.0, 1.0]
    assert [float(v) for v in values()] == [0.5, 0.5]  # and put back


def test_the_loss_patch_stays_while_any_thread_is_inside_it_and_goes_with_the_last():
    from keras.src.losses import loss as keras_loss
    keras_own = keras_loss.scale_loss_for_distribution
    entered, leave_a, a_left, leave_b = (threading.Event() for _ in range(4))
    seen = {}

    def a():
        with _compat.losses_not_divided_by_replicas():
            entered.set()
            leave_a.wait()
        a_left.set()

    def b():
        entered.wait()
        with _compat.losses_not_divided_by_replicas():
            leave_a.set()
            a_left.wait()  # A has left: the patch must hold for B
            seen["b"] = keras_loss.scale_loss_for_distribution is not keras_own
            leave_b.wait()
    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    a_left.wait()
    leave_b.set()
    for t in threads:
        t.join()
    assert seen == {"b": True}
    assert keras_loss.scale_loss_for_distribution is keras_own  # put back by the last


def test_strategies_made_in_threads_get_key_ranges_of_their_own():
    base = tf.distribute.MirroredStrategy._collective_key_base
    made = []
    threads = [threading.Thread(target=lambda: made.append(_compat.mirrored_strategy(DEVICES)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    keys = [m.extended._collective_key_base for m in made]
    assert len(set(keys)) == 4 and tf.distribute.MirroredStrategy._collective_key_base == base


def test_gradients_already_reduced_skips_keras_second_all_reduce():
    dist = distribute.make_distribution(DEVICES)
    with dist.scope():
        v = keras.Variable([0.0])
        opt = keras.optimizers.SGD(1.0)
        opt.build([v])

    def apply(hook):
        with hook:
            dist.run(lambda: opt.apply_gradients([(tf.constant([1.0]), v)]))
    counts = {}
    for name, hook in [("keras", contextlib.nullcontext()),
                       ("hooked", _compat.gradients_already_reduced(opt))]:
        graph = tf.function(lambda: apply(hook)).get_concrete_function().graph
        counts[name] = distribute.count_all_reduces(graph)
    assert counts == {"keras": 2, "hooked": 0}  # one collective per replica, or none
    with _compat.gradients_already_reduced(opt):  # nested: the inner exit keeps the outer's
        with _compat.gradients_already_reduced(opt):
            pass
        assert opt._all_reduce_sum_gradients is list
    assert "_all_reduce_sum_gradients" not in opt.__dict__


def test_replica_threads_entering_and_leaving_interleaved_leave_the_all_reduce_as_found():
    # Keras traces replicas in threads: A in, B in, A out, B out. Each entry saving what it found
    # left B's saved `list` behind (the optimizer then skipped its all-reduce in plain fit).
    opt = keras.optimizers.SGD(1.0)
    a, b = _compat.gradients_already_reduced(opt), _compat.gradients_already_reduced(opt)
    a.__enter__()
    b.__enter__()
    a.__exit__(None, None, None)
    assert opt._all_reduce_sum_gradients is list  # B still inside
    b.__exit__(None, None, None)
    assert "_all_reduce_sum_gradients" not in opt.__dict__
    own = opt._all_reduce_sum_gradients  # a hook set before is put back, once the last one leaves
    opt._all_reduce_sum_gradients = own
    a, b = _compat.gradients_already_reduced(opt), _compat.gradients_already_reduced(opt)
    a.__enter__(), b.__enter__(), a.__exit__(None, None, None), b.__exit__(None, None, None)
    assert opt.__dict__["_all_reduce_sum_gradients"] is own


def test_masks_counters_layers_and_fresh_collective_keys():
    out = keras.layers.Embedding(5, 2, mask_zero=True)(tf.constant([[3, 0, 0]]))
    np.testing.assert_array_equal(_compat.keras_mask(out).numpy(), [[True, False, False]])
    assert _compat.keras_mask(tf.zeros(3)) is None
    lso = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD())
    assert len(_compat.counters(lso)) == 2 and _compat.optimizer_chain(lso)[-1] is lso.inner_optimizer
    model = keras.Sequential([keras.Input((2,)), keras.Sequential([keras.layers.Dense(1)])])
    assert [type(l).__name__ for l in _compat.sublayers(model) if type(l).__name__ != "InputLayer"] == ["Sequential", "Dense"]
    # Two strategies whose all-reduces have different shapes: both run (shared keys would abort).
    for shape in [(3,), (5, 2)]:
        dist = distribute.make_distribution(DEVICES)
        summed = dist.run(lambda: tf.distribute.get_replica_context().all_reduce("sum", tf.ones(shape)))
        np.testing.assert_array_equal(dist.experimental_local_results(summed)[0].numpy(), np.full(shape, 2.0))


def test_output_loss_weight_reweighs_each_output_tracker_only_while_active():
    inputs = keras.Input((1,))
    model = keras.Model(inputs, [keras.layers.Dense(1)(inputs), keras.layers.Dense(1)(inputs)])
    model.compile(loss=["mse", "mse"])
    batch = dict(x=tf.zeros((4, 1)), y=[tf.ones((4, 1))] * 2, y_pred=[tf.zeros((4, 1))] * 2)
    quarter = tf.constant(0.25)
    with _compat.output_loss_weight(model, quarter, batch["y"], batch["y_pred"]):  # builds them
        model.compute_loss(**batch)
    trackers = [m for m in model._compile_loss.metrics if m is not None]
    assert [float(m.count) for m in trackers] == [0.25, 0.25]
    model.compute_loss(**batch)  # Keras's own weight again: the batch's 4 rows
    assert [float(m.count) for m in trackers] == [4.25, 4.25]
    assert all("update_state" not in m.__dict__ for m in trackers)


# -- every private name gradlab uses is listed in _compat.PRIVATE_NAMES, with a probe ----------
PACKAGE = pathlib.Path(_compat.__file__).parents[1]
COMPAT = sorted(pathlib.Path(_compat.__file__).parent.glob("*.py"))
PRIVATE_MODULES = ("keras.src", "tensorflow.python", "tensorflow.compiler")
# Underscored names that are no Keras/TensorFlow internals.
NOT_KERAS = {"_exit": "os._exit", "_replace": "namedtuple's API", "_asdict": "namedtuple's API",
             "_repr_mimebundle_": "IPython's display protocol"}
# Overrides of private Keras methods live in the class that overrides them; every other use
# of a private name lives in _compat/.
OUTSIDE_COMPAT = {"_maybe_symbolic_build", "_get_metrics_result_or_logs", "_default_save_signature"}


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def _keras_base(node):
    """The Keras/TensorFlow class a ClassDef derives from directly (`keras.Model`), or None."""
    for base in node.bases:
        root = base
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in ("keras", "tf"):
            return eval(ast.unparse(base), {"keras": keras, "tf": tf})
    return None


def _defined_by_gradlab(trees):
    """Underscored names gradlab gives its own functions, methods and attributes."""
    names = set()
    for tree in trees.values():
        keras_classes = {id(n) for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and _keras_base(n)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and id(node) in keras_classes:
                base = _keras_base(node)  # a method its Keras base lacks is gradlab's own
                names.update(f.name for f in node.body
                             if isinstance(f, ast.FunctionDef) and not hasattr(base, f.name))
                continue
            if isinstance(node, ast.ClassDef):
                names.update(f.name for f in node.body if isinstance(f, ast.FunctionDef))
            elif isinstance(node, ast.Module):
                names.update(f.name for f in node.body if isinstance(f, ast.FunctionDef))
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                    isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
    return {n for n in names if _private(n)}


def private_uses(tree):
    """(name, node) for each private Keras/TensorFlow name `tree` uses: underscored
    attributes of anything but self (strings given to getattr and friends included),
    methods a Keras subclass defines that its Keras base defines too, and members of
    keras.src / tensorflow.python modules (`keras.src.losses.loss.scale_loss_for_distribution`)."""
    uses, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PRIVATE_MODULES):
            aliases.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(PRIVATE_MODULES):
                    aliases[a.asname or a.name] = a.name
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            uses.append((node.attr, node))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                _private(node.value) and node.value.isidentifier():
            call = parents.get(id(node))
            called = isinstance(call, ast.Call) and (
                (isinstance(call.func, ast.Name) and call.func.id in ("getattr", "hasattr", "setattr", "delattr"))
                or (isinstance(call.func, ast.Attribute) and call.func.attr in ("__setattr__", "get", "pop")))
            if called or isinstance(call, (ast.Subscript, ast.Compare)):
                uses.append((node.value, node))
        elif isinstance(node, ast.Name) and node.id in aliases and isinstance(node.ctx, ast.Load):
            parent = parents.get(id(node))
            member = f".{parent.attr}" if isinstance(parent, ast.Attribute) else ""
            uses.append((aliases[node.id] + member, node))
        elif isinstance(node, ast.ClassDef) and (base := _keras_base(node)) is not None:
            uses += [(f.name, f) for f in node.body
                     if isinstance(f, ast.FunctionDef) and _private(f.name) and hasattr(base, f.name)]
    return uses


def _gradlab_sources():
    """Every module of the package, subpackages included, by its path (`training/fit.py`)."""
    return {p.relative_to(PACKAGE).as_posix(): ast.parse(p.read_text())
            for p in sorted(PACKAGE.rglob("*.py"))}


def _in_compat(file):
    return file == "_compat.py" or file.startswith("_compat/")


def guard_problems(trees):
    """What the guard refuses in `trees` ({path: module}): private Keras/TensorFlow names used
    but not in `_compat.PRIVATE_NAMES` (so with no probe), names listed but no longer used, and
    names used outside `_compat` (other than the overrides in `OUTSIDE_COMPAT`)."""
    own = _defined_by_gradlab(trees)
    assert not own & set(_compat.PRIVATE_NAMES)  # else a use of a Keras name could pass as gradlab's
    found = {}
    for file, tree in trees.items():
        for name, node in private_uses(tree):
            if name not in own and name not in NOT_KERAS:
                found.setdefault(name, set()).add(file)
    outside = {name: sorted(f for f in files if not _in_compat(f)) for name, files in found.items()
               if name not in OUTSIDE_COMPAT and any(not _in_compat(f) for f in files)}
    return {"unlisted": {n: sorted(f) for n, f in found.items() if n not in _compat.PRIVATE_NAMES},
            "listed but unused": sorted(set(_compat.PRIVATE_NAMES) - set(found)),
            "outside _compat": outside}


def test_every_private_name_gradlab_uses_is_listed_with_a_probe_and_used_only_in_compat():
    trees = _gradlab_sources()
    assert {"training/fit.py", "core/engine.py", "studies/runs/pitfalls.py"} <= set(trees)
    assert guard_problems(trees) == {"unlisted": {}, "listed but unused": [], "outside _compat": {}}


def test_the_guard_fails_on_a_private_name_planted_in_a_subpackage():
    trees = _gradlab_sources()
    trees["training/planted.py"] = ast.parse(
        "def f(model, opt, kwargs):\n"
        "    kwargs.get('_a_private_keras_keyword')\n"  # unlisted, as issue 30 found one
        "    return opt._iterations, model._compile_loss\n")  # listed, but used outside _compat
    problems = guard_problems(trees)
    assert problems["unlisted"] == {"_a_private_keras_keyword": ["training/planted.py"]}
    assert problems["outside _compat"] == {"_a_private_keras_keyword": ["training/planted.py"],
                                           "_iterations": ["training/planted.py"],
                                           "_compile_loss": ["training/planted.py"]}
    for file in [f for f in trees if _in_compat(f)]:  # every name it lists, now used nowhere
        del trees[file]
    assert set(guard_problems(trees)["listed but unused"]) >= {"_moments", "_var_key"}


def test_every_compat_function_touching_a_private_name_runs_its_probe_first():
    probes = {p.__name__ for p in _compat.PRIVATE_NAMES.values()}
    functions = [fn for path in COMPAT for fn in ast.parse(path.read_text()).body]
    assert len(COMPAT) > 5 and len(functions) > 50
    for fn in functions:
        if not isinstance(fn, ast.FunctionDef) or fn.name in probes:
            continue
        decorated = {ast.unparse(d.args[0]) for d in fn.decorator_list
                     if isinstance(d, ast.Call) and ast.unparse(d.func) == "_probed"}
        for name, node in private_uses(fn):
            assert _compat.PRIVATE_NAMES[name].__name__ in decorated, (fn.name, name)


def test_scan_finds_attributes_strings_overrides_and_private_module_members():
    tree = ast.parse(
        "from keras.src.losses import loss as kl\n"
        "import tensorflow.python.eager.context\n"
        "class M(keras.Model):\n"
        "    def _get_metrics_result_or_logs(self, logs): return self._mine\n"
        "    def _helper(self): pass\n"
        "def f(opt, layer):\n"
        "    kl.scale_loss_for_distribution\n"
        "    getattr(opt, '_var_key', None); layer.__dict__.pop('_moments')\n"
        "    return opt._iterations, '_not_a_name_use'\n")
    assert sorted(name for name, _ in private_uses(tree)) == [
        "_get_metrics_result_or_logs", "_iterations", "_moments", "_var_key",
        "keras.src.losses.loss.scale_loss_for_distribution"]


def test_each_probe_holds_on_the_installed_versions():
    for probe in dict.fromkeys(_compat.PRIVATE_NAMES.values()):
        _compat._in_a_fresh_thread(probe)


def test_a_broken_assumption_raises_naming_the_versions_at_first_use(monkeypatch):
    monkeypatch.setattr(_compat._probing, "_passed", set())
    monkeypatch.delattr(keras.layers.BatchNormalization, "_moments")
    layer = keras.layers.BatchNormalization()
    with pytest.raises(RuntimeError, match=re.escape(
            f"(keras {keras.__version__}, tensorflow {tf.__version__})")) as raised:
        with _compat.batchnorm_moments(layer, record=None):
            pass
    assert "_moments" in str(raised.value)
    assert "_moments" not in layer.__dict__


def test_a_name_gone_is_a_runtime_error_naming_the_versions_too(monkeypatch):
    monkeypatch.setattr(_compat._probing, "_passed", set())
    monkeypatch.delattr(keras.layers.Layer, "_flatten_layers")
    with pytest.raises(RuntimeError, match=r"AttributeError.*_flatten_layers.* \(keras " + re.escape(keras.__version__)):
        _compat.sublayers(keras.Sequential([keras.layers.Dense(1)]))


def test_fit_hooks_probe_fails_when_keras_stops_calling_an_override(monkeypatch):
    from keras.src.backend.tensorflow import trainer
    fit = trainer.TensorFlowTrainer.fit

    def fit_without_symbolic_build(self, *args, **kwargs):
        monkeypatch.setattr(self, "_maybe_symbolic_build", lambda **_: None)
        return fit(self, *args, **kwargs)
    monkeypatch.setattr(trainer.TensorFlowTrainer, "fit", fit_without_symbolic_build)
    monkeypatch.setattr(_compat._probing, "_passed", set())
    with pytest.raises(RuntimeError, match="_maybe_symbolic_build"):
        _compat.check_fit_hooks()
    monkeypatch.undo()
    _compat.check_fit_hooks()


def test_metrics_made_inside_metrics_summed_on_read_sum_the_replicas_on_read():
    dist = distribute.make_distribution(DEVICES)
    with _compat.metrics_summed_on_read(dist):  # enters the strategy's scope itself
        mean = keras.metrics.Mean()
    assert _compat.FOUND["_probe_metric_sync"] in (_compat.METRICS_ON_READ, _compat.METRICS_ON_WRITE)
    assert all(v.value.synchronization == tf.VariableSynchronization.ON_READ for v in mean.variables)
    replica = lambda: tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32)
    dist.run(lambda: mean.update_state(replica() + 1.0))  # replica 0 sees 1, replica 1 sees 2
    assert float(mean.result()) == 1.5  # totals and counts summed over the replicas when read
    with _compat.metrics_summed_on_read(tf.distribute.get_strategy()):  # no strategy: no-op
        plain = keras.metrics.Mean()
    assert not isinstance(plain.variables[0].value, tf.distribute.DistributedValues)


def test_activity_penalty_probe_says_which_keras_it_found():
    minor = tuple(int(v) for v in keras.__version__.split(".")[:2])
    assert _compat.activity_penalty_is_a_mean() == (minor >= (3, 14))
    assert _compat.FOUND["_probe_activity_penalty"] == (
        _compat.ACTIVITY_MEAN if minor >= (3, 14) else _compat.ACTIVITY_SUM)


def test_device_sends_lists_the_copies_tensorflow_inserts_between_two_devices():
    # by hand: w and the input x live on CPU:0 and are read on CPU:1, whose sum comes back to
    # CPU:0, so TensorFlow must insert three copies: w's value and x to CPU:1, the sum back
    with tf.device("/cpu:0"):
        w = tf.Variable([2.0, 3.0])

    @tf.function
    def product(x):
        with tf.device("/cpu:1"):
            y = tf.reduce_sum(w * x, name="on_one")
        with tf.device("/cpu:0"):
            return y + 1.0

    partitions, sends = _compat.device_sends(product, tf.constant([1.0, 1.0]))
    assert partitions == 2, partitions
    assert sorted(sends) == [("CPU:0", "ReadVariableOp"), ("CPU:0", "x"), ("CPU:1", "on_one")], sends
    assert float(product(tf.constant([1.0, 1.0]))) == 6.0  # the call itself still computes


def test_device_sends_counts_one_step_of_a_tiny_towers_model_the_same_on_every_call():
    # by hand: a Dense(1) on 2 inputs with a squared loss, its kernel w and bias b on CPU:0;
    # tower 1 (CPU:1) takes the second half of x and returns its summed loss's two gradients.
    # One step copies w, b and x's half out to CPU:1 (3) and the two gradients back (2): 5 _Send
    # ops, in 2 partitions
    with tf.device("/cpu:0"):
        w, b = tf.Variable([[1.0], [2.0]]), tf.Variable([0.5])

    def tower(x_r):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.matmul(x_r, w) + b))
        return tape.gradient(loss, [w, b])

    @tf.function
    def step(x):
        x0, x1 = tf.split(x, 2)
        with tf.device("/cpu:0"):
            g0 = tower(x0)
        with tf.device("/cpu:1"):
            g1 = tower(x1)
        with tf.device("/cpu:0"):
            w.assign_sub(0.1 * (g0[0] + g1[0]))
            b.assign_sub(0.1 * (g0[1] + g1[1]))

    @tf.function
    def other(x):  # another step that crosses devices, run between the two probes
        with tf.device("/cpu:1"):
            y = tf.reduce_sum(x * 2.0)
        with tf.device("/cpu:0"):
            return y + 1.0

    x = tf.ones([4, 2])
    first = _compat.device_sends(step, x)
    other(x)  # a step traced between the probes must not be counted with the next
    second = _compat.device_sends(step, x)  # step is traced already: device_sends traces it afresh
    assert first[0] == second[0] == 2, (first, second)
    assert len(first[1]) == len(second[1]) == 5, (first, second)
    assert sorted(s for s, _ in first[1]) == ["CPU:0"] * 3 + ["CPU:1"] * 2, first
    assert sorted(first[1]) == sorted(second[1])
    # each probe ran one update (numpy, by hand: d/dw sum (xw + b)^2 = 2 x^T (xw + b))
    w_np, b_np, x_np = np.array([[1.0], [2.0]]), np.array([0.5]), np.ones([4, 2])
    for _ in range(2):
        residual = x_np @ w_np + b_np
        w_np, b_np = w_np - 0.1 * 2 * x_np.T @ residual, b_np - 0.1 * 2 * residual.sum(0)
    assert np.allclose(w.numpy(), w_np) and np.allclose(b.numpy(), b_np), (w.numpy(), w_np)

"""A stand-in for `experiments.train` without TensorFlow, for the lab's tests."""
import numpy as np

from gradlab.studies.runs import experiments, noise, run_loop, run_result


def stub_losses(config):
    """The stub's loss curve: a function of the effective batch, lr, seed and strategy only,
    so that (as with paired sampling) accumulation equals its large batch, except Keras's."""
    t = np.arange(config.updates)
    naive = 0.05 if config.strategy == "keras" else 0.0
    wiggle = 0.05 * np.sin(t * (1 + config.seed)) / np.sqrt(config.effective_batch)
    return (2.0 + 0.1 * config.seed + naive) / (1.0 + config.lr * config.effective_batch * t / 16) + wiggle


def stub_accuracy(config):
    return 0.5 + 0.01 * config.seed


def stub_train(config, bar=None, callback=None, every=10, stop=None):
    """`experiments.train`'s contract without TensorFlow: `bar.update(1)` per update, `stop`
    checked after each update but the last, `callback` every `every` updates and at the end."""
    losses = stub_losses(config)
    evals = sorted({0, config.updates} | set(range(config.eval_every, config.updates + 1, config.eval_every)))

    def result(t):
        done = [u for u in evals if u <= t]
        return run_result.RunResult(config, losses[:t].copy(), np.asarray(done),
                                     np.full(len(done), stub_accuracy(config)), stub_accuracy(config),
                                     1e-3, 1e-3 * t, noise.loss_noise(losses[:t])._asdict())

    for t in range(1, config.updates + 1):
        if bar is not None:
            bar.update(1)
        if stop is not None and stop.is_set() and t < config.updates:
            raise run_loop.Stopped(config, t)
        if callback is not None and (t % every == 0 or t == config.updates):
            callback(result(t))
    return result(config.updates), None


def drawn(fig):
    """What `fig` shows, as bytes: PNG's signature, then its lines' data, texts and titles
    (rendering PNGs took most of a stubbed run's time)."""
    lines = [(np.asarray(line.get_xdata(), float).tolist(), np.asarray(line.get_ydata(), float).tolist(),
              line.get_visible()) for ax in fig.axes for line in ax.get_lines()]
    texts = [t.get_text() for ax in fig.axes for t in ax.texts] + [ax.get_title() for ax in fig.axes]
    return b"\x89PNG" + repr((lines, texts)).encode()

import pytest
from matplotlib.patches import FancyBboxPatch

from gradlab.studies.figures.replica_schematic import draw_replicas


def test_draw_replicas_draws_sums_in_each_replica_one_all_reduce_of_sums_and_rows_then_the_division():
    fig = draw_replicas([16, 15], accum_steps=3)
    ax, = fig.axes
    texts = [b for b in ax.patches if isinstance(b, FancyBboxPatch)]
    # batch + all-reduce + per replica (3 micro-batches + divide + apply)
    assert len(texts) == 2 + 2 * (3 + 2)
    labels = [t.get_text() for t in ax.texts]
    assert sum("all-reduce" in t for t in labels) == 1 and "[sums, rows]" in labels[1]
    assert labels.count("6 rows\nsum") == 1 and labels.count("5 rows\nsum") == 5  # 6+5+5 and 5+5+5
    assert "[sums, 16]" in labels and "[sums, 15]" in labels  # what each replica sends: its sums and its rows
    assert labels.count("÷ rows\n= 31") == 2  # every replica divides by the counted B after the all-reduce
    assert labels.count("update by $g_B$\nreplica 0") == 1 and labels.count("update by $g_B$\nreplica 1") == 1
    assert not any("apply" in t for t in labels)  # each copy steps by g_B; Keras's apply would all-reduce it again
    assert not any("/31" in t for t in labels)  # no weights n_ri / B inside a replica
    assert "1 all-reduce per update" in ax.get_title()


def test_draw_replicas_refuses_bad_input():
    with pytest.raises(ValueError, match="shards"):
        draw_replicas([], 2)
    with pytest.raises(ValueError, match="accum_steps"):
        draw_replicas([4, 4], 0)

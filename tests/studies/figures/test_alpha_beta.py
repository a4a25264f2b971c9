"""The alpha-beta line of measured all-reduce times: alpha and beta worked out by hand."""
import pytest

from gradlab.studies.figures.alpha_beta import alpha_beta_of_line

GIB = 2 ** 30


def test_two_replicas_take_two_latencies_and_send_the_whole_message():
    # R = 2: t = 2 alpha + M / beta. a = 0.98 ms -> alpha 490 µs; b = 1 ms per 2.5 GiB -> 2.5 GiB per ms
    alpha_us, beta = alpha_beta_of_line(0.98, 1 / (2.5 * GIB), 2)
    assert alpha_us == pytest.approx(490.0)
    assert beta == pytest.approx(2500.0)  # GiB/s


def test_four_replicas_take_six_latencies_and_send_one_and_a_half_messages():
    # R = 4: t = 6 alpha + 1.5 M / beta. a = 3 ms -> alpha 500 µs; b = 1.5 ms per GiB -> beta 1 GiB per ms
    alpha_us, beta = alpha_beta_of_line(3.0, 1.5 / GIB, 4)
    assert alpha_us == pytest.approx(500.0)
    assert beta == pytest.approx(1000.0)


